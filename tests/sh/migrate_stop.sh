#!/usr/bin/env bash
# A live migration's destination waiting for its source (vmlet run
# --incoming, vmm/snapshot/mig_recv.c) ends on SIGTERM or SIGINT,
# "stopped by a signal before a source came", its socket removed: alone
# with exit 1, and as a supervised worker (--api-socket: the supervisor
# forwards the signal and reports a stop, exit 5). Before, the stop signals stayed blocked for the guest to come
# and a destination whose source never connected waited for ever.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
tiny_guests 1
mkdir -m 0700 "$TMPD/m"

stopped() { # SIGNAL STATUS WHAT [ARGS...]: a waiting destination gets SIGNAL
	local sig=$1 want=$2 what=$3 pid rc i c
	shift 3
	# emptied here, not by the background redirect: the last case's line
	# would pass wait_log before this vmlet even set its handlers
	: >"$TMPD/err"
	"$VMLET" run --kernel "$TMPD/mode1.elf" --log-format text --incoming "unix:$TMPD/m/in.sock" \
		"$@" >/dev/null 2>"$TMPD/err" &
	pid=$!
	wait_log "$TMPD/err" "waiting for the guest" 200 || fail "$what: did not wait: $(tail -2 "$TMPD/err")"
	((pid > 1)) && kill "-$sig" "$pid"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		fail "$what: still waiting 10 s after SIG$sig"
		for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null) "$pid"; do
			((c > 1)) && kill -KILL "$c" 2>/dev/null
		done
		wait "$pid"
		return
	fi
	wait "$pid"
	rc=$?
	((rc == want)) && grep -q "stopped by a signal before a source came" "$TMPD/err" &&
		[[ ! -e $TMPD/m/in.sock ]] && ok "$what: SIG$sig ends it (exit $rc, the socket removed)" ||
		fail "$what: exit $rc, socket $(ls "$TMPD/m"): $(tail -2 "$TMPD/err")"
}
stopped TERM 1 "a destination alone"
stopped INT 1 "a destination alone"
stopped TERM 5 "a supervised destination" --api-socket "$TMPD/api.sock"
finish
