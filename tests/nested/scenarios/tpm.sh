# TPM 2.0 (issue 27 part 2, devices.tpm: vmm/dev/tpm/, docs/devices.md):
# the Debian cloud kernel's own tpm_crb driver binds the MSFT0101 device
# vmlet's ACPI tables name, starts the TPM (no firmware did: a direct
# boot), and L2 reports what Linux made of it (/dev/tpm0 and /dev/tpmrm0,
# TPM version, the ACPI id, the PCR banks) and sends TPM2_GetRandom(8)
# through /dev/tpm0 to swtpm in L1 (vmlet's child). Scenario tpm-qemu runs
# QEMU's -device tpm-crb on swtpm in the same L1 as the oracle.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi L1_PROGS=swtpm TIMEBOX=300 COMPARE=tpm-qemu

host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          tpm: {}" >"$SCN_DIR/vm.yaml"
}

l1() {
	if [ "${VMM:-}" = qemu ]; then
		mkdir -p /tmp/qtpm
		swtpm socket --tpm2 --tpmstate dir=/tmp/qtpm --ctrl type=unixio,path=/tmp/qtpm/sock \
			--daemon --terminate || return 1
		qemu_run -chardev socket,id=chrtpm,path=/tmp/qtpm/sock \
			-tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-crb,tpmdev=tpm0
		return
	fi
	vm_run
}

# tpm_cmd BYTES: a raw TPM command (printf octal escapes) through
# /dev/tpm0; its response in hex
tpm_cmd() {
	exec 3<>/dev/tpm0 || return 1
	printf "$1" >&3
	dd bs=4096 count=1 <&3 2>/dev/null | od -An -tx1 | tr -d ' \n'
	exec 3>&-
}

l2() {
	t=/sys/class/tpm/tpm0
	rep tpm-dev "$(ls /dev/tpm0 /dev/tpmrm0 2>/dev/null | tr '\n' ' ')"
	rep tpm-version "$(cat $t/tpm_version_major 2>/dev/null)"
	rep tpm-hid "$(cat $t/device/hid 2>/dev/null)"
	rep tpm-banks "$(ls -d $t/pcr-* 2>/dev/null | sed 's|.*/||' | tr '\n' ' ')"
	# TPM2_GetRandom(8): the header (success, 20 bytes) and the size 8
	r=$(tpm_cmd '\200\001\000\000\000\014\000\000\001\173\000\010')
	rep tpm-getrandom "$(echo "$r" | cut -c1-24) $(echo "$r" | wc -c)"
	dmesg | grep -i -E 'tpm|crb' | sed 's/^\[[ 0-9.]*\] //' | sed 's/^/@R tpm-dmesg /'
}

host_check() {
	local mine theirs other=${COMPARE:-}
	[[ $(rep tpm-dev) == "/dev/tpm0 /dev/tpmrm0 " ]] && ok "L2 has /dev/tpm0 and /dev/tpmrm0" ||
		fail "TPM devices: '$(rep tpm-dev)' (tpm dmesg: $(rep tpm-dmesg | head -3))"
	[[ $(rep tpm-version) == 2 && $(rep tpm-hid) == MSFT0101 ]] &&
		ok "Linux's tpm_crb drives a TPM 2.0 (ACPI MSFT0101)" ||
		fail "TPM version '$(rep tpm-version)', ACPI id '$(rep tpm-hid)'"
	[[ $(rep tpm-getrandom) == "800100000014000000000008 41" ]] &&
		ok "TPM2_GetRandom through /dev/tpm0: success, 8 bytes" ||
		fail "TPM2_GetRandom: '$(rep tpm-getrandom)'"
	[[ ${VMM:-} == qemu ]] && return 0
	[[ -n $other && -f ${R%/*/*}/$other/report ]] || return 0
	for k in tpm-dev tpm-version tpm-hid tpm-banks tpm-getrandom; do
		mine=$(rep "$k")
		theirs=$(sed -n "s/^$k //p" "${R%/*/*}/$other/report")
		[[ $mine == "$theirs" ]] && ok "$k as QEMU's tpm-crb" || fail "$k: vmlet '$mine', QEMU '$theirs'"
	done
}
