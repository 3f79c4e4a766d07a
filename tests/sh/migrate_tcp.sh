#!/usr/bin/env bash
# Live migration over TCP (vmlet run --incoming tcp:HOST:PORT, vmlet ctl
# SOCKET migrate tcp:HOST:PORT; vmm/util/sock_addr.h, docs/migration.md),
# both vmlets with the default --seccomp kill: the tiny guest's memory
# check (mode 9) moved over tcp:127.0.0.1:PORT with a 1 ms target: ctl and
# the source exit 0, the destination logs the source's address, takes no
# second connection (its listener closed at once), and the guest counts on
# with every page checked; the probe guest with a disk moved over
# tcp:[::1]:PORT where the host has IPv6 loopback. What a TCP port lets
# anyone send is refused with exit 1, the guest never run: an HTTP
# request, a hello of another magic, a hello far too long, a hello of
# another config. With --incoming-from 127.0.0.1 two connections from
# 127.0.0.2 (a hello each) are closed unread, logged once, and the source
# from 127.0.0.1 then migrates; without it a warning says any peer may
# connect first; malformed --incoming-from, or with unix:, is a usage
# error. A source that connects and says nothing is
# refused after --incoming-timeout. Failures lose nothing: a destination
# that dies mid-way, a port nobody listens on, one that never answers
# (the connect's 10 s bound): ctl exits 1, the source
# runs on. Status during a migration slowed to 2 MiB/s by a forwarder
# with a small receive buffer (a slow link) says active with growing
# bytes: the source's writes follow the link (TCP_NOTSENT_LOWAT), where
# before the whole pre-copy went into its send buffer at once (1 pass,
# never active). A port in use, and every malformed address (--incoming and
# migrate), are refused with the flag named; a waiting TCP destination
# ends on SIGTERM.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
tiny_guests 9
source "$(dirname "$0")/../lib/migrate.sh"

dst() { # OUT ERR ADDR ARGS...: the destination, listening on ADDR
	local out=$1 err=$2 addr=$3
	shift 3
	: >"$err" # emptied here: the last run's line must not pass wait_log
	"$VMLET" run --kernel "$G" --api-socket "$D" --log-format text --incoming "$addr" "$@" \
		>"$out" 2>"$err" &
	DP=$!
	wait_log "$err" "waiting for the guest" 100 || fail "destination did not listen: $(tail -2 "$err")"
}

# malformed addresses: usage errors naming the flag (no VM made)
for a in tcp:localhost:4444 tcp:1.2.3.4 tcp:1.2.3.4:0 tcp:::1:4444 "tcp:[::1" tcp::4444; do
	"$VMLET" run --kernel "$G" --incoming "$a" >/dev/null 2>"$TMPD/e"
	rc=$?
	((rc == 2)) && grep -qF -- "--incoming '$a': " "$TMPD/e" || fail "--incoming $a: exit $rc: $(cat "$TMPD/e")"
done
grep -q "resolves no host names" <("$VMLET" run --kernel "$G" --incoming tcp:localhost:1 2>&1) &&
	ok "malformed --incoming addresses: usage, the flag and the reason named" ||
	fail "a name in --incoming: no reason given"
"$VMLET" ctl "$S" migrate tcp:0.0.0.0:4444 >/dev/null 2>"$TMPD/e"
(($? == 2)) && grep -q "migrate 'tcp:0.0.0.0:4444': the unspecified address" "$TMPD/e" &&
	ok "migrate to tcp:0.0.0.0: usage, the reason named" || fail "migrate 0.0.0.0: $(cat "$TMPD/e")"

# a migration over TCP that takes several passes; every page arrives
P=$(free_port)
src "$TMPD/so" "$TMPD/se" --log-level debug
dst "$TMPD/do" "$TMPD/de" "tcp:127.0.0.1:$P"
grep -q "migrate: listening on tcp:127.0.0.1:$P" "$TMPD/de" &&
	ok "the destination listens on tcp:127.0.0.1:$P" || fail "listen: $(tail -2 "$TMPD/de")"
