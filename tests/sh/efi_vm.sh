#!/usr/bin/env bash
# An EFI VirtualMachine under vmlet: firmware.bootloader.efi with the ESP
# as a virtio hostDisk. vmlet boots its embedded UEFI firmware, which must
# find the disk on PCI, boot tests/efi/testapp.c from it (PASS) and power
# off (exit 0); firmware.serial/uuid must reach the app through SMBIOS and
# an --initrd through LoadFile2 on Linux's initrd media device path (the
# same VM asking for secure boot boots OVMF instead: tests/sh/ovmf_vm.sh).
# The disk part skips while the VMM exposes no PCI (no MCFG yet).
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

have_kvm || skip "no usable /dev/kvm"
[[ -z $(efi_tools) ]] || skip "$(efi_tools)"
tests/efi/build-efi.sh tests/efi/testapp.c "$TMPD/testapp.efi" || exit 1
tests/efi/mkesp.sh "$TMPD/testapp.efi" "$TMPD/esp.img"

efi_vm_yaml efi-test disk=esp:$TMPD/esp.img serial=VMLET-SERIAL-42 \
	uuid=5a7e0c1d-2b3a-4c5d-8e9f-0a1b2c3d4e5f >"$TMPD/vm.yaml"
# an initrd (cpio magic) as the PVH module: LoadFile2 for Linux's EFI stub
python3 -c 'import sys; sys.stdout.buffer.write(b"070701" + bytes((i * 13 + 5) & 255 for i in range(6000)))' \
	>"$TMPD/initrd"
want_sum=$(python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); s = 0
for b in d: s = (s * 31 + b) & 0xffffffff
print(f"initrd.size={len(d)} initrd.sum={s}")' "$TMPD/initrd")
timeout 120 "$VMLET" run -f "$TMPD/vm.yaml" --initrd "$TMPD/initrd" --console "file:$TMPD/out" \
	>"$TMPD/log" 2>&1
rc=$?
if ! grep -q 'efi: pci: ECAM' "$TMPD/out" 2>/dev/null; then
	((n_fail)) && finish
	skip "the VMM exposes no PCI ECAM (MCFG) yet: no virtio disks for the firmware"
fi
sed 's/^/    /' "$TMPD/out" | grep -v '^    ok ' | tail -n 30
((rc == 0)) || fail "vmlet exit status $rc"
if grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/out" && ! grep -q '^FAIL ' "$TMPD/out"; then
	ok "EFI VM booted the ESP from virtio-blk"
	# vmlet's SMBIOS (0xf0000) -> firmware configuration table -> the app
	if grep -q '^smbios.serial=VMLET-SERIAL-42' "$TMPD/out" &&
		grep -q '^smbios.uuid=5a7e0c1d-2b3a-4c5d-8e9f-0a1b2c3d4e5f' "$TMPD/out"; then
		ok "firmware.serial and firmware.uuid reach the EFI application through SMBIOS"
	else
		fail "SMBIOS: $(grep -a '^smbios' "$TMPD/out" | tr -d '\r' | tr '\n' ' ')"
	fi
	if grep -q "^$want_sum" "$TMPD/out"; then
		ok "the initrd module reaches the app through LoadFile2 ($want_sum)"
	else
		fail "initrd: want '$want_sum', got '$(grep -a '^initrd' "$TMPD/out" | tr -d '\r')'"
	fi
else
	fail "EFI VM did not pass"
	tail -n 20 "$TMPD/log"
fi
finish
