# hyperv's enlightenments without features.kvm.hidden: KVM's signature
# stays, at 0x40000100 behind Hyper-V's (QEMU's layout), and Linux, which
# takes the hypervisor found at the highest base, must detect KVM there
# and use kvmclock, as under QEMU with the same hv-* flags
# (hyperv-kvm-qemu).
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi
L2_DEBS="cpuid:usr/bin/cpuid"
host_prep() {
	. "$sdir/hyperv.sh"
	HV_KVM='{hidden: false}'
	host_prep
}
l2() {
	hv_report
	rep kvm-clock "$(dmesg | grep -m1 -o 'kvm-clock: Using msrs.*')"
}
host_check() {
	local q key
	q=$(dirname "$R")/../hyperv-kvm-qemu/report
	[[ $(rep hv-detected) == "Hypervisor detected: KVM" ]] && ok "Linux: $(rep hv-detected)" ||
		fail "hv-detected '$(rep hv-detected)'"
	[[ -n $(rep kvm-clock) && " $(rep hv-clocksources) " == *" kvm-clock "* ]] &&
		ok "$(rep kvm-clock); clocksources $(rep hv-clocksources)" ||
		fail "no kvmclock: '$(rep kvm-clock)', '$(rep hv-clocksources)'"
	if [[ ! -s $q ]]; then
		fail "no report of the oracle hyperv-kvm-qemu (run both)"
		return
	fi
	# KVM's features (0x40000101) are the host CPU's, as vmlet presents it
	# without Hyper-V too: QEMU's -cpu host leaves out asyncpf-vmexit
	[[ $(rep hv-cpuid | grep -v '^0x40000101') == "$(sed -n 's/^hv-cpuid //p' "$q" | grep -v '^0x40000101')" ]] &&
		ok "CPUID 0x40000000..0x40000100 as under QEMU" || fail "CPUID: vmlet '$(rep hv-cpuid)', QEMU '$(sed -n 's/^hv-cpuid //p' "$q")'"
	for key in hv-detected hv-flags hv-clocksource hv-clockevent hv-dmesg kvm-clock; do
		[[ $(rep "$key") == "$(sed -n "s/^$key //p" "$q")" ]] && ok "$key as under QEMU" ||
			fail "$key: vmlet '$(rep "$key")', QEMU '$(sed -n "s/^$key //p" "$q")'"
	done
}
