#!/usr/bin/env bash
# The control socket of a running, sandboxed vmlet (--api-socket, vmlet ctl):
# status and metrics answer; pause holds the vCPUs (no exits, state Paused)
# and resume lets them run; the power button reaches the guest (it powers
# off: exit 0); stop runs the SIGTERM sequence (hard stop after the grace
# period: exit 5), also for a paused guest; console attaches one client to
# the serial console both ways; the socket file is gone after exit; bad
# verbs are usage errors, a dead socket is an error.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
"$VMLET" run --help 2>&1 | grep -q -- '--api-socket' || skip "vmlet run has no --api-socket yet"
tiny_guests 0 1 6
SOCK=$TMPD/api.sock

start() { # GUEST ARGS...
	local g=$1; shift
	: >"$TMPD/out"
	"$VMLET" run --kernel "$g" --api-socket "$SOCK" --log-format text "$@" \
		>"$TMPD/out" 2>"$TMPD/err" &
	PID=$!
	# (generous: a loaded host can take seconds to start a VM)
	for _ in $(seq 600); do
		grep -q "tiny-guest: up" "$TMPD/out" && [[ -S $SOCK ]] && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "vmlet did not start: $(tail -2 "$TMPD/err")"
	kill -KILL "$PID" 2>/dev/null
	return 1
}

# guest that powers off on the power button
if start "$TMPD/mode0.elf" --smp 2; then
	out=$("$VMLET" ctl "$SOCK" status)
	rc=$?
	python3 - "$out" <<'PY' && ok "status: $out" || fail "status (exit $rc): $out"
import json, sys
s = json.loads(sys.argv[1])
assert s["ok"] is True and s["state"] == "Running" and s["vcpus"] == 2, s
assert s["memory"] > 0 and s["uptime_seconds"] >= 0 and s["restarts"] == 0, s
PY
	"$VMLET" ctl -o text "$SOCK" status | grep -q '^state: Running$' && ok "status -o text" ||
		fail "status -o text"
	"$VMLET" ctl "$SOCK" metrics >"$TMPD/metrics"
	grep -q '^# TYPE vmlet_vcpu_exits_total counter$' "$TMPD/metrics" &&
		grep -qE '^vmlet_vcpu_exits_total\{vcpu="0",reason="io"\} [1-9]' "$TMPD/metrics" &&
		grep -qE '^vmlet_resident_memory_bytes [1-9][0-9]*$' "$TMPD/metrics" &&
		grep -q '^vmlet_sandboxed 1$' "$TMPD/metrics" &&
		ok "metrics: vCPU exits by reason, RSS, sandboxed" ||
		{ fail "metrics"; head -20 "$TMPD/metrics"; }
	# pause: the vCPUs leave KVM_RUN and stay out (this guest polls a
	# port, so a running vCPU0 keeps adding io exits); resume: they run
	io_exits() {
		"$VMLET" ctl "$SOCK" metrics | sed -n 's/^vmlet_vcpu_exits_total{vcpu="0",reason="io"} //p'
	}
	"$VMLET" ctl "$SOCK" pause && ok "pause accepted" || fail "pause"
	"$VMLET" ctl -o text "$SOCK" status | grep -q '^state: Paused$' && ok "status: Paused" ||
		fail "status after pause: $("$VMLET" ctl "$SOCK" status)"
	a=$(io_exits); sleep 0.3; b=$(io_exits)
	[[ -n $a && $a == "$b" ]] && ok "paused: no vCPU exits ($a)" || fail "paused vCPU ran: io exits $a -> $b"
	"$VMLET" ctl "$SOCK" metrics | grep -q '^vmlet_paused 1$' && ok "metrics: vmlet_paused 1" ||
		fail "no vmlet_paused 1"
	"$VMLET" ctl "$SOCK" pause 2>/dev/null
	[[ $? == 1 ]] && ok "pause while paused: refused (exit 1)" || fail "second pause accepted"
	"$VMLET" ctl "$SOCK" resume && ok "resume accepted" || fail "resume"
	# (the vCPU thread may wait for a CPU a while on a loaded host)
	for _ in $(seq 200); do
		c=$(io_exits)
		[[ -n $c ]] && ((c > b)) && break
		sleep 0.1
	done
	[[ -n $c ]] && ((c > b)) && ok "resumed: vCPU exits again ($b -> $c)" || fail "resume: io exits $b -> $c"
	"$VMLET" ctl -o text "$SOCK" status | grep -q '^state: Running$' && ok "status: Running again" ||
		fail "status after resume"
	"$VMLET" ctl "$SOCK" unpause 2>/dev/null
	[[ $? == 1 ]] && ok "unpause (alias) when running: refused (exit 1)" || fail "unpause when running"
	"$VMLET" ctl "$SOCK" frobnicate 2>/dev/null
	[[ $? == 2 ]] && ok "unknown verb: usage error" || fail "unknown verb"
	"$VMLET" ctl "$SOCK" power-button && ok "power-button accepted" || fail "power-button"
	wait "$PID"
	rc=$?
	[[ $rc == 0 ]] && ok "guest powered off after ctl power-button: exit 0" || fail "exit $rc after power-button"
	[[ ! -e $SOCK ]] && ok "socket file removed at exit" || fail "socket file left behind"
