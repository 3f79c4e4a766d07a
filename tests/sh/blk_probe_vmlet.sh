#!/usr/bin/env bash
# vmlet's PCI bus, virtio-blk and virtio-rng as the probe guest sees them,
# driven from a KubeVirt manifest: hostDisk (serial, readonly), emptyDisk,
# cloudInitNoCloud and rng. Disk order, capacity, read-only flag, serial
# and the SHA-256 of the first MiB must match the images; generated images
# must be gone after exit; unsupported buses fail naming the disk; every
# function reads the same through 0xcf8/0xcfc as through ECAM; the write
# test and 32 requests in flight work. The same probe ELF under QEMU (q35)
# must see the same disk and ports and pass the same I/O checks.
source "$(dirname "$0")/../lib/sh.sh"

have_kvm || skip "no usable /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"

python3 - "$TMPD/a.raw" <<'PY'
import sys
open(sys.argv[1], "wb").write(bytes((i * 13 + i // 4096) & 255 for i in range(5 << 20)))
PY
sum_a=$(head -c 1048576 "$TMPD/a.raw" | sha256sum | cut -d' ' -f1)
# the read-only disk reads a copy: one image cannot be a VM's writable and
# its read-only disk at once (the image locks refuse that, as QEMU's do)
cp "$TMPD/a.raw" "$TMPD/a-ro.raw"
sum_zero=$(head -c 1048576 /dev/zero | sha256sum | cut -d' ' -f1)

manifest() { # $1: bus of the last disk
	cat <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: disks, namespace: default}
spec:
  runStrategy: Always
  template:
    spec:
      domain:
        cpu: {cores: 2}
        memory: {guest: 128Mi}
        devices:
          rng: {}
          autoattachPodInterface: false
          disks:
          - {name: root, serial: ROOT-1, disk: {bus: virtio}}
          - {name: ro, disk: {bus: virtio, readonly: true}}
          - {name: scratch, disk: {bus: virtio}}
          - {name: cloudinit, disk: {bus: $1}}
      volumes:
      - {name: root, hostDisk: {path: $TMPD/a.raw, type: Disk}}
      - {name: ro, hostDisk: {path: $TMPD/a-ro.raw, type: Disk}}
      - {name: scratch, emptyDisk: {capacity: 16Mi}}
      - name: cloudinit
        cloudInitNoCloud:
          userData: |
            #cloud-config
            password: x
YAML
}

mkdir -p "$TMPD/tmp"
manifest virtio >"$TMPD/vm.yaml"
for bin in "$VMLET" "$VMLET_SAN"; do
	[[ -x $bin ]] || continue
	TMPDIR=$TMPD/tmp timeout 120 "$bin" probe -f "$TMPD/vm.yaml" --show-console >"$TMPD/out.txt" 2>&1
	rc=$?
	[[ $rc -eq 0 ]] || { fail "$bin probe: status $rc"; tail -5 "$TMPD/out.txt"; continue; }
	mapfile -t d < <(grep '^disk=' "$TMPD/out.txt")
	[[ ${#d[@]} -eq 4 ]] || { fail "$bin: want 4 disks, got ${#d[@]}"; tail -n 8 "$TMPD/out.txt"; continue; }
	[[ ${d[0]} == "disk=00:01.0 5242880 0 $sum_a ROOT-1" ]] && ok "$bin: hostDisk with serial" || fail "$bin: ${d[0]}"
	[[ ${d[1]} == "disk=00:02.0 5242880 1 $sum_a -" ]] && ok "$bin: readonly hostDisk" || fail "$bin: ${d[1]}"
	[[ ${d[2]} == "disk=00:03.0 16777216 0 $sum_zero -" ]] && ok "$bin: emptyDisk" || fail "$bin: ${d[2]}"
	[[ ${d[3]} =~ ^disk=00:04.0\ [0-9]+\ 1\ [0-9a-f]{64}\ -$ ]] && ok "$bin: cloud-init seed disk" || fail "$bin: ${d[3]}"
	grep -qE '^rng=00:0[0-9a-f]\.0 128 ok$' "$TMPD/out.txt" && ok "$bin: rng" || fail "$bin: rng"
	grep -q "^pciCf8=$(grep -c '^pci=' "$TMPD/out.txt")$" "$TMPD/out.txt" &&
		ok "$bin: 0xcf8/0xcfc reads what ECAM reads" || fail "$bin: $(grep '^pciCf8' "$TMPD/out.txt")"
	grep -q '^error=' "$TMPD/out.txt" && fail "$bin: probe errors: $(grep '^error=' "$TMPD/out.txt")"
	left=$(ls "$TMPD/tmp")
	[[ -z $left ]] && ok "$bin: generated images removed" || fail "$bin: left behind: $left"
done

# A hostile guest: malformed chains and rings on every disk; each disk
# must keep serving good requests (after a reset for broken rings).
for bin in "$VMLET" "$VMLET_SAN"; do
	[[ -x $bin ]] || continue
	TMPDIR=$TMPD/tmp timeout 120 "$bin" probe -f "$TMPD/vm.yaml" --cmdline vmlet.hostile \
		--show-console >"$TMPD/out.txt" 2>&1 || { fail "$bin: hostile probe failed"; continue; }
	n_ok=$(grep -c '^hostile=00:0[1-4].0 ok$' "$TMPD/out.txt")
	[[ $n_ok -eq 4 ]] && ok "$bin: hostile guest, 4 disks still correct" ||
		fail "$bin: hostile: $(grep '^hostile=' "$TMPD/out.txt" | tr '\n' ' ')"
	grep -q "^disk=00:01.0 5242880 0 $sum_a ROOT-1$" "$TMPD/out.txt" || fail "$bin: disk after attacks"
done

# -o json: the guest's disks carry the config's names, in order
TMPDIR=$TMPD/tmp timeout 120 "$VMLET" probe -f "$TMPD/vm.yaml" -o json >"$TMPD/out.json" 2>/dev/null ||
	fail "probe -o json failed"
python3 - "$TMPD/out.json" "$sum_a" <<'PY' && ok "json pci/disks/rng" || fail "json pci/disks/rng"
import json, sys
d = json.load(open(sys.argv[1]))
g, e = d["guest"], d["expected"]
names = [x["name"] for x in g["disks"]]
assert names == ["root", "ro", "scratch", "cloudinit"], names
assert [x["name"] for x in e["disks"]] == names
for ge, ee in zip(g["disks"], e["disks"]):
    assert ge["readOnly"] == ee["readOnly"] and ge["serial"] == ee["serial"], (ge, ee)
    assert not ee["capacityBytes"] or ge["capacityBytes"] == ee["capacityBytes"], (ge, ee)
assert g["disks"][0]["sha256First1MiB"] == sys.argv[2]
assert [p["device"] for p in g["pci"]].count("1042") == 4
assert g["rng"] and g["rng"][0]["ok"] and g["rng"][0]["bytes"] == 128
PY

# 32 requests in flight (the probe's bench driver, EVENT_IDX): every 4 KiB
# block read lands in the right buffer; then the same under QEMU, whose
# thread pool completes out of order.
python3 - "$TMPD/tag.raw" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(2048):
        f.write((b"VMLETBLK%08d" % i) * 256)
PY
sed "s|$TMPD/a.raw|$TMPD/tag.raw|" "$TMPD/vm.yaml" >"$TMPD/tag.yaml"
TMPDIR=$TMPD/tmp timeout 120 "$VMLET" probe -f "$TMPD/tag.yaml" --cmdline vmlet.blkbench=verify \
	--show-console >"$TMPD/out.txt" 2>&1
grep -qE '^blkBench=00:01.0 verify 4096 16777216 [1-9][0-9]* 0$' "$TMPD/out.txt" &&
	ok "queue depth 32: every block in its buffer" || fail "qd32: $(grep -a '^blkBench\|^error' "$TMPD/out.txt")"

# The write test (--io-test DISK; vmlet.iotest=<pci address> under QEMU)
# on a scratch image: the
# image then holds what the guest wrote (patterns, a write in two
# segments, write zeroes; the discarded range is not compared); on the
# read-only disk a write is refused and the image is unchanged.
cat >"$TMPD/io.yaml" <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: io, namespace: default}
spec:
  runStrategy: Once
  template:
    spec:
      domain:
        memory: {guest: 128Mi}
        devices:
          autoattachPodInterface: false
          disks:
          - {name: ro, disk: {bus: virtio, readonly: true}}
          - {name: scratch, disk: {bus: virtio}}
      volumes:
      - {name: ro, hostDisk: {path: $TMPD/a.raw, type: Disk}}
      - {name: scratch, hostDisk: {path: $TMPD/s.raw, type: Disk}}
YAML
io_image_ok() { # image: the first 64 KiB as the probe's write test leaves them
	python3 - "$1" <<'PY'
import sys
def fill(n, seed):
    return bytearray((i * 31 + seed + (i >> 9)) & 255 for i in range(n))
want = fill(65536, 1)
want[9 * 512:9 * 512 + 3072] = fill(3072, 77)
want[32 * 512:40 * 512] = bytes(4096)
got = open(sys.argv[1], "rb").read(65536)
sys.exit(0 if got[:32768] == want[:32768] and got[36864:] == want[36864:] else 1)
PY
}
truncate -s 8M "$TMPD/s.raw"
for disk in ro:00:01.0 scratch:00:02.0; do
	TMPDIR=$TMPD/tmp timeout 120 "$VMLET" probe -f "$TMPD/io.yaml" --io-test "${disk%%:*}" \
		--show-console >"$TMPD/out.txt" 2>&1 &&
		grep -q "^ioTest=${disk#*:} ok$" "$TMPD/out.txt" && ok "--io-test ${disk%%:*}" ||
		fail "--io-test ${disk%%:*}: $(grep -a '^ioTest\|^error\|error:' "$TMPD/out.txt")"
done
io_image_ok "$TMPD/s.raw" && ok "the scratch image holds what the guest wrote" || fail "scratch image content"
[[ $(head -c 1048576 "$TMPD/a.raw" | sha256sum | cut -d' ' -f1) == "$sum_a" ]] || fail "the read-only image changed"
# a failed or missing guest verdict fails the probe; an unknown disk is refused
TMPDIR=$TMPD/tmp timeout 120 "$VMLET" probe -f "$TMPD/io.yaml" --io-test scratch \
	--cmdline 'vmlet.iotest=#9' >"$TMPD/out.txt" 2>&1 && fail "--io-test: a failed guest test passed"
grep -q "io-test on disk 'scratch' failed: ioTest=- no-such-disk" "$TMPD/out.txt" ||
	fail "--io-test failure: $(tail -2 "$TMPD/out.txt")"
"$VMLET" probe -f "$TMPD/io.yaml" --io-test nosuch >"$TMPD/out.txt" 2>&1 && fail "--io-test nosuch passed"
grep -q "the VM has no disk 'nosuch'" "$TMPD/out.txt" && ok "--io-test names an unknown disk" ||
	fail "--io-test nosuch: $(tail -2 "$TMPD/out.txt")"

manifest scsi >"$TMPD/bad.yaml"
TMPDIR=$TMPD/tmp timeout 60 "$VMLET" probe -f "$TMPD/bad.yaml" >"$TMPD/out.txt" 2>&1 &&
	fail "a scsi disk was accepted"
grep -q 'spec.template.spec.domain.devices.disks\[3\].disk.bus: bus "scsi" is not supported' "$TMPD/out.txt" &&
	ok "scsi bus refused naming the disk" ||
	fail "no clear error for the scsi disk: $(tail -3 "$TMPD/out.txt")"
[[ -z $(ls "$TMPD/tmp") ]] || fail "failed start left files: $(ls "$TMPD/tmp")"

# The same guest under QEMU sees the same disk.
if command -v qemu-system-x86_64 >/dev/null && [[ -f /usr/share/qemu/qboot.rom ]]; then
	"$VMLET" probe --dump-guest "$TMPD/probe.elf" >/dev/null 2>&1
	timeout 60 qemu-system-x86_64 -enable-kvm -m 128 -nodefaults -no-user-config -nographic \
		-display none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 -M q35 \
		-bios /usr/share/qemu/qboot.rom -kernel "$TMPD/probe.elf" -serial "file:$TMPD/q.txt" \
		-drive "if=none,id=d0,file=$TMPD/a.raw,format=raw,readonly=on" \
		-device virtio-blk-pci,drive=d0,serial=ROOT-1,disable-legacy=on 2>/dev/null
	grep -q "^disk=00:01.0 5242880 1 $sum_a ROOT-1$" "$TMPD/q.txt" && ok "QEMU sees the same disk" ||
		fail "QEMU: $(grep '^disk=' "$TMPD/q.txt")"
	timeout 60 qemu-system-x86_64 -enable-kvm -m 128 -nodefaults -no-user-config -nographic \
		-display none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 -M q35 \
		-bios /usr/share/qemu/qboot.rom -kernel "$TMPD/probe.elf" -serial "file:$TMPD/q2.txt" \
		-append vmlet.blkbench=verify -drive "if=none,id=d0,file=$TMPD/tag.raw,format=raw,readonly=on" \
		-device virtio-blk-pci,drive=d0,disable-legacy=on 2>/dev/null
	grep -qE '^blkBench=00:01.0 verify 4096 16777216 [1-9][0-9]* 0$' "$TMPD/q2.txt" &&
		ok "QEMU: the same queue depth 32 check" || fail "QEMU qd32: $(grep -a '^blkBench\|^error' "$TMPD/q2.txt")"
	truncate -s 8M "$TMPD/s2.raw"
	for at in 00:01.0 00:02.0; do
		timeout 60 qemu-system-x86_64 -enable-kvm -m 128 -nodefaults -no-user-config -nographic \
			-display none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 -M q35 \
			-bios /usr/share/qemu/qboot.rom -kernel "$TMPD/probe.elf" -serial "file:$TMPD/q3.txt" \
			-append "vmlet.iotest=$at" -drive "if=none,id=d0,file=$TMPD/a.raw,format=raw,readonly=on" \
			-device virtio-blk-pci,drive=d0,disable-legacy=on \
			-drive "if=none,id=d1,file=$TMPD/s2.raw,format=raw,discard=unmap" \
			-device virtio-blk-pci,drive=d1,disable-legacy=on 2>/dev/null
		grep -q "^ioTest=$at ok$" "$TMPD/q3.txt" && ok "QEMU: write test on $at" ||
			fail "QEMU: write test on $at: $(grep -a '^ioTest\|^error' "$TMPD/q3.txt")"
	done
	io_image_ok "$TMPD/s2.raw" && ok "QEMU: the scratch image holds what the guest wrote" ||
		fail "QEMU: scratch image content"
	grep -q "^pciCf8=$(grep -c '^pci=' "$TMPD/q.txt")$" "$TMPD/q.txt" &&
		ok "QEMU: the probe's 0xcf8 and ECAM reads agree" || fail "QEMU: $(grep '^pciCf8' "$TMPD/q.txt")"
fi
finish
