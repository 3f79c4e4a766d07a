#!/usr/bin/env bash
# vmlet's UEFI firmware boots a real Linux to userspace, checked on an
# independent platform: QEMU q35 with TCG (no KVM at all: our kvm-pvm
# hosts emulate CPL0 too slowly for a kernel, TCG runs it in seconds).
# Debian's cloud kernel is \EFI\BOOT\BOOTX64.EFI on a GPT+FAT ESP on a
# virtio-blk disk; the initrd (static busybox, tests/efi/mkinitrd.sh) comes
#  1. from the ESP through initrd= on the command line (the stub reads it
#     through our SimpleFileSystem), and
#  2. as the PVH module, which the firmware serves through LoadFile2 on
#     Linux's initrd media device path.
# Each boot must go through the EFI stub and ExitBootServices to the
# kernel ("EFI v2.100 by vmlet"), reach /init, see the runtime regions
# Linux mapped with SetVirtualAddressMap, read a variable and write and
# read back another one through runtime services (efivarfs), and power
# off (QEMU exit 0).
# Skips when the kernel cannot be fetched (scripts/fetch-kernel; deps.sh
# fetches it) or a tool is missing.
source "$(dirname "$0")/../lib/sh.sh"

command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
BIOS=/usr/share/qemu/qboot.rom
[[ -f $BIOS ]] || skip "no qboot firmware"
command -v sgdisk >/dev/null && command -v mcopy >/dev/null || skip "no gdisk/mtools"
scripts/fetch-kernel >/dev/null 2>&1 || skip "cannot fetch linux-image-cloud-amd64"
make -s build/fw/efi.elf || { echo "FAIL: cannot build build/fw/efi.elf"; exit 1; }
tests/efi/mkinitrd.sh "$TMPD/initrd.img" build/vmlinuz.efivarfs.ko || skip "cannot build the initrd"
ESP_MB=32 ESP_EXTRA="$TMPD/initrd.img:/initrd.img" tests/efi/mkesp.sh build/vmlinuz "$TMPD/esp.img"

M=VMLET-EFI-LINUX
# boot NAME STUB-MESSAGE QEMU-ARGS...: one boot and its checks
boot() {
	local name=$1 stub=$2 out=$TMPD/$1.out rc t0=$SECONDS
	shift 2
	timeout 240 qemu-system-x86_64 -accel tcg -cpu max -m 512 -smp 1 -nodefaults \
		-no-user-config -nographic -display none -no-reboot -M q35 -bios "$BIOS" \
		-kernel build/fw/efi.elf \
		-drive "if=none,id=d0,file=$TMPD/esp.img,format=raw,readonly=on" \
		-device virtio-blk-pci,drive=d0,disable-legacy=on \
		-serial "file:$out" "$@" >"$out.qemu" 2>&1
	rc=$?
	grep -a -E '^efi: |EFI stub|efi: EFI v|Run /init|Kernel panic|^VMLET' "$out" | tr -d '\r' |
		sed 's/^/    /'
	echo "    ($name: qemu exit status $rc after $((SECONDS - t0)) s)"
	if ! grep -aq "^EFI stub: $stub" "$out"; then
		fail "$name: no 'EFI stub: $stub'"
	elif ! grep -aq 'efi: EFI v2.100 by vmlet' "$out"; then
		fail "$name: the kernel did not start after ExitBootServices"
		tail -n 30 "$out" "$out.qemu"
	elif ! grep -aq "^$M: done" "$out"; then
		fail "$name: /init did not finish"
		tail -n 30 "$out" "$out.qemu"
	else
		ok "$name: Linux went through the EFI stub to userspace"
	fi
	# SetVirtualAddressMap: our runtime code (EfiRuntimeServicesCode = 5)
	# got a virtual address in the kernel's EFI region
	if grep -aqE "^$M: runtime-map type=0x5 phys=0x[0-9a-f]+ virt=0xffff" "$out"; then
		ok "$name: runtime code mapped by SetVirtualAddressMap"
	else
		fail "$name: no runtime code region in /sys/firmware/efi/runtime-map"
	fi
	if grep -aq "^$M: PlatformLang=en-US" "$out" &&
		grep -aq "^$M: VmletLinuxTest=written-by-linux" "$out"; then
		ok "$name: runtime GetVariable/SetVariable from Linux (efivarfs)"
	else
		fail "$name: EFI variables through efivarfs: $(grep -a "^$M: [PV]" "$out" | tr '\n' ' ')"
	fi
	((rc == 0)) || fail "$name: qemu exit status $rc (0 = powered off)"
}

boot initrd-option "Loaded initrd from command line option" \
	-append 'initrd=\initrd.img console=ttyS0 panic=-1 efi=debug'
boot loadfile2 "Loaded initrd from LINUX_EFI_INITRD_MEDIA_GUID device path" \
	-initrd "$TMPD/initrd.img" -append 'console=ttyS0 panic=-1'
finish
