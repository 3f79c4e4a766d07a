# features.hypervPassthrough (libvirt's passthrough mode, QEMU's
# hv-passthrough): every enlightenment the L1 KVM offers, with KVM's own
# vendor ("Linux KVM Hv"), version, limits and spinlock retries. Linux
# looks for "Microsoft Hv", so it detects KVM (at 0x40000100): the leaves
# themselves are compared with QEMU -cpu host,hv-passthrough
# (hyperv-pass-qemu) in the same L1.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi
L2_DEBS="cpuid:usr/bin/cpuid"
host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" |
		sed 's/^        cpu: /        features: {hypervPassthrough: {enabled: true}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
l2() {
	hv_report
	rep kvm-clock "$(dmesg | grep -m1 -o 'kvm-clock: Using msrs.*')"
}
host_check() {
	local q key
	q=$(dirname "$R")/../hyperv-pass-qemu/report
	[[ $(rep hv-cpuid | grep '^0x40000000') == *"ebx=0x756e694c ecx=0x564b2078 edx=0x7648204d"* ]] &&
		ok "vendor Linux KVM Hv at 0x40000000" || fail "vendor: $(rep hv-cpuid | grep '^0x40000000')"
	if [[ ! -s $q ]]; then
		fail "no report of the oracle hyperv-pass-qemu (run both)"
		return
	fi
	# QEMU before 9.2 (Debian 12's 7.2) puts the synthetic debugger into
	# hv-passthrough, whatever hv-syndbg=off says: its leaves up to
	# 0x40000082 and the debug MSRs bit (0x40000003 EDX bit 11) are the
	# only difference allowed, taken out of QEMU's answer here
	[[ $(rep hv-cpuid | grep -v '^0x40000101') == "$(sed -n 's/^hv-cpuid //p' "$q" | grep -v '^0x40000101' |
		python3 -c 'import re, sys
for l in sys.stdin.read().splitlines():
    l = l.replace("0x40000000 eax=0x40000082", "0x40000000 eax=0x4000000a")
    if l.startswith("0x40000003"):
        l = re.sub("edx=(0x[0-9a-f]+)", lambda m: "edx=0x%08x" % (int(m.group(1), 16) & ~0x800), l)
    print(l)')" ]] &&
		ok "CPUID 0x40000000..0x40000100 as under QEMU: $(rep hv-cpuid | grep -v '^0x40000101' | tr '\n' ';')" ||
		fail "CPUID: vmlet '$(rep hv-cpuid | tr '\n' ';')', QEMU '$(sed -n 's/^hv-cpuid //p' "$q" | tr '\n' ';')'"
	for key in hv-detected hv-clocksource kvm-clock; do
		[[ $(rep "$key") == "$(sed -n "s/^$key //p" "$q")" ]] && ok "$key as under QEMU: $(rep "$key")" ||
			fail "$key: vmlet '$(rep "$key")', QEMU '$(sed -n "s/^$key //p" "$q")'"
	done
}
