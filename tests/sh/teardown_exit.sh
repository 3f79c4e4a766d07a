#!/usr/bin/env bash
# Teardown under the seccomp filters, for every way a guest run ends
# (issue 11: a Linux guest's MSI-X routes made the main thread's release
# of the devices call KVM_SET_GSI_ROUTING, which its filter refuses: vmlet
# died by SIGSYS before the disks' final flush). The probe guest routes and
# unmasks every MSI-X vector of every PCI function (a disk, a NIC on a tap,
# the rng, the memory balloon every VM gets), as Linux leaves them, then ends as vmlet.end= says. Each path
# must give its README exit status (never 128+31) and the disk must have
# been flushed (the debug line virtio-blk logs after fdatasync returned;
# strace confirms the fdatasync for the power-off).
source "$(dirname "$0")/../lib/sh.sh"

have_kvm || skip "no usable /dev/kvm"
[[ $(id -u) == 0 ]] || skip "needs root for a network namespace with a tap"
ELF=$TMPD/probe.elf
"$VMLET" probe --dump-guest "$ELF" || { echo "FAIL: vmlet probe --dump-guest"; exit 1; }
NS=vmlet-td$$
ip netns add "$NS" 2>/dev/null || skip "cannot create network namespaces"
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMPD"' EXIT
ip netns exec "$NS" ip tuntap add tdtap0 mode tap
ip netns exec "$NS" ip link set tdtap0 up
VMLET=$(realpath "$VMLET")
truncate -s 8M "$TMPD/d.raw"
cat >"$TMPD/vm.yaml" <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: teardown, namespace: default}
spec:
  runStrategy: Once
  template:
    spec:
      terminationGracePeriodSeconds: 1
      domain:
        cpu: {cores: 2}
        memory: {guest: 64Mi}
        devices:
          rng: {}
          disks:
          - {name: d, disk: {bus: virtio}}
          interfaces:
          - {name: default, bridge: {}}
      networks: [{name: default, pod: {}}]
      volumes:
      - {name: d, hostDisk: {path: $TMPD/d.raw, type: Disk}}
EOF

# start NAME END [VMLET-ARGS...]: vmlet run in the background (pid in $pid)
start() {
	local name=$1 end=$2
	shift 2
	: >"$TMPD/$name.con"
	ip netns exec "$NS" "$VMLET" run -f "$TMPD/vm.yaml" --kernel "$ELF" \
		--cmdline "vmlet.msix vmlet.netquick vmlet.end=$end" --tap default=tdtap0 \
		--console "file:$TMPD/$name.con" --log-level debug --log-format text "$@" \
		>"$TMPD/$name.out" 2>"$TMPD/$name.err" &
	pid=$!
}

# reported NAME: the guest routed its vectors and finished its report
reported() {
	wait_log "$TMPD/$1.con" '^VMLET-PROBE-END' 600
}

# finish_run NAME WANT: wait for vmlet, check status, routes and flush
finish_run() {
	local name=$1 want=$2 rc routed
	wait "$pid"
	rc=$?
	routed=$(grep -a '^msixRouted=' "$TMPD/$name.con" | tr -d '\r')
	if [[ ! $routed =~ ^msixRouted=5\ ([0-9]+)$ ]] || ((BASH_REMATCH[1] < 17)); then
		fail "$name: the guest did not route the vectors of 5 functions: '$routed'"
	fi
	if ((rc != want)); then
		fail "$name: exit status $rc, want $want$( ((rc == 159)) && echo ' (SIGSYS)')"
		tail -n 8 "$TMPD/$name.err" | sed 's/^/    /'
	elif ! grep -q "virtio-blk: disk 'd': flushed" "$TMPD/$name.err"; then
		fail "$name: exit status $rc but no flush of disk 'd' logged"
	else
		ok "$name: exit status $rc, $routed, disk flushed"
	fi
}

start poweroff poweroff
finish_run poweroff 0

start reboot reboot
finish_run reboot 3

start crash crash
finish_run crash 4

# SIGTERM: the guest ignores the power button; the grace period (1 s) ends it
start sigterm hold
reported sigterm || fail "sigterm: no report"
kill -TERM "$pid"
finish_run sigterm 5

# SIGTERM to a guest that powers off on the button: a clean power-off
start sigterm-button button
reported sigterm-button || fail "sigterm-button: no report"
kill -TERM "$pid"
finish_run sigterm-button 0

# a second SIGINT stops the guest at once (grace period long)
start sigint2 hold --grace-period 600
reported sigint2 || fail "sigint2: no report"
kill -INT "$pid"
wait_log "$TMPD/sigint2.err" 'pressing the ACPI power button' 300 || fail "sigint2: first SIGINT not seen"
kill -INT "$pid"
finish_run sigint2 5

# vmlet ctl stop (the guest runs in a worker with --api-socket)
start ctl-stop button --api-socket "$TMPD/api.sock"
reported ctl-stop || fail "ctl-stop: no report"
"$VMLET" ctl "$TMPD/api.sock" stop >/dev/null || fail "ctl-stop: vmlet ctl stop failed"
finish_run ctl-stop 0

start ctl-stop-hold hold --api-socket "$TMPD/api2.sock"
reported ctl-stop-hold || fail "ctl-stop-hold: no report"
"$VMLET" ctl "$TMPD/api2.sock" stop >/dev/null || fail "ctl-stop-hold: vmlet ctl stop failed"
finish_run ctl-stop-hold 5

# the flush itself, seen from outside: fdatasync on the disk returned 0
if command -v strace >/dev/null; then
	ip netns exec "$NS" strace -f -qq -e trace=fdatasync,fsync -o "$TMPD/strace" "$VMLET" run \
		-f "$TMPD/vm.yaml" --kernel "$ELF" --cmdline "vmlet.msix vmlet.netquick" \
		--tap default=tdtap0 --console none >/dev/null 2>&1
	rc=$?
	if ((rc == 0)) && grep -qE 'f(data)?sync\([0-9]+\) += 0' "$TMPD/strace"; then
		ok "strace: $(grep -cE 'f(data)?sync\(' "$TMPD/strace") fdatasync/fsync at exit, status 0"
	else
		fail "strace: status $rc, no successful fdatasync"
		sed 's/^/    /' "$TMPD/strace" | tail -n 5
	fi
fi
finish
