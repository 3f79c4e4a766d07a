#!/usr/bin/env bash
# `vmlet probe` against the independent oracle: the probe ELF that
# `vmlet probe --dump-guest` writes boots under QEMU microvm (ACPI on), and
# for each topology and vendor the per-vCPU APIC IDs and (package, core,
# thread) ids, the MADT APIC IDs and the sockets/cores/threads the guest
# derives under vmlet equal what the same ELF reports under QEMU.
# memoryBytes is not compared: the two VMMs lay out e820 differently (vmlet's
# own expected value is checked by `vmlet probe` itself: its exit status 0
# means every field, memory included, matched what vmlet expects).
source "$(dirname "$0")/../lib/sh.sh"

need_qemu_microvm
if "$VMLET" probe --dump-guest "$TMPD/probe.elf" 2>&1 | grep -q "not implemented"; then
	skip "vmlet probe is not implemented yet"
fi
[[ -s $TMPD/probe.elf ]] || { echo "FAIL: vmlet probe --dump-guest wrote nothing"; exit 1; }
if [[ -f build/fw/probe.elf ]] && ! cmp -s "$TMPD/probe.elf" build/fw/probe.elf; then
	fail "--dump-guest output differs from build/fw/probe.elf"
fi

cat >"$TMPD/cmp.py" <<'PY'
import json, sys

vm = json.load(open(sys.argv[1]))["guest"]
lines = open(sys.argv[2], encoding="latin-1").read().splitlines()
try:
    b = lines.index(next(l for l in lines if l.startswith("VMLET-PROBE-BEGIN v")))
    e = lines.index("VMLET-PROBE-END", b)
except (StopIteration, ValueError):
    print("qemu: no complete report")
    sys.exit(1)
kv, q = {}, []
for l in lines[b + 1:e]:
    k, _, v = l.partition("=")
    if k == "vcpu":
        q.append(tuple(map(int, v.split()[:4])))
    else:
        kv[k] = v
errs = []
v = sorted((c["apicId"], c["package"], c["core"], c["thread"]) for c in vm["vcpus"])
if v != sorted(q):
    errs.append(f"vcpus (apic, pkg, core, thread): vmlet {v}\n  qemu {sorted(q)}")
if vm["madtApicIds"] != [int(x) for x in kv.get("madtApicIds", "").split()]:
    errs.append(f"madtApicIds: vmlet {vm['madtApicIds']} qemu {kv.get('madtApicIds')}")
for k in ("sockets", "coresPerSocket", "threadsPerCore"):
    if str(vm[k]) != kv.get(k):
        errs.append(f"{k}: vmlet {vm[k]} qemu {kv.get(k)}")
if vm["vendor"] != kv.get("vendor"):
    errs.append(f"vendor: vmlet {vm['vendor']} qemu {kv.get('vendor')}")
print("\n".join(errs))
sys.exit(1 if errs else 0)
PY

declare -A QCPU=([intel]="$QEMU_CPU_INTEL" [amd]="$QEMU_CPU_AMD")

# check VENDOR S/C/T [MIB]
check() {
	local vendor=$1 topo=$2 mib=${3:-256} s c t base rc
	IFS=/ read -r s c t <<<"$topo"
	base="$TMPD/$vendor-$s-$c-$t-$mib"
	timeout 120 "$VMLET" probe --cpu-vendor "$vendor" --smp "$s,$c,$t" --memory "${mib}Mi" \
		-o json >"$base.json" 2>"$base.err"
	rc=$?
	if ((rc != 0)); then
		fail "$vendor $topo ${mib}Mi: vmlet probe exit status $rc"
		tail -n 15 "$base.err" | sed 's/^/    /'
		return
	fi
	timeout 60 qemu-system-x86_64 -enable-kvm -cpu "${QCPU[$vendor]}" -m "$mib" \
		-smp "sockets=$s,cores=$c,threads=$t" \
		-nodefaults -no-user-config -nographic -display none -no-reboot \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-M microvm,x-option-roms=off,rtc=off,pit=off,pic=off,isa-serial=on,acpi=on,auto-kernel-cmdline=off \
		-bios "$BIOS" -kernel "$TMPD/probe.elf" -serial "file:$base.qemu" >/dev/null 2>&1
	rc=$?
	if ((rc != 0)); then
		fail "$vendor $topo ${mib}Mi: qemu exit status $rc (0 = ACPI power-off)"
		return
	fi
	if python3 "$TMPD/cmp.py" "$base.json" "$base.qemu" >"$base.diff"; then
		ok "$vendor $topo ${mib}Mi: vmlet and qemu agree"
	else
		fail "$vendor $topo ${mib}Mi"
		sed 's/^/    /' "$base.diff"
	fi
}

for vendor in intel amd; do
	for topo in 1/1/1 2/1/1 1/2/1 1/1/2 2/2/2 3/1/1 1/3/1 1/1/3 2/3/2 4/2/1 1/16/2 4/8/2; do
		check "$vendor" "$topo"
	done
done
check intel 2/65/2 # x2APIC IDs
check amd 2/2/1 64
check intel 1/3/2 5120 # RAM above 4 GiB
finish
