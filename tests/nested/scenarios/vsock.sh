# autoattachVSOCK (docs/devices.md: vsock): Linux's own
# vmw_vsock_virtio_transport binds vmlet's virtio-vsock and socat (Debian's,
# in L2 and L1) talks through it both ways. Guest to host: 1 MiB to CID 2
# port 5000 reaches the listener SOCKET_5000 in L1 (checksummed), then 200
# short connections to an echo listener on SOCKET_5001 (fork), each line
# back (socat -t 10: L1 runs under TCG, an echo can take longer than
# socat's default half second after its input ended). Host to guest: 50 short connections through the CONNECT handshake
# to a guest echo listener on port 6001 ("OK <hostport>" then the line
# back), then 1 MiB to guest port 6000 (checksummed in L2). vmlet runs as
# root and so confined as 65534: L1's listeners are made connectable
# (umask 0) for its connector.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi TIMEBOX=300
L1_PROGS="socat"
L2_DEBS="socat:usr/bin/socat"
host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          autoattachVSOCK: true" >"$SCN_DIR/vm.yaml"
}
l1() {
	sock=/tmp/api.sock
	vs=$sock.vsock.sock
	rm -f "$sock" "$vs" "${vs}_5000" "${vs}_5001" /tmp/g2h /tmp/h2g.out
	(
		umask 0
		socat -u UNIX-LISTEN:"${vs}_5000" CREATE:/tmp/g2h 2>/tmp/socat5000.err &
		socat -t 10 UNIX-LISTEN:"${vs}_5001",fork EXEC:cat 2>/tmp/socat5001.err &
	)
	head -c 1048576 /dev/urandom >/tmp/h2g
	echo "@R l1-h2g-sent $(md5sum </tmp/h2g | cut -d' ' -f1)"
	vm_run --api-socket "$sock" &
	vmpid=$!
	n=0
	while [ ! -S "$vs" ] && kill -0 $vmpid 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	echo "@R l1-socket $(stat -c %a "$vs" 2>/dev/null || echo none)"
	# the guest's 1 MiB first (its listeners are up by then)
	n=0
	while [ "$(stat -c %s /tmp/g2h 2>/dev/null || echo 0)" -lt 1048576 ] && kill -0 $vmpid 2>/dev/null &&
		[ $n -lt 1800 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	sleep 1
	echo "@R l1-g2h $(md5sum </tmp/g2h | cut -d' ' -f1) $(stat -c %s /tmp/g2h)"
	# host-initiated: 50 short connections to the guest's echo on 6001
	ok=0 i=0 first=""
	while [ $i -lt 50 ] && kill -0 $vmpid 2>/dev/null; do
		out=$( (
			printf 'CONNECT 6001\n'
			echo "hi$i"
		) | timeout 20 socat -t 10 - UNIX-CONNECT:"$vs" 2>/dev/null | tr '\n' ' ')
		[ -n "$first" ] || first=$out
		case $out in "OK "[0-9]*" hi$i ") ok=$((ok + 1)) ;; esac
		i=$((i + 1))
	done
	echo "@R l1-short $ok"
	echo "@R l1-short-first $first"
	# host-initiated: 1 MiB to the guest's port 6000
	(
		printf 'CONNECT 6000\n'
		cat /tmp/h2g
	) | timeout 120 socat -t 10 - UNIX-CONNECT:"$vs" >/tmp/h2g.out 2>/tmp/socat6000.err
	echo "@R l1-h2g-answer $(head -c 40 /tmp/h2g.out | tr '\n' ' ')"
	wait $vmpid
	rc=$?
	echo "@R l1-socat-errs $(cat /tmp/socat500*.err /tmp/socat6000.err 2>/dev/null | head -c 300 | tr '\n' ' ')"
	return $rc
}
l2() {
	mod virtio_pci vmw_vsock_virtio_transport
	rep vsock-dev "$(ls /dev/vsock 2>/dev/null)"
	mkdir -p /tmp
	socat -u VSOCK-LISTEN:6000 CREATE:/tmp/h2g 2>/tmp/l6000.err &
	lp=$!
	socat -t 10 VSOCK-LISTEN:6001,fork EXEC:cat 2>/tmp/l6001.err &
	ep=$!
	dd if=/dev/urandom of=/tmp/data bs=65536 count=16 2>/dev/null
	rep sent "$(md5sum </tmp/data | cut -d' ' -f1)"
	i=0
	until socat -u OPEN:/tmp/data VSOCK-CONNECT:2:5000 2>/tmp/c5000.err; do
		i=$((i + 1))
		[ $i -lt 20 ] || break
		sleep 1
	done
	rep g2h-tries "$i $(head -c 200 /tmp/c5000.err | tr '\n' ' ')"
	ok=0 i=0
	while [ $i -lt 200 ]; do
		[ "$(echo "ping$i" | socat -t 10 - VSOCK-CONNECT:2:5001 2>/dev/null)" = "ping$i" ] && ok=$((ok + 1))
		i=$((i + 1))
	done
	rep short "$ok"
	# nothing listens on port 5999: refused
	socat -u OPEN:/dev/null VSOCK-CONNECT:2:5999 2>/tmp/c5999.err && rep refused no ||
		rep refused "$(head -c 120 /tmp/c5999.err | tr '\n' ' ')"
	wait $lp
	rep h2g "$(md5sum </tmp/h2g | cut -d' ' -f1) $(wc -c </tmp/h2g)"
	kill $ep 2>/dev/null
}
host_check() {
	[[ $(rep vsock-dev) == /dev/vsock ]] && ok "vmw_vsock_virtio_transport bound: /dev/vsock" ||
		fail "no /dev/vsock in the guest (modprobe: $(rep modprobe-error))"
	[[ $(rep l1-socket) == 600 ]] && ok "the vsock socket in L1, mode 0600" ||
		fail "the vsock socket in L1: $(rep l1-socket)"
	local sent
	sent=$(rep sent)
	[[ -n $sent && $(rep l1-g2h) == "$sent 1048576" ]] &&
		ok "guest to host: 1 MiB to CID 2 port 5000 reached SOCKET_5000, checksummed" ||
		fail "guest to host: L1 got '$(rep l1-g2h)', the guest sent '$sent' (tries: $(rep g2h-tries); $(rep l1-socat-errs))"
	[[ $(rep short) == 200 ]] && ok "guest to host: 200 short connections echoed" ||
		fail "guest to host: $(rep short) of 200 short connections echoed"
	[[ $(rep refused) == *"onnection refused"* || $(rep refused) == *"onnection reset"* ]] &&
		ok "guest to host: a port without a listener is refused ($(rep refused))" ||
		fail "guest to a port without a listener: $(rep refused)"
	[[ $(rep l1-short) == 50 ]] && ok "host to guest: 50 short connections (CONNECT, OK, echo)" ||
		fail "host to guest: $(rep l1-short) of 50 (first: '$(rep l1-short-first)')"
	[[ $(rep l1-h2g-answer) == "OK "[0-9]* ]] && ok "host to guest: the handshake answered '$(rep l1-h2g-answer)'" ||
		fail "host to guest: answer '$(rep l1-h2g-answer)'"
	[[ -n $(rep l1-h2g-sent) && $(rep h2g) == "$(rep l1-h2g-sent) 1048576" ]] &&
		ok "host to guest: 1 MiB to guest port 6000, checksummed" ||
		fail "host to guest: the guest got '$(rep h2g)', L1 sent '$(rep l1-h2g-sent)'"
}
