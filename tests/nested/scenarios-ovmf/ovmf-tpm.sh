# A TPM 2.0 (devices.tpm, vmm/dev/tpm/, issue 27 part 2) under Debian's
# OVMF on the real KVM: the secure-boot VM of ovmf-secureboot (shim ->
# GRUB -> the signed cloud kernel) with tpm: {}, as windows.11's
# preference asks: the TIS (FIFO) interface, as KubeVirt's tpm-tis. OVMF
# finds it at 0xfed40000, starts the TPM and measures the boot into the
# PCRs (its TCG2 event log handed to Linux through EFI); Linux's tpm_tis
# then binds the MSFT0101 device of vmlet's
# ACPI tables. L2 reports the TPM, the size of the firmware's event log
# (securityfs) and the SHA-256 PCRs 0 (firmware code), 4 (boot loaders) and
# 7 (secure boot policy), which must not be zero.
# Not in tests/nested/scenarios: it needs the patched L0, tests/nested/run
# --l0 patched --scenarios tests/nested/scenarios-ovmf (README: "OVMF
# scenarios").
SHAPE=1,2,1 MEM=512Mi TIMEBOX=500 L1_PROGS=swtpm
host_prep() {
	tests/efi/mkdisk.sh --signed "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN" \
		"$SCN_DIR/disk.img" || return 1
	cp /usr/share/OVMF/OVMF_CODE_4M.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$SCN_DIR/" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          tpm: {}
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
	t=/sys/class/tpm/tpm0
	rep tpm "dev=$(ls /dev/tpm0 2>/dev/null) version=$(cat $t/tpm_version_major 2>/dev/null) hid=$(cat $t/device/hid 2>/dev/null || cat $t/device/firmware_node/hid 2>/dev/null)"
	mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
	rep tpm-log "$(wc -c </sys/kernel/security/tpm0/binary_bios_measurements 2>/dev/null)"
	for p in 0 4 7; do rep "tpm-pcr$p" "$(cat $t/pcr-sha256/$p 2>/dev/null)"; done
	rep sbdmesg "$(dmesg | grep -o 'Secure boot [a-z]*' | head -n 1)"
	dmesg | grep -i -E 'tpm|crb' | sed 's/^\[[ 0-9.]*\] //' | sed 's/^/@R tpm-dmesg /'
}
host_check() {
	local z=0000000000000000000000000000000000000000000000000000000000000000 p
	[[ $(rep tpm) == "dev=/dev/tpm0 version=2 hid=MSFT0101" ]] &&
		ok "Linux drives vmlet's TPM (TIS) under OVMF: $(rep tpm)" || fail "TPM: '$(rep tpm)'"
	[[ $(rep tpm-log) =~ ^[0-9]+$ ]] && (($(rep tpm-log) > 0)) &&
		ok "OVMF's TCG2 event log reached Linux ($(rep tpm-log) bytes)" ||
		fail "no firmware event log: '$(rep tpm-log)'"
	for p in 0 4 7; do
		[[ $(rep tpm-pcr$p) =~ ^[0-9A-F]{64}$ && $(rep tpm-pcr$p) != "$z" ]] &&
			ok "PCR $p extended by the boot: $(rep tpm-pcr$p)" || fail "PCR $p: '$(rep tpm-pcr$p)'"
	done
	[[ $(rep sbdmesg) == "Secure boot enabled" ]] && ok "with secure boot on" ||
		fail "secure boot: '$(rep sbdmesg)'"
	rep tpm-dmesg | grep -q 'error\|Timed out' && fail "tpm driver errors: $(rep tpm-dmesg | tr '\n' ';')" ||
		ok "no TPM errors in Linux's log (OVMF started the TPM)"
}
