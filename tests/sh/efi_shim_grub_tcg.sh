#!/usr/bin/env bash
# The distribution UEFI boot chain on vmlet's own firmware (issue 13 part
# 2), under QEMU TCG like efi_linux_tcg.sh (independent of our KVM, where
# shim's and GRUB's CPL0 code would run emulated for minutes): Debian's
# shim (shim-unsigned, as \EFI\BOOT\BOOTX64.EFI) loads GRUB (built from
# grub-efi-amd64-bin with grub-mkimage, \EFI\BOOT\grubx64.efi, its grub.cfg
# embedded), which loads Debian's cloud kernel and our busybox initrd
# (tests/efi/mkinitrd.sh) and boots them; secure boot is off. Two layouts:
#   esp        everything on the ESP, the disk handed over as the PVH module
#              (a RAM disk), QEMU's pc machine
#   ext4-boot  kernel and initrd on a separate ext4 partition (/boot), found
#              by label; the disk on virtio-blk (q35, 2 vCPUs): GRUB reads
#              ext4 itself through the firmware's BlockIo
# Each must reach userspace ("VMLET-EFI-LINUX: done") with "EFI v2.100 by
# vmlet". GRUB's "no suitable video mode" is expected: vmlet's firmware has
# no graphics (GOP); GRUB then boots Linux "in blind mode". Protocols they
# look for that the firmware lacks are listed (efi: LocateProtocol: no ...).
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
export MTOOLS_SKIP_CHECK=1
args="console=ttyS0 panic=-1 rdinit=/init nosoftlockup no_timer_check"

# grub_efi OUT "CONFIG LINES": GRUB with the config embedded
grub_efi() {
	printf 'set timeout=0\necho "vmlet-grub: GRUB runs"\n%s\nlinux /vmlinuz %s\ninitrd /initrd.img\nboot\n' \
		"$2" "$args" >"$TMPD/grub.cfg"
	grub-mkimage -O x86_64-efi -o "$1" -p /EFI/BOOT -c "$TMPD/grub.cfg" part_gpt fat ext2 normal \
		linux echo search search_fs_file search_label configfile boot
}

# layout 1: everything on the ESP
grub_efi "$TMPD/grub-esp.efi" 'search --no-floppy --file --set=root /vmlinuz' || { fail "grub-mkimage"; finish; }
ESP_MB=40 ESP_EXTRA="$TMPD/grub-esp.efi:/EFI/BOOT/grubx64.efi build/vmlinuz:/vmlinuz $TMPD/initrd.img:/initrd.img" \
	tests/efi/mkesp.sh "$SHIM" "$TMPD/esp.img"

# layout 2: shim and GRUB on the ESP, /boot on ext4 (label vmletboot)
grub_efi "$TMPD/grub-ext4.efi" 'search --no-floppy --label --set=root vmletboot
echo "vmlet-grub: /boot is $root"' || { fail "grub-mkimage"; finish; }
mkdir -p "$TMPD/boot"
cp build/vmlinuz "$TMPD/boot/vmlinuz"
cp "$TMPD/initrd.img" "$TMPD/boot/initrd.img"
mke2fs -q -t ext4 -L vmletboot -d "$TMPD/boot" -F "$TMPD/boot.ext4" 40M
truncate -s 8M "$TMPD/fat.img"
mkfs.vfat "$TMPD/fat.img" >/dev/null
mmd -i "$TMPD/fat.img" ::/EFI ::/EFI/BOOT
mcopy -i "$TMPD/fat.img" "$SHIM" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$TMPD/fat.img" "$TMPD/grub-ext4.efi" ::/EFI/BOOT/grubx64.efi
truncate -s 50M "$TMPD/disk.img"
sgdisk -n 1:2048:+8M -t 1:ef00 -n 2:18432:+40M -t 2:8300 "$TMPD/disk.img" >/dev/null
dd if="$TMPD/fat.img" of="$TMPD/disk.img" bs=512 seek=2048 conv=notrunc status=none
dd if="$TMPD/boot.ext4" of="$TMPD/disk.img" bs=512 seek=18432 conv=notrunc status=none

M=VMLET-EFI-LINUX
boot() { # NAME WANT QEMU-ARGS...
	local name=$1 want=$2 out=$TMPD/$1.out rc t0=$SECONDS
	shift 2
	timeout 300 qemu-system-x86_64 -accel tcg -cpu max -m 512 -nodefaults -no-user-config \
		-nographic -display none -no-reboot -bios "$BIOS" -kernel build/fw/efi.elf \
		-serial "file:$out" "$@" >"$out.qemu" 2>&1
	rc=$?
	tr -d '\r' <"$out" | grep -a -E '^efi: (starting|ExitBoot)|vmlet-grub|^error|efi: EFI v2|^VMLET-EFI-LINUX: (user|done)' |
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
	# per GUID): today the legacy console control protocol, which GRUB
	# uses when present
	grep -a '^efi: LocateProtocol: no ' "$out" | tr -d '\r' | sed 's/^/    missing: /' 
	grep -aqE 'Oops|BUG:|Kernel panic' "$out" && fail "$name: the kernel oopsed"
	((rc == 0)) || fail "$name: qemu exit status $rc (0 = powered off)"
}
boot esp "vmlet-grub: GRUB runs" -initrd "$TMPD/esp.img"
boot ext4-boot "vmlet-grub: /boot is hd0,gpt2" -M q35 -smp 2 \
	-drive "if=none,id=d0,file=$TMPD/disk.img,format=raw,readonly=on" \
	-device virtio-blk-pci,drive=d0,disable-legacy=on
finish
