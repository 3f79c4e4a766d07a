#!/usr/bin/env bash
# The probe under vmlet's UEFI firmware: `vmlet probe` on an EFI VM hands
# the probe ELF to the embedded firmware as its PVH module; the firmware
# sets up as for any boot, exits boot services and enters the probe, which
# reports the firmware it ran under (efiVendor/efiRevision/efiTables) next
# to topology, memory, ACPI and devices. Checked under vmlet (JSON "efi",
# 2 sockets x 2 cores, a disk) and, with the same firmware and probe,
# under QEMU microvm; a secure-boot EFI VM is refused.
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

have_kvm || skip "no usable /dev/kvm"
make -s build/fw/efi.elf || { echo "FAIL: cannot build build/fw/efi.elf"; exit 1; }
truncate -s 4M "$TMPD/d.img"
efi_vm_yaml efi-probe disk=d:$TMPD/d.img >"$TMPD/vm.yaml"
timeout 60 "$VMLET" probe -f "$TMPD/vm.yaml" --smp 2,2,1 -o json >"$TMPD/out.json" 2>"$TMPD/err"
rc=$?
if ((rc == 0)) && python3 - "$TMPD/out.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
g = r["guest"]
assert r["match"] is True, r
assert g["efi"]["vendor"] == "vmlet" and g["efi"]["spec"] == "2.100", g["efi"]
assert {"ACPI20", "SMBIOS3"} <= set(g["efi"]["tables"]), g["efi"]
assert len(g["vcpus"]) == 4 and len(g["disks"]) == 1, g
print("ok: vmlet probe on an EFI VM: efi", json.dumps(g["efi"]), "with 4 vCPUs and the disk")
PY
	:
else
	fail "vmlet probe on an EFI VM: status $rc"
	cat "$TMPD/err"
	head -c 2000 "$TMPD/out.json"
fi

# the same firmware and probe under QEMU microvm
BIOS=/usr/share/qemu/qboot.rom
if command -v qemu-system-x86_64 >/dev/null && [[ -f $BIOS ]]; then
	"$VMLET" probe --dump-guest "$TMPD/probe.elf" || exit 1
	# the firmware and the probe need nothing beyond qemu64 (tests/lib/sh.sh)
	timeout 60 qemu-system-x86_64 -enable-kvm -cpu "$QEMU_CPU_INTEL" -m 128 -smp 2 -nodefaults \
		-no-user-config -nographic -display none -no-reboot \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-M microvm,x-option-roms=off,rtc=off,pit=off,pic=off,isa-serial=on,acpi=on,auto-kernel-cmdline=off \
		-bios "$BIOS" -kernel build/fw/efi.elf -initrd "$TMPD/probe.elf" \
		-serial "file:$TMPD/qemu.out" >"$TMPD/qemu.log" 2>&1
	if grep -q '^efiVendor=vmlet' "$TMPD/qemu.out" && grep -q '^efiTables=ACPI20' "$TMPD/qemu.out" &&
		grep -q '^vcpus=2' "$TMPD/qemu.out" && grep -q '^VMLET-PROBE-END' "$TMPD/qemu.out"; then
		ok "under QEMU microvm: $(grep -a '^efiTables=' "$TMPD/qemu.out" | tr -d '\r')"
	else
		fail "probe under the firmware in QEMU"
		tail -n 20 "$TMPD/qemu.out" "$TMPD/qemu.log"
	fi
fi

efi_vm_yaml efi-probe sb=true >"$TMPD/sb.yaml"
efi_refused "probe of a secure-boot VM" 1 "secure boot is requested" \
	"$VMLET" probe -f "$TMPD/sb.yaml"
finish
