# Snapshot and restore of a Linux guest whose vsock driver runs (issue 24,
# docs/snapshot.md: virtio-vsock moves without its connections and the
# restored device sends VIRTIO_VSOCK_EVENT_TRANSPORT_RESET, as QEMU's
# vhost-vsock after a migration). L2 (vmw_vsock_virtio_transport, socat)
# listens on port 6001 (echo) and holds a connection to the host's
# SOCKET_5002 open; L1 checks the echo through the CONNECT handshake, takes
# a snapshot with --stop and restores it: the guest's held connection ends
# with an error (the transport reset), its listener survives (L1's new
# CONNECT 6001 is echoed), and a new connection from the guest to the
# host's echo on SOCKET_5001 works; the guest powers off on the button.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi TIMEBOX=300 L2_END=pwrbtn_wait
L1_PROGS="socat"
L2_DEBS="socat:usr/bin/socat"
host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          autoattachVSOCK: true" >"$SCN_DIR/vm.yaml"
}

# vss_echo KEY: CONNECT 6001 through the host socket, a line echoed
# ("@R KEY ok TRIES" or "@R KEY fail TRIES LAST-ANSWER"), 10 tries
vss_echo() {
	i=0 out=
	while [ $i -lt 10 ] && kill -0 "$vmpid" 2>/dev/null; do
		i=$((i + 1))
		out=$( (
			printf 'CONNECT 6001\n'
			echo "hi$1"
		) | timeout 20 socat -t 10 - UNIX-CONNECT:"$vs" 2>/dev/null | tr '\n' ' ')
		case $out in "OK "[0-9]*" hi$1 ")
			echo "@R $1 ok $i"
			return 0
			;;
		esac
		sleep 1
	done
	echo "@R $1 fail $i $out"
}

l1() {
	sock=/tmp/api.sock
	vs=$sock.vsock.sock
	rm -rf /tmp/snap "$sock" "$vs" "${vs}_5001" "${vs}_5002"
	(
		umask 0
		socat -t 10 UNIX-LISTEN:"${vs}_5001",fork EXEC:cat 2>/tmp/socat5001.err &
		socat -u UNIX-LISTEN:"${vs}_5002" OPEN:/dev/null 2>/tmp/socat5002.err &
	)
	: >/tmp/con1
	_seen=0
	vm_run --api-socket "$sock" >>/tmp/con1 &
	vmpid=$!
	con_wait /tmp/con1 '@R vs-ready' 400
	vss_echo echo-before
	vmlet ctl "$sock" snapshot /tmp/snap --stop
	echo "@R snapshot-rc $?"
	wait $vmpid
	echo "@R first-exit $?"
	con_follow /tmp/con1
	cp "$D/vmm.log" "$D/vmm-snapshot.log"
	rm -f "$sock"
	: >/tmp/con2
	_seen=0
	echo "@R restored"
	vm_run --api-socket "$sock" --restore /tmp/snap >>/tmp/con2 &
	vmpid=$!
	n=0
	while [ ! -S "$sock" ] && kill -0 $vmpid 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	vss_echo echo-after
	con_wait /tmp/con2 '@R after-done' 120
	vm_button_off "$sock" /tmp/con2 # lib-l1.sh
	rc=$?
	con_follow /tmp/con2
	echo "@R restore-log $(grep -c 'transport reset event' "$D/vmm.log")"
	return $rc
}

l2() {
	mod virtio_pci vmw_vsock_virtio_transport
	socat -t 10 VSOCK-LISTEN:6001,fork EXEC:cat 2>/tmp/l6001.err &
	ep=$!
	# a connection the guest holds open across the snapshot
	# (not a pipeline: ash's wait waits for a whole job)
	socat -u VSOCK-CONNECT:2:5002 - >/dev/null 2>/tmp/held.err &
	held=$!
	sleep 2
	kill -0 $held 2>/dev/null && rep held-open yes || rep held-open "no $(head -c 120 /tmp/held.err)"
	rep vs-ready
	# the snapshot is taken here; restored, the transport reset ends it
	wait $held
	rep held-ended "rc=$? $(head -c 120 /tmp/held.err | tr '\n' ' ')"
	ans=$(echo ping-after | socat -t 10 - VSOCK-CONNECT:2:5001 2>/tmp/c5001.err)
	rep g2h-after "$ans $(head -c 80 /tmp/c5001.err | tr '\n' ' ')"
	rep listener-alive "$(kill -0 $ep 2>/dev/null && echo yes || echo no)"
	rep after-done
}

host_check() {
	[[ $(rep held-open) == yes ]] && ok "the guest holds a connection to the host open" ||
		fail "the held connection: '$(rep held-open)'"
	[[ $(rep echo-before) == ok* ]] && ok "before: host to guest echo on 6001 ($(rep echo-before))" ||
		fail "before: echo '$(rep echo-before)'"
	[[ $(rep snapshot-rc) == 0 && $(rep first-exit) == 0 ]] &&
		ok "snapshot --stop with the vsock driver running: vmlet exited 0" ||
		fail "snapshot: ctl $(rep snapshot-rc), vmlet exit $(rep first-exit)"
	[[ $(rep restore-log) == 1 ]] && ok "restored: the transport reset was owed (vmlet's log)" ||
		fail "restore log: '$(rep restore-log)' transport reset lines"
	[[ $(rep held-ended) == rc=* ]] &&
		ok "restored: the guest's held connection ended ($(rep held-ended))" ||
		fail "the held connection after the restore: '$(rep held-ended)'"
	[[ $(rep echo-after) == ok* && $(rep listener-alive) == yes ]] &&
		ok "restored: the guest's listener survived, a new host connection is echoed ($(rep echo-after))" ||
		fail "after: echo '$(rep echo-after)', listener '$(rep listener-alive)'"
	[[ $(rep g2h-after) == ping-after* ]] && ok "restored: a new guest to host connection is echoed" ||
		fail "after: guest to host '$(rep g2h-after)'"
	# (one vCPU: no TSC is marked unstable at boot; after a restore whose
	# TSC ran before its kvmclock did, the watchdog marked it)
	rep dmesg-note | grep -q 'clocksource watchdog' &&
		fail "the restored guest's TSC and kvm-clock disagree: $(rep dmesg-note | grep 'clocksource watchdog')" ||
		ok "no clocksource watchdog complaint after the restore"
	rep power-button | grep -q . && ok "the restored guest powered off on the button" ||
		fail "no power button in the restored guest"
}
