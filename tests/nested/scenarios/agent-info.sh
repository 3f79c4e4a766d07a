# `vmlet ctl SOCKET guest-info` against Debian's qemu-guest-agent (its
# qemu-ga and libraries copied into L2: L2_DEBS) on the guest-agent
# channel: L2 starts qemu-ga on /dev/vport0p1 as a distribution's unit
# would (-m virtio-serial); L1 asks through vmlet's channel socket and the
# host checks the answer against what L2 itself says (hostname, kernel
# release, lo's address, the agent's version) and the channel's metrics
# (the agent has the port open, bytes both ways), then lets the guest end.
SHAPE=1,1,1 MEM=256Mi
L2_DEBS="qemu-guest-agent:usr/sbin/qemu-ga"
l1() {
	sock=/tmp/api.sock
	rm -f "$sock" /tmp/ain /tmp/aout /tmp/arc && mkfifo /tmp/ain && : >/tmp/aout
	exec 5<>/tmp/ain
	{
		vm_run --api-socket "$sock" <&5
		echo $? >/tmp/arc
	} | tee /tmp/aout &
	n=0
	while ! grep -q "@R agent-up" /tmp/aout && [ $n -lt 1500 ]; do sleep 0.2; n=$((n + 1)); done
	timeout 60 vmlet ctl "$sock" guest-info >/tmp/gi.json 2>/tmp/gi.err
	echo "@R l1-guest-info rc=$? $(head -c 300 /tmp/gi.err | tr '\n' ' ')"
	echo "@R l1-gi $(tr -d '\n' </tmp/gi.json | head -c 16000)"
	echo "@R l1-metrics $(vmlet ctl "$sock" metrics | grep '^vmlet_channel' | tr '\n' ' ')"
	echo "@R l1-status $(vmlet ctl -o text "$sock" status | grep '^agent_connected')"
	echo go >&5
	wait
	exec 5>&-
	return "$(cat /tmp/arc 2>/dev/null || echo 1)"
}
l2() {
	mod virtio_pci virtio_console
	mkdir -p /tmp /etc /var/run
	hostname l2agent
	ip link set lo up 2>/dev/null
	ip addr add 127.0.0.1/8 dev lo 2>/dev/null
	rep l2-kernel "$(uname -r)"
	rep l2-hostname "$(hostname)"
	p=$(ls /dev/vport*p1 2>/dev/null | head -n 1)
	rep agent-port "$p $(cat /sys/class/virtio-ports/vport*p1/name 2>/dev/null)"
	/bin/qemu-ga -m virtio-serial -p "$p" -f /tmp/qga.pid -t /tmp -l /tmp/qga.log &
	sleep 2
	kill -0 $! 2>/dev/null && rep agent-up "$(/bin/qemu-ga -V 2>&1 | head -n 1)" ||
		rep agent-up "failed: $(head -c 300 /tmp/qga.log 2>/dev/null | tr '\n' ' ')"
	read -t 200 -r line
	rep agent-log "$(tail -c 300 /tmp/qga.log 2>/dev/null | tr '\n' ' ')"
}
host_check() {
	[[ $(rep l1-guest-info) == "rc=0 "* ]] && ok "vmlet ctl guest-info answered (exit 0)" ||
		fail "vmlet ctl guest-info: $(rep l1-guest-info) (agent: $(rep agent-up); log: $(rep agent-log))"
	python3 - "$(rep l1-gi)" "$(rep l2-hostname)" "$(rep l2-kernel)" <<'PY' &&
import json, sys
o = json.loads(sys.argv[1])
assert o["agent"]["version"].startswith("7."), o["agent"]
assert o["hostname"]["host-name"] == sys.argv[2], o["hostname"]
assert o["os"]["kernel-release"] == sys.argv[3], o["os"]
lo = [i for i in o["interfaces"] if i["name"] == "lo"]
assert lo and any(a["ip-address"] == "127.0.0.1" for a in lo[0].get("ip-addresses", [])), o["interfaces"]
assert "filesystems" in o and "users" in o, sorted(o)
print("agent %s, host %s, kernel %s" % (o["agent"]["version"], o["hostname"]["host-name"], o["os"]["kernel-release"]))
PY
		ok "qemu-ga's answers match the guest: $(rep agent-up)" ||
		fail "guest-info's answer does not match the guest: $(rep l1-gi | head -c 600)"
	local m
	m=$(rep l1-metrics)
	[[ $m == *'vmlet_channel_guest_open{channel="org.qemu.guest_agent.0"} 1 '* &&
		$m == *'vmlet_channel_host_connected{channel="org.qemu.guest_agent.0"} 0 '* &&
		$m =~ rx_bytes_total\{channel=\"org.qemu.guest_agent.0\"\}\ [1-9] &&
		$m =~ tx_bytes_total\{channel=\"org.qemu.guest_agent.0\"\}\ [1-9] ]] &&
		ok "metrics: the agent has the channel open, bytes counted both ways" ||
		fail "channel metrics in L1: $m"
	[[ $(rep l1-status) == "agent_connected: true" ]] && ok "ctl status: agent_connected: true" ||
		fail "ctl status in L1: $(rep l1-status)"
}