fi

# paused guest stopped from outside: hard stop after the grace period, no hang
if start "$TMPD/mode0.elf" --smp 2 --grace-period 1; then
	"$VMLET" ctl "$SOCK" pause >/dev/null || fail "pause"
	kill -TERM "$PID"
	timeout 30 tail --pid="$PID" -f /dev/null
	kill -KILL "$PID" 2>/dev/null
	wait "$PID"
	rc=$?
	[[ $rc == 5 ]] && ok "paused guest + SIGTERM: hard stop, exit 5" || fail "paused + SIGTERM: exit $rc"
	[[ ! -e $SOCK ]] && ok "socket removed after a hard stop" || fail "socket left after hard stop"
fi

# console: attach over the socket, type to the guest (it echoes until 'q',
# then powers off); vmlet's own stdin is not a terminal
if start "$TMPD/mode6.elf" </dev/null; then
	# the first client's input comes through a FIFO held open here: typed
	# only once the second client was turned away
	mkfifo "$TMPD/con.in"
	timeout 60 "$VMLET" ctl "$SOCK" console <"$TMPD/con.in" >"$TMPD/con" 2>&1 &
	CON=$!
	exec 3>"$TMPD/con.in"
	wait_log "$TMPD/err" "console: client attached" 300 ||
		fail "console client did not attach: $(cat "$TMPD/con")"
	"$VMLET" ctl "$SOCK" console </dev/null >"$TMPD/con2" 2>&1
	[[ $? == 1 ]] && grep -qi "busy" "$TMPD/con2" && ok "second console client: busy (exit 1)" ||
		fail "second console: $(cat "$TMPD/con2")"
	(trap '' PIPE; printf 'hi' >&3; sleep 0.2; printf 'q' >&3) 2>/dev/null
	timeout 60 tail --pid="$PID" -f /dev/null
	kill -KILL "$PID" 2>/dev/null
	wait "$PID"
	rc=$?
	exec 3>&-
	wait "$CON"
	crc=$?
	[[ $rc == 0 ]] && ok "guest powered off after console input: exit 0" || fail "console guest exit $rc"
	grep -q "hiq" "$TMPD/con" && ((crc == 0)) && ok "console: input reached the guest, its echo came back" ||
		fail "console client (exit $crc) got '$(cat "$TMPD/con")'"
	grep -q "hiq" "$TMPD/out" && ok "console output still on vmlet's stdout" || fail "stdout: $(cat "$TMPD/out")"
fi

# guest that ignores the button: ctl stop = SIGTERM sequence, grace 1 s
if start "$TMPD/mode1.elf" --grace-period 1; then
	"$VMLET" ctl "$SOCK" stop && ok "stop accepted" || fail "stop"
	t0=$SECONDS
	wait "$PID"
	rc=$?
	[[ $rc == 5 ]] && ok "ctl stop: hard stop after the grace period: exit 5" || fail "ctl stop: exit $rc"
	# (grace 1 s, not the default 30 s; the bound leaves room for a loaded host)
	((SECONDS - t0 <= 20)) || fail "stop took $((SECONDS - t0)) s"
	grep -q "pressing the ACPI power button" "$TMPD/err" && ok "stop pressed the power button first" ||
		fail "no power button on stop"
fi

# vmlet probe with a control socket: the report still reaches stdout, the
# exit status is the probe's, and the socket file is gone afterwards, with
# the sandbox on (a supervising process removes it) and off
for sc in kill off; do
	timeout 120 "$VMLET" probe --smp 2 --api-socket "$TMPD/probe.sock" --seccomp=$sc -o json \
		>"$TMPD/probe.json" 2>"$TMPD/probe.err"
	rc=$?
	if [[ $rc == 0 && ! -e $TMPD/probe.sock ]] &&
		python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["match"] else 1)' \
			"$TMPD/probe.json"; then
		ok "probe --api-socket (seccomp=$sc): report matched, exit 0, socket removed"
	else
		fail "probe --api-socket (seccomp=$sc): exit $rc, socket $(ls "$TMPD/probe.sock" 2>&1)"
		tail -3 "$TMPD/probe.err"
	fi
done

"$VMLET" ctl "$TMPD/nothing.sock" status 2>/dev/null
[[ $? == 1 ]] && ok "no vmlet there: exit 1" || fail "dead socket"
finish
