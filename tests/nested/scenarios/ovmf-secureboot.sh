# Secure boot through Debian's OVMF (vmm/ovmf_boot.h, issue 13 part 3) on
# the real KVM: a VM with efi.secureBoot (and features.smm, which KubeVirt
# requires for it) boots OVMF_CODE_4M.fd with a variable store made from
# OVMF_VARS_4M.ms.fd (Microsoft's and Debian's keys). The disk is laid out
# as Debian installs it (tests/efi/mkdisk.sh --signed): Microsoft-signed
# shim -> Debian-signed GRUB -> grub.cfg on an ext4 /boot -> Debian's
# signed cloud kernel. Linux must reach userspace seeing secure boot on
# (the SecureBoot variable 1, "Secure boot enabled") and OVMF's platform
# (SMBIOS type 0 from EDK II, vmlet's ACPI tables).
SHAPE=${SHAPE:-1,1,1} MEM=512Mi TIMEBOX=500
host_prep() {
	tests/efi/mkdisk.sh --signed "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 quiet panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN" \
		"$SCN_DIR/disk.img" || return 1
	cp /usr/share/OVMF/OVMF_CODE_4M.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$SCN_DIR/" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: disk, disk: {bus: virtio}}" "      - {name: disk, hostDisk: {path: /scn/$SCN/disk.img, type: Disk}}" |
		sed 's/^        cpu: /        features: {smm: {enabled: true}}\n        firmware: {bootloader: {efi: {secureBoot: true}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
# L1 has no /usr/share/OVMF: the images come along in the scenario folder
l1() {
	VMLET_OVMF_CODE=$D/OVMF_CODE_4M.fd VMLET_OVMF_VARS=$D/OVMF_VARS_4M.ms.fd \
		timeout -s KILL "${TIMEBOX:-150}" vmlet run -f "$D/vm.yaml" --efi-vars "$D/vars.fd" \
		--console stdio --log-format text 2>"$D/vmm.log"
}
l2() {
	fw=/sys/firmware/efi
	rep efi "platform=$(cat $fw/fw_platform_size 2>/dev/null) runtime-map=$(ls $fw/runtime-map 2>/dev/null | wc -l)"
	rep cmdline "$(cat /proc/cmdline)"
	rep sbdmesg "$(dmesg | grep -o 'Secure boot [a-z]*' | head -n 1)"
	rep bios "$(cat /sys/class/dmi/id/bios_vendor)"
	mod efivarfs
	mount -t efivarfs efivarfs $fw/efivars &&
		rep sbvar "$(od -An -tu1 -j4 -N1 $fw/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c | tr -d ' ')"
}
host_check() {
	[[ $(rep cmdline) == "BOOT_IMAGE=/vmlinuz "*"nested.scn=$SCN"* ]] &&
		ok "signed GRUB booted the signed kernel: $(rep cmdline)" || fail "command line '$(rep cmdline)'"
	[[ $(rep efi) == "platform=64 runtime-map="[1-9]* ]] && ok "Linux booted through EFI: $(rep efi)" ||
		fail "EFI: '$(rep efi)'"
	[[ $(rep sbvar) == 1 && $(rep sbdmesg) == "Secure boot enabled" ]] &&
		ok "secure boot on: SecureBoot=1, '$(rep sbdmesg)'" ||
		fail "secure boot: SecureBoot='$(rep sbvar)' dmesg '$(rep sbdmesg)'"
	[[ $(rep bios) == EDK* ]] && ok "the firmware is OVMF: $(rep bios)" || fail "BIOS vendor '$(rep bios)'"
	grep -aq 'Welcome to GRUB' "$C" && grep -aq 'vmlet-efi: GRUB loaded the kernel and initrd' "$C" &&
		ok "GRUB on the console loaded the kernel from /boot" || fail "no GRUB lines on the console"
	grep -q 'ovmf: booting .*OVMF_CODE_4M.fd' "$D/vmm.log" && ok "vmlet ran OVMF" || fail "vmlet did not say it ran OVMF"
}
