# Sourced by the live-migration shell tests (tests/sh/migrate*.sh) after
# tests/lib/sh.sh: the tiny guest that counts ($G, an "x" per tick), its
# source ($S, the API socket; $SP) and the helpers both tests use. Each
# test defines its own dst() (a unix: or tcp: destination, $D, $DP).
G=$TMPD/mode9.elf
PEER=tests/data/mig_peer.py
S=$TMPD/src.sock D=$TMPD/dst.sock

xs() { tr -cd x <"$1" | wc -c; } # FILE: the guest's ticks in it
wait_sock() { # PATH PID: PATH is a socket before PID ends (20 s)
	for _ in $(seq 400); do
		[[ -S $1 ]] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
wait_file() { # FILE PID: FILE exists before PID ends (20 s)
	for _ in $(seq 400); do
		[[ -e $1 ]] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
free_port() { python3 "$PEER" freeport "${1:-127.0.0.1}"; }
src() { # OUT ERR ARGS...: the source, counting
	local out=$1 err=$2
	shift 2
	"$VMLET" run --kernel "$G" --api-socket "$S" --log-format text "$@" >"$out" 2>"$err" &
	SP=$!
	wait_sock "$S" "$SP" && wait_log "$out" x 100 || fail "source did not start: $(tail -2 "$err")"
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
# active_bytes FILE: of the source's status lines in FILE (JSON, one per
# line) those of an active migration: "SAMPLES GREW" (GREW 1 when the
# bytes sent grew between two of them)
active_bytes() {
	python3 - "$1" <<'PYEND'
import json, sys
b = []
for line in open(sys.argv[1]):
    m = json.loads(line).get("migration") or {}
    if m.get("state") == "active":
        b.append(m["bytes"])
print(len(b), int(any(y > x for x, y in zip(b, b[1:]))))
PYEND
}
