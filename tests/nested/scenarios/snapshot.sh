# Snapshot and restore of a Linux guest (issue 24, docs/snapshot.md): L2
# runs mig_workload (lib-l2.sh): it counts in a tmpfs file and prints each
# count with its uptime, streams TCP to a listener on the node (L1),
# writes and fsyncs 32 KiB blocks on an ext4 virtio-blk disk and reads the
# whole file back from the disk each time, and hashes its CPUID, PCI
# config space and topology every 3 s. vmlet runs in a pod of L1
# (lib-l1.sh's mig_pod_up: its own mount, pid and network namespace, its
# tap bridged to the node); L1 takes a snapshot with --stop after a few
# counts (vmlet exits 0), kills that pod, then starts vmlet with --restore
# in a new pod on the same disk image: the counter goes on from the file's
# value (the same kernel, its tmpfs and processes, no new boot), uptime
# does not go backwards, the kernel logs no new clocksource, soft-lockup,
# watchdog or stall line after the first count (the lines of the boot, in
# a nested guest, stay as they were), the disk reads back whole, the TCP
# stream goes on unbroken (a tap: the connection is the guest's own; with
# passt it would not survive, docs/snapshot.md), the machine the guest
# sees is the same; the guest powers off on the power button (exit 0),
# having unmounted its disk, and e2fsck -fn of the image in L1 is clean.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi L2_END=pwrbtn_wait TIMEBOX=300 L1_PROGS=e2fsck L2_DEBS=cpuid:usr/bin/cpuid
host_prep() { mig_host_prep; }
l1() {
	sock=/tmp/api.sock
	rm -rf /tmp/snap "$sock"
	mig_node_up && mig_listen && mig_pod_up a && mig_pod_up b || {
		echo "@R pods-failed"
		mig_node_down
		return 1
	}
	: >/tmp/con1 # before the waits read it (not an earlier scenario's)
	mig_vm_run a --api-socket "$sock" >>/tmp/con1 &
	vmpid=$!
	mig_pod_tap a
	n=0
	while ! grep -q '@R count 6 ' /tmp/con1 && kill -0 $vmpid 2>/dev/null && [ $n -lt 3000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	vmlet ctl "$sock" snapshot /tmp/snap --stop
	echo "@R snapshot-rc $?"
	wait $vmpid
	echo "@R first-exit $?"
	echo "@R tcp-at-move $(grep -c . /tmp/tcp.recv)"
	mig_pod_kill a
	cp "$D/vmm.log" "$D/vmm-snapshot.log"
	echo "@R snapshot-bytes $(du -k /tmp/snap/memory | cut -f1)k-used $(wc -c </tmp/snap/state)"
	sleep 2 # time passes on the host while the guest lies on disk
	rm -f "$sock"
	# (made here: the background job's own redirection may come after the
	# first grep below on a loaded L1)
	: >/tmp/con2
	mig_vm_run b --api-socket "$sock" --restore /tmp/snap >>/tmp/con2 &
	vmpid=$!
	mig_pod_tap b
	n=0
	while [ "$(grep -c '@R count ' /tmp/con2)" -lt 12 ] && kill -0 $vmpid 2>/dev/null &&
		[ $n -lt 3000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	vmlet ctl "$sock" power-button || mig_pod_kill b
	wait $vmpid
	rc=$?
	mig_fsck
	mig_tcp_report
	mig_pod_kill b
	mig_node_down
	sed 's/^/@1/' /tmp/con1 | grep '^@1@R ' | sed 's/^@1//'
	echo "@R restored"
	grep '^@R ' /tmp/con2
	return $rc
}
l2() { mig_workload; }
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
	mig_check restored restore
	rep power-button | grep -q . && ok "the restored guest powered off on the button" ||
		fail "no power button in the restored guest"
}
