#!/usr/bin/env bash
# devices.downwardMetrics in `vmlet run` (vmm/ctl/dmetrics.h), with the
# tiny guest: the VM gets the vhostmd port org.github.vhostmd.1 beside the
# guest agent's, and vmlet-dmetrics, a child of vmlet outside the sandbox,
# connects to its host socket
# and ends with vmlet. (What it answers is ctl_dmetrics_test's; a Linux
# guest reading the port is the nested scenario downward-metrics.)
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
tiny_guests 0
vm_manifest dm 64Mi Once >"$TMPD/vm.yaml"
sed -i 's/^          autoattachPodInterface: false$/&\n          downwardMetrics: {}/' "$TMPD/vm.yaml"
"$VMLET" resolve -f "$TMPD/vm.yaml" -o config 2>/dev/null | grep -q '"org.github.vhostmd.1"' &&
	ok "resolve -o config: the vhostmd channel" || fail "no vhostmd channel in the config"
"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode0.elf" --log-format text \
	--api-socket "$TMPD/api.sock" >"$TMPD/out" 2>"$TMPD/err" &
PID=$!
for _ in $(seq 600); do
	grep -q "tiny-guest: up" "$TMPD/out" && [[ -S $TMPD/api.sock ]] && break
	kill -0 "$PID" 2>/dev/null || break
	sleep 0.05
done
helper=$(ps -o pid=,comm= --ppid "$PID" | awk '$2 == "vmlet-dmetrics" {print $1}')
[[ -n $helper ]] && ok "vmlet-dmetrics runs beside the guest" ||
	fail "no vmlet-dmetrics child: $(ps -o pid,comm --ppid "$PID")"
st=$(grep -E '^(CapEff|CapBnd|NoNewPrivs):' "/proc/$helper/status" 2>/dev/null | tr -s '\t ' ' ')
[[ $st == *"CapEff: 0000000000000000"*"CapBnd: 0000000000000000"*"NoNewPrivs: 1"* ]] &&
	ok "vmlet-dmetrics has no capabilities and no_new_privs" || fail "vmlet-dmetrics: $st"
# it connects to the port's socket (this guest has no virtio driver, so
# the device does not serve it yet: the connection waits in the backlog)
for _ in $(seq 100); do
	socks=$(find "/proc/$helper/fd" -lname 'socket:*' 2>/dev/null | wc -l)
	((socks > 0)) && break
	sleep 0.1
done
((socks > 0)) && ok "it is connected to the vhostmd port's socket" ||
	fail "vmlet-dmetrics holds no socket: $(ls -l "/proc/$helper/fd" 2>&1)"
"$VMLET" ctl "$TMPD/api.sock" power-button >/dev/null
wait "$PID"
rc=$?
((rc == 0)) && ok "the guest powers off: exit 0" || fail "exit $rc: $(tail -3 "$TMPD/err")"
if [[ -n $helper ]] && kill -0 "$helper" 2>/dev/null; then
	fail "vmlet-dmetrics $helper outlived vmlet"
	kill "$helper"
else
	ok "vmlet-dmetrics ended with vmlet"
fi
finish
