# tpm: {} (no persistent): KubeVirt's libvirt domain has tpm-tis, and so
# has vmlet (vmm/dev/tpm/tpm_tis.c, docs/devices.md "TPM 2.0"): the TPM2
# table's start method 6 and MSFT0101 over the 0x5000 FIFO window, so the
# Debian cloud kernel's own tpm_tis driver binds it (not tpm_crb), starts
# the TPM (a direct boot: no firmware did) and L2 reports /dev/tpm0, the
# ACPI id, the PCR banks, the driver's line and TPM2_GetRandom(8) through
# /dev/tpm0 to swtpm in L1. One run (the state is this run's). Scenario
# tpm-tis-qemu runs QEMU's -device tpm-tis on swtpm in the same L1 as the
# oracle. l2 is tpm.sh's (a copy: a scenario file runs alone in L1).
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi L1_PROGS=swtpm TIMEBOX=300 COMPARE=tpm-tis-qemu

host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          tpm: {}" >"$SCN_DIR/vm.yaml"
}

l1() {
	if [ "${VMM:-}" = qemu ]; then
		mkdir -p /tmp/qtis
		swtpm socket --tpm2 --tpmstate dir=/tmp/qtis --ctrl type=unixio,path=/tmp/qtis/sock \
			--daemon --terminate || return 1
		qemu_run -chardev socket,id=chrtpm,path=/tmp/qtis/sock \
			-tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0
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
	# tpm_tis's device is the ACPI node's platform device (MSFT0101:00):
	# the id is its firmware node's
	rep tpm-hid "$(cat $t/device/hid 2>/dev/null || cat $t/device/firmware_node/hid 2>/dev/null)"
	rep tpm-devname "$(basename "$(readlink $t/device)")"
	rep tpm-banks "$(ls -d $t/pcr-* 2>/dev/null | sed 's|.*/||' | tr '\n' ' ')"
	# TPM2_GetRandom(8): the header (success, 20 bytes) and the size 8
	r=$(tpm_cmd '\200\001\000\000\000\014\000\000\001\173\000\010')
	rep tpm-getrandom "$(echo "$r" | cut -c1-24) $(echo "$r" | wc -c)"
	dmesg | grep -i -E 'tpm|crb' | sed 's/^\[[ 0-9.]*\] //' | sed 's/^/@R tpm-dmesg /'
	# NV index 0x01500016, 8 bytes, owner/auth read and write, password
	# sessions (the kernel retries TPM_RC_RETRY): read it; where it is
	# not there yet, define it and write "vmlet-nv"
	r=$(tpm_cmd '\200\002\000\000\000\043\000\000\001\116\001\120\000\026\001\120\000\026\000\000\000\011\100\000\000\011\000\000\000\000\000\000\010\000\000')
	case $r in
	80020000001d00000000*) rep tpm-nv "found $(echo "$r" | cut -c33-48)" ;;
	*)
		d=$(tpm_cmd '\200\002\000\000\000\055\000\000\001\052\100\000\000\001\000\000\000\011\100\000\000\011\000\000\000\000\000\000\000\000\016\001\120\000\026\000\013\000\006\000\006\000\000\000\010')
		w=$(tpm_cmd '\200\002\000\000\000\053\000\000\001\067\001\120\000\026\001\120\000\026\000\000\000\011\100\000\000\011\000\000\000\000\000\000\010\166\155\154\145\164\055\156\166\000\000')
		rep tpm-nv "written $(echo "$d" | cut -c13-20) $(echo "$w" | cut -c13-20)"
		;;
	esac
}

host_check() {
	local mine theirs other=${COMPARE:-}
	[[ $(rep tpm-dev) == "/dev/tpm0 /dev/tpmrm0 " ]] && ok "L2 has /dev/tpm0 and /dev/tpmrm0" ||
		fail "TPM devices: '$(rep tpm-dev)' (tpm dmesg: $(rep tpm-dmesg | head -3))"
	[[ $(rep tpm-version) == 2 && $(rep tpm-hid) == MSFT0101 ]] &&
		ok "a TPM 2.0 on ACPI MSFT0101" || fail "TPM version '$(rep tpm-version)', ACPI id '$(rep tpm-hid)'"
	rep tpm-dmesg | grep -q '^tpm_tis MSFT0101:00: 2.0 TPM' && ! rep tpm-dmesg | grep -q 'tpm_crb' &&
		ok "Linux's tpm_tis binds it: $(rep tpm-dmesg | grep '^tpm_tis MSFT0101' | head -1)" ||
		fail "tpm_tis did not bind: $(rep tpm-dmesg | tr '\n' ';')"
	[[ $(rep tpm-getrandom) == "800100000014000000000008 41" ]] &&
		ok "TPM2_GetRandom through /dev/tpm0: success, 8 bytes" ||
		fail "TPM2_GetRandom: '$(rep tpm-getrandom)'"
	[[ $(rep tpm-nv) == "written 00000000 00000000" ]] &&
		ok "TPM2_NV_DefineSpace and NV_Write through the FIFO succeeded" ||
		fail "NV: '$(rep tpm-nv)'"
	[[ -n $other && -f ${R%/*/*}/$other/report ]] || return 0
	for k in tpm-dev tpm-version tpm-hid tpm-banks tpm-getrandom; do
		mine=$(rep "$k")
		theirs=$(sed -n "s/^$k //p" "${R%/*/*}/$other/report")
		[[ $mine == "$theirs" ]] && ok "$k as QEMU's tpm-tis" || fail "$k: vmlet '$mine', QEMU '$theirs'"
	done
}
