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
# still counts and powers off on the button). A paused guest arrives
# paused. The probe guest with a
# disk, virtio-rng and virtio-net moves; its disk changes hands (below);
# with passt the probe with an e1000e NIC moves too.
# A hostile stream (recorded
# from a real migration, then altered) is refused by the destination with
# exit 1 and the reason: pages outside RAM, a page record too long, a
# flipped byte in the state, a stream cut short, no commit (the guest is
# loaded but never run). A source that trickles its bytes is refused once
# --incoming-timeout passed, and the state it announces is not allocated
# before it arrives.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
tiny_guests 9
source "$(dirname "$0")/../lib/migrate.sh"
M=$TMPD/mig.sock

dst() { # OUT ERR ARGS...: the destination, waiting on $M
	local out=$1 err=$2; shift 2
	rm -f "$M" # the last peer's socket would pass wait_sock at once
	"$VMLET" run --kernel "$G" --api-socket "$D" --log-format text --incoming "unix:$M" "$@" \
		>"$out" 2>"$err" &
	DP=$!
	# the socket file exists from bind() on, a moment before listen():
	# its log line says it listens
	wait_sock "$M" "$DP" && wait_log "$err" "waiting for the guest" 100 ||
		fail "destination did not listen: $(tail -2 "$err")"
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
if grows "$TMPD/do" && grep -q "the guest arrived" "$TMPD/de" && ! grep -q BAD "$TMPD/do"; then
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

# KVM's dirty ring where this host has it (--dirty-ring auto), the bitmap
# otherwise; then the same migration with the bitmap (--dirty-ring off)
# and, where the ring is, with its smallest size (1024 entries: the
# guest's 1024 pages a round fill it, its vCPU waits for the harvest):
# every page arrives either way
ring_host=$(grep -c "kvm: dirty ring of" "$TMPD/se")
want=bitmap && ((ring_host)) && want=ring
[[ $out == *"\"dirty_log\":\"$want\""* ]] && ok "auto: the pre-copy read KVM's $want" ||
	fail "dirty log: want $want: $out"
for mode in off 1024; do
	[[ $mode == off ]] || ((ring_host)) || continue
	want=ring && [[ $mode == off ]] && want=bitmap
	src "$TMPD/so" "$TMPD/se" --log-level debug --dirty-ring $mode
	dst "$TMPD/do" "$TMPD/de"
	out=$("$VMLET" ctl "$S" migrate "unix:$M" --max-downtime 1)
	rc=$?
	wait "$SP"
	src_rc=$?
	if ((rc == 0 && src_rc == 0)) && [[ $out == *"\"dirty_log\":\"$want\""* ]] &&
		grows "$TMPD/do" && ! grep -q BAD "$TMPD/do"; then
		ok "--dirty-ring $mode: migrated with KVM's $want, every page checked (no BAD;" \
			"$(grep -o '[0-9]* waits on a full ring' "$TMPD/se"))"
	else
		fail "--dirty-ring $mode: ctl $rc, source $src_rc: $out $(tail -3 "$TMPD/se")"
	fi
	button_off "$DP" "$D" "$TMPD/de" "migrated guest (--dirty-ring $mode)"
done
"$VMLET" run --kernel "$G" --dirty-ring 3000 >/dev/null 2>"$TMPD/e"
(($? == 2)) && grep -q "dirty-ring takes auto, off or a power of two" "$TMPD/e" &&
	ok "--dirty-ring 3000 refused (usage)" || fail "--dirty-ring 3000: $(cat "$TMPD/e")"

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
rm -f "$M" # a socket left by the last peer would pass wait_sock at once
python3 "$PEER" cut "$M" 3000000 &
PP=$!
wait_sock "$M" "$PP"
failed_keeps "the destination died mid-way" "no answer|Broken pipe|reset|closed"
wait "$PP"
rm -f "$M" # a socket left by the last peer would pass wait_sock at once
python3 "$PEER" refuse "$M" &
PP=$!
wait_sock "$M" "$PP"
failed_keeps "the destination refused the state" "refused by the test"
wait "$PP"
grep -q BAD "$TMPD/so2" && fail "the source's guest saw a page change under it" ||
	ok "the source's guest never saw a page change (no BAD)"

# record a real stream (the proxy between the source and the destination)
dst "$TMPD/do3" "$TMPD/de3"
rm -f "$TMPD/px.sock" # a socket left by the last peer would pass wait_sock at once
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
    "nocommit": data[:-12],
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

# a source that connects and then trickles (a byte every 0.2 s, never
# silent for long) is refused once --incoming-timeout has passed; the
# 200 MiB state it announced is not allocated ahead of its bytes
vsz() { # PID: kB of VmSize of PID and its children
	local t=0 p v
	for p in "$1" $(pgrep -P "$1"); do
		v=$(awk '/^VmSize/ {print $2}' "/proc/$p/status" 2>/dev/null)
		t=$((t + ${v:-0}))
	done
	echo "$t"
}
dst "$TMPD/do7" "$TMPD/de7" --incoming-timeout 3
before=$(vsz "$DP")
python3 "$PEER" trickle "$M" "$TMPD/stream" &
TP=$!
wait_log "$TMPD/de7" "has 3 s to deliver" 100
sleep 1
during=$(vsz "$DP")
for _ in $(seq 600); do
	kill -0 "$DP" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$DP" 2>/dev/null; then
	fail "a trickling source still holds the destination after 60 s"
	kill -KILL "$DP"
fi
wait "$DP"
rc=$?
((rc == 1)) && grep -q "took longer than allowed" "$TMPD/de7" && (($(xs "$TMPD/do7") == 0)) &&
	ok "a trickling source is refused after --incoming-timeout (exit 1, the guest never ran)" ||
	fail "trickling source: exit $rc: $(tail -2 "$TMPD/de7")"
((during - before < 64 * 1024)) &&
	ok "the announced state is not allocated ahead of its bytes (+$((during - before)) kB)" ||
	fail "a stalled state of 200 MiB grew the destination by $((during - before)) kB"
kill "$TP" 2>/dev/null
wait "$TP" 2>/dev/null

# progress while it runs: through a forwarder of about 2 MiB/s the
# migration takes seconds; the source's status, polled meanwhile, says
# active with growing bytes, and a verb that would act is refused as busy
src "$TMPD/so8" "$TMPD/se8"
dst "$TMPD/do8" "$TMPD/de8"
rm -f "$TMPD/slow.sock"
python3 "$PEER" slow "$TMPD/slow.sock" "$M" 2048 &
PP=$!
wait_sock "$TMPD/slow.sock" "$PP"
"$VMLET" ctl "$S" migrate "unix:$TMPD/slow.sock" --max-downtime 60000 >"$TMPD/mo8" 2>&1 &
CP=$!
: >"$TMPD/st8"
busy=
for _ in $(seq 300); do
	kill -0 "$CP" 2>/dev/null || break
	st=$(timeout 10 "$VMLET" ctl "$S" status 2>/dev/null) && echo "$st" >>"$TMPD/st8"
	if [[ -z $busy && $st == *'"state":"active"'* ]]; then
		busy=$(timeout 10 "$VMLET" ctl "$S" pause 2>&1)
		busy="${busy:-none} (exit $?)"
	fi
	sleep 0.2
done
wait "$CP"
rc=$?
wait "$SP"
wait "$PP"
grows=$(active_bytes "$TMPD/st8")
((rc == 0)) && [[ $grows == *" 1" ]] &&
	ok "status during a slow migration: active, bytes growing ($grows samples/grew)" ||
	fail "status during migration: ctl $rc, active samples/grew '$grows': $(head -c 300 "$TMPD/st8") $(tail -2 "$TMPD/se8")"
[[ $busy == *busy* && $busy == *"(exit 1)" ]] && ok "pause during the migration: refused as busy" ||
	fail "pause during the migration: $busy"
button_off "$DP" "$D" "$TMPD/de8" "the guest migrated slowly"

# a guest the user paused arrives paused, and runs on a resume
src "$TMPD/so6" "$TMPD/se6"
"$VMLET" ctl "$S" pause >/dev/null
dst "$TMPD/do6" "$TMPD/de6"
"$VMLET" ctl "$S" migrate "unix:$M" >/dev/null 2>"$TMPD/ce" || fail "paused: $(cat "$TMPD/ce")"
wait "$SP"
wait_log "$TMPD/de6" "arrived paused" 100
st=$("$VMLET" ctl "$D" status)
a=$(xs "$TMPD/do6")
sleep 1
[[ $st == *'"state":"Paused"'* ]] && (($(xs "$TMPD/do6") == a)) &&
	ok "a paused guest arrives paused (it does not run)" || fail "paused: $st"
"$VMLET" ctl "$D" resume >/dev/null && grows "$TMPD/do6" && ! grep -q BAD "$TMPD/do6" &&
	ok "resumed at the destination: it counts on" || fail "resume: $(tail -2 "$TMPD/de6")"
button_off "$DP" "$D" "$TMPD/de6" "the guest migrated paused"

# disks change hands: the probe guest (report done, it waits for the
# button) with a virtio disk (hostDisk, locked as QEMU locks it),
# virtio-rng and, with passt, virtio-net. The destination starts while
# the source holds the disk's locks, takes them after the source let go;
# a third vmlet then finds the disk in use. A disk replaced under the path the destination opens is
# refused (the source keeps its guest and takes its locks back).
PROBE=build/fw/probe.elf
[[ -f $PROBE ]] || fail "no $PROBE (make)"
truncate -s 4M "$TMPD/pdisk.img"
nic=false # with passt, the pod network's virtio-net too (the probe drives it)
command -v passt >/dev/null && nic=true
vm_manifest pvm 128Mi Once d="$TMPD/pdisk.img" |
	sed "s/autoattachPodInterface: false/autoattachPodInterface: $nic\n          rng: {}/" >"$TMPD/pvm.yaml"
G_ARGS=(-f "$TMPD/pvm.yaml" --cmdline vmlet.end=button)
psrc() { # OUT ERR
	"$VMLET" run "${G_ARGS[@]}" --kernel "$PROBE" --api-socket "$S" --log-format text \
		>"$1" 2>"$2" &
	SP=$!
	wait_sock "$S" "$SP" && wait_log "$1" VMLET-PROBE-END 200 || fail "probe source: $(tail -2 "$2")"
}
pdst() { # OUT ERR
	rm -f "$M"
	"$VMLET" run "${G_ARGS[@]}" --kernel "$PROBE" --api-socket "$D" --log-format text \
		--incoming "unix:$M" >"$1" 2>"$2" &
	DP=$!
	wait_sock "$M" "$DP" || fail "probe destination: $(tail -2 "$2")"
}
in_use() { # ERR: a third vmlet on the same disk is refused
	timeout 60 "$VMLET" run "${G_ARGS[@]}" --kernel "$PROBE" --log-format text >/dev/null 2>"$1"
	(($? == 1)) && grep -q "in use by another process" "$1"
}
if [[ -f $PROBE ]]; then
	psrc "$TMPD/pso" "$TMPD/pse"
	grep -q "^disk=" "$TMPD/pso" && grep -q "^rng=.* ok" "$TMPD/pso" ||
		fail "probe report: $(grep -E '^(disk|rng|error)=' "$TMPD/pso")"
	pdst "$TMPD/pdo" "$TMPD/pde"
	in_use "$TMPD/e3" && ok "the source holds the disk's locks, the waiting destination none" ||
		fail "third vmlet before: $(tail -1 "$TMPD/e3")"
	"$VMLET" ctl "$S" migrate "unix:$M" >/dev/null 2>"$TMPD/ce"
	rc=$?
	wait "$SP"
	((rc == 0 && $? == 0)) && wait_log "$TMPD/pde" "the guest arrived" 100 &&
		ok "probe with a started virtio disk and virtio-rng (virtio-net: $nic) migrated" ||
		fail "probe migrate: $rc $(cat "$TMPD/ce") $(tail -n 2 "$TMPD/pse" "$TMPD/pde")"
	# the probe's driver does not take GUEST_ANNOUNCE: said so (Linux's
	# announce: tests/nested/scenarios/migrate.sh, net_virtio_test)
	! $nic || wait_log "$TMPD/pde" "migrate: interface 0: the guest's driver has no announce" 100 &&
		ok "announce: the destination says whether the guest's driver announces" ||
		fail "announce: $(grep 'interface 0' "$TMPD/pde")"
	in_use "$TMPD/e3" && ok "the destination holds the disk's locks now" ||
		fail "third vmlet after: $(tail -1 "$TMPD/e3")"
	button_off "$DP" "$D" "$TMPD/pde" "the migrated probe"

	psrc "$TMPD/pso2" "$TMPD/pse2"
	mv "$TMPD/pdisk.img" "$TMPD/pdisk.orig" && truncate -s 4M "$TMPD/pdisk.img"
	pdst "$TMPD/pdo2" "$TMPD/pde2"
	"$VMLET" ctl "$S" migrate "unix:$M" >/dev/null 2>"$TMPD/ce"
	rc=$?
	for _ in $(seq 100); do kill -0 "$DP" 2>/dev/null && sleep 0.1; done
	kill -0 "$DP" 2>/dev/null && "$VMLET" ctl "$D" power-button >/dev/null # took it: a failure
	wait "$DP"
	drc=$?
	mv "$TMPD/pdisk.orig" "$TMPD/pdisk.img"
	((rc == 1 && drc == 1)) && grep -q "disk 'd' is not the disk of the snapshot" "$TMPD/pde2" &&
		"$VMLET" ctl "$S" status | grep -q '"state":"Running"' &&
		ok "another disk at the destination: refused, the source runs on" ||
		fail "wrong disk: ctl $rc dest $drc: $(cat "$TMPD/ce") $(tail -2 "$TMPD/pde2")"
	in_use "$TMPD/e3" && ok "the source took its disk's locks back" ||
		fail "third vmlet after the refusal: $(tail -1 "$TMPD/e3")"
	button_off "$SP" "$S" "$TMPD/pse2" "the probe that stayed"
	# with passt: the probe with an e1000e pod interface (the windows.*
	# preferences' NIC; the probe does not drive it) moves too
	if $nic; then
		{
			vm_manifest e1k 128Mi Once | sed '/autoattachPodInterface/d'
			printf '          interfaces:\n          - {name: default, masquerade: {}, model: e1000e}\n'
			printf '      networks:\n      - {name: default, pod: {}}\n'
		} >"$TMPD/e1k.yaml"
		G_ARGS=(-f "$TMPD/e1k.yaml" --cmdline vmlet.end=button)
		psrc "$TMPD/eso" "$TMPD/ese"
		pdst "$TMPD/edo" "$TMPD/ede"
		"$VMLET" ctl "$S" migrate "unix:$M" >/dev/null 2>"$TMPD/ce"
		rc=$?
		wait "$SP"
		((rc == 0 && $? == 0)) && wait_log "$TMPD/ede" "the guest arrived" 100 &&
			grep -q "e1000e (82574L)" "$TMPD/ede" &&
			ok "probe with an e1000e NIC migrated" ||
			fail "e1000e migrate: $rc $(cat "$TMPD/ce") $(tail -n 2 "$TMPD/ese" "$TMPD/ede")"
		button_off "$DP" "$D" "$TMPD/ede" "the migrated probe with an e1000e NIC"
	fi
fi

# a disk kept in the process's temporary files cannot move
printf '%s\n' 'apiVersion: kubevirt.io/v1' 'kind: VirtualMachine' \
	'metadata: {name: evm, namespace: default}' 'spec:' '  runStrategy: Once' '  template:' \
	'    spec:' '      domain:' '        memory: {guest: 64Mi}' '        devices:' \
	'          autoattachPodInterface: false' '          disks: [{name: e, disk: {bus: virtio}}]' \
	'      volumes: [{name: e, emptyDisk: {capacity: 1Mi}}]' >"$TMPD/evm.yaml"
"$VMLET" run -f "$TMPD/evm.yaml" --kernel "$G" --api-socket "$S" --log-format text \
	>"$TMPD/so5" 2>"$TMPD/se5" &
SP=$!
if wait_sock "$S" "$SP" && wait_log "$TMPD/so5" x 100; then
	rm -f "$M" # a socket left by the last peer would pass wait_sock at once
	python3 "$PEER" cut "$M" 0 2>/dev/null &
	PP=$!
	wait_sock "$M" "$PP"
	"$VMLET" ctl "$S" migrate "unix:$M" >/dev/null 2>"$TMPD/ce"
	(($? == 1)) && grep -q "disk 'e' keeps the guest's writes" "$TMPD/ce" &&
		ok "refused at the source: an emptyDisk" || fail "emptyDisk: $(cat "$TMPD/ce")"
	wait "$PP"
	button_off "$SP" "$S" "$TMPD/se5" "the VM with an emptyDisk"
else
	fail "emptyDisk VM: $(tail -3 "$TMPD/se5")"
fi
finish
