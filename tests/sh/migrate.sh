#!/usr/bin/env bash
# Live migration (vmm/snapshot/migrate.h, docs/migration.md) between two
# vmlet processes on this host's KVM, with the tiny guest's memory check
# (mode 9: 1024 pages hold the round number, checked and rewritten each
# round; a page that disagrees prints BAD): migrated with a downtime target
# of 1 ms (several pre-copy passes), the source ends with 0, the guest goes
# on counting at the destination with no BAD, status and metrics report
# the migration, the destination powers off on the button. The
# destination's unix socket is 0600 and refused in a directory others can
# write. Failures lose nothing: a destination with another config refuses
# at the hello, one that dies mid-way or refuses the state leaves the
# source running its guest (status Running, migration failed, the guest
# still counts and powers off on the button). A hostile stream (recorded
# from a real migration, then altered) is refused by the destination with
# exit 1 and the reason: pages outside RAM, a page record too long, a
# flipped byte in the state, a stream cut short, no commit (the guest is
# loaded but never run).
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
tiny_guests 9
G=$TMPD/mode9.elf
PEER=tests/data/mig_peer.py
S=$TMPD/src.sock D=$TMPD/dst.sock M=$TMPD/mig.sock

xs() { tr -cd x <"$1" | wc -c; }
wait_sock() { # PATH PID
	for _ in $(seq 400); do
		[[ -S $1 ]] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
src() { # OUT ERR ARGS...: the source, counting
	local out=$1 err=$2; shift 2
	"$VMLET" run --kernel "$G" --api-socket "$S" --log-format text "$@" >"$out" 2>"$err" &
	SP=$!
	wait_sock "$S" "$SP" && wait_log "$out" x 100 || fail "source did not start: $(tail -2 "$err")"
}
dst() { # OUT ERR ARGS...: the destination, waiting on $M
	local out=$1 err=$2; shift 2
	"$VMLET" run --kernel "$G" --api-socket "$D" --log-format text --incoming "unix:$M" "$@" \
		>"$out" 2>"$err" &
	DP=$!
	wait_sock "$M" "$DP" || fail "destination did not listen: $(tail -2 "$err")"
}
grows() { # OUT: the guest prints on (within 10 s)
	local a i
	a=$(xs "$1")
	for i in $(seq 100); do
		(($(xs "$1") > a)) && return 0
		sleep 0.1
	done
	return 1
}
button_off() { # PID SOCK ERR WHAT
	"$VMLET" ctl "$2" power-button >/dev/null
	wait "$1"
	local rc=$?
	((rc == 0)) && grep -q "guest entered S5" "$3" && ok "$4: powers off on the button" ||
		fail "$4: exit $rc: $(tail -2 "$3")"
}

# a migration that takes several passes; the guest's pages all arrive
src "$TMPD/so" "$TMPD/se" --log-level debug
dst "$TMPD/do" "$TMPD/de"
[[ $(stat -c %a "$M") == 600 ]] && ok "the incoming socket is 0600" || fail "mode $(stat -c %a "$M")"
out=$("$VMLET" ctl "$S" migrate "unix:$M" --max-downtime 1)
rc=$?
wait "$SP"
src_rc=$?
((rc == 0 && src_rc == 0)) && [[ $out == *'"state":"completed"'* ]] &&
	ok "migrated: ctl and the source exit 0 ($out)" ||
	fail "migrate: ctl $rc, source $src_rc: $out $(tail -3 "$TMPD/se")"
passes=$(grep -c "migrate: pass" "$TMPD/se")
grep -q "migrate: the destination runs the guest" "$TMPD/se" && ((passes >= 1)) &&
	ok "source: $passes pre-copy passes, the destination runs the guest" ||
	fail "source log: $(tail -3 "$TMPD/se")"
if grep -q "the guest arrived" "$TMPD/de" && grows "$TMPD/do" && ! grep -q BAD "$TMPD/do"; then
	ok "destination: the guest counts on, every page checked (no BAD)"
else
	fail "destination: $(head -c 100 "$TMPD/do") $(tail -3 "$TMPD/de")"
fi
st=$("$VMLET" ctl "$D" status)
[[ $st == *'"migration":{"state":"completed"'* && $st == *'"state":"Running"'* ]] &&
	ok "destination status: Running, migration completed" || fail "status: $st"
"$VMLET" ctl "$D" metrics | grep -q '^vmlet_migration_completed 1' &&
	ok "metrics: vmlet_migration_completed 1" || fail "metrics"
button_off "$DP" "$D" "$TMPD/de" "migrated guest"

# the incoming socket's directory must be the user's and theirs only
mkdir -p "$TMPD/open" && chmod 0777 "$TMPD/open"
timeout 30 "$VMLET" run --kernel "$G" --log-format text --incoming "unix:$TMPD/open/m.sock" \
	>/dev/null 2>"$TMPD/e"
rc=$?
((rc == 1)) && grep -q "writable by them only" "$TMPD/e" && [[ ! -e $TMPD/open/m.sock ]] &&
	ok "refused: an incoming socket in a directory others can write" ||
	fail "open dir: exit $rc: $(tail -2 "$TMPD/e")"

# failures: the source keeps its guest
failed_keeps() { # WHAT CTL_ERR_ERE
	local what=$1 ere=$2 rc
	"$VMLET" ctl "$S" migrate "unix:$M" >/dev/null 2>"$TMPD/ce"
	rc=$?
	st=$("$VMLET" ctl "$S" status)
	((rc == 1)) && grep -qE -- "$ere" "$TMPD/ce" && [[ $st == *'"state":"Running"'* ]] &&
		[[ $st == *'"migration":{"state":"failed"'* ]] && grows "$TMPD/so2" &&
		ok "$what: ctl exit 1, the source runs on ($(head -c 120 "$TMPD/ce"))" ||
		fail "$what: ctl $rc: $(cat "$TMPD/ce") $st $(tail -2 "$TMPD/se2")"
}
src "$TMPD/so2" "$TMPD/se2"
dst "$TMPD/do2" "$TMPD/de2" --cmdline other
failed_keeps "another config at the destination" "another config"
wait "$DP"
rc=$?
((rc == 1)) && grep -q "config is not this VM's" "$TMPD/de2" &&
	ok "the destination with another config exits 1" || fail "dest: exit $rc $(tail -2 "$TMPD/de2")"
python3 "$PEER" cut "$M" 3000000 &
PP=$!
wait_sock "$M" "$PP"
failed_keeps "the destination died mid-way" "no answer|Broken pipe|reset|closed"
wait "$PP"
python3 "$PEER" refuse "$M" &
PP=$!
wait_sock "$M" "$PP"
failed_keeps "the destination refused the state" "refused by the test"
wait "$PP"
grep -q BAD "$TMPD/so2" && fail "the source's guest saw a page change under it" ||
	ok "the source's guest never saw a page change (no BAD)"

# record a real stream (the proxy between the source and the destination)
dst "$TMPD/do3" "$TMPD/de3"
python3 "$PEER" record "$TMPD/px.sock" "$M" "$TMPD/stream" &
PP=$!
wait_sock "$TMPD/px.sock" "$PP"
"$VMLET" ctl "$S" migrate "unix:$TMPD/px.sock" >/dev/null 2>"$TMPD/ce" ||
	fail "migrate through the recorder: $(cat "$TMPD/ce")"
wait "$SP"
wait "$PP"
button_off "$DP" "$D" "$TMPD/de3" "guest migrated through the recorder"
python3 - "$TMPD/stream" "$TMPD" <<'PYEND'
import struct, sys
data = open(sys.argv[1], "rb").read()
recs, off = [], 0
while off + 8 <= len(data):
    t, n = struct.unpack("<II", data[off:off + 8])
    recs.append((t, data[off:off + 8 + n]))
    off += 8 + n
hello = recs[0][1]
state = [r for t, r in recs if t == 3][0]
page = lambda gpa, n: struct.pack("<IIQ", 2, 8 + 4096 * n, gpa) + bytes(4096 * n)
out = {
    "outside": hello + page(1 << 40, 1),
    "straddle": hello + page((64 << 20) - 4096, 2),
    "long": hello + page(0, 257),
    "unaligned": hello + struct.pack("<IIQ", 2, 8 + 4096, 100) + bytes(4096),
    "flipped": data[:len(data) - 8 - len(state) // 2] + bytes([data[len(data) - 8 - len(state) // 2] ^ 1]) + data[len(data) - 7 - len(state) // 2:],
    "cut": data[:len(data) // 2],
    "nocommit": data[:-8],
    "nohello": page(0, 1),
}
for k, v in out.items():
    open(sys.argv[2] + "/s-" + k, "wb").write(v)
PYEND
hostile() { # NAME WHAT ERE
	local rc
	dst "$TMPD/do4" "$TMPD/de4"
	python3 "$PEER" replay "$M" "$TMPD/s-$1" >/dev/null
	wait "$DP"
	rc=$?
	((rc == 1)) && grep -qE -- "$3" "$TMPD/de4" && (($(xs "$TMPD/do4") == 0)) &&
		ok "destination refuses $2 (exit 1, the guest never ran)" ||
		fail "$2: exit $rc: $(tail -2 "$TMPD/de4")"
}
hostile outside "pages outside RAM" "not guest RAM"
hostile straddle "pages running past the end of RAM" "not guest RAM"
hostile long "a page record of 257 pages" "a page record of"
hostile unaligned "pages at an unaligned address" "not guest RAM"
hostile flipped "a flipped byte in the state" "checksum mismatch"
hostile cut "a stream cut short" "stream from the source broke"
hostile nocommit "a state never committed" "stream from the source broke"
hostile nohello "pages before the hello" "did not say hello"
finish
