#!/usr/bin/env bash
# tests/nested/check.py on a made-up L1 console (no L1 booted): how it
# names what became of each scenario, which decides tests/sh/nested_linux.sh's
# one rerun. The console holds: a QEMU oracle q that ran fine and compares
# with its twin v; a scenario w that L1's watchdog ended (lib-l1.sh run_scn:
# "@@WATCHDOG", rc=124); then L1 hung (no "@@L1 done"), so v never began.
# Want: q ok with a note, not a failure (its twin's own failure is what a
# rerun answers); w a hang; v not run; L1 hung. A second console: a vmlet
# run b with a kernel complaint every L2 here shows, then L1 died in the
# QEMU oracle r: b's complaint cannot be compared (a note, not a failure
# of b: a CI run once failed that way, with no rerun), r died in L1.
source "$(dirname "$0")/../lib/sh.sh"
command -v python3 >/dev/null || skip "no python3"
out=$TMPD/out
for n in q v w; do mkdir -p "$out/scn/$n"; done
printf 'VMM=qemu\nEXPECT_EXIT=0\nCOMPARE=v\n' >"$out/scn/q/meta"
printf 'VMM=vmlet\nEXPECT_EXIT=0\nCOMPARE=\n' >"$out/scn/v/meta"
printf 'VMM=vmlet\nEXPECT_EXIT=0\nCOMPARE=\n' >"$out/scn/w/meta"
cat >"$out/console.log" <<'CONEND'
    6.80 @@L1 kvm up=3.56 kvm: Nested Virtualization enabled
    6.82 @@BEGIN q up=3.63
    9.00 @R begin uptime=1.00
    9.10 @R end uptime=1.10
   19.86 @@END q rc=0 up=16.67 t0=3.63
   19.89 @@BEGIN w up=16.70
   21.00 @R begin uptime=1.00
  160.00 @@WATCHDOG w up=156.70: still running 140 s after its start, its processes killed
  160.10 @@END w rc=124 up=156.80
CONEND
python3 tests/nested/check.py "$out" q w v >"$TMPD/check.out" 2>&1
rc=$?
cat "$TMPD/check.out"
((rc == 1)) && ok "check.py exit 1 (w and v failed)" || fail "check.py exit $rc, want 1"
grep -q '^note: q: v did not finish: no comparison' "$TMPD/check.out" &&
	! grep -q '^FAIL: q:' "$TMPD/check.out" &&
	ok "the oracle whose twin never ran: a note, not a failure" ||
	fail "q: $(grep '^FAIL: q:' "$TMPD/check.out")"
want=$'q qemu ok\nw vmlet hang\nv vmlet not run\nL1 - hang'
[[ $(cat "$out/outcomes") == "$want" ]] && ok "outcomes: q ok, w hang (the watchdog's 124), v not run, L1 hang" ||
	fail "outcomes: $(tr '\n' ';' <"$out/outcomes")"
out=$TMPD/out2
for n in b r; do mkdir -p "$out/scn/$n"; done
printf 'VMM=vmlet\nEXPECT_EXIT=0\nCOMPARE=\n' >"$out/scn/b/meta"
printf 'VMM=qemu\nEXPECT_EXIT=0\nCOMPARE=\n' >"$out/scn/r/meta"
cat >"$out/console.log" <<'CONEND'
    6.80 @@L1 kvm up=3.56 kvm: Nested Virtualization enabled
    6.82 @@BEGIN b up=3.63
    9.00 @R begin uptime=1.00
    9.05 @R dmesg-bad [    0.275549] WARNING: CPU: 0 PID: 0 at arch/x86/kernel/fpu/xstate.c:606
    9.10 @R end uptime=1.10
   19.86 @@END b rc=0 up=16.67 t0=3.63
   19.89 @@BEGIN r up=16.70
   21.00 @R begin uptime=1.00
  220.71 @@L1 HANG: no heartbeat for 180s, L1 killed
CONEND
python3 tests/nested/check.py "$out" b r >"$TMPD/check2.out" 2>&1
rc=$?
cat "$TMPD/check2.out"
if ! grep -q '^FAIL: b:' "$TMPD/check2.out" && grep -q '^note: b: (no QEMU run to compare)' "$TMPD/check2.out"; then
	ok "a complaint while the only QEMU oracle died in L1: a note, not a failure"
else
	fail "b: $(grep '^FAIL: b:' "$TMPD/check2.out")"
fi
want=$'b vmlet ok\nr qemu L1 died\nL1 - hang'
((rc == 1)) && [[ $(cat "$out/outcomes") == "$want" ]] && ok "outcomes: b ok, r L1 died, L1 hang" ||
	fail "check.py exit $rc, outcomes: $(tr '\n' ';' <"$out/outcomes")"
finish
