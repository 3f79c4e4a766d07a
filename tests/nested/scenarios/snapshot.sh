# Snapshot and restore of a Linux guest (issue 24, docs/snapshot.md): L2
# counts in a tmpfs file and prints each count with its uptime; L1 takes
# a snapshot with --stop after a few counts (vmlet exits 0), then starts
# vmlet with --restore: the counter goes on from the file's value (the
# same kernel, its tmpfs and processes, no new boot), uptime does not go
# backwards, the kernel logs no new clocksource, soft-lockup, watchdog or
# stall line after the first count (the lines of the boot, in a nested
# guest, stay as they were), and the guest powers off on the power button
# (exit 0).
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi L2_END=pwrbtn_wait TIMEBOX=600
l1() {
	sock=/tmp/api.sock
	rm -rf /tmp/snap "$sock"
	vm_run --api-socket "$sock" >/tmp/con1 &
	vmpid=$!
	n=0
	while ! grep -q '@R count 6 ' /tmp/con1 && kill -0 $vmpid 2>/dev/null && [ $n -lt 3000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	vmlet ctl "$sock" snapshot /tmp/snap --stop
	echo "@R snapshot-rc $?"
	wait $vmpid
	echo "@R first-exit $?"
	cp "$D/vmm.log" "$D/vmm-snapshot.log"
	echo "@R snapshot-bytes $(du -k /tmp/snap/memory | cut -f1)k-used $(wc -c </tmp/snap/state)"
	sleep 2 # time passes on the host while the guest lies on disk
	rm -f "$sock"
	# (made here: the background job's own redirection may come after the
	# first grep below on a loaded L1)
	: >/tmp/con2
	vm_run --api-socket "$sock" --restore /tmp/snap >>/tmp/con2 &
	vmpid=$!
	n=0
	while [ "$(grep -c '@R count ' /tmp/con2)" -lt 4 ] && kill -0 $vmpid 2>/dev/null &&
		[ $n -lt 3000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	vmlet ctl "$sock" power-button || kill $vmpid
	wait $vmpid
	rc=$?
	sed 's/^/@1/' /tmp/con1 | grep '^@1@R ' | sed 's/^@1//'
	echo "@R restored"
	grep '^@R ' /tmp/con2
	return $rc
}
l2() {
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
	[[ $(rep snapshot-rc) == 0 && $(rep first-exit) == 0 ]] &&
		ok "snapshot --stop: vmlet exited 0 ($(rep snapshot-bytes))" ||
		fail "snapshot: ctl $(rep snapshot-rc), vmlet exit $(rep first-exit)"
	before=$(sed -n '/^restored/q; s/^count //p' "$R" | tail -n 1)
	after=$(sed -n '/^restored/,$ s/^count //p' "$R" | head -n 1)
	[[ -n $before && -n $after && ${after%% *} == $((${before%% *} + 1)) ]] &&
		ok "the counter goes on after the restore: $before -> $after" ||
		fail "counter before the snapshot '$before', after the restore '$after'"
	python3 - "$R" <<'PY' && ok "uptime monotonic across the restore, no clock complaints" ||
import sys
ups, bad = [], set()
for line in open(sys.argv[1], errors="replace"):
    f = line.split()
    if len(f) == 4 and f[0] == "count":
        ups.append(float(f[2]))
        bad.add(int(f[3]))
assert len(ups) >= 8, ups
assert all(b > a for a, b in zip(ups, ups[1:])), ups
assert len(bad) == 1, bad  # no complaint logged after the first count
PY
		fail "uptime or dmesg after the restore: $(grep '^count' "$R" | tr '\n' ';')"
	rep power-button | grep -q . && ok "the restored guest powered off on the button" ||
		fail "no power button in the restored guest"
}
