#!/usr/bin/env bash
# The probe's virtio-net driver (firmware/probe/virtio_net.c) against QEMU's
# virtio-net-pci on q35: the same checks as under vmlet, with peers no one
# here wrote.
#   user  -netdev user (QEMU's slirp): DHCP gives 10.0.2.15/24, router
#         10.0.2.2 answers ARP and ping; host_mtu reaches the MTU field;
#         after the probe's malformed transmit chains (vmlet.hostile)
#   tap   a tap QEMU opens in a network namespace this test creates (and
#         removes), busybox udhcpd there; the namespace pings the guest
source "$(dirname "$0")/../lib/sh.sh"

ELF=${PROBE_ELF:-build/fw/probe.elf}
[[ -f $ELF ]] || make -s "$ELF" || { echo "FAIL: cannot build $ELF"; exit 1; }
ELF=$(realpath "$ELF")
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
have_kvm || skip "no usable /dev/kvm"
BIOS=/usr/share/qemu/qboot.rom
[[ -f $BIOS ]] || skip "no qboot firmware"

qemu() { # OUT CMDLINE NETDEV DEVICE-OPTS
	timeout 60 qemu-system-x86_64 -enable-kvm -m 128 -nodefaults -no-user-config \
		-nographic -display none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-M q35 -bios "$BIOS" -kernel "$ELF" -append "$2" -serial "file:$1" \
		-netdev "$3" -device "virtio-net-pci,netdev=n0,disable-legacy=on,$4" 2>"$1.err"
}

nic_line() { # OUT -> the nic= line's fields after the address
	grep -q VMLET-PROBE-END "$1" || { cat "$1" "$1.err" >&2; return 1; }
	grep '^error=' "$1" >&2 && return 1
	[[ $(grep -c '^nic=' "$1") == 1 ]] || return 1
	grep '^nic=' "$1" | cut -d' ' -f2-
}

expect() { # WHAT GOT WANT-REGEX
	[[ $2 =~ ^$3$ ]] && ok "$1: $2" || fail "$1: '$2' does not match '$3'"
}

# ---- QEMU's user networking ----------------------------------------------------
qemu "$TMPD/user.txt" vmlet.hostile "user,id=n0" "mac=52:54:00:aa:bb:01,host_mtu=1400"
got=$(nic_line "$TMPD/user.txt") || fail "user: no clean report"
# mac link mtu address router arp ping rxOk txOk echoed (echoes go on while the probe waits: at least N)
expect user "$got" "52:54:00:aa:bb:01 1 1400 10\.0\.2\.15/24 10\.0\.2\.2 ok ok [1-9][0-9]* [1-9][0-9]* 0"
grep '^nic6=' "$TMPD/user.txt" | sed 's/^/    /'
grep -qE '^hostileNic=00:[0-9a-f]{2}\.0 ok$' "$TMPD/user.txt" &&
	ok "user: hostile transmit chains first (completed or NEEDS_RESET, then good frames)" ||
	fail "user: $(grep '^hostileNic=' "$TMPD/user.txt")"

# ---- a tap in a namespace of our own, with a DHCP server ------------------------
if [[ $(id -u) == 0 ]] && command -v busybox >/dev/null && ip netns add "vmlet-nq$$" 2>/dev/null; then
	NS=vmlet-nq$$
	dhcpd= pinger_pid=
	trap '[[ -n $dhcpd ]] && kill $dhcpd 2>/dev/null; [[ -n $pinger_pid ]] && kill $pinger_pid 2>/dev/null; ip netns del "$NS" 2>/dev/null; rm -rf "$TMPD"' EXIT
	ip netns exec "$NS" ip link set lo up
	ip netns exec "$NS" ip tuntap add qtap0 mode tap
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.qtap0.accept_dad=0
	ip netns exec "$NS" ip addr add 192.168.78.1/24 dev qtap0
	ip netns exec "$NS" ip link set qtap0 up
	cat >"$TMPD/udhcpd.conf" <<EOF
start 192.168.78.60
end 192.168.78.60
interface qtap0
max_leases 1
lease_file $TMPD/leases
option subnet 255.255.255.0
option router 192.168.78.1
option lease 600
EOF
	touch "$TMPD/leases"
	# -a 3000: like any udhcpd (default 2 s) the server first ARP-probes the
	# address for 3 s: the guest must wait for a slow OFFER (issue 11)
	ip netns exec "$NS" busybox udhcpd -a 3000 -f "$TMPD/udhcpd.conf" 2>"$TMPD/udhcpd.log" &
	dhcpd=$!
	# the guest's DHCP tries span seconds: the server listens before it starts
	for _ in $(seq 200); do
		ip netns exec "$NS" ss -Hlun 'sport = :67' | grep -q . && break
		sleep 0.1
	done
	(
		got=0
		trap 'echo $got >"$TMPD/pinged"; exit 0' TERM
		for _ in $(seq 300); do
			ip netns exec "$NS" busybox ping -c 1 -W 1 192.168.78.60 >/dev/null 2>&1 &&
				got=$((got + 1))
			echo $got >"$TMPD/pinged"
			sleep 0.05
		done
	) &
	pinger_pid=$!
	ip netns exec "$NS" bash -c "$(declare -f qemu); ELF=$ELF BIOS=$BIOS qemu \
		$TMPD/tap.txt vmlet.netecho=5 tap,id=n0,ifname=qtap0,script=no,downscript=no \
		mac=02:00:00:aa:bb:02"
	kill "$pinger_pid" 2>/dev/null
	wait "$pinger_pid" 2>/dev/null
	pinger_pid=
	got=$(nic_line "$TMPD/tap.txt") || fail "tap: no clean report"
	expect tap "$got" "02:00:00:aa:bb:02 1 0 192\.168\.78\.60/24 192\.168\.78\.1 ok ok [1-9][0-9]* [1-9][0-9]* ([5-9]|[1-9][0-9]+)"
	grep -qE '^nic6=00:[0-9a-f]{2}\.0 fe80:0:0:0:0:ff:feaa:bb02 ok fe80:' "$TMPD/tap.txt" &&
		ok "tap: IPv6 echo to ff02::1 answered" || fail "tap: $(grep '^nic6=' "$TMPD/tap.txt")"
	(($(cat "$TMPD/pinged") >= 1)) && ok "tap: the namespace's pings answered" ||
		fail "tap: no ping answered"
else
	echo "(not root, no busybox or no network namespaces: tap case skipped)"
fi
finish
