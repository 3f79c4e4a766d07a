#!/usr/bin/env bash
# `vmlet run` with network interfaces, inside a network namespace this test
# makes (unshare -n; a veth with an address and a default route stands in
# for the pod's eth0): an e1000 model is refused naming the interface; a
# masquerade interface outside a pod falls back to passt, which vmlet
# starts and which goes away with it; the same interface "in a pod"
# (VMLET_POD_INTERFACE) gets its tap and nftables table. The guest is the
# tiny PVH guest that powers off on the ACPI power button.
# Skips until `vmlet run` creates NICs, and without root/netns/KVM.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
[[ $(id -u) == 0 ]] || skip "needs root for network namespaces"
command -v as >/dev/null && command -v ld >/dev/null || skip "no binutils"
unshare -n true 2>/dev/null || skip "no network namespaces"
VMLET=$(realpath "$VMLET")

as --64 --defsym MODE=0 -o "$TMPD/g.o" tests/data/vmm_tiny_guest.S &&
	ld -m elf_x86_64 -static -nostdlib -T tests/data/vmm_tiny_guest.ld -o "$TMPD/g.elf" "$TMPD/g.o" ||
	skip "cannot build the tiny guest"

source tests/data/net_manifest.sh
net_manifest masquerade "model: e1000" "ports: [{port: 8080}]" >"$TMPD/e1000.yaml"
net_manifest masquerade "model: virtio" "ports: [{port: 8080}]" >"$TMPD/virtio.yaml"

# Everything below runs in the private namespace.
cat >"$TMPD/inner.sh" <<'EOS'
set -u
ip link set lo up
ip link add eth0 type veth peer name node0
ip addr add 10.200.0.2/24 dev eth0
ip link set eth0 up; ip link set node0 up
ip route add default via 10.200.0.1
JAILARGS=()
run() { # LOG ARGS... : start vmlet with the tiny guest in the background
	local log=$1; shift
	env "$@" "$VMLET" run -f "$YAML" --kernel "$GUEST" --console none --log-format text \
		--grace-period 2 "${JAILARGS[@]}" 2>"$log" &
	PID=$!
}
wait_log() { # LOG PATTERN (generous: a loaded host)
	for _ in $(seq 300); do grep -q "$2" "$1" && return 0; sleep 0.1; done; return 1
}
stop() { kill -TERM "$PID"; wait "$PID"; }
# our passt: the forwarded port in its arguments, in this network namespace
# (Debian's passt re-executes itself as passt.avx2: match the arguments;
# another test run's passt elsewhere on the host does not count)
passt_here() {
	local p
	for p in $(pgrep -f -- "-1 -F 3 .*-t 8080"); do
		[[ $(readlink /proc/$p/ns/net) == "$(readlink /proc/$$/ns/net)" ]] && return 0
	done
	return 1
}

YAML=$TMPD/e1000.yaml
timeout -s INT 30 "$VMLET" run -f "$YAML" --kernel "$GUEST" --console none --log-format text \
	--grace-period 1 2>"$TMPD/e1000.err"
echo "e1000 rc=$?"
# (refused before anything starts: docs/fields.md, the interface's path)
grep -q 'spec.template.spec.domain.devices.interfaces\[0\].model: model "e1000" is not supported' \
	"$TMPD/e1000.err" && echo "e1000 named"

YAML=$TMPD/virtio.yaml
run "$TMPD/passt.err" VMLET_NONE=1
if wait_log "$TMPD/passt.err" "interface 'default': passt"; then
	echo "passt fallback"
	for _ in $(seq 100); do passt_here && break; sleep 0.1; done
	passt_here && echo "passt running"
	stop; echo "passt-vm rc=$?"
	for _ in $(seq 200); do passt_here || break; sleep 0.1; done
	passt_here || echo "passt gone"
else
	stop
fi

run "$TMPD/masq.err" VMLET_POD_INTERFACE=eth0
if wait_log "$TMPD/masq.err" "masquerade binding"; then
	nft list table ip vmlet_default 2>/dev/null | grep -q "tcp dport 8080 dnat to 10.0.2.2" && echo "nft table"
	ip -4 addr show dev vt-default | grep -q "10.0.2.1/24" && echo "tap gateway"
fi
stop; echo "masq-vm rc=$?"

# --jail: the worker moves into a network namespace of its own after setup;
# the tap, created in setup, stays in this one
mkdir -p "$TMPD/jail"
JAILARGS=(--jail "$TMPD/jail")
run "$TMPD/jmasq.err" VMLET_POD_INTERFACE=eth0
if wait_log "$TMPD/jmasq.err" "jail: confined to"; then
	ip -4 addr show dev vt-default | grep -q "10.0.2.1/24" && echo "jail tap gateway"
fi
stop; echo "jail masq-vm rc=$?"
EOS

out=$(VMLET=$VMLET TMPD=$TMPD GUEST=$TMPD/g.elf timeout 180 unshare -n bash "$TMPD/inner.sh" 2>&1)
echo "$out"
if ! grep -q "rc=" <<<"$out"; then fail "inner script did not run"; finish; fi
for want in "e1000 rc=1" "e1000 named" "passt fallback" "passt running" "passt-vm rc=0" \
	"passt gone" "nft table" "tap gateway" "masq-vm rc=0" "jail tap gateway" \
	"jail masq-vm rc=0"; do
	if grep -qx "$want" <<<"$out"; then ok "$want"; else fail "$want"; fi
done
finish
