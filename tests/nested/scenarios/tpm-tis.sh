# tpm: {} (no persistent): KubeVirt's libvirt domain has tpm-tis, and so
# has vmlet (vmm/dev/tpm/tpm_tis.c, docs/devices.md "TPM 2.0"): the TPM2
# table's start method 6 and MSFT0101 over the 0x5000 FIFO window, so the
# Debian cloud kernel's own tpm_tis driver binds it (not tpm_crb), starts
# the TPM (a direct boot: no firmware did) and L2 reports /dev/tpm0, the
# ACPI id, the PCR banks, the driver's line and TPM2_GetRandom(8) through
# /dev/tpm0 to swtpm in L1. l2 is tpm_report (lib-l2.sh), as tpm.sh's.
# Then the TPM across a snapshot (issue 24, docs/snapshot.md "The TPM"):
# L2 reads PCR 16 (zeros), extends it (TPM2_PCR_Extend, SHA-256, 32 bytes
# 'v') and reads it back (sysfs pcr-sha256/16, the kernel's read, and
# TPM2_PCR_Read through /dev/tpm0), opens the power button and says "@R
# ready-for-snapshot"; L1 takes `vmlet ctl SOCK snapshot DIR --stop`
# (vmlet exits 0) and restores it with `vmlet run --restore DIR` (a new
# swtpm, given the saved blobs), then presses the button: the restored
# guest reads PCR 16 again (the same value: the state kept, not a fresh
# TPM, whose PCR 16 would be zeros), TPM2_GetRandom(8) answers, a second
# extend (32 bytes 'r') goes on from the restored value, no new kernel
# line names the TPM, and the guest powers off on a second press. The host
# computes both PCR values. Scenario tpm-tis-qemu runs QEMU's -device
# tpm-tis on swtpm in the same L1 as the oracle of the device (tpm_compare)
# and of the PCR values, the same guest steps without a snapshot.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi L1_PROGS=swtpm TIMEBOX=300 COMPARE=tpm-tis-qemu
L2_END=tis_end

host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          tpm: {}" >"$SCN_DIR/vm.yaml"
}

l1() {
	if [ "${VMM:-}" = qemu ]; then
		qemu_run_swtpm tpm-tis
		return
	fi
	sock=/tmp/api.sock
	rm -rf /tmp/snap "$sock"
	: >/tmp/con1
	_seen=0
	vm_run --api-socket "$sock" >>/tmp/con1 &
	vmpid=$!
	con_wait /tmp/con1 '@R ready-for-snapshot' 240
	snap_stop "$sock" /tmp/snap
	wait $vmpid
	echo "@R first-exit $?"
	con_follow /tmp/con1
	cp "$D/vmm.log" "$D/vmm-snapshot.log"
	rm -f "$sock"
	: >/tmp/con2
	_seen=0
	echo "@R restored $(ls /tmp/snap 2>/dev/null | tr '\n' ' ')"
	vm_run --api-socket "$sock" --restore /tmp/snap >>/tmp/con2 &
	vmpid=$!
	n=0
	while [ ! -S "$sock" ] && kill -0 $vmpid 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	# the first press: the restored guest, listening since before the
	# snapshot, reads its TPM again; the second (once it listens anew)
	# powers it off
	vmlet ctl "$sock" power-button >/dev/null
	con_wait /tmp/con2 '@R pwrbtn-listening' 120 && vmlet ctl "$sock" power-button >/dev/null
	vm_wait_off # lib-l1.sh
	rc=$?
	con_follow /tmp/con2
	return $rc
}

# tis_pcr STAGE: "@R tpm-pcr16 STAGE SYSFS RC DIGEST" (lib-l2.sh tpm_pcr16)
tis_pcr() { rep tpm-pcr16 "$1 $(tpm_pcr16)"; }

