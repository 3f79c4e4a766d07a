# accessCredentials and the filesystem freeze through Debian's qemu-ga in
# L2 (issue 25 part 2). The Secrets are files in L1 (--secret-dir): an SSH
# key Secret for users root and walker, a second one for walker only, and
# a userPassword Secret for root. vmlet's credential agent applies them once
# qemu-ga is up: L2 sees walker's ~/.ssh/authorized_keys hold exactly the
# keys of both Secrets and root's /etc/shadow entry change (qemu-ga runs
# chpasswd; busybox-static has none, so L2's chpasswd is a script that
# records what qemu-ga fed it and sets the hash with busybox mkpasswd);
# L1 then changes a Secret file and L2 sees
# authorized_keys follow (the old key gone, the new one there). Then
# `vmlet ctl fsfreeze` freezes L2's ext4 disk: a write there blocks,
# fsfreeze-status says frozen, and after `vmlet ctl fsthaw` the write
# completes.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi
L2_DEBS="qemu-guest-agent:usr/sbin/qemu-ga"
host_prep() {
	local s=$SCN_DIR/secrets
	mke2fs -q -t ext4 -F "$SCN_DIR/frz.img" 16M >/dev/null || return 1
	mkdir -p "$s/keys" "$s/keys2" "$s/pw"
	printf '%s\n# a comment\n\n' "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINESTEDKEYONE one@host" >"$s/keys/one"
	printf '%s\n' "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINESTEDKEYTWO two@host" >"$s/keys2/two"
	printf 'Nested-Pa55' >"$s/pw/root"
	local d=/scn/$SCN
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: frz, serial: nested-frz, disk: {bus: virtio}}" "      - {name: frz, hostDisk: {path: $d/frz.img, type: Disk}}
      accessCredentials:
      - sshPublicKey:
          source: {secret: {secretName: keys}}
          propagationMethod: {qemuGuestAgent: {users: [root, walker]}}
      - sshPublicKey:
          source: {secret: {secretName: keys2}}
          propagationMethod: {qemuGuestAgent: {users: [walker]}}
      - userPassword:
          source: {secret: {secretName: pw}}
          propagationMethod: {qemuGuestAgent: {}}" >"$SCN_DIR/vm.yaml"
}
l1_wait() { # WHAT: until L2 reported it (5 min at most)
	n=0
	while ! grep -q "@R $1" /tmp/aout && [ $n -lt 1500 ]; do sleep 0.2; n=$((n + 1)); done
}
l1() {
	sock=/tmp/api.sock
	rm -rf "$sock" /tmp/ain /tmp/aout /tmp/arc /tmp/secrets && mkfifo /tmp/ain && : >/tmp/aout
	cp -r "$D/secrets" /tmp/secrets
	exec 5<>/tmp/ain
	{
		vm_run --api-socket "$sock" --secret-dir /tmp/secrets <&5
		echo $? >/tmp/arc
	} | tee /tmp/aout &
	l1_wait creds-seen
	# a Secret changes: key one replaced by key three
	rm /tmp/secrets/keys/one
	printf '%s\n' "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINESTEDKEYTHREE three@host" >/tmp/secrets/keys/three
	echo changed >&5
	l1_wait creds-changed
	timeout 90 vmlet ctl "$sock" fsfreeze >/tmp/f1 2>&1
	echo "@R l1-fsfreeze rc=$? $(tr '\n' ' ' </tmp/f1)"
	echo frozen >&5
	l1_wait freeze-write
	timeout 30 vmlet ctl "$sock" fsfreeze-status >/tmp/f2 2>&1
	echo "@R l1-status-frozen rc=$? $(tr '\n' ' ' </tmp/f2)"
	timeout 30 vmlet ctl "$sock" fsthaw >/tmp/f3 2>&1
	echo "@R l1-fsthaw rc=$? $(tr '\n' ' ' </tmp/f3)"
	timeout 30 vmlet ctl "$sock" fsfreeze-status >/tmp/f4 2>&1
	echo "@R l1-status-thawed rc=$? $(tr '\n' ' ' </tmp/f4)"
	echo thawed >&5
	wait
	exec 5>&-
	echo "@R l1-creds-log $(grep 'credentials:' "$D/vmm.log" | tail -n 8 | tr '\n' ' ' | head -c 1500)"
	return "$(cat /tmp/arc 2>/dev/null || echo 1)"
}
l2_until() { # SECONDS COMMAND...: until COMMAND succeeds
	t=$1
	shift
	while [ "$t" -gt 0 ] && ! "$@"; do sleep 1; t=$((t - 1)); done
}
l2() {
	mod virtio_pci virtio_console virtio_blk
	mkdir -p /tmp /etc /var/run /home/walker /root /mnt/frz
	echo "root:x:0:0:root:/root:/bin/sh" >/etc/passwd
	echo "walker:x:1000:1000:walker:/home/walker:/bin/sh" >>/etc/passwd
	printf 'root:x:0:\nwalker:x:1000:\n' >/etc/group
	printf 'root:*:19000:0:99999:7:::\nwalker:*:19000:0:99999:7:::\n' >/etc/shadow
	chmod 600 /etc/shadow
	chown 1000:1000 /home/walker
	mkdir -p /sbin
	cat >/sbin/chpasswd <<'CHPW'
#!/bin/sh
# chpasswd as qemu-ga runs it: "USER:PASSWORD" lines on stdin
while IFS= read -r l || [ -n "$l" ]; do
	echo "$l" >>/tmp/chpasswd.in
	u=${l%%:*}
	h=$(mkpasswd -m sha512 "${l#*:}")
	sed -i "s|^$u:[^:]*:|$u:$h:|" /etc/shadow
done
echo "$*" >/tmp/chpasswd.args
CHPW
	chmod 755 /sbin/chpasswd
	dev=$(disk_by_serial nested-frz)
	mount -t ext4 "$dev" /mnt/frz && rep frz-mounted "$dev"
	p=
	n=0
	while [ -z "$p" ] && [ $n -lt 100 ]; do # the ports come after the driver's handshake
		for d in /sys/class/virtio-ports/*; do
			[ "$(cat "$d/name" 2>/dev/null)" = org.qemu.guest_agent.0 ] && p=/dev/${d##*/}
		done
		[ -n "$p" ] || sleep 0.1
		n=$((n + 1))
	done
	PATH=/bin:/sbin /bin/qemu-ga -m virtio-serial -p "$p" -f /tmp/qga.pid -t /tmp -l /tmp/qga.log &
	sleep 2
	kill -0 $! 2>/dev/null && rep agent-up "$(/bin/qemu-ga -V 2>&1 | head -n 1)" ||
		rep agent-up "failed: $(head -c 300 /tmp/qga.log 2>/dev/null | tr '\n' ' ')"
	ak=/home/walker/.ssh/authorized_keys
	l2_until 90 grep -q KEYTWO "$ak" 2>/dev/null
	l2_until 60 sh -c '! grep -q "^root:\*:" /etc/shadow'
	rep walker-keys "$(tr '\n' '|' <"$ak" 2>/dev/null)"
	rep walker-keys-owner "$(stat -c '%u:%g %a' "$ak" 2>/dev/null)"
	rep root-keys "$(tr '\n' '|' </root/.ssh/authorized_keys 2>/dev/null)"
	rep root-shadow "$(grep '^root:' /etc/shadow | cut -d: -f2 | cut -c1-3)"
	rep chpasswd-in "$(cat /tmp/chpasswd.in 2>/dev/null | tr '\n' '|') args=[$(cat /tmp/chpasswd.args 2>/dev/null)]"
	rep creds-seen
	read -t 200 -r line
	l2_until 90 grep -q KEYTHREE "$ak" 2>/dev/null
	rep walker-keys-after "$(tr '\n' '|' <"$ak" 2>/dev/null)"
	rep creds-changed
	read -t 200 -r line
	(echo written >/mnt/frz/while-frozen && sync) &
	w=$!
	sleep 3
	kill -0 $w 2>/dev/null && rep freeze-write blocked || rep freeze-write "went through"
	read -t 200 -r line
	l2_until 20 sh -c "! kill -0 $w 2>/dev/null"
	kill -0 $w 2>/dev/null && rep thaw-write "still blocked" || rep thaw-write "$(cat /mnt/frz/while-frozen)"
	umount /mnt/frz
	rep agent-log "$(tail -c 400 /tmp/qga.log 2>/dev/null | tr '\n' ' ')"
}
host_check() {
	local k1=NESTEDKEYONE k2=NESTEDKEYTWO k3=NESTEDKEYTHREE
	[[ $(rep walker-keys) == *$k1*'|'*$k2* && $(rep walker-keys) != *comment* ]] &&
		ok "walker's authorized_keys: the keys of both Secrets, no comment line" ||
		fail "walker's keys: $(rep walker-keys) (agent: $(rep agent-up); $(rep l1-creds-log))"
	[[ $(rep walker-keys-owner) == "1000:1000 600" ]] && ok "owned by walker, mode 600" ||
		fail "authorized_keys owner/mode: $(rep walker-keys-owner)"
	[[ $(rep root-keys) == *$k1* && $(rep root-keys) != *$k2* ]] &&
		ok "root's authorized_keys: only the Secret that names root" ||
		fail "root's keys: $(rep root-keys)"
	[[ $(rep chpasswd-in) == "root:Nested-Pa55| args=[]" ]] &&
		ok "qemu-ga ran chpasswd with root's password from the Secret, not crypted" ||
		fail "chpasswd got: $(rep chpasswd-in)"
	[[ $(rep root-shadow) == '$'* ]] && ok "root's password set (/etc/shadow: $(rep root-shadow)...)" ||
		fail "root's shadow entry: $(rep root-shadow) ($(rep l1-creds-log))"
	[[ $(rep walker-keys-after) == *$k3* && $(rep walker-keys-after) != *$k1* &&
		$(rep walker-keys-after) == *$k2* ]] &&
		ok "a Secret changed: authorized_keys follows (key one gone, three there)" ||
		fail "after the change: $(rep walker-keys-after)"
	[[ $(rep l1-fsfreeze) == 'rc=0 {"ok":true,"filesystems":'[1-9]* ]] &&
		ok "vmlet ctl fsfreeze: $(rep l1-fsfreeze)" || fail "fsfreeze: $(rep l1-fsfreeze)"
	[[ $(rep freeze-write) == blocked ]] && ok "a write to the frozen ext4 blocks" ||
		fail "write while frozen: $(rep freeze-write)"
	[[ $(rep l1-status-frozen) == *'"status":"frozen"'* && $(rep l1-status-thawed) == *'"status":"thawed"'* ]] &&
		ok "fsfreeze-status: frozen, then thawed" ||
		fail "status: $(rep l1-status-frozen) / $(rep l1-status-thawed)"
	[[ $(rep l1-fsthaw) == 'rc=0 '* && $(rep thaw-write) == written ]] &&
		ok "fsthaw: the blocked write completes" ||
		fail "thaw: $(rep l1-fsthaw), write: $(rep thaw-write) (log: $(rep agent-log))"
}
