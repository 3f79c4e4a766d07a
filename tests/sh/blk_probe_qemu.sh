#!/usr/bin/env bash
# The probe's virtio drivers (firmware/lib/pci.c, virtio.c) against QEMU's
# virtio-blk-pci and virtio-rng-pci on q35: an independent check of the
# drivers that also drive vmlet's devices. Capacity, read-only flag,
# serial and the SHA-256 of the first MiB must match the image.
source "$(dirname "$0")/../lib/sh.sh"

ELF=${PROBE_ELF:-build/fw/probe.elf}
[[ -f $ELF ]] || make -s "$ELF" || { echo "FAIL: cannot build $ELF"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
have_kvm || skip "no usable /dev/kvm"
BIOS=/usr/share/qemu/qboot.rom
[[ -f $BIOS ]] || skip "no qboot firmware"

python3 - "$TMPD/a.raw" <<'PY'
import sys
open(sys.argv[1], "wb").write(bytes((i * 7 + i // 512) & 255 for i in range(3 << 20)))
PY
head -c 700000 /dev/urandom >"$TMPD/b.raw" # smaller than 1 MiB, not sector-sized
truncate -s 700416 "$TMPD/b.raw"
sum_a=$(head -c 1048576 "$TMPD/a.raw" | sha256sum | cut -d' ' -f1)
sum_b=$(sha256sum <"$TMPD/b.raw" | cut -d' ' -f1)

run_qemu() {
	timeout 60 qemu-system-x86_64 -enable-kvm -m 128 -nodefaults -no-user-config \
		-nographic -display none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-M q35 -bios "$BIOS" -kernel "$ELF" -serial "file:$TMPD/out.txt" \
		-drive "if=none,id=d0,file=$TMPD/a.raw,format=raw,readonly=on" \
		-device virtio-blk-pci,drive=d0,serial=SER-42,disable-legacy=on \
		-drive "if=none,id=d1,file=$TMPD/b.raw,format=raw" \
		-device virtio-blk-pci,drive=d1,disable-legacy=on \
		-device virtio-rng-pci,disable-legacy=on 2>"$TMPD/qemu.err"
}
run_qemu
grep -q VMLET-PROBE-END "$TMPD/out.txt" || { cat "$TMPD/out.txt" "$TMPD/qemu.err"; fail "no probe report"; finish; }
grep -E '^(pci|disk|rng|error)' "$TMPD/out.txt" | sed 's/^/    /'
grep -q "^error=" "$TMPD/out.txt" && fail "probe reported errors"
mapfile -t disks < <(grep '^disk=' "$TMPD/out.txt")
[[ ${#disks[@]} -eq 2 ]] || fail "want 2 disk lines, got ${#disks[@]}"
[[ ${disks[0]#disk=* } == "3145728 1 $sum_a SER-42" ]] && ok "read-only disk with serial" ||
	fail "disk 0: '${disks[0]}'"
[[ ${disks[1]#disk=* } == "700416 0 $sum_b -" ]] && ok "writable disk without serial, short image" ||
	fail "disk 1: '${disks[1]}'"
grep -qE '^rng=00:[0-9a-f]{2}\.0 128 ok$' "$TMPD/out.txt" && ok "entropy" || fail "rng line"
[[ $(grep -c '^pci=.* 1af4:104[24] ' "$TMPD/out.txt") -eq 3 ]] && ok "pci functions" ||
	fail "virtio functions missing from pci lines"
finish
