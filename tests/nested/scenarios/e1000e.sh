# The e1000e NIC (issue 27, interfaces[].model e1000e: the Intel 82574L,
# vmm/nic/e1000e.h) through Linux's own e1000e driver (the generic kernel's:
# the cloud kernel has none), on the masquerade binding in a pod as
# net-masquerade: vmlet's DHCP gives 10.0.2.2/24, the guest pings the
# gateway and the node beyond the pod, sends it 1 MiB over TCP (the node's
# checksum of what arrived must be the guest's), takes port 8080 inward.
# Then what Linux made of the device (driver, PCI IDs, link speed and
# duplex, its MSI-X vectors, the driver's messages but PCI's "enabling
# device", which QEMU's BIOS did before the kernel, hardware counters), a
# link down and up (the driver resets the device; the gateway answers
# again), MTU 9000 (the driver switches to packet-split receive; the
# gateway answers again) and no hang the driver detected. Scenario e1000e-qemu runs QEMU's
# -device e1000e in the same L1 as the oracle: the same identity, link and
# vectors (the driver's messages must match but for the MAC and PCI slot).
GROUP=devices # tests/sh/nested_devices.sh
L2_FLAVOR=generic SHAPE=1,1,1 MEM=256Mi L1_PROGS=nft TIMEBOX=400 COMPARE=e1000e-qemu
NIC_MODS=e1000e

host_prep() {
	vm_yaml_pod "$SCN" "$SHAPE" "$MEM" \
		"{name: default, model: e1000e, masquerade: {}, ports: [{name: http, port: 8080}]}" \
		>"$SCN_DIR/vm.yaml"
}

l1() {
	if [ "${VMM:-}" = qemu ]; then
		# QEMU's user network (10.0.2.15, gateway 10.0.2.2 forwarding
		# to L1's loopback): the node's listener on port 5000 is L1's
		ip link set lo up
		sleep 600 | nc -l -p 5000 >/tmp/recv &
		_ncpid=$!
		qemu_run -netdev user,id=n0 -device e1000e,netdev=n0,romfile=
		_rc=$?
		echo "@R node-recv $(md5sum </tmp/recv | cut -d' ' -f1) $(wc -c </tmp/recv)"
		kill "$_ncpid" $(pidof sleep) 2>/dev/null
		return $_rc
	fi
	pod_up || return 1
	for m in nf_tables nft_nat nft_masq nft_chain_nat; do modprobe $m || return 1; done
	pod_traffic_run
}

# ---- L2 ---------------------------------------------------------------------

# e1000e_report: the device as Linux's e1000e sees it
e1000e_report() {
	n=/sys/class/net/eth0 dv=/sys/class/net/eth0/device
	rep nic-driver "$(basename "$(readlink $dv/driver)")"
	rep nic-ids "$(cat $dv/vendor $dv/device $dv/subsystem_vendor $dv/subsystem_device $dv/class $dv/revision | tr '\n' ' ' | sed 's/ $//')"
	rep nic-link "carrier=$(cat $n/carrier) speed=$(cat $n/speed) duplex=$(cat $n/duplex) mtu=$(cat $n/mtu)"
	rep nic-vectors "$(grep -c 'eth0' /proc/interrupts) msix=$(ls $dv/msi_irqs 2>/dev/null | wc -l)"
	# the driver's probe messages without the MAC, slot and PBA number
	dmesg | grep -E '^\[[ 0-9.]*\] e1000e' | sed 's/^\[[ 0-9.]*\] //; s/[0-9a-f][0-9a-f]\(:[0-9a-f][0-9a-f]\)\{5\}/MAC/g' |
		sed 's/0000:00:[0-9a-f][0-9a-f]\.[0-9]/SLOT/g; s/PBA No: .*/PBA No: -/' |
		grep -v -E 'NIC Link is|Link is Down|enabling device' | sed 's/^/@R nic-dmesg /'
	rep nic-counters "rx=$(cat $n/statistics/rx_packets) tx=$(cat $n/statistics/tx_packets) rx_err=$(cat $n/statistics/rx_errors) tx_err=$(cat $n/statistics/tx_errors)"
	rep nic-errors "$(cat $n/statistics/rx_errors) $(cat $n/statistics/tx_errors)"
}

