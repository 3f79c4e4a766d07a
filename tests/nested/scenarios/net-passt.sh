# KubeVirt's passt binding plugin in a pod (pod_up): Debian's passt (from
# its package, L1_PROGS) started by vmlet in the pod's namespace; passt's
# own DHCP gives the guest the pod's address and gateway; the guest pings
# the gateway and the node beyond the pod, sends that node 1 MiB over
# TCP, and passt forwards port 8080 (in `ports`) inward, not 8081.
SHAPE=1,1,1 MEM=256Mi L1_PROGS=passt
host_prep() {
	vm_yaml_pod "$SCN" "$SHAPE" "$MEM" "{name: default, binding: {name: passt}, ports: [{name: http, port: 8080}]}" \
		>"$SCN_DIR/vm.yaml"
}
l1() {
	pod_up || return 1
	# passt started as root changes to nobody (a pod has /etc/passwd);
	# it forwards pings through ICMP sockets, which need
	# net.ipv4.ping_group_range to take in its group
	mkdir -p /etc
	grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >>/etc/passwd
	grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
	pod sysctl -w net.ipv4.ping_group_range="0 2147483647" >/dev/null
	pod_traffic_run
}
l2() { pod_traffic; }
host_check() {
	pod_traffic_check "ip=10.200.0.2 mask=24 router=10.200.0.1" 10.200.0.1
}
