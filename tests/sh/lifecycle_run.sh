#!/usr/bin/env bash
# runStrategy in `vmlet run` (vmm/vm/lifecycle.h) with the tiny guest, end to
# end: Halted never starts the guest; no runStrategy is refused before
# anything starts (KubeVirt's "RunStrategy must be specified"); Once and Manual
# run it once and report how it ended; RerunOnFailure restarts after a
# reboot or a crash but not after a power-off; Always also restarts after a
# power-off; a SIGTERM or `vmlet ctl stop` ends the loop (exit 0 when the
# guest powered off or no guest was running, 5 after a hard stop); a guest
# that cannot start is not restarted (exit 1). Disks are flushed before
# exit, also after a crash and a hard stop.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
tiny_guests 0 1 2 3 5

manifest() { # STRATEGY [DISK]: a VM with that runStrategy ("" = none)
	vm_manifest lc 64Mi "$1" ${2:+d=$2}
}

ups() { grep -c "tiny-guest: up" "$TMPD/out" 2>/dev/null; }

# once STRATEGY MODE WANT_STATUS: runs to its end by itself
once() {
	local s=$1 m=$2 want=$3 rc
	manifest "$s" >"$TMPD/vm.yaml"
	timeout 30 "$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode$m.elf" --log-format text \
		>"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	if [[ $rc == "$want" && $(ups) == 1 ]]; then ok "${s:-no runStrategy}, guest mode $m: one run, exit $rc"
	else fail "${s:-no runStrategy}, guest mode $m: exit $rc (want $want), $(ups) runs (want 1)"
		tail -3 "$TMPD/err"; fi
}

# loop STRATEGY MODE: start in the background (PID), wait for the second
# restart to be scheduled (its backoff is 2 s), then SIGTERM: the loop ends
# at once and cleanly (no guest running). When the SIGTERM came only after
# those 2 s (a loaded host), the backoff was not what it stopped: once more.
loop() {
	local s=$1 m=$2 rc try
	manifest "$s" >"$TMPD/vm.yaml"
	for try in 1 2 3; do
		# (no stale log from the previous run: the shell truncates it
		# only once the background job has started)
		rm -f "$TMPD/out" "$TMPD/err"
		"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode$m.elf" --log-format text \
			>"$TMPD/out" 2>"$TMPD/err" &
		PID=$!
		wait_log "$TMPD/err" "restart 2 in 2000 ms" 300
		kill -TERM $PID
		wait $PID
		rc=$?
		(($(ups) > 2)) || break # (else a third run started first)
		echo "note: $s, guest mode $m: the SIGTERM came after the 2 s backoff: again"
	done
	if [[ $rc == 0 && $(ups) == 2 ]] && grep -q "stopped while waiting" "$TMPD/err"; then
		ok "$s, guest mode $m: restarted, next restart backed off to 2 s, SIGTERM then: exit 0"
	else fail "$s, guest mode $m: exit $rc, $(ups) runs (want 0, 2)"; tail -4 "$TMPD/err"; fi
}

# Halted: not started, and it says so
manifest Halted >"$TMPD/vm.yaml"
timeout 10 "$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode5.elf" --log-format text \
	>"$TMPD/out" 2>"$TMPD/err"
rc=$?
[[ $rc == 0 && $(ups) == 0 ]] && grep -q "runStrategy is Halted: the guest is not started" "$TMPD/err" &&
	ok "Halted: not started, exit 0, says why" || { fail "Halted: exit $rc, $(ups) runs"; cat "$TMPD/err"; }

# neither running nor runStrategy: KubeVirt's VM admission refuses it, so
# does vmlet, before any guest starts
manifest "" >"$TMPD/vm.yaml"
timeout 10 "$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode5.elf" --log-format text \
	>"$TMPD/out" 2>"$TMPD/err"
rc=$?
[[ $rc == 1 && $(ups) == 0 ]] && grep -q "vm.yaml:5:3: spec.running: RunStrategy must be specified" "$TMPD/err" &&
	ok "no runStrategy: refused, exit 1, not started" || { fail "no runStrategy: exit $rc, $(ups) runs"; cat "$TMPD/err"; }
