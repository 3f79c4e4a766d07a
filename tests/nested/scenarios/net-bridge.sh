# virtio-net, virtio-rng and the console through Linux's drivers. L1 plays
# a pod (network namespace, eth0 = veth to L1's own namespace, "the node",
# 10.200.0.1) and vmlet runs in it with a bridge binding: its DHCP responder
# must give the guest the pod's address, MAC and gateway; the guest pings
# the node and sends it 1 MiB over TCP (the node's nc checks what arrived);
# networkInterfaceMultiqueue gives one queue pair per vCPU. virtio-rng is
# the kernel's hw_random source. A line written to vmlet's stdin is read
# by the guest from ttyS0.
MEM=256Mi SHAPE=2,1,2
host_prep() {
	cat >"$SCN_DIR/vm.yaml" <<EOY
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: $SCN, namespace: default}
spec:
  runStrategy: Once
  template:
    spec:
      domain:
        cpu: {sockets: 2, cores: 1, threads: 2}
        memory: {guest: $MEM}
        devices:
          rng: {}
          networkInterfaceMultiqueue: true
          interfaces:
          - {name: default, bridge: {}}
      networks: [{name: default, pod: {}}]
EOY
}
l1() {
	pod_up || return 1
	echo "@R l1-pod-mac $(pod ip link show eth0 | sed -n 's|.*link/ether \([^ ]*\).*|\1|p')"
	# (nc's stdin stays open: busybox nc stops at the end of its input)
	sleep 600 | nc -l -p 5000 >/tmp/recv &
	ncpid=$!
	vm_run_on "@R console-ready" 'echo typed-into-vmlet >&4'
	rc=$?
	echo "@R l1-recv $(md5sum </tmp/recv | cut -d' ' -f1) $(wc -c </tmp/recv)"
	kill "$ncpid" $(pidof sleep) 2>/dev/null
	pod_down
	return $rc
}
l2() {
	mod virtio_pci virtio_net virtio_rng
	rep rng "$(cat /sys/class/misc/hw_random/rng_current) $(dd if=/dev/hwrng bs=32 count=1 2>/dev/null | wc -c)"
	rep mac "$(cat /sys/class/net/eth0/address)"
	rep queues "$(ls -d /sys/class/net/eth0/queues/rx-* | wc -l) $(ls -d /sys/class/net/eth0/queues/tx-* | wc -l)"
	dhcp_up eth0
	rep ping "$(ping -c 3 -W 5 10.200.0.1 | grep -o '[0-9]* packets received')"
	dd if=/dev/urandom of=/tmp/blob bs=65536 count=16 2>/dev/null
	rep tcp-sent "$(md5sum </tmp/blob | cut -d' ' -f1) $(wc -c </tmp/blob)"
	nc -w 10 10.200.0.1 5000 </tmp/blob
	rep console-ready
	read -t 60 -r line
	rep console-read "$line"
}
host_check() {
	local dhcp
	dhcp=$(rep dhcp)
	[[ $dhcp == "ip=10.200.0.2 mask=24 router=10.200.0.1" ]] &&
		ok "DHCP from vmlet's responder: the pod's address and gateway" || fail "DHCP: '$dhcp'"
	[[ -n $(rep mac) && $(rep mac) == "$(rep l1-pod-mac)" ]] && ok "the guest has the pod's MAC $(rep mac)" ||
		fail "guest MAC '$(rep mac)', the pod's was '$(rep l1-pod-mac)'"
	[[ $(rep ping) == "3 packets received" ]] && ok "ping the node: $(rep ping)" || fail "ping: '$(rep ping)'"
	[[ -n $(rep tcp-sent) && $(rep tcp-sent) == "$(rep l1-recv)" ]] && ok "1 MiB over TCP arrived intact" ||
		fail "TCP: sent '$(rep tcp-sent)', the node got '$(rep l1-recv)'"
	[[ $(rep queues) == "4 4" ]] && ok "multiqueue: 4 rx and 4 tx queues (4 vCPUs)" ||
		fail "queues (rx tx): '$(rep queues)', want 4 4"
	[[ $(rep rng) == "virtio_rng.0 32" ]] && ok "hw_random is virtio_rng, reads work" || fail "rng: '$(rep rng)'"
	[[ $(rep console-read) == typed-into-vmlet ]] && ok "vmlet's stdin reached the guest's ttyS0" ||
		fail "console: the guest read '$(rep console-read)'"
}
