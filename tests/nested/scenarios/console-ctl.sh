# `vmlet ctl SOCKET console` attached to a running guest: the guest's
# output reaches the client (its "console-ready" line), a line typed into
# the client reaches the guest's ttyS0 (an L2 `read`, whose echo comes back
# through the client too); a second client is refused while one is
# attached; the client ends when vmlet does.
SHAPE=1,1,1 MEM=256Mi
l1() {
	sock=/tmp/api.sock
	rm -f "$sock" /tmp/cin /tmp/ctl.out && mkfifo /tmp/cin && : >/tmp/ctl.out
	exec 5<>/tmp/cin
	vm_run --api-socket "$sock" &
	vmpid=$!
	n=0
	while [ ! -S "$sock" ] && kill -0 $vmpid 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	vmlet ctl "$sock" console </tmp/cin >/tmp/ctl.out 2>/tmp/ctl.err &
	ctlpid=$!
	while ! grep -q '@R console-ready' /tmp/ctl.out && kill -0 $vmpid 2>/dev/null; do sleep 0.2; done
	timeout 20 vmlet ctl "$sock" console </dev/null >/tmp/ctl2.out 2>&1
	echo "@R ctl-second rc=$? $(tr '\n' ' ' </tmp/ctl2.out | cut -c1-120)"
	echo typed-through-ctl >&5
	wait $vmpid
	rc=$?
	timeout 20 sh -c "while kill -0 $ctlpid 2>/dev/null; do sleep 0.2; done"
	kill -0 $ctlpid 2>/dev/null && { echo "@R ctl-exit still-running"; kill $ctlpid; } || echo "@R ctl-exit ended"
	exec 5>&-
	echo "@R ctl-saw-ready $(grep -c '@R console-ready' /tmp/ctl.out)"
	echo "@R ctl-saw-read $(sed -n 's/.*@R console-read //p' /tmp/ctl.out | tr -d '\r' | head -n 1)"
	return $rc
}
l2() {
	rep console-ready
	read -t 120 -r line
	rep console-read "$line"
}
host_check() {
	[[ $(rep ctl-saw-ready) == 1 ]] && ok "the guest's output reached 'vmlet ctl console'" ||
		fail "the ctl client saw console-ready $(rep ctl-saw-ready) times, want 1"
	[[ $(rep console-read) == typed-through-ctl ]] && ok "a line typed into 'vmlet ctl console' reached ttyS0" ||
		fail "the guest read '$(rep console-read)' from ttyS0, want typed-through-ctl"
	[[ $(rep ctl-saw-read) == typed-through-ctl ]] && ok "the guest's answer came back through the client" ||
		fail "the ctl client saw the guest's answer '$(rep ctl-saw-read)'"
	[[ $(rep ctl-second) == "rc=1 "*busy* ]] && ok "a second console client is refused: $(rep ctl-second)" ||
		fail "a second console client: '$(rep ctl-second)', want rc=1 and busy"
	[[ $(rep ctl-exit) == ended ]] && ok "the client ended with vmlet" || fail "the ctl client: $(rep ctl-exit)"
}