once Once 2 3
once Once 3 4
once Manual 2 3
once Manual 5 0
once RerunOnFailure 5 0
loop RerunOnFailure 2
loop RerunOnFailure 3
loop Always 5
grep -q "runStrategy Always: restart 1 in 1000 ms" "$TMPD/err" && ok "Always: restart logged with its delay" ||
	fail "no restart line"

# Always, SIGTERM while the guest runs: power button, guest powers off, no restart
manifest Always >"$TMPD/vm.yaml"
start_bg() { # MODE ARGS...
	local m=$1; shift
	rm -f "$TMPD/out" "$TMPD/err"
	"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode$m.elf" --log-format text "$@" \
		>"$TMPD/out" 2>"$TMPD/err" &
	PID=$!
	for _ in $(seq 400); do [[ $(ups) -ge 1 ]] && return 0; sleep 0.05; done
	fail "guest mode $m did not start: $(tail -2 "$TMPD/err")"
}
start_bg 0
kill -TERM $PID; wait $PID; rc=$?
[[ $rc == 0 && $(ups) == 1 ]] && ok "Always + SIGTERM: powered off on the button, not restarted, exit 0" ||
	fail "Always + SIGTERM: exit $rc, $(ups) runs"

# Always, ctl stop from the control socket (the worker tells the loop)
SOCK=$TMPD/api.sock
start_bg 0 --api-socket "$SOCK"
for _ in $(seq 400); do [[ -S $SOCK ]] && break; sleep 0.05; done
"$VMLET" ctl "$SOCK" stop >/dev/null || fail "ctl stop refused"
timeout 10 tail --pid=$PID -f /dev/null; kill -KILL $PID 2>/dev/null; wait $PID; rc=$?
[[ $rc == 0 && $(ups) == 1 ]] && ok "Always + ctl stop: not restarted, exit 0" ||
	fail "Always + ctl stop: exit $rc, $(ups) runs"
# ... and a guest that ignores the button: hard stop, exit 5, not restarted
start_bg 1 --grace-period 0
kill -TERM $PID; wait $PID; rc=$?
[[ $rc == 5 && $(ups) == 1 ]] && ok "Always + SIGTERM, button ignored: hard stop, exit 5" ||
	fail "Always hard stop: exit $rc, $(ups) runs"

# a guest that cannot start is not restarted
timeout 10 "$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/missing.elf" --log-format text \
	>"$TMPD/out" 2>"$TMPD/err"
rc=$?
[[ $rc == 1 ]] && grep -q "failed to start: not restarting" "$TMPD/err" &&
	ok "Always, no kernel: exit 1 at once" || fail "Always, no kernel: exit $rc"

# disks flushed before exit: power-off, crash, hard stop
if command -v strace >/dev/null; then
	truncate -s 1M "$TMPD/disk.raw"
	for c in "5 0" "3 4" "1 5"; do
		set -- $c
		manifest Once "$TMPD/disk.raw" >"$TMPD/vmd.yaml"
		strace -f -qq -o "$TMPD/trace" -e trace=fdatasync,exit_group \
			"$VMLET" run -f "$TMPD/vmd.yaml" --kernel "$TMPD/mode$1.elf" --grace-period 0 \
			--log-format text >"$TMPD/out" 2>"$TMPD/err" &
		SPID=$!
		if [[ $1 == 1 ]]; then # holds: stop it
			for _ in $(seq 400); do [[ $(ups) -ge 1 ]] && break; sleep 0.05; done
			kill -TERM "$(pgrep -P $SPID)"
		fi
		timeout 20 tail --pid=$SPID -f /dev/null
		wait $SPID
		rc=$?
		# the fdatasync on the disk comes before exit_group
		if [[ $rc == "$2" ]] && grep -E "fdatasync|exit_group" "$TMPD/trace" | head -1 |
			grep -q "fdatasync(.*= 0"; then
			ok "guest mode $1 (exit $rc): disk flushed before exit"
		else fail "guest mode $1: exit $rc (want $2), trace: $(grep -E 'fdatasync|exit_group' "$TMPD/trace" | head -3)"
			tail -3 "$TMPD/err"; fi
	done
else
	echo "note: no strace: disk flush at exit not checked"
fi
finish
