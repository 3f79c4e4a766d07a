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
		mkdir -p /tmp/qtpm
		swtpm socket --tpm2 --tpmstate dir=/tmp/qtpm --ctrl type=unixio,path=/tmp/qtpm/sock \
			--daemon --terminate || return 1
		qemu_run -chardev socket,id=chrtpm,path=/tmp/qtpm/sock \
			-tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-crb,tpmdev=tpm0
		return
	fi
	vm_run || return
	echo "@R tpm-state $(ls "$D/$SCN.tpm" 2>/dev/null | tr '\n' ' ')"
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
	r1() { rep "$1" | head -n 1; } # the first run's value (vmlet runs twice)
	[[ $(r1 tpm-dev) == "/dev/tpm0 /dev/tpmrm0 " ]] && ok "L2 has /dev/tpm0 and /dev/tpmrm0" ||
		fail "TPM devices: '$(r1 tpm-dev)' (tpm dmesg: $(r1 tpm-dmesg | head -3))"
	[[ $(r1 tpm-version) == 2 && $(r1 tpm-hid) == MSFT0101 ]] &&
		ok "Linux's tpm_crb drives a TPM 2.0 (ACPI MSFT0101)" ||
		fail "TPM version '$(r1 tpm-version)', ACPI id '$(r1 tpm-hid)'"
	[[ $(r1 tpm-getrandom) == "800100000014000000000008 41" ]] &&
		ok "TPM2_GetRandom through /dev/tpm0: success, 8 bytes" ||
		fail "TPM2_GetRandom: '$(r1 tpm-getrandom)'"
	[[ $(sed -n 's/^tpm-nv //p' "$R" | tr '\n' ';') == "written 00000000 00000000;"* ]] &&
		ok "TPM2_NV_DefineSpace and NV_Write of \"vmlet-nv\" succeeded" ||
		fail "NV: '$(sed -n 's/^tpm-nv //p' "$R" | tr '\n' ';')'"
	[[ ${VMM:-} == qemu ]] && return 0
	[[ $(sed -n 's/^tpm-nv //p' "$R" | sed -n 2p) == "found 766d6c65742d6e76" && $(r1 tpm-state) == *tpm2-00.permall* ]] &&
		ok "tpm.persistent: the second run read \"vmlet-nv\" back from the state in $SCN.tpm/ ($(r1 tpm-state))" ||
		fail "NV across runs: '$(sed -n 's/^tpm-nv //p' "$R" | tr '\n' ';')', state '$(r1 tpm-state)'"
	[[ -n $other && -f ${R%/*/*}/$other/report ]] || return 0
	for k in tpm-dev tpm-version tpm-hid tpm-banks tpm-getrandom; do
		mine=$(r1 "$k")
		theirs=$(sed -n "s/^$k //p" "${R%/*/*}/$other/report")
		[[ $mine == "$theirs" ]] && ok "$k as QEMU's tpm-crb" || fail "$k: vmlet '$mine', QEMU '$theirs'"
	done
}
