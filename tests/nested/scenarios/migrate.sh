# Live migration of a Linux guest (issue 24, docs/migration.md): L2 counts
# in a tmpfs file and prints each count with its uptime while a second
# job keeps rewriting 32 MiB of tmpfs (memory it dirties during the
# pre-copy); L1 starts a second vmlet with --incoming, and once L2 counted
# a few times `vmlet ctl migrate` sends it there with a 50 ms downtime
# target: ctl and the source exit 0 and report the downtime, the counter
# goes on from the file's value at the destination (the same kernel, its
# tmpfs and processes), uptime does not go backwards, the kernel logs no
# new clocksource, soft-lockup, watchdog or stall line after the first
# count, and the migrated guest powers off on the power button (exit 0).
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi L2_END=pwrbtn_wait TIMEBOX=600
l1() {
	src=/tmp/src.sock dst=/tmp/dst.sock
	rm -rf /tmp/mig /tmp/dstd "$src" "$dst"
	mkdir -m 700 /tmp/mig /tmp/dstd
	cp "$D/vm.yaml" /tmp/dstd/
	vm_run --api-socket "$src" >/tmp/con1 &
	srcpid=$!
	: >/tmp/con2
	# the destination: the same manifest and options, its own log
	(D=/tmp/dstd vm_run --api-socket "$dst" --incoming unix:/tmp/mig/in.sock >>/tmp/con2) &
	dstpid=$!
	n=0
	while { ! grep -q '@R count 6 ' /tmp/con1 || [ ! -S /tmp/mig/in.sock ]; } &&
		kill -0 $srcpid 2>/dev/null && [ $n -lt 3000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	vmlet ctl "$src" migrate unix:/tmp/mig/in.sock --max-downtime 50 >/tmp/mig.out
	echo "@R migrate-rc $?"
	echo "@R migrate-out $(tr -d ' ' </tmp/mig.out)"
	wait $srcpid
	echo "@R source-exit $?"
	cp "$D/vmm.log" "$D/vmm-source.log"
	n=0
	while [ "$(grep -c '@R count ' /tmp/con2)" -lt 4 ] && kill -0 $dstpid 2>/dev/null &&
		[ $n -lt 3000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	echo "@R dest-log $(grep -c 'the guest arrived' /tmp/dstd/vmm.log)"
	echo "@R dest-announce $(grep -c 'is asked to announce itself' /tmp/dstd/vmm.log)"
	vmlet ctl "$dst" power-button || kill $dstpid
	wait $dstpid
	rc=$?
	cp /tmp/dstd/vmm.log "$D/vmm.log"
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
	( n=0
	while :; do
		[ -f /tmp/counter ] && n=$(cat /tmp/counter)
		n=$((n + 1))
		echo $n >/tmp/counter
		bad=$(dmesg | grep -ciE 'clocksource|soft lockup|watchdog|hung task|rcu.*stall|unstable|backwards')
		echo "@R count $n $(cut -d' ' -f1 /proc/uptime) $bad"
		sleep 0.5
	done ) &
}
host_check() {
	local before after
	[[ $(rep migrate-rc) == 0 && $(rep source-exit) == 0 && $(rep dest-log) == 1 ]] &&
		ok "migrated: ctl and the source exit 0 ($(rep migrate-out); announce asked on $(rep dest-announce) NIC)" ||
		fail "migrate: ctl $(rep migrate-rc) '$(rep migrate-out)', source exit $(rep source-exit)"
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
	rep power-button | grep -q . && ok "the migrated guest powered off on the button" ||
		fail "no power button in the migrated guest"
}
