#!/usr/bin/env bash
# vmlet's UEFI firmware (build/fw/efi.elf) under QEMU microvm, the
# independent VMM: it must boot tests/efi/testapp.c (built with Debian's
# gnu-efi) from a GPT + FAT ESP handed over as the PVH module, the app must
# report PASS for every check (memory map, protocols, file read, RNG,
# variables, time from QEMU's RTC, timers, ACPI table) and power off
# through ResetSystem (QEMU exit 0); also from a virtio-blk disk on q35,
# where QEMU's SMBIOS (type 1 serial) must reach the application. Also: a damaged BOOTX64.EFI and an ESP
# without one end in a clean "nothing to boot" power-off.
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
have_kvm || skip "no usable /dev/kvm"
[[ -z $(efi_tools) ]] || skip "$(efi_tools)"
BIOS=/usr/share/qemu/qboot.rom
[[ -f $BIOS ]] || BIOS=/usr/share/qemu/bios-microvm.bin
[[ -f $BIOS ]] || skip "no qboot firmware for microvm"
make -s build/fw/efi.elf || { echo "FAIL: cannot build build/fw/efi.elf"; exit 1; }
tests/efi/build-efi.sh tests/efi/testapp.c "$TMPD/testapp.efi" || exit 1

# The CPU model (see QEMU_CPU_INTEL in tests/lib/sh.sh) plus RDRAND, which
# the firmware's EFI_RNG_PROTOCOL needs and the test app checks.
QCPU=$QEMU_CPU_INTEL,+rdrand

run_qemu() { # disk cmdline out
	timeout 120 qemu-system-x86_64 -enable-kvm -cpu "$QCPU" -m 128 \
		-nodefaults -no-user-config -nographic -display none -no-reboot \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-M microvm,x-option-roms=off,rtc=on,pit=off,pic=off,isa-serial=on,acpi=on,auto-kernel-cmdline=off \
		-bios "$BIOS" -kernel build/fw/efi.elf -initrd "$1" -append "$2" \
		-serial "file:$3" >"$3.qemu" 2>&1
}

tests/efi/mkesp.sh "$TMPD/testapp.efi" "$TMPD/esp.img"
run_qemu "$TMPD/esp.img" rtc "$TMPD/out"
rc=$?
sed 's/^/    /' "$TMPD/out"
((rc == 0)) || fail "qemu exit status $rc (0 = ResetSystem power-off)"
if grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/out" && ! grep -q '^FAIL ' "$TMPD/out"; then
	ok "test application: $(grep '^VMLET-EFI-TEST: PASS' "$TMPD/out" | tr -d '\r')"
else
	fail "test application did not pass"
fi

# the same ESP on a virtio-blk disk (q35: PCI with MCFG)
timeout 120 qemu-system-x86_64 -enable-kvm -cpu "$QCPU" -m 128 -nodefaults -no-user-config \
	-nographic -display none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 \
	-M q35 -bios "$BIOS" -kernel build/fw/efi.elf -append rtc \
	-smbios type=1,serial=VMLET-SER-7 \
	-drive "if=none,id=d0,file=$TMPD/esp.img,format=raw,readonly=on" \
	-device virtio-blk-pci,drive=d0,disable-legacy=on \
	-serial "file:$TMPD/out3" >"$TMPD/out3.qemu" 2>&1
rc=$?
if ((rc == 0)) && grep -q 'virtio-blk 00:' "$TMPD/out3" && grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/out3" &&
	! grep -q '^FAIL ' "$TMPD/out3"; then
	ok "test application from a virtio-blk disk (q35)"
	if grep -q '^smbios.serial=VMLET-SER-7' "$TMPD/out3"; then
		ok "the VMM's SMBIOS reaches the application (serial VMLET-SER-7)"
	else
		fail "SMBIOS table not passed on: $(grep -a '^smbios' "$TMPD/out3")"
	fi
else
	fail "virtio-blk boot under q35: status $rc"
	sed 's/^/    /' "$TMPD/out3" "$TMPD/out3.qemu" | grep -v '^    ok ' | tail -n 20
fi

# BOOTX64.EFI that is not a PE image: refused, then a clean power-off
head -c 4096 /dev/urandom >"$TMPD/junk.efi"
tests/efi/mkesp.sh "$TMPD/junk.efi" "$TMPD/junk.img"
run_qemu "$TMPD/junk.img" "" "$TMPD/out2"
rc=$?
if ((rc == 0)) && grep -q 'cannot load' "$TMPD/out2" && grep -q 'nothing (more) to boot' "$TMPD/out2"; then
	ok "a damaged BOOTX64.EFI is refused"
else
	fail "damaged BOOTX64.EFI: status $rc"
	sed 's/^/    /' "$TMPD/out2"
fi
finish
