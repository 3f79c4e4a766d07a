#!/usr/bin/env bash
# scripts/bench-migrate runs end to end, small (64 MiB, 8 MiB touched, 2
# MiB rewritten per pass, one round, 2 shared VMs): every row prints vmlet's
# and QEMU's figures and a ratio. The script itself checks, in each case,
# that the guest's round goes on after the restore or the move and that no
# page lost its value (the probe's vmlet.dirty check, firmware/probe/dirty.c):
# a failure there is its non-zero exit. No figure is asserted. Then the
# probe's dirty mode refuses a range that is not RAM.
source "$(dirname "$0")/../lib/sh.sh"
need_qemu_microvm
[[ -x $VMLET ]] || skip "no $VMLET"

out=$(MEM=64 TOUCH=8 HOT=2 ROUNDS=1 N_SHARED=2 VMLET=$VMLET timeout 300 scripts/bench-migrate 2>&1)
rc=$?
((rc == 0)) && ok "bench-migrate exits 0" || fail "bench-migrate: exit $rc: $(tail -25 <<<"$out")"
for row in "restore, ms from exec" "live migration, downtime target" "2 VMs restored from one snapshot"; do
	block=$(grep -A4 -F -- "$row" <<<"$out")
	grep -qE '^vmlet +[0-9]' <<<"$block" && grep -qE '^qemu +[0-9]' <<<"$block" &&
		grep -qE '^ratio +[0-9.]+x' <<<"$block" && ok "row '$row': vmlet, QEMU, ratio" ||
		fail "row '$row' incomplete: $block"
done

"$VMLET" probe --dump-guest "$TMPD/probe.elf"
timeout 60 "$VMLET" run --kernel "$TMPD/probe.elf" --memory 64Mi --console stdio \
	--cmdline "vmlet.dirty=64,1" --log-format text >"$TMPD/o" 2>"$TMPD/e"
grep -q "^dirty=error 64 MiB from 32 MiB" "$TMPD/o" && ! grep -q "^dirtyReady" "$TMPD/o" &&
	ok "the probe refuses to dirty memory past RAM" || fail "dirty past RAM: $(tail -3 "$TMPD/o")"
finish
