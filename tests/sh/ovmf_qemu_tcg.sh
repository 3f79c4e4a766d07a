#!/usr/bin/env bash
# The oracle for OVMF secure boot (issue 13 part 3): Debian's OVMF under
# QEMU q35 with TCG (independent of our KVM: OVMF's CPL0 SSE code cannot
# run on kvm-pvm), the same firmware and variable template vmlet uses for a
# secure-boot VM (OVMF_CODE_4M.fd, a copy of OVMF_VARS_4M.ms.fd) and the
# disks of tests/nested/scenarios-ovmf/:
#   signed    tests/efi/mkdisk.sh --signed: Microsoft-signed shim ->
#             Debian-signed GRUB -> Debian's signed cloud kernel; Linux must
#             reach userspace saying "Secure boot enabled", and the
#             variable its /init writes (VmletLinuxTest) must be in the
#             vars file afterwards (the flash is the store)
#   tampered  the same disk with one byte of shim changed: the firmware
#             must refuse it (BdsDxe: "failed to load Boot0001 ... Access
#             Denied" on the console: the signature does not match) and
#             start nothing of it
source "$(dirname "$0")/../lib/sh.sh"

command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
CODE=/usr/share/OVMF/OVMF_CODE_4M.fd VARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
[[ -f $CODE && -f $VARS ]] || skip "Debian's ovmf package is not installed"
command -v sgdisk >/dev/null && command -v mcopy >/dev/null && command -v mkfs.vfat >/dev/null ||
	skip "no gdisk/mtools/dosfstools"
scripts/fetch-kernel >/dev/null 2>&1 || skip "cannot fetch linux-image-cloud-amd64"
tests/efi/mkinitrd.sh "$TMPD/initrd.img" build/vmlinuz.efivarfs.ko || skip "cannot build the initrd"
args="console=ttyS0 panic=-1 rdinit=/init nosoftlockup no_timer_check"
tests/efi/mkdisk.sh --signed build/vmlinuz "$TMPD/initrd.img" "$args" "$TMPD/signed.img" \
	2>"$TMPD/mkdisk.err" || skip "no signed boot chain: $(tail -n 1 "$TMPD/mkdisk.err")"
# tampered: one byte in the middle of shim's image (its code), signature kept
# (mkdisk.sh took it from the installed package or fetched it into build/efi-pkgs)
shim=/usr/lib/shim/shimx64.efi.signed
[[ -f $shim ]] || shim=build/efi-pkgs/shim-signed$shim
python3 - "$shim" "$TMPD/shim-tampered.efi" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[len(d) // 2] ^= 0x01
open(sys.argv[2], "wb").write(d)
PY
SHIM=$TMPD/shim-tampered.efi tests/efi/mkdisk.sh --signed build/vmlinuz "$TMPD/initrd.img" "$args" \
	"$TMPD/tampered.img" || { fail "mkdisk (tampered)"; finish; }

# boot NAME DISK PATTERN: QEMU until PATTERN is on the console (or 300 s)
boot() {
	local name=$1 disk=$2 pat=$3 out=$TMPD/$1.out t0=$SECONDS pid i
	cp "$VARS" "$TMPD/$name.vars"
	qemu-system-x86_64 -accel tcg -M q35 -cpu max -m 512 -nodefaults -no-user-config \
		-nographic -display none -no-reboot -serial "file:$out" \
		-drive "if=pflash,format=raw,readonly=on,file=$CODE" \
		-drive "if=pflash,format=raw,file=$TMPD/$name.vars" \
		-drive "if=none,id=d0,file=$disk,format=raw,readonly=on" \
		-device virtio-blk-pci,drive=d0,disable-legacy=on >"$out.qemu" 2>&1 &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		grep -aq -- "$pat" "$out" 2>/dev/null && break
		kill -0 $pid 2>/dev/null || break
		sleep 1
	done
	sleep 1
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "    ($name: $((SECONDS - t0)) s)"
	tr -d '\r' <"$out" | grep -a -E 'BdsDxe|Secure boot|Welcome to GRUB|VMLET-EFI-LINUX: (userspace|done)' |
		sed 's/^/    /' | head -n 8
}

boot signed "$TMPD/signed.img" "VMLET-EFI-LINUX: done"
o=$TMPD/signed.out
grep -aq 'Secure boot enabled' "$o" && grep -aq 'VMLET-EFI-LINUX: done' "$o" &&
	ok "signed shim -> GRUB -> kernel booted to userspace with secure boot enabled" ||
	{ fail "signed chain under OVMF"; tail -n 20 "$o"; }
grep -aq 'VmletLinuxTest=written-by-linux' "$o" &&
	python3 -c 'import sys; sys.exit(0 if "VmletLinuxTest".encode("utf-16-le") in open(sys.argv[1], "rb").read() else 1)' \
		"$TMPD/signed.vars" && ok "the variable Linux wrote is in the vars file (flash)" ||
	fail "the variable Linux wrote is not in the vars file"

boot tampered "$TMPD/tampered.img" "No bootable option"
o=$TMPD/tampered.out
# the disk's boot option: LoadImage fails verification (a signed image
# whose hash does not match: Access Denied; unsigned: Security Violation)
v=$(tr -d '\r' <"$o" | grep -aE 'failed to load Boot.*Pci\(0x1,0x0\): (Access Denied|Security Violation)')
[[ -n $v ]] && ! grep -aq 'Welcome to GRUB' "$o" &&
	ok "tampered shim refused by the firmware: $v" ||
	{ fail "tampered shim not refused"; tail -n 20 "$o"; }
finish
