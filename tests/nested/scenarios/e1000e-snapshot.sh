# Snapshot and restore of a Linux guest on an e1000e NIC (issue 24,
# docs/snapshot.md; the windows.* preferences' NIC): Linux's own e1000e
# driver (the generic kernel's) on the masquerade binding in a pod, as the
# scenario e1000e. L2 takes a lease, pings its gateway, sends 256 KiB over
# TCP to the node beyond the pod and listens on port 8080 (in ports); L1
# takes a snapshot with --stop (vmlet exits 0) and starts vmlet with
# --restore in the same pod: the node's message reaches the guest's
# listener through the forwarded port (RX of the restored NIC), the guest
# pings its gateway again and sends another 256 KiB to the node (TX), the
# driver logs no hang or watchdog reset, and the guest powers off on the
# power button (exit 0).
GROUP=devices # tests/sh/nested_devices.sh
L2_FLAVOR=generic SHAPE=1,1,1 MEM=256Mi L1_PROGS=nft TIMEBOX=300 L2_END=pwrbtn_wait
NIC_MODS=e1000e

host_prep() {
	vm_yaml_pod "$SCN" "$SHAPE" "$MEM" \
		"{name: default, model: e1000e, masquerade: {}, ports: [{name: http, port: 8080}]}" \
		>"$SCN_DIR/vm.yaml"
}

l1() {
	pod_up || return 1
	for m in nf_tables nft_nat nft_masq nft_chain_nat; do modprobe $m || return 1; done
	sleep 900 | nc -l -p 5000 >/tmp/recv1 &
	sleep 900 | nc -l -p 5001 >/tmp/recv2 &
	sock=/tmp/api.sock
	rm -rf /tmp/snap "$sock"
	: >/tmp/con1
	_seen=0
	vm_run --api-socket "$sock" >>/tmp/con1 &
	vmpid=$!
	con_wait /tmp/con1 '@R guest-listening' 400
	vmlet ctl "$sock" snapshot /tmp/snap --stop
	echo "@R snapshot-rc $?"
	wait $vmpid
	echo "@R first-exit $?"
	con_follow /tmp/con1
	cp "$D/vmm.log" "$D/vmm-snapshot.log"
	sleep 2 # time passes on the host while the guest lies on disk
	rm -f "$sock"
	: >/tmp/con2
	_seen=0
	echo "@R restored"
	vm_run --api-socket "$sock" --restore /tmp/snap >>/tmp/con2 &
	vmpid=$!
	# the node's message to the restored guest's forwarded port
	n=0
	while ! grep -q '@R recv-8080 ' /tmp/con2 && kill -0 $vmpid 2>/dev/null && [ $n -lt 40 ]; do
		echo go-after-restore | nc -w 2 10.200.0.2 8080 >/dev/null 2>&1
		con_follow /tmp/con2
		sleep 1
		n=$((n + 1))
	done
	con_wait /tmp/con2 '@R after-done' 120
	vm_button_off "$sock" /tmp/con2 # lib-l1.sh
	rc=$?
	con_follow /tmp/con2
	echo "@R node-recv1 $(md5sum </tmp/recv1 | cut -d' ' -f1) $(wc -c </tmp/recv1)"
	echo "@R node-recv2 $(md5sum </tmp/recv2 | cut -d' ' -f1) $(wc -c </tmp/recv2)"
	sed 's/^/e1000e-snapshot: first vmlet: /' "$D/vmm-snapshot.log" | tail -n 15
	kill $(pidof sleep) 2>/dev/null
	pod_down
	return $rc
}

# ---- L2 ---------------------------------------------------------------------

e1k_ping() { ping -c 3 -W 5 "$1" 2>&1 | grep -o '[0-9]* packets received'; }

e1k_send() { # PORT KEY: 256 KiB of random bytes to the node's PORT
	dd if=/dev/urandom of=/tmp/blob bs=65536 count=4 2>/dev/null
	rep "$2" "$(md5sum </tmp/blob | cut -d' ' -f1) $(wc -c </tmp/blob)"
	nc -w 10 10.201.0.1 "$1" </tmp/blob
}

l2() {
	mod e1000e
	dhcp_up eth0
	gw=$(ip route | sed -n 's/^default via \([^ ]*\).*/\1/p')
	rep ping-gw "$(e1k_ping "$gw")"
	e1k_send 5000 tcp-sent1
	tcp_listen 8080 /tmp/in8080
	_end=$(($(cut -d. -f1 /proc/uptime) + 30))
	while ! netstat -ltn 2>/dev/null | grep -q ':8080 ' &&
		[ "$(cut -d. -f1 /proc/uptime)" -lt $_end ]; do sleep 0.2; done
	rep guest-listening
	# the snapshot is taken here; the restored guest goes on
	tcp_wait /tmp/in8080 300
	rep recv-8080 "$(cat /tmp/in8080)"
	rep ping-gw-after "$(e1k_ping "$gw")"
	e1k_send 5001 tcp-sent2
	rep nic-hang "$(dmesg | grep -c -E 'Hardware Unit Hang|NETDEV WATCHDOG|Reset adapter')"
	rep after-done
}

# ---- host -------------------------------------------------------------------

host_check() {
	[[ $(rep snapshot-rc) == 0 && $(rep first-exit) == 0 ]] &&
		ok "snapshot --stop of a guest on Linux's e1000e: vmlet exited 0" ||
		fail "snapshot: ctl $(rep snapshot-rc), vmlet exit $(rep first-exit)"
	[[ $(rep ping-gw) == "3 packets received" && -n $(rep tcp-sent1) &&
		$(rep tcp-sent1) == "$(rep node-recv1)" ]] &&
		ok "before: the gateway answers, 256 KiB over TCP to the node arrived intact" ||
		fail "before: ping '$(rep ping-gw)', sent '$(rep tcp-sent1)', the node got '$(rep node-recv1)'"
	[[ $(rep recv-8080) == go-after-restore ]] &&
		ok "restored: the node's message reached the guest through port 8080 (RX)" ||
		fail "restored: the guest got '$(rep recv-8080)' on port 8080"
	[[ $(rep ping-gw-after) == "3 packets received" ]] && ok "restored: the gateway answers" ||
		fail "restored: ping '$(rep ping-gw-after)'"
	[[ -n $(rep tcp-sent2) && $(rep tcp-sent2) == "$(rep node-recv2)" ]] &&
		ok "restored: 256 KiB over TCP to the node arrived intact (TX)" ||
		fail "restored: sent '$(rep tcp-sent2)', the node got '$(rep node-recv2)'"
	[[ $(rep nic-hang) == 0 ]] && ok "no hang or watchdog reset of the e1000e driver" ||
		fail "$(rep nic-hang) hang/watchdog messages"
	# (one vCPU: no TSC is marked unstable at boot; after a restore whose
	# TSC and kvm-clock did not start together, the watchdog marked it)
	rep dmesg-note | grep -q 'clocksource watchdog' &&
		fail "the restored guest's TSC and kvm-clock disagree: $(rep dmesg-note | grep 'clocksource watchdog')" ||
		ok "no clocksource watchdog complaint after the restore"
	rep power-button | grep -q . && ok "the restored guest powered off on the button" ||
		fail "no power button in the restored guest"
}
