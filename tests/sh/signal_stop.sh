#!/usr/bin/env bash
# Stopping a running VM from outside (vm_run.c, README "Exit statuses"):
# SIGTERM presses the ACPI power button; a guest that reacts powers off
# (exit 0); one that does not is stopped hard when the grace period runs out
# (exit 5); a second SIGINT stops it at once (exit 5).
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v as >/dev/null && command -v ld >/dev/null || skip "no binutils"
[[ -x $VMLET ]] || skip "no $VMLET"

for m in 0 1; do
	as --64 --defsym MODE=$m -o "$TMPD/g$m.o" tests/data/vmm_tiny_guest.S &&
		ld -m elf_x86_64 -static -nostdlib -T tests/data/vmm_tiny_guest.ld \
			-o "$TMPD/mode$m.elf" "$TMPD/g$m.o" || fail "cannot build guest $m"
done

# start BIN ARGS...: run in the background, wait for the guest's first line
start() {
	: >"$TMPD/out"
	"$@" --log-format text >"$TMPD/out" 2>"$TMPD/err" &
	PID=$!
	# (generous: a loaded host can take seconds to start a VM)
	for _ in $(seq 600); do
		grep -q "tiny-guest: up" "$TMPD/out" && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "guest did not start: $(cat "$TMPD/err")"
}

# The bounds tell "stopped as asked" from "waited for the default 30 s grace
# period"; they leave room for a loaded host.
wait_status() { # WANT NAME MAX_SECONDS
	local t0=$SECONDS rc
	timeout 60 tail --pid="$PID" -f /dev/null
	kill -KILL "$PID" 2>/dev/null
	wait "$PID"
	rc=$?
	if [[ $rc == "$1" ]]; then ok "$2: exit $rc after $((SECONDS - t0)) s"; else
		fail "$2: exit $rc, want $1"; sed 's/^/    /' "$TMPD/err"; fi
	((SECONDS - t0 <= $3)) || fail "$2: took $((SECONDS - t0)) s, more than $3"
}

for bin in "$VMLET" "$VMLET_SAN"; do
	[[ -x $bin ]] || continue
	start "$bin" run --kernel "$TMPD/mode0.elf" --smp 2
	kill -TERM "$PID"
	wait_status 0 "$bin: SIGTERM -> power button -> S5" 20
	grep -q "power button" "$TMPD/err" && ok "power button logged" || fail "no power-button log"
done

start "$VMLET" run --kernel "$TMPD/mode1.elf" --grace-period 1
kill -TERM "$PID"
wait_status 5 "SIGTERM, guest ignores it, grace 1 s -> hard stop" 20
grep -q "did not power off within 1 s" "$TMPD/err" && ok "grace expiry logged" || fail "no grace log"

start "$VMLET" run --kernel "$TMPD/mode1.elf" --smp 1,2,2
# the second SIGINT only once vmlet took the first (pending signals of one
# kind merge: two sent at once would be one)
kill -INT "$PID"
wait_log "$TMPD/err" "pressing the ACPI power button" 300 || fail "no power button after the first SIGINT"
kill -INT "$PID"
wait_status 5 "SIGINT twice -> immediate stop (grace 30 s not waited)" 20

start "$VMLET" run --kernel "$TMPD/mode1.elf" --grace-period 0
kill -TERM "$PID"
wait_status 5 "grace period 0 -> immediate stop" 20
finish
