# Secure boot through Debian's OVMF (vmm/boot/ovmf_boot.h, issue 13 part 3) on
# the real KVM: a VM with efi.secureBoot (and features.smm, which KubeVirt
# requires for it) boots OVMF_CODE_4M.fd with its variables in --efi-vars
# made from OVMF_VARS_4M.ms.fd (Microsoft's and Debian's keys). The disk is
# laid out as Debian installs it (tests/efi/mkdisk.sh --signed):
# Microsoft-signed shim -> Debian-signed GRUB -> grub.cfg on an ext4 /boot
# -> Debian's signed cloud kernel. Linux must reach userspace seeing secure
# boot on (the SecureBoot variable 1, "Secure boot enabled") under OVMF
# (SMBIOS type 0 from EDK II). Run twice on the same variable file: the
# first boot writes a non-volatile variable through efivarfs, the second
# must find it (the per-VM flash file keeps it).
# Not in tests/nested/scenarios: it needs the patched L0, tests/nested/run
# --l0 patched --scenarios tests/nested/scenarios-ovmf (README: "OVMF
# scenarios"; ovmf-qemu is the oracle).
SHAPE=${SHAPE:-1,2,1} MEM=512Mi TIMEBOX=500
host_prep() {
	tests/efi/mkdisk.sh --signed "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN" \
		"$SCN_DIR/disk.img" || return 1
	cp /usr/share/OVMF/OVMF_CODE_4M.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$SCN_DIR/" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: disk, disk: {bus: virtio}}" "      - {name: disk, hostDisk: {path: /scn/$SCN/disk.img, type: Disk}}" |
		sed 's/^        cpu: /        features: {smm: {enabled: true}}\n        firmware: {bootloader: {efi: {secureBoot: true}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
# L1 has no /usr/share/OVMF: the images come along in the scenario folder
ovmf_run() {
	VMLET_OVMF_CODE=$D/OVMF_CODE_4M.fd VMLET_OVMF_VARS=$D/OVMF_VARS_4M.ms.fd \
		timeout -s KILL "${TIMEBOX:-150}" vmlet run -f "$D/vm.yaml" --efi-vars "$D/vars.fd" \
		--console stdio --log-format text "$@"
}
l1() {
	ovmf_run 2>"$D/vmm.log" || return
	echo "@R vars-size $(wc -c <"$D/vars.fd")"
	ovmf_run 2>"$D/vmm2.log"
}
l2() {
	fw=/sys/firmware/efi
	rep efi "platform=$(cat $fw/fw_platform_size 2>/dev/null) runtime-map=$(ls $fw/runtime-map 2>/dev/null | wc -l)"
	rep cmdline "$(cat /proc/cmdline)"
	rep sbdmesg "$(dmesg | grep -o 'Secure boot [a-z]*' | head -n 1)"
	rep bios "$(cat /sys/class/dmi/id/bios_vendor)"
	mod efivarfs
	mount -t efivarfs efivarfs $fw/efivars || return
	# an efivarfs file is the 4-byte attributes, then the data: busybox od -j
	# read the attributes' first byte (6: BS|RT) there, so skip by reading
	rep sbvar "$(tail -c +5 $fw/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c | od -An -tu1 | tr -d ' ')"
	t=$fw/efivars/OvmfNested-6e657374-6564-4c32-8e9f-0a1b2c3d4e5f
	if [ -e $t ]; then
		rep var-found "$(tail -c +5 $t)"
	else
		printf '\007\000\000\000kept-in-flash' >$t # NV|BS|RT, then the data
		rep var-written "$(tail -c +5 $t)"
	fi
}
host_check() {
	r1() { rep "$1" | head -n 1; } # the first run's value (both runs report)
	[[ $(r1 cmdline) == "BOOT_IMAGE=/vmlinuz "*"nested.scn=$SCN"* ]] &&
		ok "signed GRUB booted the signed kernel: $(r1 cmdline)" || fail "command line '$(r1 cmdline)'"
	[[ $(r1 efi) == "platform=64 runtime-map="[1-9]* ]] && ok "Linux booted through EFI: $(r1 efi)" ||
		fail "EFI: '$(r1 efi)'"
	[[ $(r1 sbvar) == 1 && $(r1 sbdmesg) == "Secure boot enabled" ]] &&
		ok "secure boot on: SecureBoot=1, '$(r1 sbdmesg)'" ||
		fail "secure boot: SecureBoot='$(r1 sbvar)' dmesg '$(r1 sbdmesg)'"
	# (Debian's OVMF says "EFI Development Kit II / OVMF" in SMBIOS type 0)
	[[ $(r1 bios) == *"EFI Development Kit II"* || $(r1 bios) == EDK* ]] &&
		ok "the firmware is OVMF: $(r1 bios)" || fail "BIOS vendor '$(r1 bios)'"
	grep -aq 'Welcome to GRUB' "$C" && grep -aq 'vmlet-efi: GRUB loaded the kernel and initrd' "$C" &&
		ok "GRUB on the console loaded the kernel from /boot" || fail "no GRUB lines on the console"
	[[ $(rep var-written) == kept-in-flash && $(rep var-found) == kept-in-flash ]] &&
		ok "a variable written in the first run was there in the second (--efi-vars)" ||
		fail "variable across runs: written '$(rep var-written)', found '$(rep var-found)'"
}