# as root it says that the stream is read as root, before the sandbox
if (($(id -u) == 0)); then
	grep -q "the source's stream is read as root, before the sandbox" "$TMPD/de" &&
		ok "as root: the destination warns that it reads the stream as root" ||
		fail "no warning as root: $(grep migrate: "$TMPD/de")"
fi
out=$("$VMLET" ctl "$S" migrate "tcp:127.0.0.1:$P" --max-downtime 1)
rc=$?
wait "$SP"
src_rc=$?
((rc == 0 && src_rc == 0)) && [[ $out == *'"state":"completed"'* ]] &&
	ok "migrated over TCP: ctl and the source exit 0 ($out)" ||
	fail "migrate: ctl $rc, source $src_rc: $out $(tail -3 "$TMPD/se")"
grep -qE "migrate: a source connected from tcp:127\.0\.0\.1:[0-9]+" "$TMPD/de" &&
	ok "the destination logs the source's address" || fail "peer: $(grep connected "$TMPD/de")"
python3 "$PEER" send "tcp:127.0.0.1:$P" 00 >/dev/null 2>"$TMPD/e"
grep -q "ConnectionRefused" "$TMPD/e" && ok "one source only: the port is closed once it connected" ||
	fail "a second connection to the port: $(tail -1 "$TMPD/e")"
if grows "$TMPD/do" && grep -q "the guest arrived" "$TMPD/de" && ! grep -q BAD "$TMPD/do"; then
	ok "destination: the guest counts on, every page checked (no BAD)"
else
	fail "destination: $(head -c 100 "$TMPD/do") $(tail -3 "$TMPD/de")"
fi
st=$("$VMLET" ctl "$D" status)
[[ $st == *'"migration":{"state":"completed"'* && $st == *'"state":"Running"'* ]] &&
	ok "destination status: Running, migration completed" || fail "status: $st"
button_off "$DP" "$D" "$TMPD/de" "the guest migrated over TCP"

# --incoming-from: a connection from another address (127.0.0.2, another
# peer on loopback; through [::] IPv4-mapped where the host has IPv6) is
# closed unread, logged once, and the destination waits on for the source
# from the allowed address, which migrates fine
HELLO0=010000000c000000564d4c544d49475201000000 # a hello with no config
lhost=127.0.0.1
python3 "$PEER" freeport :: >/dev/null 2>&1 && lhost="[::]"
P=$(free_port)
src "$TMPD/so7" "$TMPD/se7"
dst "$TMPD/do7" "$TMPD/de7" "tcp:$lhost:$P" --incoming-from 127.0.0.1
grep -q "only a connection from 127.0.0.1 is taken as the source" "$TMPD/de7" &&
	! grep -q "no --incoming-from" "$TMPD/de7" &&
	ok "--incoming-from 127.0.0.1: the destination says whom it takes" ||
	fail "--incoming-from: $(grep migrate: "$TMPD/de7")"
for _ in 1 2; do
	MIG_PEER_BIND=127.0.0.2 python3 "$PEER" send "tcp:127.0.0.1:$P" "$HELLO0" >>"$TMPD/po7"
done
n=$(grep -cE "a connection from tcp:(127\.0\.0\.2|\[::ffff:127\.0\.0\.2\]):[0-9]+, not --incoming-from's address, closed unread" "$TMPD/de7")
kill -0 "$DP" 2>/dev/null && [[ ! -s $TMPD/po7 ]] && ((n == 1)) &&
	! grep -qE "config is not this VM's|a source connected" "$TMPD/de7" &&
	ok "two connections from 127.0.0.2: closed unread (no reply), logged once, still waiting" ||
	fail "another peer: $n lines, replies '$(cat "$TMPD/po7")': $(tail -3 "$TMPD/de7")"
