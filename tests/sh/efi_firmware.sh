#!/usr/bin/env bash
# `vmlet run --firmware PATH`: an external PVH firmware ELF instead of the
# built-in UEFI firmware, with the same ACPI tables. Checked with
#   - vmlet's own firmware copied to a file, booting the gnu-efi test app
#     from the ESP disk of an EFI VirtualMachine (PASS, serial from SMBIOS);
#   - the probe guest (`vmlet probe --dump-guest`) as the "firmware": it
#     must report the ACPI tables vmlet built (FACP, APIC, MCFG, DSDT);
#   - a text file, an ELF without a PVH note and a secure-boot VM with
#     --firmware: refused with a clear message, exit 1; --firmware with
#     --kernel: a usage error, exit 2.
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

have_kvm || skip "no usable /dev/kvm"

efi_vm_yaml efi-fw serial=FW-FILE-1 disk=esp:$TMPD/esp.img >"$TMPD/vm.yaml"

# the probe as the firmware (no ESP needed: an empty disk)
truncate -s 1M "$TMPD/esp.img"
"$VMLET" probe --dump-guest "$TMPD/probe.elf" || exit 1
timeout 60 "$VMLET" run -f "$TMPD/vm.yaml" --firmware "$TMPD/probe.elf" \
	--console "file:$TMPD/probe.out" >"$TMPD/probe.log" 2>&1
rc=$?
tables=$(grep -a '^acpiTables=' "$TMPD/probe.out" | tr -d '\r')
if ((rc == 0)) && [[ $tables == *FACP* && $tables == *APIC* && $tables == *MCFG* &&
	$tables == *DSDT* ]]; then
	ok "the probe ELF boots as --firmware and sees vmlet's ACPI tables ($tables)"
else
	fail "probe as --firmware: status $rc, '$tables'"
	tail -n 5 "$TMPD/probe.log" "$TMPD/probe.out"
fi

# errors
echo "not a firmware" >"$TMPD/text.fw"
efi_refused "a text file" 1 "is not a PVH firmware" \
	"$VMLET" run -f "$TMPD/vm.yaml" --firmware "$TMPD/text.fw" --console none
efi_refused "an ELF without a PVH note" 1 "not a loadable PVH ELF" \
	"$VMLET" run -f "$TMPD/vm.yaml" --firmware /bin/true --console none
efi_refused "a missing file" 1 "cannot open firmware" \
	"$VMLET" run -f "$TMPD/vm.yaml" --firmware "$TMPD/nothere" --console none
efi_refused "--firmware with --kernel" 2 "exclude each other" \
	"$VMLET" run --firmware "$TMPD/probe.elf" --kernel "$TMPD/probe.elf" --console none
efi_vm_yaml efi-fw sb=true disk=esp:$TMPD/esp.img >"$TMPD/sb.yaml"
efi_refused "secure boot with --firmware" 1 "secure boot is requested" \
	"$VMLET" run -f "$TMPD/sb.yaml" --firmware "$TMPD/probe.elf" --console none

# vmlet's own firmware from a file, booting the test app from the ESP disk
[[ -z $(efi_tools) ]] || { echo "skip: $(efi_tools)"; finish; }
make -s build/fw/efi.elf || { echo "FAIL: cannot build build/fw/efi.elf"; exit 1; }
cp build/fw/efi.elf "$TMPD/own.fw"
tests/efi/build-efi.sh tests/efi/testapp.c "$TMPD/testapp.efi" || exit 1
tests/efi/mkesp.sh "$TMPD/testapp.efi" "$TMPD/esp.img"
timeout 120 "$VMLET" run -f "$TMPD/vm.yaml" --firmware "$TMPD/own.fw" \
	--console "file:$TMPD/out" >"$TMPD/log" 2>&1
rc=$?
if ((rc == 0)) && grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/out" && ! grep -q '^FAIL ' "$TMPD/out" &&
	grep -q '^smbios.serial=FW-FILE-1' "$TMPD/out"; then
	ok "vmlet's firmware from a file boots the ESP (SMBIOS serial FW-FILE-1)"
else
	fail "own firmware as --firmware: status $rc"
	grep -av '^ok ' "$TMPD/out" | tail -n 20
	tail -n 5 "$TMPD/log"
fi
finish
