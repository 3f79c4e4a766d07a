#!/usr/bin/env bash
# The distribution UEFI boot chain on vmlet's own firmware (issue 13 part
# 2), under QEMU TCG like efi_linux_tcg.sh (independent of our KVM, where
# shim's and GRUB's CPL0 code would run emulated for minutes; the same disk
# boots under vmlet on the real KVM in tests/nested/scenarios/efi-shim-grub.sh).
# The disks are laid out as Debian installs them (tests/efi/mkdisk.sh):
# shim as \EFI\BOOT\BOOTX64.EFI loads GRUB (\EFI\BOOT\grubx64.efi), whose
# prefix /EFI/debian holds grub.cfg; its menu entry loads Debian's cloud
# kernel and our busybox initrd (tests/efi/mkinitrd.sh) and boots them;
# secure boot is off. Three disks:
#   esp        shim-unsigned + GRUB from grub-efi-amd64-bin (grub-mkimage),
#              everything on the ESP, the disk handed over as the PVH module
#              (a RAM disk), QEMU's pc machine
#   ext4-boot  the same, the kernel and initrd on a separate ext4 /boot that
#              \EFI\debian\grub.cfg finds by UUID; the disk on virtio-blk
#              (q35, 2 vCPUs): GRUB reads ext4 itself through BlockIo
#   signed     ext4-boot with Debian's signed binaries (shim-signed,
#              grub-efi-amd64-signed's monolithic GRUB), when apt can fetch them
# Each must reach userspace ("VMLET-EFI-LINUX: done") with "EFI v2.100 by
# vmlet". GRUB's "no suitable video mode" is expected: vmlet's firmware has
# no graphics (GOP); GRUB then boots Linux "in blind mode". Protocols they
# look for that the firmware lacks are listed (efi: LocateProtocol: no ...,
# LocateHandle: no ...); each must be one the firmware names (and so does
# without on purpose), and the console control protocol GRUB asks for text
# mode with is there.
source "$(dirname "$0")/../lib/sh.sh"

command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
BIOS=/usr/share/qemu/qboot.rom
[[ -f $BIOS ]] || skip "no qboot firmware"
SHIM=/usr/lib/shim/shimx64.efi
[[ -f $SHIM ]] || skip "no $SHIM (Debian package shim-unsigned)"
[[ -d /usr/lib/grub/x86_64-efi ]] && command -v grub-mkimage >/dev/null ||
	skip "no grub-mkimage for x86_64-efi (Debian package grub-efi-amd64-bin)"
command -v sgdisk >/dev/null && command -v mcopy >/dev/null && command -v mke2fs >/dev/null ||
	skip "no gdisk/mtools/e2fsprogs"
scripts/fetch-kernel >/dev/null 2>&1 || skip "cannot fetch linux-image-cloud-amd64"
make -s build/fw/efi.elf || { echo "FAIL: cannot build build/fw/efi.elf"; exit 1; }
tests/efi/mkinitrd.sh "$TMPD/initrd.img" build/vmlinuz.efivarfs.ko || skip "cannot build the initrd"
args="console=ttyS0 panic=-1 rdinit=/init nosoftlockup no_timer_check"
tests/efi/mkdisk.sh --esp-boot build/vmlinuz "$TMPD/initrd.img" "$args" "$TMPD/esp.img" ||
	{ fail "tests/efi/mkdisk.sh --esp-boot"; finish; }
tests/efi/mkdisk.sh build/vmlinuz "$TMPD/initrd.img" "$args" "$TMPD/disk.img" ||
	{ fail "tests/efi/mkdisk.sh"; finish; }
# Debian's signed shim and GRUB (not installed by deps.sh: mkdisk.sh takes
# them from the packages' .debs, apt-get download)
signed=1
tests/efi/mkdisk.sh --signed build/vmlinuz "$TMPD/initrd.img" "$args" "$TMPD/signed.img" 2>"$TMPD/signed.err" ||
	signed=0

M=VMLET-EFI-LINUX
boot() { # NAME WANT QEMU-ARGS...
	local name=$1 want=$2 out=$TMPD/$1.out rc t0=$SECONDS
	shift 2
	timeout 300 qemu-system-x86_64 -accel tcg -cpu max -m 512 -nodefaults -no-user-config \
		-nographic -display none -no-reboot -bios "$BIOS" -kernel build/fw/efi.elf \
		-serial "file:$out" "$@" >"$out.qemu" 2>&1
	rc=$?
	tr -d '\r' <"$out" | grep -a -E '^efi: (starting|ExitBoot)|vmlet-efi|^error|efi: EFI v2|^VMLET-EFI-LINUX: (user|done)' |
		sed 's/^/    /'
	echo "    ($name: qemu exit status $rc after $((SECONDS - t0)) s)"
	if ! grep -aq "$want" "$out"; then
		fail "$name: no '$want' from GRUB (did shim start it?)"
		tail -n 20 "$out" "$out.qemu"
	elif ! grep -aq 'efi: EFI v2.100 by vmlet' "$out"; then
		fail "$name: the kernel GRUB started does not see vmlet's firmware"
		tail -n 20 "$out"
	elif ! grep -aq "^$M: done" "$out"; then
		fail "$name: /init did not finish"
		tail -n 20 "$out"
	else
		ok "$name: shim -> GRUB -> Linux -> userspace on vmlet's firmware"
	fi
	# what they asked for and vmlet's firmware does not have (logged once
	# per GUID): each must be one the firmware knows by name, i.e. one we
	# decided it does without (firmware/efi/protocols.c: graphics, network,
	# serial I/O, TPM measurements, memory attributes, unicode collation);
	# the console control protocol both look for is there
	tr -d '\r' <"$out" | grep -ao 'efi: Locate[A-Za-z]*: no .*\|efi: [A-Za-z]*: not supported' |
		sed 's/^/    missing: /'
	while read -r l; do
		fail "$name: a protocol the firmware does not know: $l"
	done < <(tr -d '\r' <"$out" | grep -ao 'efi: Locate[A-Za-z]*: no [-0-9a-f]*$')
	grep -aqE 'Oops|BUG:|Kernel panic' "$out" && fail "$name: the kernel oopsed"
	((rc == 0)) || fail "$name: qemu exit status $rc (0 = powered off)"
}
G="vmlet-efi: GRUB loaded the kernel and initrd from"
boot esp "$G hd0,gpt1" -initrd "$TMPD/esp.img"
boot ext4-boot "$G hd0,gpt2" -M q35 -smp 2 \
	-drive "if=none,id=d0,file=$TMPD/disk.img,format=raw,readonly=on" \
	-device virtio-blk-pci,drive=d0,disable-legacy=on
if ((signed)); then
	boot signed "$G hd0,gpt2" -M q35 -smp 2 \
		-drive "if=none,id=d0,file=$TMPD/signed.img,format=raw,readonly=on" \
		-device virtio-blk-pci,drive=d0,disable-legacy=on
else
	echo "    (signed: not run, $(cat "$TMPD/signed.err"))"
fi
finish
