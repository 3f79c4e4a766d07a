#!/usr/bin/env bash
# The probe guest's virtio-net driver (CPL3, firmware/probe/virtio_net.c)
# against vmlet's virtio-net and each binding, end to end, in network
# namespaces this test creates and removes (the host's own namespace,
# interfaces and nftables are never touched):
#   tap         --tap default=TAP on a tap in namespace "pod"; busybox udhcpd
#               there is the DHCP server, the pod pings the guest until it answered 5;
#               the pod's kernel answers the guest's ICMPv6 echo to ff02::1
#               (after the guest answered its neighbor solicitation)
#   masquerade  namespace "pod" plays the pod (eth0 = veth to namespace
#               "node"); vmlet's DHCP gives 10.0.2.2/24, the guest pings
#               the node 10.200.0.1 through the NAT (the node sees the
#               pod's address: it has no route back to 10.0.2.0/24)
#   bridge      same pod; the guest takes the pod's 10.200.0.2/24 and MAC,
#               pings the node 10.200.0.1, and the node pings the guest
#   passt       passt (started by vmlet) answers DHCP with the pod's address
# Each case: `vmlet probe -o json` matches and its "nics" say what happened.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
[[ $(id -u) == 0 ]] || skip "needs root for network namespaces"
command -v busybox >/dev/null || skip "no busybox (udhcpd, ping)"
VMLET=$(realpath "$VMLET")
[[ -x $VMLET_SAN ]] && VMLET_SAN=$(realpath "$VMLET_SAN")
NS=vmlet-np$$
ip netns add "$NS-pod" 2>/dev/null || skip "cannot create network namespaces"
ip netns add "$NS-node" || { ip netns del "$NS-pod"; skip "cannot create network namespaces"; }
dhcpd=
trap '[[ -n $dhcpd ]] && kill "$dhcpd" 2>/dev/null; ip netns del "$NS-pod" 2>/dev/null; ip netns del "$NS-node" 2>/dev/null; rm -rf "$TMPD"' EXIT
pod() { ip netns exec "$NS-pod" "$@"; }
node() { ip netns exec "$NS-node" "$@"; }

source tests/data/net_manifest.sh

# pinger NS ADDR: ping ADDR from namespace NS until killed; replies counted
# in $TMPD/pinged (requests answered after ping gave up are not counted)
pinger() {
	local got=0
	trap 'echo "$got" >"$TMPD/pinged"; exit 0' TERM
	echo 0 >"$TMPD/pinged"
	for _ in $(seq 300); do
		ip netns exec "$1" busybox ping -c 1 -W 1 "$2" >/dev/null 2>&1 && got=$((got + 1))
		echo "$got" >"$TMPD/pinged"
		sleep 0.05
	done
}
stop_pinger() {
	kill "$pinger_pid" 2>/dev/null
	wait "$pinger_pid" 2>/dev/null
	pinged=$(cat "$TMPD/pinged")
}

