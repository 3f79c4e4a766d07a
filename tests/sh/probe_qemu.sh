#!/usr/bin/env bash
# The probe guest (build/fw/probe.elf) under QEMU microvm with ACPI: the
# independent oracle for the guest side of `vmlet probe`. For a matrix of
# topologies (non-powers of two, 64 vCPUs, 260 vCPUs with x2APIC IDs),
# memory sizes (one above 4 GiB) and CPUID enumerations, the report must
# show exactly the APIC IDs
# and (package, core, thread) ids computed here, independently, from the
# ceil(log2) field-width rule, and QEMU must end by ACPI power-off (exit 0).
#
# Enumerations (QEMU under KVM shows the host vendor unless vendor= is set):
#   intel      $QEMU_CPU_INTEL            leaf 0xB
#   amd        $QEMU_CPU_AMD              leaf 0xB (TopoExt set, family 0x17)
#   amd-nob    $QEMU_CPU_AMD,level=0xa    no 0xB: 0x80000008 core width +
#                                         0x8000001E SMT
#   intel-leg  $QEMU_CPU_INTEL,level=0xa  no 0xB: leaf 1 + leaf 4
# (tests/lib/sh.sh: qemu64 plus flags, the same on any host)
# Where QEMU (or the enumeration) differs from the ceil(log2) rule:
#   intel-leg: leaf 1 EBX[23:16] holds the logical CPU count per package and
#   leaf 4 EAX[31:26] the core count, so Linux's SMT width is
#   order(cores*threads) - order(cores), which is not order(threads) when
#   neither count is a power of two (1/5/3: 1 bit instead of 2). The
#   expected ids for that mode follow Linux's legacy formula; the APIC IDs
#   themselves (QEMU's ceil(log2) layout) must still match the rule.
source "$(dirname "$0")/../lib/sh.sh"

ELF=${PROBE_ELF:-build/fw/probe.elf}
if [[ ! -f $ELF ]]; then
	make -s build/fw/probe.elf || { echo "FAIL: cannot build $ELF"; exit 1; }
fi

# No instruction that kills a vCPU at CPL0 on our hosts (docs/hosts.md):
# SSE/AVX registers at all, x87, popcnt, cmpxchg16b, crc32, BMI, xsave,
# xgetbv, rdtscp, movbe.
if command -v objdump >/dev/null; then
	bad=$(objdump -d --no-show-raw-insn "$ELF" | grep -P '\t' |
		grep -Pi '%[xyz]mm|\t(f[a-z]+|popcnt|cmpxchg16b|crc32\w*|shlx|shrx|sarx|rorx|pdep|pext|mulx|bzhi|andn|lzcnt|tzcnt|xsave\w*|xrstor\w*|xgetbv|rdtscp|movbe)\b')
	if [[ -n $bad ]]; then
		fail "forbidden instructions in $ELF"
		echo "$bad" | head -n 20 | sed 's/^/    /'
	else
		ok "no instruction forbidden at CPL0 in $ELF"
	fi
fi

need_qemu_microvm

cat >"$TMPD/check.py" <<'PY'
import sys

def order(n):
    return (n - 1).bit_length() if n > 1 else 0

report, S, C, T, mode, mem = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5], int(sys.argv[6])
text = open(report, encoding="latin-1").read()
lines = text.splitlines()
errs = []
try:
    b = next(i for i, l in enumerate(lines) if l.startswith("VMLET-PROBE-BEGIN v"))
    e = next(i for i, l in enumerate(lines) if l == "VMLET-PROBE-END" and i > b)
except StopIteration:
    print("no complete report in the serial output:\n" + text[-2000:])
    sys.exit(1)
kv, vcpus = {}, []
for l in lines[b + 1:e]:
    k, _, v = l.partition("=")
    if k == "vcpu":
        vcpus.append(tuple(map(int, v.split())))
    else:
        kv.setdefault(k, []).append(v)

smt, core = order(T), order(C)
pkg_shift = smt + core
exp = []
for s in range(S):
    for c in range(C):
        for t in range(T):
            apic = s << pkg_shift | c << smt | t
            if mode == "intel-leg":   # Linux's legacy widths (see header)
                lsmt = order(C * T) - order(C)
                lpkg = order(C * T)
                ids = (apic >> lpkg, (apic & ((1 << lpkg) - 1)) >> lsmt, apic & ((1 << lsmt) - 1))
            else:
                ids = (s, c, t)
            exp.append((apic, *ids, apic))
if sorted(vcpus) != sorted(exp):
    errs.append(f"vcpus: got {sorted(vcpus)}\n       expected {sorted(exp)}")