# e1000e_relink: the interface down and up again (the driver resets the
# device and waits for the link), then the gateway pinged again
e1000e_relink() {
	ip link set eth0 down && ip link set eth0 up
	t=0
	while [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] && [ $t -lt 100 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	rep relink "carrier=$(cat /sys/class/net/eth0/carrier 2>/dev/null)"
	ip route | grep -q '^default' || ip route add default via "$1"
	rep ping-gw2 "$(ping -c 3 -W 5 "$1" 2>&1 | grep -o '[0-9]* packets received')"
	# a jumbo MTU: the driver resets the device into packet-split receive
	ip link set eth0 mtu 9000
	t=0
	while [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] && [ $t -lt 100 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	ip route | grep -q '^default' || ip route add default via "$1"
	rep jumbo "mtu=$(cat /sys/class/net/eth0/mtu) carrier=$(cat /sys/class/net/eth0/carrier 2>/dev/null)"
	rep ping-jumbo "$(ping -c 3 -W 5 "$1" 2>&1 | grep -o '[0-9]* packets received')"
	rep nic-hang "$(dmesg | grep -c -E 'Hardware Unit Hang|NETDEV WATCHDOG|Reset adapter')"
}

l2() {
	if [ "${VMM:-}" = qemu ]; then
		mod e1000e
		dhcp_up eth0
		rep ping-gw "10.0.2.2 $(ping -c 3 -W 5 10.0.2.2 2>&1 | grep -o '[0-9]* packets received')"
		dd if=/dev/urandom of=/tmp/blob bs=65536 count=16 2>/dev/null
		rep tcp-sent "$(md5sum </tmp/blob | cut -d' ' -f1) $(wc -c </tmp/blob)"
		nc -w 10 10.0.2.2 5000 </tmp/blob
	else
		pod_traffic
	fi
	e1000e_report
	e1000e_relink "$(ip route | sed -n 's/^default via \([^ ]*\).*/\1/p')"
}

# ---- host -------------------------------------------------------------------

e1000e_identity_check() {
	[[ $(rep nic-driver) == e1000e ]] && ok "Linux's e1000e drives the NIC" ||
		fail "the NIC's driver is '$(rep nic-driver)', want e1000e"
	[[ $(rep nic-ids) == "0x8086 0x10d3 0x8086 0x0000 0x020000 0x00" ]] &&
		ok "PCI 8086:10d3, subsystem 8086:0000, class 020000, revision 0 (the 82574L as QEMU's)" ||
		fail "PCI IDs '$(rep nic-ids)'"
	[[ $(rep nic-link) == "carrier=1 speed=1000 duplex=full mtu=1500" ]] && ok "link: $(rep nic-link)" ||
		fail "link: '$(rep nic-link)'"
	[[ $(rep nic-vectors) == "3 msix=3" ]] && ok "MSI-X: rx, tx and other vectors" ||
		fail "vectors: '$(rep nic-vectors)', want '3 msix=3'"
	[[ $(rep relink) == carrier=1 && $(rep ping-gw2) == "3 packets received" ]] &&
		ok "link down/up: carrier back, the gateway answers" ||
		fail "link down/up: '$(rep relink)', ping '$(rep ping-gw2)'"
	[[ $(rep jumbo) == "mtu=9000 carrier=1" && $(rep ping-jumbo) == "3 packets received" ]] &&
		ok "MTU 9000 (packet-split receive): the gateway answers" ||
		fail "MTU 9000: '$(rep jumbo)', ping '$(rep ping-jumbo)'"
	[[ $(rep nic-hang) == 0 ]] && ok "no hang or watchdog reset" || fail "$(rep nic-hang) hang/watchdog messages"
	[[ $(rep nic-errors) == "0 0" ]] && ok "no RX/TX errors in the device's counters ($(rep nic-counters))" ||
		fail "errors in the device's counters: $(rep nic-counters)"
	[[ -n $(rep tcp-sent) && $(rep tcp-sent) == "$(rep node-recv)" ]] &&
		ok "1 MiB over TCP arrived intact ($(rep tcp-sent))" ||
		fail "TCP: sent '$(rep tcp-sent)', the node got '$(rep node-recv)'"
}

host_check() {
	local mine theirs other=${COMPARE:-}
	e1000e_identity_check
	if [[ ${VMM:-} == qemu ]]; then
		[[ $(rep dhcp) == "ip=10.0.2.15 mask=24 router=10.0.2.2" ]] && ok "QEMU: DHCP $(rep dhcp)" ||
			fail "QEMU: DHCP '$(rep dhcp)'"
		return
	fi
	pod_traffic_check "ip=10.0.2.2 mask=24 router=10.0.2.1" 10.0.2.1
	grep -q 'packet-split receive' "${R%/*}/vmm.log" && ok "vmlet's e1000e ran packet-split receive" ||
		fail "no packet-split receive in vmlet's log"
	[[ -n $other && -f ${R%/*/*}/$other/report ]] || return 0
	for k in nic-ids nic-link nic-vectors nic-dmesg; do
		mine=$(rep "$k")
		theirs=$(sed -n "s/^$k //p" "${R%/*/*}/$other/report")
		[[ $mine == "$theirs" ]] && ok "$k as QEMU's e1000e" ||
			fail "$k: vmlet '$mine', QEMU '$theirs'"
	done
}
