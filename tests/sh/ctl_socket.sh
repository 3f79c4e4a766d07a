#!/usr/bin/env bash
# The control socket of a running, sandboxed vmlet (--api-socket, vmlet ctl):
# status and metrics answer, the power button reaches the guest (it powers
# off: exit 0), stop runs the SIGTERM sequence (hard stop after the grace
# period: exit 5), bad verbs are usage errors, a dead socket is an error.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
"$VMLET" run --help 2>&1 | grep -q -- '--api-socket' || skip "vmlet run has no --api-socket yet"
tiny_guests 0 1
SOCK=$TMPD/api.sock

start() { # GUEST ARGS...
	local g=$1; shift
	: >"$TMPD/out"
	"$VMLET" run --kernel "$g" --api-socket "$SOCK" --log-format text "$@" \
		>"$TMPD/out" 2>"$TMPD/err" &
	PID=$!
	for _ in $(seq 100); do
		grep -q "tiny-guest: up" "$TMPD/out" && [[ -S $SOCK ]] && return 0
		sleep 0.05
	done
	fail "vmlet did not start: $(tail -2 "$TMPD/err")"
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
	"$VMLET" ctl "$SOCK" pause 2>"$TMPD/ctlerr"
	[[ $? == 1 ]] && grep -q "not supported" "$TMPD/ctlerr" && ok "pause: not supported yet (exit 1)" ||
		fail "pause should say not supported"
	"$VMLET" ctl "$SOCK" frobnicate 2>/dev/null
	[[ $? == 2 ]] && ok "unknown verb: usage error" || fail "unknown verb"
	"$VMLET" ctl "$SOCK" power-button && ok "power-button accepted" || fail "power-button"
	wait "$PID"
	rc=$?
	[[ $rc == 0 ]] && ok "guest powered off after ctl power-button: exit 0" || fail "exit $rc after power-button"
fi

# guest that ignores the button: ctl stop = SIGTERM sequence, grace 1 s
if start "$TMPD/mode1.elf" --grace-period 1; then
	"$VMLET" ctl "$SOCK" stop && ok "stop accepted" || fail "stop"
	t0=$SECONDS
	wait "$PID"
	rc=$?
	[[ $rc == 5 ]] && ok "ctl stop: hard stop after the grace period: exit 5" || fail "ctl stop: exit $rc"
	((SECONDS - t0 <= 5)) || fail "stop took $((SECONDS - t0)) s"
	grep -q "pressing the ACPI power button" "$TMPD/err" && ok "stop pressed the power button first" ||
		fail "no power button on stop"
fi

"$VMLET" ctl "$TMPD/nothing.sock" status 2>/dev/null
[[ $? == 1 ]] && ok "no vmlet there: exit 1" || fail "dead socket"
finish
