# make run's example where the host has no usable KVM (scripts/run-example):
# the same `vmlet probe -f examples/vm` as on a host with KVM, run in L1 on
# its real KVM (kvm_amd). The probe guest reports what it sees (vendor,
# topology, memory, ACPI tables) next to what the manifest resolves to and
# says "match: yes"; vmlet's exit status is the scenario's.
# EXAMPLE (host): another manifest folder than examples/vm.
L1_PROGS="passt" # the pod network of the example (vmlet runs passt for it)
host_prep() {
	mkdir -p "$SCN_DIR/example"
	cp "${EXAMPLE:-examples/vm}"/*.yaml "$SCN_DIR/example/"
}
l1() {
	# the pod the example's pod network needs (as net-passt): its namespace,
	# vmlet's passt (a root passt changes to nobody; pings need ICMP sockets)
	pod_up || return 1
	unset VMLET_POD_INTERFACE # passt, as vmlet on a host without it
	mkdir -p /etc
	grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >>/etc/passwd
	grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
	pod sysctl -w net.ipv4.ping_group_range="0 2147483647" >/dev/null
	echo "@R begin $(up) probe"
	pod vmlet probe -f "$D/example" 2>"$D/vmm.log"
	_rc=$?
	echo "@R end $(up) rc=$_rc"
	pod_down
	return $_rc
}