out=$("$VMLET" ctl "$S" migrate "tcp:127.0.0.1:$P" 2>&1)
rc=$?
if ((rc == 0)) && [[ $out == *'"state":"completed"'* ]] && wait "$SP" &&
	wait_log "$TMPD/de7" "the guest arrived" 100 && grows "$TMPD/do7" &&
	! grep -q BAD "$TMPD/do7"; then
	ok "then the source from 127.0.0.1 migrates over tcp:$lhost:$P ($out)"
	button_off "$DP" "$D" "$TMPD/de7" "the guest from the allowed source"
else
	fail "the allowed source: ctl $rc: $out $(tail -3 "$TMPD/de7")"
	for p in "$SP" "$DP"; do ((p > 1)) && kill -KILL "$p" 2>/dev/null; done
	wait "$SP" "$DP" 2>/dev/null
fi
# without --incoming-from any peer may come first: a warning says so
grep -q "no --incoming-from: whoever connects first is taken as the source" "$TMPD/de" &&
	ok "without --incoming-from: a warning that any peer may connect first" ||
	fail "no warning without --incoming-from: $(grep migrate: "$TMPD/de")"
# --incoming-from's usage errors: exit 2, the flag named
for f in localhost 10.0.0.1:4444 "[::1" 0.0.0.0 tcp:10.0.0.1 ""; do
	"$VMLET" run --kernel "$G" --incoming "tcp:127.0.0.1:$P" --incoming-from "$f" \
		>/dev/null 2>"$TMPD/e"
	rc=$?
	((rc == 2)) && grep -qF -- "--incoming-from '$f': " "$TMPD/e" ||
		fail "--incoming-from '$f': exit $rc: $(cat "$TMPD/e")"
done
"$VMLET" run --kernel "$G" --incoming "unix:$TMPD/in.sock" --incoming-from 127.0.0.1 \
	>/dev/null 2>"$TMPD/e"
rc=$?
((rc == 2)) && grep -q -- "--incoming-from is for a tcp: --incoming" "$TMPD/e" ||
	fail "--incoming-from with unix:: exit $rc: $(cat "$TMPD/e")"
"$VMLET" run --kernel "$G" --incoming-from 127.0.0.1 >/dev/null 2>"$TMPD/e"
rc=$?
((rc == 2)) && grep -q -- "--incoming-from without --incoming" "$TMPD/e" &&
	ok "--incoming-from: malformed, with unix:, alone: usage (exit 2), the flag named" ||
	fail "--incoming-from alone: exit $rc: $(cat "$TMPD/e")"

# a port in use: refused at start
rm -f "$TMPD/ready"
MIG_PEER_READY=$TMPD/ready python3 "$PEER" cut "tcp:127.0.0.1:$P" 0 2>/dev/null &
HP=$!
wait_file "$TMPD/ready" "$HP" || fail "the holder did not listen"
timeout 30 "$VMLET" run --kernel "$G" --log-format text --incoming "tcp:127.0.0.1:$P" \
	>/dev/null 2>"$TMPD/e"
rc=$?
python3 "$PEER" send "tcp:127.0.0.1:$P" 00 >/dev/null 2>&1 # the holder ends
wait "$HP" 2>/dev/null
((rc == 1)) && grep -q "incoming tcp:127.0.0.1:$P: listening: Address already in use" "$TMPD/e" &&
	ok "a port in use: exit 1, said so" || fail "port in use: exit $rc: $(tail -2 "$TMPD/e")"

# what anyone who reaches the port may send: refused, the guest never ran
hostile() { # WHAT HEX ERE
	local rc p
	p=$(free_port)
	dst "$TMPD/do4" "$TMPD/de4" "tcp:127.0.0.1:$p"
	python3 "$PEER" send "tcp:127.0.0.1:$p" "$2" >"$TMPD/po4"
	wait "$DP"
	rc=$?
	((rc == 1)) && grep -qE -- "$3" "$TMPD/de4" && (($(xs "$TMPD/do4") == 0)) &&
		ok "destination refuses $1 (exit 1, the guest never ran)" ||
		fail "$1: exit $rc: $(tail -2 "$TMPD/de4")"
}
hostile "an HTTP request" "$(printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' | od -An -tx1 | tr -d ' \n')" \
	"did not say hello"