probe() { # NAME [VAR=VALUE ...] [-- VMLET-ARGS ...]: vmlet probe in the pod
	local name=$1 envs=() args=()
	shift
	while (($#)) && [[ $1 != -- ]]; do envs+=("$1"); shift; done
	(($#)) && shift
	args=("$@")
	pod env "${envs[@]}" timeout 90 "$VMLET" probe -f "$TMPD/$name.yaml" -o json "${args[@]}" \
		>"$TMPD/$name.json" 2>"$TMPD/$name.err"
	echo $? >"$TMPD/$name.rc"
}

nic() { # NAME SIDE KEY -> the value of nics[0].KEY of SIDE
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(str(d[sys.argv[2]]["nics"][0][sys.argv[3]]).lower())' \
		"$TMPD/$1.json" "$2" "$3" 2>/dev/null
}

check() { # NAME KEY WANT (guest side)
	local got
	got=$(nic "$1" guest "$2")
	[[ $got == "$3" ]] && ok "$1: $2 = $3" || fail "$1: $2 is '$got', want '$3'"
}

check_min() { # NAME KEY MIN (guest side): counters that go on while the probe waits
	local got
	got=$(nic "$1" guest "$2")
	[[ $got =~ ^[0-9]+$ ]] && ((got >= $3)) && ok "$1: $2 = $got (>= $3)" || fail "$1: $2 is '$got', want >= $3"
}

matched() { # NAME
	if [[ $(cat "$TMPD/$1.rc") == 0 ]] && grep -q '"match":true' "$TMPD/$1.json"; then
		ok "$1: probe matches"
	else
		fail "$1: probe rc $(cat "$TMPD/$1.rc")"
		sed 's/^/    /' "$TMPD/$1.err"
	fi
}

# ---- tap with a DHCP server on the host side -----------------------------
pod ip link set lo up
pod ip tuntap add vmtap0 mode tap
pod sysctl -qw net.ipv6.conf.vmtap0.accept_dad=0 # its link-local answers at once
pod ip addr add 192.168.77.1/24 dev vmtap0
pod ip link set vmtap0 up
cat >"$TMPD/udhcpd.conf" <<EOF
start 192.168.77.50
end 192.168.77.50
interface vmtap0
max_leases 1
lease_file $TMPD/leases
option subnet 255.255.255.0
option router 192.168.77.1
option lease 600
EOF
touch "$TMPD/leases"
# -a 3000: like any udhcpd (default 2 s) the server first ARP-probes the
# address for 3 s: the guest must wait for a slow OFFER (issue 11)
ip netns exec "$NS-pod" busybox udhcpd -a 3000 -f "$TMPD/udhcpd.conf" 2>"$TMPD/udhcpd.log" &
dhcpd=$! # ip netns exec execs: this is udhcpd itself
# the guest's DHCP tries span seconds: the server listens before it starts
for _ in $(seq 200); do pod ss -Hlun 'sport = :67' | grep -q . && break; sleep 0.1; done
net_manifest bridge 'macAddress: "02:00:00:aa:bb:01"' >"$TMPD/tap.yaml"
# --tap: an interface the VM does not have, a value without '='
"$VMLET" probe -f "$TMPD/tap.yaml" --tap nosuch=vmtap0 >/dev/null 2>"$TMPD/tap-bad.err"
rc=$?
[[ $rc == 1 ]] && grep -q "the VM has no interface 'nosuch'" "$TMPD/tap-bad.err" &&
	ok "--tap for a missing interface: exit 1, named" || fail "--tap nosuch: rc $rc: $(cat "$TMPD/tap-bad.err")"
"$VMLET" probe -f "$TMPD/tap.yaml" --tap default >/dev/null 2>&1
rc=$?
[[ $rc == 2 ]] && ok "--tap without '=': usage error" || fail "--tap default: rc $rc"
pinger "$NS-pod" 192.168.77.50 &
pinger_pid=$!
probe tap -- --tap default=vmtap0 --cmdline vmlet.netecho=5
stop_pinger
matched tap
check tap mac 02:00:00:aa:bb:01
check tap dhcpAddress 192.168.77.50/24
check tap router 192.168.77.1
check tap arp true
check tap ping true
check_min tap echoed 5
check tap ping6 true
((pinged >= 1)) && ok "tap: the pod's pings answered ($pinged)" || fail "tap: no ping answered"
[[ $(nic tap expected binding) == tap ]] || fail "tap: expected binding '$(nic tap expected binding)'"
# a hostile guest: malformed transmit chains first; DHCP works after them
for bin in "$VMLET" "$VMLET_SAN"; do
	[[ -x $bin ]] || continue
	pod timeout 120 "$bin" probe -f "$TMPD/tap.yaml" --tap default=vmtap0 --cmdline vmlet.hostile \
		--show-console >"$TMPD/hostile.txt" 2>&1 || fail "$bin: hostile probe failed"
	grep -qE '^hostileNic=00:[0-9a-f]{2}\.0 ok$' "$TMPD/hostile.txt" &&
		ok "$bin: hostile transmit chains survived" ||
		fail "$bin: $(grep '^hostileNic=' "$TMPD/hostile.txt")"
	grep -qE '^nic=.* 192\.168\.77\.50/24 192\.168\.77\.1 ok ok ' "$TMPD/hostile.txt" &&
		ok "$bin: DHCP, ARP and ping after the attacks" ||
		fail "$bin: after the attacks: $(grep '^nic=' "$TMPD/hostile.txt")"
done
kill "$dhcpd" 2>/dev/null
wait "$dhcpd" 2>/dev/null
dhcpd=
pod ip link del vmtap0

# ---- the pod: eth0 with an address and a default route to the node --------
pod ip link add eth0 type veth peer name node0
pod ip link set node0 netns "$NS-node"
pod ip link set eth0 address 0a:58:0a:c8:00:02
pod ip addr add 10.200.0.2/24 dev eth0
pod ip link set eth0 up
pod ip route add default via 10.200.0.1
node ip link set lo up
node ip addr add 10.200.0.1/24 dev node0
node ip link set node0 up
printf 'nameserver 10.200.0.53\nsearch pod.example\n' >"$TMPD/resolv.conf"

# ---- masquerade ------------------------------------------------------------
net_manifest masquerade >"$TMPD/masq.yaml"
probe masq VMLET_POD_INTERFACE=eth0 -- --cmdline vmlet.netping=10.200.0.1
matched masq
check masq dhcpAddress 10.0.2.2/24
check masq router 10.0.2.1
check masq arp true
check masq ping true
pod nft list table ip vmlet_default >/dev/null 2>&1 && ok "masq: nft table in the pod" ||
	fail "masq: no nft table in the pod namespace"

# ---- bridge (after masquerade: a fresh pod interface address) --------------
pod nft delete table ip vmlet_default 2>/dev/null
pod ip link del vt-default 2>/dev/null
net_manifest bridge >"$TMPD/bridge.yaml"
pinger "$NS-node" 10.200.0.2 &
pinger_pid=$!
probe bridge VMLET_POD_INTERFACE=eth0 -- --cmdline vmlet.netecho=2
stop_pinger
matched bridge
check bridge mac 0a:58:0a:c8:00:02
check bridge dhcpAddress 10.200.0.2/24
check bridge router 10.200.0.1
check bridge arp true
check bridge ping true
check_min bridge echoed 2
((pinged >= 1)) && ok "bridge: the node's pings answered ($pinged)" ||
	fail "bridge: no ping answered"

# ---- passt: a fresh pod address again (bridge moved it to the guest) --------
pod ip link del vb-default 2>/dev/null
pod ip link del vt-default 2>/dev/null
pod ip addr add 10.200.0.2/24 dev eth0 2>/dev/null
pod ip route replace default via 10.200.0.1
if command -v passt >/dev/null; then
	net_manifest passtBinding >"$TMPD/passt.yaml"
	probe passt
	matched passt
	check passt dhcpAddress 10.200.0.2/24
	check passt router 10.200.0.1
	check passt arp true
else
	echo "(no passt: passt case skipped)"
fi
finish