if vcpus and vcpus[0][0] != 0:
    errs.append(f"first vcpu line is not the BSP (APIC 0): {vcpus[0]}")
madt = [int(x) for x in kv.get("madtApicIds", [""])[0].split()]
if madt != [x[0] for x in exp]:
    errs.append(f"madtApicIds {madt} != {[x[0] for x in exp]}")
if mode != "intel-leg":
    for k, v in (("sockets", S), ("coresPerSocket", C), ("threadsPerCore", T)):
        if kv.get(k) != [str(v)]:
            errs.append(f"{k}={kv.get(k)} expected {v}")
vendor = {"intel": "GenuineIntel", "intel-leg": "GenuineIntel"}.get(mode, "AuthenticAMD")
if kv.get("vendor") != [vendor]:
    errs.append(f"vendor={kv.get('vendor')} expected {vendor}")
src = {"intel": "intel-b", "amd": "amd-b", "amd-nob": "amd-80000008", "intel-leg": "intel-legacy"}[mode]
if kv.get("topoSource") != [src]:
    errs.append(f"topoSource={kv.get('topoSource')} expected {src}")
got_mem = int(kv.get("memoryBytes", ["0"])[0])
# RAM in the e820: all of -m except the legacy hole below 1 MiB (< 640 KiB)
if not (mem - (1 << 20) < got_mem <= mem):
    errs.append(f"memoryBytes={got_mem} not within 1 MiB below {mem}")
tables = kv.get("acpiTables", [""])[0].split()
for t in ("RSDP", "XSDT", "FACP", "APIC", "DSDT"):
    if t not in tables:
        errs.append(f"ACPI table {t} missing from {tables}")
for k in ("acpiBadChecksum", "error", "vcpuMissing"):
    if k in kv:
        errs.append(f"{k}={kv[k]}")
if kv.get("vcpus") != [str(len(exp))]:
    errs.append(f"vcpus={kv.get('vcpus')} expected {len(exp)}")
for x in errs:
    print(x)
sys.exit(1 if errs else 0)
PY

declare -A CPU=(
	[intel]="$QEMU_CPU_INTEL"
	[amd]="$QEMU_CPU_AMD"
	[amd-nob]="$QEMU_CPU_AMD,level=0xa"
	[intel-leg]="$QEMU_CPU_INTEL,level=0xa"
)

# run MODE S/C/T MEM_MIB
run() {
	local mode=$1 topo=$2 mib=$3 s c t out rc
	IFS=/ read -r s c t <<<"$topo"
	out="$TMPD/$mode-$s-$c-$t-$mib.txt"
	timeout 60 qemu-system-x86_64 -enable-kvm -cpu "${CPU[$mode]}" -m "$mib" \
		-smp "sockets=$s,cores=$c,threads=$t" \
		-nodefaults -no-user-config -nographic -display none -no-reboot \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-M microvm,x-option-roms=off,rtc=off,pit=off,pic=off,isa-serial=on,acpi=on,auto-kernel-cmdline=off \
		-bios "$BIOS" -kernel "$ELF" -serial "file:$out" >"$out.qemu" 2>&1
	rc=$?
	if ((rc != 0)); then
		fail "$mode $topo ${mib}M: qemu exit status $rc (0 = ACPI power-off)"
		sed 's/^/    /' "$out" "$out.qemu" | grep -v 'warning: ' | tail -n 20
		return
	fi
	if python3 "$TMPD/check.py" "$out" "$s" "$c" "$t" "$mode" $((mib << 20)) >"$out.diff"; then
		ok "$mode $topo ${mib}M"
	else
		fail "$mode $topo ${mib}M"
		sed 's/^/    /' "$out.diff"
	fi
}

MATRIX="1/1/1 2/1/1 1/2/1 1/1/2 2/2/2 3/1/1 1/3/1 1/1/3 2/3/2 4/2/1 1/16/2 1/5/3 4/8/2 2/16/2"
for mode in intel amd; do
	for topo in $MATRIX; do
		run "$mode" "$topo" 128
	done
done
for mode in amd-nob intel-leg; do
	for topo in 1/1/1 1/1/2 2/3/2 1/5/3 3/1/1 2/16/2; do
		run "$mode" "$topo" 128
	done
done
# x2APIC: APIC IDs up to 385 (> 254), woken through the x2APIC ICR
run intel 2/65/2 256
for mib in 64 1000 5120; do
	run intel 2/2/1 "$mib"
	run amd 1/3/1 "$mib"
done
finish
