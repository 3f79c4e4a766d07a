#!/usr/bin/env bash
# vmlet's UEFI firmware boots a real Linux to userspace, checked on an
# independent platform: QEMU with TCG (no KVM at all: our kvm-pvm hosts
# emulate CPL0 too slowly for a kernel, and cannot emulate some of what it
# executes; TCG runs it in seconds). Debian's cloud kernel is
# \EFI\BOOT\BOOTX64.EFI on a GPT+FAT ESP, the initrd is a static busybox
# (tests/efi/mkinitrd.sh). Two boots:
#  1. q35 (full ACPI, 2 vCPUs that Linux brings up): the ESP on a virtio-blk
#     disk, the initrd as the PVH module, which the firmware serves through
#     LoadFile2 on Linux's initrd media device path; Linux powers off
#     through ACPI S5.
#  2. microvm (hardware-reduced ACPI): the ESP as the PVH module (a RAM
#     disk, as `vmlet run --kernel efi.elf --initrd esp.img`), the initrd
#     read by the stub through initrd= and our SimpleFileSystem; Linux
#     powers off through the runtime ResetSystem, which writes the sleep
#     control register: MMIO that the memory map must give the OS as a
#     runtime region (a page fault in the firmware otherwise).
# Each boot must go through the EFI stub and ExitBootServices to the
# kernel ("EFI v2.100 by vmlet"), reach /init, see the runtime regions
# Linux mapped with SetVirtualAddressMap, read a variable and write and
# read back another one through runtime services (efivarfs), and power
# off (QEMU exit 0) without an oops.
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
	# (TCG is all host CPU: ~10 s a boot on an idle host, 30-40 s at load
	# 7, so the bound is generous)
	timeout 300 qemu-system-x86_64 -accel tcg -cpu max -m 512 -nodefaults \
		-no-user-config -nographic -display none -no-reboot -bios "$BIOS" \
		-kernel build/fw/efi.elf -serial "file:$out" "$@" >"$out.qemu" 2>&1 &
	local qpid=$! stopped=0
	while kill -0 $qpid 2>/dev/null; do # an oops never powers off: stop at once
		if grep -aqE 'Oops|Kernel panic' "$out" 2>/dev/null; then
			sleep 1 && kill $qpid && stopped=1
			break
		fi
		sleep 0.5
	done
	wait $qpid
	rc=$?
	((stopped)) && rc=143
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
	if [[ $name == q35* ]] && ! grep -aq 'smp: Brought up 1 node, 2 CPUs' "$out"; then
		fail "$name: Linux did not bring up the second vCPU"
	fi
	if grep -aqE 'Oops|BUG:|Kernel panic' "$out"; then
		fail "$name: the kernel oopsed"
		grep -aE -A12 'Oops|BUG:|Kernel panic' "$out" | head -n 30
	fi
	((rc == 0)) || fail "$name: qemu exit status $rc (0 = powered off)"
}

# (nosoftlockup: a vCPU the loaded host does not run for 20 s is not a
# "BUG: soft lockup" of ours)
boot q35-loadfile2 "Loaded initrd from LINUX_EFI_INITRD_MEDIA_GUID device path" -M q35 -smp 2 \
	-drive "if=none,id=d0,file=$TMPD/esp.img,format=raw,readonly=on" \
	-device virtio-blk-pci,drive=d0,disable-legacy=on \
	-initrd "$TMPD/initrd.img" -append 'console=ttyS0 panic=-1 nosoftlockup'
# (TCG microvm has no kvmclock, PIT gate or HPET to calibrate the TSC with)
boot microvm-ramdisk "Loaded initrd from command line option" \
	-M microvm,x-option-roms=off,rtc=on,acpi=on,auto-kernel-cmdline=off -initrd "$TMPD/esp.img" \
	-append 'initrd=\initrd.img console=ttyS0 panic=-1 efi=debug tsc_early_khz=2000000 nosoftlockup'
if grep -aqE "^$M: runtime-map type=0xb " "$TMPD/microvm-ramdisk.out"; then
	ok "microvm: the sleep control register is runtime MMIO in the memory map"
else
	fail "microvm: no runtime MMIO region for the sleep control register"
fi
finish
