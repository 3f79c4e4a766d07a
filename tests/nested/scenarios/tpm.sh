# TPM 2.0 (issue 27 part 2, devices.tpm: vmm/dev/tpm/, docs/devices.md):
# the Debian cloud kernel's own tpm_crb driver binds the MSFT0101 device
# vmlet's ACPI tables name, starts the TPM (no firmware did: a direct
# boot), and L2 reports what Linux made of it (/dev/tpm0 and /dev/tpmrm0,
# TPM version, the ACPI id, the PCR banks) and sends TPM2_GetRandom(8)
# through /dev/tpm0 to swtpm in L1 (vmlet's child). With tpm.persistent
# vmlet runs the guest twice on the same state (NAME.tpm/ in L1): the
# first run defines an NV index and writes "vmlet-nv" to it, the second
# reads it back. Scenario tpm-qemu runs QEMU's -device tpm-crb on swtpm in
# the same L1 as the oracle (one run: it writes).
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi L1_PROGS=swtpm TIMEBOX=300 COMPARE=tpm-qemu

host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          tpm: {persistent: true}" >"$SCN_DIR/vm.yaml"
}

l1() {
	if [ "${VMM:-}" = qemu ]; then
		qemu_run_swtpm tpm-crb
		return
	fi
	vm_run || return
	echo "@R tpm-state $(ls "$D/$SCN.tpm" 2>/dev/null | tr '\n' ' ')"
	vm_run
}

l2() { tpm_report; } # lib-l2.sh

host_check() {
	r1() { rep "$1" | head -n 1; } # the first run's value (vmlet runs twice)
	tpm_check r1 # lib-host.sh
	tpm_nv_check "$(r1 tpm-nv)" # lib-host.sh
	[[ ${VMM:-} == qemu ]] && return 0
	[[ $(sed -n 's/^tpm-nv //p' "$R" | sed -n 2p) == "found 766d6c65742d6e76" && $(r1 tpm-state) == *tpm2-00.permall* ]] &&
		ok "tpm.persistent: the second run read \"vmlet-nv\" back from the state in $SCN.tpm/ ($(r1 tpm-state))" ||
		fail "NV across runs: '$(sed -n 's/^tpm-nv //p' "$R" | tr '\n' ';')', state '$(r1 tpm-state)'"
	tpm_compare r1 tpm-crb
}
