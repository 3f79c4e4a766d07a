#!/usr/bin/env bash
# KubeVirt's disk errorPolicy on a full host filesystem: the probe guest's
# write test (vmlet.iotest) runs on a disk whose image lives on a full
# 1 MiB tmpfs.
#  stop (the default): the VM pauses with the write pending: `vmlet ctl
#    status` says Paused, reason PausedIOError, and names the disk and
#    ENOSPC; the log and the metrics say so too; after space is freed,
#    `vmlet ctl resume` retries the write and the guest's test passes:
#    it never saw an error, and the image holds what it wrote.
#  enospace: the same for ENOSPC.
#  report: the guest's write fails with IOERR (its test fails) and the VM
#    never pauses.
# A VM stopped while a request is held ends at once (the request dropped).
# Needs root (mount): skipped otherwise.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no usable /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
((EUID == 0)) || skip "needs root to mount a small tmpfs"
MNT=$TMPD/mnt SOCK=$TMPD/api.sock
mkdir -p "$MNT"
mount -t tmpfs -o size=1m tmpfs "$MNT" || skip "cannot mount tmpfs"
PID=
cleanup() {
	[[ -n $PID ]] && kill -KILL "$PID" 2>/dev/null
	wait 2>/dev/null
	umount "$MNT" 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
"$VMLET" probe --dump-guest "$TMPD/probe.elf" || { fail "cannot dump the probe"; finish; }

# fill POLICY: a fresh sparse image on a full tmpfs, manifest in $TMPD/vm.yaml
fill() {
	rm -f "$MNT"/*
	truncate -s 8M "$MNT/data.raw"
	dd if=/dev/zero of="$MNT/filler" bs=64k status=none 2>/dev/null
	VM_ERROR_POLICY=$1 vm_manifest ep 128Mi Once data="$MNT/data.raw" >"$TMPD/vm.yaml"
}
# run BIN: the probe on the manifest, testing disk 0, in the background; the
# guest's console in out, vmlet's log in log (one file let a log line land
# inside the guest's ioTest= line under load)
run() {
	rm -f "$SOCK"
	"$1" run -f "$TMPD/vm.yaml" --kernel "$TMPD/probe.elf" --cmdline 'vmlet.iotest=#0' \
		--api-socket "$SOCK" --log-format text >"$TMPD/out" 2>"$TMPD/log" &
	PID=$!
}
# paused: wait (at most 60 s) until status says Paused; its JSON in $STATUS
paused() {
	for _ in $(seq 600); do
		STATUS=$("$VMLET" ctl "$SOCK" status 2>/dev/null)
		[[ $STATUS == *'"state":"Paused"'* ]] && return 0
		kill -0 "$PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# ended: wait for the run; 0 when the guest's write test passed
ended() {
	timeout 120 tail --pid="$PID" -f /dev/null
	wait "$PID"
	local rc=$?
	PID=
	[[ $rc -eq 0 ]] && grep -aq '^ioTest=00:01.0 ok' "$TMPD/out"
}

pause_resume() { # BIN POLICY
	local bin=$1 policy=$2
	fill "$policy"
	run "$bin"
	if ! paused; then
		fail "$bin $policy: the VM did not pause: $(cat "$TMPD/out" "$TMPD/log" | grep -a 'ioTest\|error' | head -3)"
		kill -KILL "$PID"
		ended
		return
	fi
	python3 - "$STATUS" <<'PY' && ok "$bin $policy: status $STATUS" || fail "$bin $policy: status $STATUS"
import json, sys
s = json.loads(sys.argv[1])
assert s["state"] == "Paused" and s["reason"] == "PausedIOError", s
assert s["message"].startswith("disk 'data': write at sector ") and "No space left on device" in s["message"], s
PY
	"$VMLET" ctl "$SOCK" metrics >"$TMPD/metrics"
	grep -q '^vmlet_paused_io_error 1$' "$TMPD/metrics" &&
		grep -qE '^vmlet_blk_io_error_pauses_total\{disk="data"\} [1-9]' "$TMPD/metrics" &&
		ok "$bin $policy: metrics say paused by an I/O error on disk data" ||
		fail "$bin $policy: metrics: $(grep 'paus' "$TMPD/metrics")"
	grep -aq "disk 'data': write at sector [0-9]* failed: No space left on device.*pausing the VM (errorPolicy $policy)" \
		"$TMPD/log" && ok "$bin $policy: the log names disk and error" || fail "$bin $policy: no log line"
	# still paused a moment later: the write is pending, not failed
	sleep 0.5
	[[ $("$VMLET" ctl -o text "$SOCK" status) == *"state: Paused"* ]] || fail "$bin $policy: not paused any more"
	rm -f "$MNT/filler"
	"$VMLET" ctl "$SOCK" resume >/dev/null || fail "$bin $policy: resume refused"
	ended && ok "$bin $policy: after resume the guest's write test passes (no error seen)" ||
		fail "$bin $policy: after resume: $(cat "$TMPD/out" "$TMPD/log" | grep -a '^ioTest\|error' | head -3)"
	grep -aq '^error=' "$TMPD/out" && fail "$bin $policy: the guest reported an error"
	python3 - "$MNT/data.raw" <<'PY' && ok "$bin $policy: the image holds the guest's first write" ||
import sys
want = bytearray((i * 31 + 1 + (i >> 9)) & 255 for i in range(4096))
sys.exit(0 if open(sys.argv[1], "rb").read(4096) == want else 1)
PY
		fail "$bin $policy: the image lacks the write"
}

pause_resume "$VMLET" stop
[[ -x $VMLET_SAN ]] && pause_resume "$VMLET_SAN" stop
pause_resume "$VMLET" enospace

# a VM that ends while a request is held (Ctrl-C twice: hard stop) exits
# at once with status 5, the request dropped, not failed
fill stop
run "$VMLET"
if paused; then
	kill -INT "$PID"
	sleep 0.2
	kill -INT "$PID"
	timeout 60 tail --pid="$PID" -f /dev/null
	wait "$PID"
	rc=$?
	PID=
	[[ $rc -eq 5 ]] && ok "stopped while an I/O error holds it: exit 5" || fail "stop while held: exit $rc"
else
	fail "stop: did not pause"
fi

# report: today's behaviour, the guest gets the error
fill report
run "$VMLET"
ended && fail "report: the write test passed on a full disk"
grep -aq '^ioTest=00:01.0 ' "$TMPD/out" && ! grep -aq '^ioTest=00:01.0 ok' "$TMPD/out" &&
	ok "report: the guest's write fails ($(grep -a '^ioTest' "$TMPD/out"))" ||
	fail "report: $(cat "$TMPD/out" "$TMPD/log" | grep -a '^ioTest\|error' | head -3)"
grep -aq "pausing the VM" "$TMPD/log" && fail "report: the VM paused"
finish
