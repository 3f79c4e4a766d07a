# Live migration of a Linux guest (issue 24, docs/migration.md) between
# two vmlet processes in two pods of L1 (lib-l1.sh's mig_pod_up: each its
# own mount, pid and network namespace, the disk image and the socket
# directory shared, each pod's tap bridged to the node). L2 runs
# mig_workload (lib-l2.sh): it counts in a tmpfs file and prints each count
# with its uptime, streams TCP to a listener on the node (L1), writes and
# fsyncs 32 KiB blocks on an ext4 virtio-blk disk and reads the whole file
# back from the disk each time, and hashes its CPUID, PCI config space and
# topology every 3 s; a second job keeps rewriting 32 MiB of tmpfs (memory
# it dirties during the pre-copy).
# First a destination that dies mid-way: its pod is killed 1 s after the
# source connected; `vmlet ctl migrate` exits 1 and the guest counts on at
# the source, its TCP stream too. Then a destination in a third pod,
# listening on TCP at the pod's address (--incoming tcp:10.200.0.13:4444),
# its source only from the node's (--incoming-from 10.200.0.1),
# and `vmlet ctl migrate tcp:...` from the node with a 50 ms downtime target: ctl and the source exit 0 and report the
# downtime, the counter goes on from the file's value at the destination
# (the same kernel, its tmpfs and processes), uptime does not go
# backwards, the kernel logs no new clocksource, soft-lockup, watchdog or
# stall line after the first count, the disk reads back whole, the TCP
# stream goes on unbroken (a tap: the connection is the guest's own), the
# machine the guest sees is the same; the migrated guest powers off on the
# power button (exit 0), having unmounted its disk, and e2fsck -fn of the
# image in L1 is clean.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi L2_END=pwrbtn_wait TIMEBOX=300 L1_PROGS=e2fsck L2_DEBS=cpuid:usr/bin/cpuid
host_prep() { mig_host_prep; }

# mig_wait_counts FILE N PID: until FILE has N count lines (PID alive, 600 s)
mig_wait_counts() {
	_n=0
	while [ "$(grep -c '@R count ' "$1")" -lt "$2" ] && kill -0 "$3" 2>/dev/null && [ $_n -lt 3000 ]; do
		sleep 0.2
		_n=$((_n + 1))
	done
}
# mig_wait_sock PATH PID: until PATH is a socket (PID alive, 600 s)
mig_wait_sock() {
	_n=0
	while [ ! -S "$1" ] && kill -0 "$2" 2>/dev/null && [ $_n -lt 3000 ]; do
		sleep 0.2
		_n=$((_n + 1))
	done
}

