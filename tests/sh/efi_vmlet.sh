#!/usr/bin/env bash
# vmlet's UEFI firmware under vmlet itself: `vmlet run` with the firmware as
# the PVH kernel and the ESP image as its module must run
# tests/efi/testapp.c to PASS and exit 0 (ResetSystem power-off). Skips
# while `vmlet run` cannot boot PVH ELFs yet. (The same firmware is checked
# under QEMU by efi_qemu.sh.)
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

have_kvm || skip "no usable /dev/kvm"
[[ -z $(efi_tools) ]] || skip "$(efi_tools)"
make -s build/fw/efi.elf || { echo "FAIL: cannot build build/fw/efi.elf"; exit 1; }
tests/efi/build-efi.sh tests/efi/testapp.c "$TMPD/testapp.efi" || exit 1
tests/efi/mkesp.sh "$TMPD/testapp.efi" "$TMPD/esp.img"

timeout 120 "$VMLET" run -f examples/vm --run-strategy Once --kernel build/fw/efi.elf --initrd "$TMPD/esp.img" \
	--console "file:$TMPD/out" >"$TMPD/log" 2>&1
rc=$?
if grep -qiE 'not implemented|unknown option|unrecognized option|pvh.*not supported' "$TMPD/log"; then
	skip "vmlet run cannot boot a PVH ELF with a module yet: $(head -n1 "$TMPD/log")"
fi
sed 's/^/    /' "$TMPD/out" "$TMPD/log" 2>/dev/null | tail -n 60
((rc == 0)) || fail "vmlet exit status $rc"
if grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/out" 2>/dev/null && ! grep -q '^FAIL ' "$TMPD/out"; then
	ok "test application under vmlet"
else
	fail "test application did not pass under vmlet"
fi
# what it looked for and the firmware does not provide, logged once by
# GUID (and name where the firmware knows it), and a service it does not
# implement, by name
for l in 'LocateHandle: no 9042a9de-23dc-4a38-96fb-7aded080516a (graphics output)' \
	'LocateProtocol: no 6d6c6576-0001-0002-0304-050607080901' 'SetTime: not supported'; do
	[[ $(grep -c "^efi: $l\$" "$TMPD/out") == 1 ]] && ok "logged once: $l" ||
		fail "not logged once: efi: $l"
done
finish