hostile "a hello of another magic" \
	"01000000140000004e4f54564d4c4554010000007b7d0000" "not a vmlet migration stream"
hostile "a hello of 4 GiB" "01000000ffffffff" "a hello of 4294967295 bytes"
hostile "a hello of this format but no config" \
	"010000000c000000564d4c544d49475201000000" "the source's config is not this VM's"

# a source that connects and says nothing: refused after --incoming-timeout
p=$(free_port)
dst "$TMPD/do5" "$TMPD/de5" "tcp:127.0.0.1:$p" --incoming-timeout 2
python3 "$PEER" silent "tcp:127.0.0.1:$p" 30 &
TP=$!
for _ in $(seq 300); do
	kill -0 "$DP" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$DP" 2>/dev/null && fail "a silent source still holds the destination after 30 s" &&
	kill -KILL "$DP"
wait "$DP"
rc=$?
((rc == 1)) && grep -q "took longer than allowed" "$TMPD/de5" && (($(xs "$TMPD/do5") == 0)) &&
	ok "a silent TCP source is refused after --incoming-timeout (exit 1)" ||
	fail "silent source: exit $rc: $(tail -2 "$TMPD/de5")"
((TP > 1)) && kill "$TP" 2>/dev/null
wait "$TP" 2>/dev/null

# failures at the source lose nothing
failed_keeps() { # WHAT ADDR CTL_ERR_ERE
	local rc
	"$VMLET" ctl "$S" migrate "$2" >/dev/null 2>"$TMPD/ce"
	rc=$?
	st=$("$VMLET" ctl "$S" status)
	((rc == 1)) && grep -qE -- "$3" "$TMPD/ce" && [[ $st == *'"state":"Running"'* ]] &&
		grows "$TMPD/so2" &&
		ok "$1: ctl exit 1, the source runs on ($(head -c 120 "$TMPD/ce"))" ||
		fail "$1: ctl $rc: $(cat "$TMPD/ce") $st $(tail -2 "$TMPD/se2")"
}
src "$TMPD/so2" "$TMPD/se2"
p=$(free_port)
failed_keeps "nobody listens on the port" "tcp:127.0.0.1:$p" "Connection refused"
# a port that never answers (its accept queue full, so the kernel drops
# the SYN, as a NetworkPolicy would): the connect gives up after 10 s
rm -f "$TMPD/ready"
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(0)
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[2], "w").close(); time.sleep(60)' "$p" "$TMPD/ready" &
HP=$!
wait_file "$TMPD/ready" "$HP" || fail "the full port did not listen"
failed_keeps "a port that never answers" "tcp:127.0.0.1:$p" "no answer within 10 s"
((HP > 1)) && kill "$HP" 2>/dev/null
wait "$HP" 2>/dev/null
rm -f "$TMPD/ready"
MIG_PEER_READY=$TMPD/ready python3 "$PEER" cut "tcp:127.0.0.1:$p" 3000000 &
PP=$!
wait_file "$TMPD/ready" "$PP" || fail "the cut peer did not listen"
failed_keeps "the destination died mid-way" "tcp:127.0.0.1:$p" "no answer|Broken pipe|reset|closed"
wait "$PP"
grep -q BAD "$TMPD/so2" && fail "the source's guest saw a page change under it" ||
	ok "the source's guest never saw a page change (no BAD)"
button_off "$SP" "$S" "$TMPD/se2" "the guest that stayed"

