#!/usr/bin/env bash
# A console nobody reads (issue 28, finding 6): the guest prints without
# end into a pipe whose reader never reads. The vCPU must not block on it:
# output is dropped and counted (vmlet_console_dropped_bytes_total keeps
# growing while the guest runs), one warning is logged for the stall, and
# `vmlet ctl stop` and SIGTERM still stop the VM. Before the output ring,
# the vCPU sat in write() under the UART lock: no counter, and neither stop
# nor SIGTERM ended vmlet. With stderr in the same stalled pipe (2>&1),
# vmlet's own log lines (one per ctl request) must not block either: before
# log.c wrote them without blocking, the event loop hung in write(2) and ctl
# requests went unanswered. Then a capped --console file: rotated to .1.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
tiny_guests 8
SOCK=$TMPD/api.sock

dropped() { # the counter's value, or empty; "hung" when vmlet did not answer
	local m
	m=$(timeout 10 "$VMLET" ctl "$SOCK" metrics 2>/dev/null) || { echo hung; return; }
	sed -n 's/^vmlet_console_dropped_bytes_total{console="serial0"} \([0-9.e+]*\)$/\1/p' <<<"$m"
}

# start_stalled BIN [2>&1]: vmlet's stdout (and stderr with a second
# argument) is a FIFO whose reader sleeps
start_stalled() {
	rm -f "$SOCK" "$TMPD/fifo"
	mkfifo "$TMPD/fifo"
	sleep 900 <"$TMPD/fifo" &
	HOLDER=$!
	if [[ -n ${2:-} ]]; then
		: >"$TMPD/err"
		"$1" run --kernel "$TMPD/mode8.elf" --api-socket "$SOCK" --grace-period 20 \
			--log-format text >"$TMPD/fifo" 2>&1 &
	else
		"$1" run --kernel "$TMPD/mode8.elf" --api-socket "$SOCK" --grace-period 20 \
			--log-format text >"$TMPD/fifo" 2>"$TMPD/err" &
	fi
	PID=$!
	for _ in $(seq 600); do
		[[ -S $SOCK ]] && break
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	[[ -S $SOCK ]] || { fail "vmlet did not start: $(tail -3 "$TMPD/err")"; return 1; }
	local d1="" d2="" _
	for _ in $(seq 200); do
		d1=$(dropped)
		[[ -n $d1 && $d1 != 0 ]] && break
		sleep 0.05
	done
	if [[ $d1 == hung ]]; then
		fail "$1${2:+ 2>&1}: vmlet does not answer ctl metrics"
		kill -KILL "$PID" "$HOLDER" 2>/dev/null
		wait "$PID" "$HOLDER" 2>/dev/null
		return 1
	fi
	if [[ -z $d1 || $d1 == 0 ]]; then
		fail "$1: no console output dropped while nobody reads (counter '${d1}')"
		return 0
	fi
	for _ in $(seq 200); do
		d2=$(dropped)
		[[ $d2 == hung ]] && break
		[[ -n $d2 ]] && awk -v a="$d1" -v b="$d2" 'BEGIN { exit !(b > a) }' && break
		sleep 0.05
	done
	if [[ -n $d2 ]] && awk -v a="$d1" -v b="$d2" 'BEGIN { exit !(b > a) }'; then
		ok "$1: the guest keeps printing into a stalled pipe: $d1 then $d2 bytes dropped"
	else
		fail "$1: the dropped count stopped at '$d1' / '$d2': is the guest stuck?"
	fi
	timeout 10 "$VMLET" ctl -o text "$SOCK" status | grep -qE '^console_dropped_bytes: [1-9][0-9]*$' &&
		ok "$1: ctl status counts the dropped bytes" ||
		fail "$1: ctl status: no console_dropped_bytes > 0"
}

# stopped NAME: vmlet ended (the guest powered off: exit 0) within 60 s
stopped() {
	timeout 60 tail --pid="$PID" -f /dev/null
	kill -KILL "$PID" 2>/dev/null && fail "$1: vmlet did not end"
	wait "$PID"
	local rc=$?
	[[ $rc == 0 ]] && ok "$1: vmlet ended, exit 0" || fail "$1: exit $rc, want 0"
	local n
	n=$(grep -c "the reader does not keep up" "$TMPD/err")
	[[ $n == 1 ]] && ok "$1: one stall warning" || fail "$1: $n stall warnings, want 1"
	grep -q "console: [0-9]* bytes written, [0-9]* dropped" "$TMPD/err" &&
		ok "$1: the end-of-run summary counts the dropped bytes" ||
		fail "$1: no console summary: $(tail -3 "$TMPD/err")"
	kill "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
}

for bin in "$VMLET" "$VMLET_SAN"; do
	[[ -x $bin ]] || continue
	if start_stalled "$bin"; then
		timeout 10 "$VMLET" ctl "$SOCK" stop >/dev/null || fail "$bin: vmlet ctl stop failed"
		stopped "$bin: ctl stop"
	fi
	if start_stalled "$bin"; then
		kill -TERM "$PID"
		stopped "$bin: SIGTERM"
	fi
done

# stderr into the same stalled pipe: vmlet's own log lines (one per ctl
# request) must not block the event loop either once the pipe is full
if start_stalled "$VMLET" merged; then
	slow=0
	for _ in $(seq 150); do
		timeout 10 "$VMLET" ctl "$SOCK" status >/dev/null || { slow=1; break; }
	done
	((slow)) && fail "2>&1: a ctl request went unanswered: the log write blocked the loop" ||
		ok "2>&1: 150 ctl requests answered while stderr's pipe is full"
	kill -TERM "$PID"
	timeout 60 tail --pid="$PID" -f /dev/null
	kill -KILL "$PID" 2>/dev/null && fail "2>&1: vmlet did not end on SIGTERM"
	wait "$PID"
	rc=$?
	[[ $rc == 0 ]] && ok "2>&1: SIGTERM: exit 0" || fail "2>&1: SIGTERM: exit $rc, want 0"
	kill "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
fi

# --console file: capped: past the size, the file moves to PATH.1
"$VMLET" run --kernel "$TMPD/mode8.elf" --console "file:$TMPD/con" --console-max-size 64Ki \
	--log-format text 2>"$TMPD/err" &
PID=$!
for _ in $(seq 600); do
	[[ -s $TMPD/con.1 ]] && break
	kill -0 "$PID" 2>/dev/null || break
	sleep 0.05
done
kill -TERM "$PID"
wait "$PID"
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
if [[ -s $TMPD/con.1 ]] && (($(size "$TMPD/con") <= 65536 && $(size "$TMPD/con.1") <= 65536)); then
	ok "capped console file rotated: con $(size "$TMPD/con") bytes, con.1 $(size "$TMPD/con.1")"
else
	fail "console file not capped: con $(size "$TMPD/con"), con.1 $(size "$TMPD/con.1") bytes"
fi
grep -q "reached 65536 bytes: moved to" "$TMPD/err" && ok "rotation logged" ||
	fail "no rotation log: $(tail -3 "$TMPD/err")"
finish
