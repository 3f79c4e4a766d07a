# The masquerade binding in a pod (pod_up: a network namespace whose eth0
# is a veth to the node, L1's own namespace): vmlet's DHCP responder gives
# the guest 10.0.2.2/24 with gateway 10.0.2.1 on the tap; the guest pings
# the gateway and, through the NAT (the node has no route to 10.0.2.0/24),
# the node beyond the pod, and sends it 1 MiB over TCP; `ports` forwards
# 8080 from the pod's address to the guest, and not 8081.
SHAPE=1,1,1 MEM=256Mi L1_PROGS=nft
host_prep() {
	vm_yaml_pod "$SCN" "$SHAPE" "$MEM" "{name: default, masquerade: {}, ports: [{name: http, port: 8080}]}" \
		>"$SCN_DIR/vm.yaml"
}
l1() {
	pod_up || return 1
	for m in nf_tables nft_nat nft_masq nft_chain_nat; do modprobe $m || return 1; done
	pod_traffic_run
}
l2() { pod_traffic; }
host_check() {
	pod_traffic_check "ip=10.0.2.2 mask=24 router=10.0.2.1" 10.0.2.1
	[[ $(rep node-route-to-guest) == *unreachable* ]] &&
		ok "the node has no route to the guest's 10.0.2.2: the TCP above was NATed" ||
		fail "the node routes to 10.0.2.2 ('$(rep node-route-to-guest)'): the NAT is not shown"
}
