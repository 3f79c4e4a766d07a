# tpm: {} (no persistent): KubeVirt's libvirt domain has tpm-tis, and so
# has vmlet (vmm/dev/tpm/tpm_tis.c, docs/devices.md "TPM 2.0"): the TPM2
# table's start method 6 and MSFT0101 over the 0x5000 FIFO window, so the
# Debian cloud kernel's own tpm_tis driver binds it (not tpm_crb), starts
# the TPM (a direct boot: no firmware did) and L2 reports /dev/tpm0, the
# ACPI id, the PCR banks, the driver's line and TPM2_GetRandom(8) through
# /dev/tpm0 to swtpm in L1. One run (the state is this run's). Scenario
# tpm-tis-qemu runs QEMU's -device tpm-tis on swtpm in the same L1 as the
# oracle. l2 is tpm_report (lib-l2.sh), as tpm.sh's.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi L1_PROGS=swtpm TIMEBOX=300 COMPARE=tpm-tis-qemu

host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          tpm: {}" >"$SCN_DIR/vm.yaml"
}

l1() {
	if [ "${VMM:-}" = qemu ]; then
		qemu_run_swtpm tpm-tis
		return
	fi
	vm_run
}

l2() { tpm_report; } # lib-l2.sh

host_check() {
	tpm_check rep # lib-host.sh
	rep tpm-dmesg | grep -q '^tpm_tis MSFT0101:00: 2.0 TPM' && ! rep tpm-dmesg | grep -q 'tpm_crb' &&
		ok "Linux's tpm_tis binds it: $(rep tpm-dmesg | grep '^tpm_tis MSFT0101' | head -1)" ||
		fail "tpm_tis did not bind: $(rep tpm-dmesg | tr '\n' ';')"
	[[ $(rep tpm-nv) == "written 00000000 00000000" ]] &&
		ok "TPM2_NV_DefineSpace and NV_Write through the FIFO succeeded" ||
		fail "NV: '$(rep tpm-nv)'"
	tpm_compare rep tpm-tis
}
