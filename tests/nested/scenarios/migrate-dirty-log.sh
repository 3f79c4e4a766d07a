# Live migration with KVM's dirty ring, then with its dirty bitmap, of one
# Linux guest under one workload (docs/migration.md, "KVM's dirty ring or
# its bitmap"): L2 counts in a tmpfs file, printing each count with its
# uptime, while a second job keeps rewriting 32 MiB of tmpfs. vmlet A
# (--dirty-ring auto: L1's kvm_amd has the ring) sends it to B, started
# with --dirty-ring off, which sends it on to C (each move with a 50 ms
# downtime target, once the guest counted a few times where it is). Both
# moves succeed (ctl and the source exit 0), the first answer says "ring",
# the second "bitmap", the counter goes on across each move and uptime
# only grows; C powers the guest off on the button. The two answers side
# by side are the figures of docs/migration.md.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi L2_END=pwrbtn_wait TIMEBOX=300
# dl_wait FILE N PID: until FILE has N count lines (PID alive, 600 s)
dl_wait() {
	_n=0
	while [ "$(grep -c '@R count ' "$1")" -lt "$2" ] && kill -0 "$3" 2>/dev/null &&
		[ $_n -lt 3000 ]; do
		sleep 0.2
		_n=$((_n + 1))
	done
}
# dl_move FROM_SOCK TO_IN N: migrate, report as migrate-N-rc / migrate-N-out
dl_move() {
	_n=0
	while [ ! -S "$2" ] && [ $_n -lt 3000 ]; do
		sleep 0.2
		_n=$((_n + 1))
	done
	vmlet ctl "$1" migrate "unix:$2" --max-downtime 50 >/tmp/dl.out
	echo "@R migrate-$3-rc $?"
	echo "@R migrate-$3-out $(tr -d ' ' </tmp/dl.out)"
}
l1() {
	rm -rf /tmp/dlm /tmp/dlb /tmp/dlc /tmp/dla.sock /tmp/dlb.sock /tmp/dlc.sock
	mkdir -m 700 /tmp/dlm /tmp/dlb /tmp/dlc
	cp "$D/vm.yaml" /tmp/dlb/ && cp "$D/vm.yaml" /tmp/dlc/
	: >/tmp/dl2
	: >/tmp/dl3
	: >/tmp/dl1 # before dl_wait reads it: the background redirection comes later
	vm_run --api-socket /tmp/dla.sock >>/tmp/dl1 &
	apid=$!
	(D=/tmp/dlb vm_run --api-socket /tmp/dlb.sock --dirty-ring off \
		--incoming unix:/tmp/dlm/b.sock >>/tmp/dl2) &
	bpid=$!
	(D=/tmp/dlc vm_run --api-socket /tmp/dlc.sock --incoming unix:/tmp/dlm/c.sock >>/tmp/dl3) &
	cpid=$!
	dl_wait /tmp/dl1 6 $apid
	dl_move /tmp/dla.sock /tmp/dlm/b.sock 1
	wait $apid
	echo "@R source-1-exit $?"
	dl_wait /tmp/dl2 6 $bpid
	dl_move /tmp/dlb.sock /tmp/dlm/c.sock 2
	wait $bpid
	echo "@R source-2-exit $?"
	dl_wait /tmp/dl3 4 $cpid
	vmlet ctl /tmp/dlc.sock power-button || kill $cpid
	wait $cpid
	rc=$?
	cat /tmp/dlb/vmm.log >>"$D/vmm.log"
	cat /tmp/dlc/vmm.log >>"$D/vmm.log"
	grep '^@R ' /tmp/dl1
	echo "@R moved 1"
	grep '^@R ' /tmp/dl2
	echo "@R moved 2"
	grep '^@R ' /tmp/dl3
	return $rc
}
l2() {
	( while :; do
		dd if=/dev/zero of=/dev/shm/dirty bs=1M count=32 2>/dev/null
		sleep 0.1
	done ) &
	( n=0
	while :; do
		[ -f /tmp/counter ] && n=$(cat /tmp/counter)
		n=$((n + 1))
		echo $n >/tmp/counter
		echo "@R count $n $(cut -d' ' -f1 /proc/uptime)"
		sleep 0.5
	done ) &
}
host_check() {
	local k want
	for k in 1 2; do
		want=ring && ((k == 2)) && want=bitmap
		[[ $(rep migrate-$k-rc) == 0 && $(rep source-$k-exit) == 0 &&
			$(rep migrate-$k-out) == *"\"dirty_log\":\"$want\""* ]] &&
			ok "move $k with KVM's $want: $(rep migrate-$k-out)" ||
			fail "move $k: ctl $(rep migrate-$k-rc) '$(rep migrate-$k-out)', source exit $(rep source-$k-exit)"
	done
	python3 - "$R" <<'PY' && ok "the counter goes on across both moves, uptime only grows" ||
import sys
seq, ups, moves = [], [], 0
for line in open(sys.argv[1], errors="replace"):
    f = line.split()
    if len(f) == 2 and f[0] == "moved":
        moves += 1
        seq.append(None)
    elif len(f) == 3 and f[0] == "count":
        seq.append(int(f[1]))
        ups.append(float(f[2]))
assert moves == 2, moves
for i, v in enumerate(seq):
    if v is None:  # a move: the next count continues the last one
        before = [x for x in seq[:i] if x is not None][-1]
        after = next(x for x in seq[i + 1:] if x is not None)
        assert before <= after <= before + 1, (before, after)
assert all(b >= a for a, b in zip(ups, ups[1:])), ups
PY
		fail "counts across the moves: $(grep -E '^(count|moved)' "$R" | tr '\n' ';')"
	rep power-button | grep -q . && ok "the twice-migrated guest powered off on the button" ||
		fail "no power button in the migrated guest"
}