l2() {
	tpm_report # lib-l2.sh
	tis_pcr initial
	rep tpm-extend "before $(tpm_extend16 166)"
	tis_pcr extended
	_k=$(dmesg | wc -l)
	if [ "${VMM:-}" != qemu ]; then
		pwrbtn_open || return
		rep ready-for-snapshot "$dev uptime=$(cut -d' ' -f1 /proc/uptime)"
		# the snapshot is taken here; restored, L1 presses the button
		pwrbtn_press
		exec 3<&-
		rep restore-press "seen uptime=$(cut -d' ' -f1 /proc/uptime)"
	fi
	tis_pcr restored
	r=$(tpm_cmd '\200\001\000\000\000\014\000\000\001\173\000\010')
	rep tpm-getrandom-after "$(echo "$r" | cut -c1-24) $(echo "$r" | wc -c)"
	rep tpm-extend "after $(tpm_extend16 162)"
	tis_pcr extended-after
	dmesg | sed -n "$((_k + 1)),\$p" | grep -i tpm | sed 's/^\[[ 0-9.]*\] //' |
		sed 's/^/@R tpm-dmesg-after /'
	# (every kernel line since the extend, for the record)
	dmesg | sed -n "$((_k + 1)),\$p" | sed 's/^/@R dmesg-since /'
	rep tpm-dmesg-new "$(($(dmesg | wc -l) - _k))"
}

# L2_END: under vmlet the power button (L1 presses it), under QEMU (no
# snapshot, nobody presses) a power-off
tis_end() {
	[ "${VMM:-}" != qemu ] || poweroff -f
	pwrbtn_wait
}

host_check() {
	local a b z=0000000000000000000000000000000000000000000000000000000000000000
	tpm_check rep # lib-host.sh
	rep tpm-dmesg | grep -q '^tpm_tis MSFT0101:00: 2.0 TPM' && ! rep tpm-dmesg | grep -q 'tpm_crb' &&
		ok "Linux's tpm_tis binds it: $(rep tpm-dmesg | grep '^tpm_tis MSFT0101' | head -1)" ||
		fail "tpm_tis did not bind: $(rep tpm-dmesg | tr '\n' ';')"
	tpm_nv_check "$(rep tpm-nv)" # lib-host.sh (through the FIFO)
	tpm_compare rep tpm-tis
	# PCR 16 after extends of 32 bytes 'v', then 'r', from zeros
	read -r a b < <(python3 -c 'import hashlib as h; a = h.sha256(bytes(32) + b"v" * 32).digest()
print(a.hex(), h.sha256(a + b"r" * 32).hexdigest())')
	pcr() { # STAGE WANT: the kernel's and TPM2_PCR_Read's value are WANT
		[[ $(rep tpm-pcr16 | sed -n "s/^$1 //p") == "$2 00000000 $2" ]] &&
			ok "PCR 16 $1: ${2:0:16}... (sysfs and TPM2_PCR_Read)" ||
			fail "PCR 16 $1: '$(rep tpm-pcr16 | sed -n "s/^$1 //p")', want $2 (sysfs, rc, PCR_Read)"
	}
	pcr initial $z
	[[ $(rep tpm-extend | tr '\n' ' ') == "before 00000000 after 00000000 " ]] &&
		ok "TPM2_PCR_Extend of PCR 16 succeeded, before and after" ||
		fail "PCR_Extend: '$(rep tpm-extend | tr '\n' ';')'"
	pcr extended "$a"
	if [[ ${VMM:-} != qemu ]]; then
		[[ $(rep ready-for-snapshot) == /dev/input/*" uptime="* && $(rep snapshot-rc) == "0 "* && $(rep first-exit) == 0 ]] &&
			ok "snapshot --stop with tpm_tis running: vmlet exited 0 (tries: $(rep snapshot-rc | cut -d' ' -f2))" ||
			fail "snapshot: ready '$(rep ready-for-snapshot)', ctl '$(rep snapshot-rc)', vmlet exit '$(rep first-exit)'"
		[[ $(rep restore-press) == "seen "* ]] && ok "restored: the guest went on (the button it listened for; $(rep ready-for-snapshot | cut -d' ' -f2) before, $(rep restore-press | cut -d' ' -f2) after)" ||
			fail "the restored guest did not go on: '$(rep restore-press)'"
	fi
	pcr restored "$a"
	[[ $(rep tpm-getrandom-after) == "800100000014000000000008 41" ]] &&
		ok "after: TPM2_GetRandom through /dev/tpm0: success, 8 bytes" ||
		fail "after: TPM2_GetRandom '$(rep tpm-getrandom-after)'"
	pcr extended-after "$b"
	[[ -z $(rep tpm-dmesg-after) && -n $(rep tpm-dmesg-new) ]] &&
		ok "no new TPM line in dmesg ($(rep tpm-dmesg-new) new lines)" ||
		fail "new TPM lines in dmesg: $(rep tpm-dmesg-after | tr '\n' ';')"
	[[ ${VMM:-} == qemu ]] && return 0
	rep power-button | grep -q . && ok "the restored guest powered off on the button" ||
		fail "no power button in the restored guest"
}
