# The guest-agent channel KubeVirt gives every VMI (docs/devices.md: Guest-agent
# channel): Linux's own virtio_console binds vmlet's virtio-serial
# controller; /dev/vport*p1 and its sysfs name show the agent's port
# org.qemu.guest_agent.0. 1 MiB the guest writes to the port arrives on
# the host socket in L1 (socat, from Debian), which echoes it back: L1
# checksums what it got, the guest what came back. Then the guest opens and
# closes the port in a loop.
SHAPE=1,1,1 MEM=256Mi
L1_PROGS="socat"
l1() {
	sock=/tmp/api.sock
	ch=$sock.org.qemu.guest_agent.0
	rm -f "$sock" "$ch" /tmp/l1got
	vm_run --api-socket "$sock" &
	vmpid=$!
	n=0
	while [ ! -S "$ch" ] && kill -0 $vmpid 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	echo "@R l1-socket $(stat -c %a "$ch" 2>/dev/null || echo none)"
	# the echo: what arrives is kept in a file and sent back
	socat -b 65536 UNIX-CONNECT:"$ch" SYSTEM:'tee /tmp/l1got' 2>/tmp/socat.err &
	socpid=$!
	wait $vmpid
	rc=$?
	kill $socpid 2>/dev/null
	echo "@R l1-got $(head -c 1048576 /tmp/l1got | md5sum | cut -d' ' -f1) $(wc -c </tmp/l1got)"
	echo "@R l1-socat $(head -c 200 /tmp/socat.err | tr '\n' ' ')"
	return $rc
}
l2() {
	mod virtio_pci virtio_console
	mkdir -p /tmp
	p=$(ls /dev/vport*p1 2>/dev/null | head -n 1)
	rep vport "$p"
	rep port-name "$(cat /sys/class/virtio-ports/vport*p1/name 2>/dev/null)"
	[ -n "$p" ] || return 0
	dd if=/dev/urandom of=/tmp/data bs=65536 count=16 2>/dev/null
	rep sent "$(md5sum </tmp/data | cut -d' ' -f1)"
	# one open file for both directions (a port admits one opener)
	exec 3<>"$p"
	head -c 1048576 <&3 >/tmp/back &
	rp=$!
	cat /tmp/data >&3
	wait $rp
	exec 3>&-
	rep back "$(md5sum </tmp/back | cut -d' ' -f1) $(wc -c </tmp/back)"
	i=0
	while [ $i -lt 50 ] && exec 4<>"$p"; do
		exec 4>&-
		i=$((i + 1))
	done
	rep reopened "$i"
}
host_check() {
	[[ $(rep vport) == /dev/vport*p1 ]] && ok "virtio_console bound: $(rep vport)" ||
		fail "no /dev/vport*p1 in the guest: '$(rep vport)'"
	[[ $(rep port-name) == org.qemu.guest_agent.0 ]] && ok "the port is named org.qemu.guest_agent.0" ||
		fail "the port's sysfs name: '$(rep port-name)'"
	[[ $(rep l1-socket) == 600 ]] && ok "the host socket in L1, mode 0600" ||
		fail "the host socket in L1: $(rep l1-socket)"
	local sent got back
	sent=$(rep sent)
	got=$(rep l1-got)
	back=$(rep back)
	[[ -n $sent && $got == "$sent 1048576" ]] && ok "1 MiB from the guest arrived on the host socket, checksummed" ||
		fail "the host socket got '$got', the guest sent '$sent' (socat: $(rep l1-socat))"
	[[ -n $sent && $back == "$sent 1048576" ]] && ok "and came back to the guest, checksummed" ||
		fail "the guest got back '$back', sent '$sent'"
	[[ $(rep reopened) == 50 ]] && ok "the port opened and closed 50 times" ||
		fail "the port reopened $(rep reopened) times"
}