l1() {
	src=/tmp/src.sock dst=/tmp/dst.sock in=/tmp/mig/in.sock
	rm -rf /tmp/mig /tmp/dstd /tmp/deadd "$src" "$dst" /tmp/dead.sock
	mkdir -m 700 /tmp/mig /tmp/dstd /tmp/deadd
	cp "$D/vm.yaml" /tmp/dstd/ && cp "$D/vm.yaml" /tmp/deadd/
	mig_node_up && mig_listen && mig_pod_up a && mig_pod_up b && mig_pod_up c || {
		echo "@R pods-failed"
		mig_node_down
		return 1
	}
	: >/tmp/con0
	: >/tmp/con2
	: >/tmp/con1 # before the waits read it (not an earlier scenario's)
	mig_vm_run a --api-socket "$src" >>/tmp/con1 &
	srcpid=$!
	mig_pod_tap a
	mig_sample "$src" /tmp/dead.sock "$dst" >/tmp/sample.out &
	# the destination that will die, in pod b
	(D=/tmp/deadd mig_vm_run b --api-socket /tmp/dead.sock --incoming "unix:$in" >>/tmp/con0) &
	mig_pod_tap b
	mig_wait_counts /tmp/con1 6 $srcpid
	mig_wait_sock "$in" $srcpid
	# its pod killed 1 s after the source connected (the socket goes then),
	# during the pre-copy (the whole migration takes seconds here)
	(
		n=0
		while [ -S "$in" ] && [ $n -lt 1200 ]; do
			sleep 0.05
			n=$((n + 1))
		done
		sleep 1
		mig_pod_kill b
	) &
	killer=$!
	echo "@R tcp-at-dead $(grep -c . /tmp/tcp.recv)"
	vmlet ctl "$src" migrate "unix:$in" --max-downtime 50 >/tmp/mig0.out 2>&1
	echo "@R dead-rc $?"
	echo "@R dead-out $(head -c 200 /tmp/mig0.out | tr -d '\n')"
	wait $killer
	cp /tmp/deadd/vmm.log "$D/vmm-dead.log"
	c0=$(grep -c '@R count ' /tmp/con1)
	mig_wait_counts /tmp/con1 $((c0 + 4)) $srcpid
	echo "@R dead-after $c0 $(grep -c '@R count ' /tmp/con1) $(kill -0 $srcpid 2>/dev/null && echo running)"
	# the guest's TCP stream goes on at the source (5 more lines, 60 s)
	# (not t0: run_scn's start time)
	l0=$(grep -c . /tmp/tcp.recv) n=0
	while [ "$(grep -c . /tmp/tcp.recv)" -lt $((l0 + 5)) ] && [ $n -lt 300 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	echo "@R tcp-after-dead $l0 $(grep -c . /tmp/tcp.recv)"
	rm -f "$in"
	# the destination, in pod c, over TCP: it listens on the pod's own
	# address (10.200.0.13 on the pod's bridge, as a pod IP), the source's
	# ctl connects from the node (10.200.0.1), the one address it takes a
	# source from (--incoming-from)
	pod_run c ip addr add 10.200.0.13/24 dev br0
	(D=/tmp/dstd mig_vm_run c --api-socket "$dst" --incoming tcp:10.200.0.13:4444 \
		--incoming-from 10.200.0.1 >>/tmp/con2) &
	dstpid=$!
	mig_pod_tap c
	n=0
	while ! grep -q "waiting for the guest" /tmp/dstd/vmm.log 2>/dev/null && [ $n -lt 3000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	vmlet ctl "$src" migrate tcp:10.200.0.13:4444 --max-downtime 50 >/tmp/mig.out
	echo "@R migrate-rc $?"
	echo "@R tcp-at-move $(grep -c . /tmp/tcp.recv)"
	echo "@R migrate-out $(tr -d ' ' </tmp/mig.out)"
	wait $srcpid
	echo "@R source-exit $?"
	cp "$D/vmm.log" "$D/vmm-source.log"
	mig_wait_counts /tmp/con2 12 $dstpid
	echo "@R dest-log $(grep -c 'the guest arrived' /tmp/dstd/vmm.log)"
	echo "@R dest-peer $(grep -c 'a source connected from tcp:10.200.0.1:' /tmp/dstd/vmm.log)"
	echo "@R dest-from $(grep -c 'only a connection from 10.200.0.1 is taken' /tmp/dstd/vmm.log)"
	echo "@R dest-announce $(grep -c 'is asked to announce itself' /tmp/dstd/vmm.log)"
	vmlet ctl "$dst" power-button || mig_pod_kill c
	wait $dstpid
	rc=$?
	cp /tmp/dstd/vmm.log "$D/vmm.log"
	: >/tmp/sample.stop
	mig_fsck
	mig_tcp_report
	cat /tmp/sample.out
	mig_pod_kill a
	mig_pod_kill c
	mig_node_down
	sed 's/^/@1/' /tmp/con1 | grep '^@1@R ' | sed 's/^@1//'
	echo "@R migrated"
	grep '^@R ' /tmp/con2
	return $rc
}
l2() {
	( while :; do
		dd if=/dev/zero of=/dev/shm/dirty bs=1M count=32 2>/dev/null
		sleep 0.1
	done ) &
	mig_workload
}
host_check() {
	local before after c0 c1 t0 t1
	c0=$(rep dead-after | cut -d' ' -f1) c1=$(rep dead-after | cut -d' ' -f2)
	[[ $(rep dead-rc) == 1 && $(rep dead-after) == *running && -n $c0 && $c1 -ge $((c0 + 4)) ]] &&
		ok "a destination killed mid-way: ctl exit 1 ($(rep dead-out)), the source counts on ($c0 -> $c1)" ||
		fail "dying destination: ctl $(rep dead-rc) '$(rep dead-out)', counts after it '$(rep dead-after)'"
	t0=$(rep tcp-after-dead | cut -d' ' -f1) t1=$(rep tcp-after-dead | cut -d' ' -f2)
	[[ -n $t0 && $t1 -ge $((t0 + 5)) ]] &&
		ok "the TCP stream goes on at the source after the failed migration ($t0 -> $t1 lines)" ||
		fail "TCP after the failed migration: '$(rep tcp-after-dead)' (lines then, lines 60 s later)"
	[[ $(rep migrate-rc) == 0 && $(rep source-exit) == 0 && $(rep dest-log) == 1 ]] &&
		ok "migrated: ctl and the source exit 0 ($(rep migrate-out); announce asked on $(rep dest-announce) NIC)" ||
		fail "migrate: ctl $(rep migrate-rc) '$(rep migrate-out)', source exit $(rep source-exit)"
	[[ $(rep dest-peer) == 1 ]] && ok "over TCP: the destination logged the node's address as its source" ||
		fail "the destination's log names no source at tcp:10.200.0.1 ('$(rep dest-peer)')"
	[[ $(rep dest-from) == 1 ]] && ok "over TCP: the destination took its source from --incoming-from 10.200.0.1 only" ||
		fail "the destination did not say it takes the source from 10.200.0.1 only ('$(rep dest-from)')"
	[[ $(rep migrate-out) == *'"downtime_ms":'* ]] &&
		ok "downtime reported: $(rep migrate-out | grep -o '"downtime_ms":[0-9]*')" ||
		fail "no downtime in '$(rep migrate-out)'"
	before=$(sed -n '/^migrated/q; s/^count //p' "$R" | tail -n 1)
	after=$(sed -n '/^migrated/,$ s/^count //p' "$R" | head -n 1)
	[[ -n $before && -n $after && ${after%% *} -ge ${before%% *} &&
		${after%% *} -le $((${before%% *} + 1)) ]] &&
		ok "the counter goes on at the destination: $before -> $after" ||
		fail "counter before the migration '$before', after it '$after'"
	python3 - "$R" <<'PY' && ok "uptime monotonic across the migration, no clock complaints" ||
import sys
ups, bad = [], set()
for line in open(sys.argv[1], errors="replace"):
    f = line.split()
    if len(f) == 4 and f[0] == "count":
        ups.append(float(f[2]))
        bad.add(int(f[3]))
assert len(ups) >= 8, ups
assert all(b >= a for a, b in zip(ups, ups[1:])), ups
assert len(bad) == 1, bad  # no complaint logged after the first count
PY
		fail "uptime or dmesg after the migration: $(grep '^count' "$R" | tr '\n' ';')"
	mig_check migrated migration
	rep power-button | grep -q . && ok "the migrated guest powered off on the button" ||
		fail "no power button in the migrated guest"
	# L1's kvm_amd has KVM's dirty ring: vmlet's default (--dirty-ring
	# auto) takes it (scenario migrate-dirty-log: ring, then bitmap)
	[[ $(rep migrate-out) == *'"dirty_log":"ring"'* ]] &&
		ok "the pre-copy read KVM's dirty ring" || fail "not the dirty ring: $(rep migrate-out)"
}