# status while it runs over TCP: through a forwarder of about 2 MiB/s the
# source's status says active with growing bytes; then it completes
src "$TMPD/so8" "$TMPD/se8"
p=$(free_port)
q=$p
while ((q == p)); do q=$(free_port); done
dst "$TMPD/do8" "$TMPD/de8" "tcp:127.0.0.1:$q"
rm -f "$TMPD/ready"
MIG_PEER_READY=$TMPD/ready python3 "$PEER" slow "tcp:127.0.0.1:$p" "tcp:127.0.0.1:$q" 2048 &
PP=$!
wait_file "$TMPD/ready" "$PP" || fail "the forwarder did not listen"
"$VMLET" ctl "$S" migrate "tcp:127.0.0.1:$p" --max-downtime 60000 >"$TMPD/mo8" 2>&1 &
CP=$!
: >"$TMPD/st8"
for _ in $(seq 300); do
	kill -0 "$CP" 2>/dev/null || break
	timeout 10 "$VMLET" ctl "$S" status >>"$TMPD/st8" 2>/dev/null
	sleep 0.2
done
wait "$CP"
rc=$?
wait "$SP"
wait "$PP"
grows=$(active_bytes "$TMPD/st8")
((rc == 0)) && [[ $grows == *" 1" ]] &&
	ok "status during a slow TCP migration: active, bytes growing ($grows samples/grew)" ||
	fail "status during a TCP migration: ctl $rc, active samples/grew '$grows': $(cat "$TMPD/mo8") $(tail -2 "$TMPD/se8")"
button_off "$DP" "$D" "$TMPD/de8" "the guest migrated slowly over TCP"

# a waiting TCP destination ends on SIGTERM, nothing left behind
p=$(free_port)
dst "$TMPD/do6" "$TMPD/de6" "tcp:127.0.0.1:$p"
((DP > 1)) && kill -TERM "$DP"
wait "$DP"
rc=$?
# 5: its supervisor (--api-socket) reports a stop (migrate_stop.sh)
((rc == 5)) && grep -q "stopped by a signal before a source came" "$TMPD/de6" &&
	ok "SIGTERM ends a destination waiting on TCP (exit 5, supervised)" || fail "SIGTERM: exit $rc: $(tail -2 "$TMPD/de6")"

# the probe guest with a disk over IPv6 loopback, where the host has it
PROBE=build/fw/probe.elf
if [[ -f $PROBE ]] && python3 "$PEER" freeport ::1 >/dev/null 2>&1; then
	truncate -s 4M "$TMPD/pdisk.img"
	vm_manifest pvm 128Mi Once d="$TMPD/pdisk.img" >"$TMPD/pvm.yaml"
	A=(-f "$TMPD/pvm.yaml" --cmdline vmlet.end=button --kernel "$PROBE" --log-format text)
	"$VMLET" run "${A[@]}" --api-socket "$S" >"$TMPD/pso" 2>"$TMPD/pse" &
	SP=$!
	wait_sock "$S" "$SP" && wait_log "$TMPD/pso" VMLET-PROBE-END 200 || fail "probe: $(tail -2 "$TMPD/pse")"
	p=$(free_port ::1)
	"$VMLET" run "${A[@]}" --api-socket "$D" --incoming "tcp:[::1]:$p" >"$TMPD/pdo" 2>"$TMPD/pde" &
	DP=$!
	wait_log "$TMPD/pde" "waiting for the guest" 100 || fail "probe destination: $(tail -2 "$TMPD/pde")"
	"$VMLET" ctl "$S" migrate "tcp:[::1]:$p" >/dev/null 2>"$TMPD/ce"
	rc=$?
	wait "$SP"
	src_rc=$?
	# (the source may end before the destination logged the commit)
	((rc == 0 && src_rc == 0)) && wait_log "$TMPD/pde" "the guest arrived" 100 &&
		grep -qE "a source connected from tcp:\[::1\]:[0-9]+" "$TMPD/pde" &&
		ok "the probe with a virtio disk migrated over tcp:[::1]:$p" ||
		fail "probe over IPv6: ctl $rc, source $src_rc: $(cat "$TMPD/ce") $(tail -n 2 "$TMPD/pse") $(tail -n 2 "$TMPD/pde")"
	button_off "$DP" "$D" "$TMPD/pde" "the probe migrated over IPv6"
else
	echo "note: no IPv6 loopback or no $PROBE: the probe over tcp:[::1] not run"
fi
finish
