# Secure boot refuses what is not signed by an enrolled key (issue 13
# part 3): the first disk's shim (\EFI\BOOT\BOOTX64.EFI) has one byte
# changed, so its Authenticode hash no longer matches Microsoft's
# signature; OVMF must refuse to load it (BdsDxe: "failed to load Boot0001
# ... Access Denied" on the console, as QEMU's OVMF does:
# tests/sh/ovmf_qemu_tcg.sh) and boot the next disk, a good signed chain,
# to userspace. Nothing of the first disk may run (its GRUB would say
# "disk=tampered" on the kernel command line).
# Run with tests/nested/run --l0 patched --scenarios tests/nested/scenarios-ovmf.
SHAPE=${SHAPE:-1,2,1} MEM=512Mi TIMEBOX=500
host_prep() {
	local c="console=ttyS0 panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN"
	tests/efi/mkdisk.sh --signed "$L2_KERNEL" "$L2_INITRD" "$c disk=good" "$SCN_DIR/good.img" ||
		return 1
	local shim=/usr/lib/shim/shimx64.efi.signed
	[ -f $shim ] || shim=build/efi-pkgs/shim-signed$shim
	python3 -c 'import sys
d = bytearray(open(sys.argv[1], "rb").read()); d[len(d) // 2] ^= 1
open(sys.argv[2], "wb").write(d)' "$shim" "$SCN_DIR/shim-tampered.efi" || return 1
	# (its own /boot UUID: the good disk's GRUB searches for the default one and
	# would otherwise find the first disk's /boot, seen in the first run)
	BOOT_UUID=564d4c45-5442-4f4f-9442-4f4f54000002 SHIM=$SCN_DIR/shim-tampered.efi tests/efi/mkdisk.sh --signed "$L2_KERNEL" "$L2_INITRD" \
		"$c disk=tampered" "$SCN_DIR/tampered.img" || return 1
	rm -f "$SCN_DIR/shim-tampered.efi"
	cp /usr/share/OVMF/OVMF_CODE_4M.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$SCN_DIR/" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: tampered, disk: {bus: virtio}}
          - {name: good, disk: {bus: virtio}}" "      - {name: tampered, hostDisk: {path: /scn/$SCN/tampered.img, type: Disk}}
      - {name: good, hostDisk: {path: /scn/$SCN/good.img, type: Disk}}" |
		sed 's/^        cpu: /        features: {smm: {enabled: true}}\n        firmware: {bootloader: {efi: {secureBoot: true}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
l1() {
	VMLET_OVMF_CODE=$D/OVMF_CODE_4M.fd VMLET_OVMF_VARS=$D/OVMF_VARS_4M.ms.fd \
		timeout -s KILL "${TIMEBOX:-150}" vmlet run -f "$D/vm.yaml" --console stdio \
		--log-format text 2>"$D/vmm.log"
}
l2() {
	rep cmdline "$(cat /proc/cmdline)"
	rep sbdmesg "$(dmesg | grep -o 'Secure boot [a-z]*' | head -n 1)"
}
host_check() {
	local v
	v=$(tr -d '\r' <"$C" | grep -aE 'failed to load Boot.*Pci\(0x1,0x0\): (Access Denied|Security Violation)' | head -n 1)
	[[ -n $v ]] && ok "OVMF refused the tampered shim: $v" || fail "no refusal of the tampered shim on the console"
	[[ $(rep cmdline) == *"disk=good"* && $(rep cmdline) != *"disk=tampered"* ]] &&
		ok "the good disk booted instead: $(rep cmdline)" || fail "command line '$(rep cmdline)'"
	[[ $(rep sbdmesg) == "Secure boot enabled" ]] && ok "secure boot on" || fail "dmesg '$(rep sbdmesg)'"
}
