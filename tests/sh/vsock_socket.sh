#!/usr/bin/env bash
# autoattachVSOCK's host side (docs/devices.md: vsock) in a sandboxed `vmlet
# run`: the Unix socket API_SOCKET.vsock.sock (mode 0600) next to
# --api-socket, or DIR/vsock.sock with --channel-dir, bound before the guest
# runs and removed after; `vmlet ctl status` names it with the guest's CID
# (the one `resolve -o config` derives); the connector process that opens
# the guest's connections is confined (its own seccomp filter, vmlet's
# user, no descriptor but its socket pair); the socket's I/O thread serves
# host clients under the sandbox (a bad CONNECT line is answered by a close).
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
tiny_guests 0
{
	vm_manifest vsk 64Mi Once
	printf '          autoattachVSOCK: true\n'
} >"$TMPD/vm.yaml"

start() { # SOCKET_PATH ARGS...: vmlet runs the tiny guest until the power button
	local s=$1
	shift
	"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode0.elf" --api-socket "$TMPD/api.sock" \
		--log-format text "$@" >"$TMPD/out" 2>"$TMPD/err" &
	PID=$!
	for _ in $(seq 600); do
		grep -q "tiny-guest: up" "$TMPD/out" && [[ -S $s ]] && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "vmlet did not start: $(tail -2 "$TMPD/err")"
	kill -KILL "$PID" 2>/dev/null
	return 1
}

stop() {
	"$VMLET" ctl "$TMPD/api.sock" power-button >/dev/null
	wait "$PID"
}

cid=$("$VMLET" resolve -f "$TMPD/vm.yaml" -o config | python3 -c 'import json,sys; print(json.load(sys.stdin)["vsockCID"])')
[[ $cid =~ ^[0-9]+$ ]] && ((cid >= 3)) && ok "resolve -o config: vsockCID $cid" || fail "vsockCID: $cid"

S=$TMPD/api.sock.vsock.sock
if start "$S"; then
	[[ $(stat -c %a "$S") == 600 ]] && ok "the vsock socket next to --api-socket, 0600" ||
		fail "socket: $(ls -l "$S")"
	st=$("$VMLET" ctl "$TMPD/api.sock" status)
	grep -q "\"vsock_cid\":$cid" <<<"$st" && grep -q "\"vsock_socket\":\"${S//\//\\\\/}\"" <<<"$st" &&
		ok "status: vsock_cid and vsock_socket" || fail "status: $st"
	# the connector: a process of vmlet's binary holding fds 0-3 only
	exe=$(readlink -f "$VMLET")
	conn=""
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/exe" 2>/dev/null) == "$exe" ]] || continue
		[[ $(ls "$p/fd" 2>/dev/null | sort -n | tr '\n' ' ') == "0 1 2 3 " ]] && conn=${p#/proc/}
	done
	if [[ -n $conn ]]; then
		grep -q '^Seccomp:[[:space:]]*2' "/proc/$conn/status" &&
			grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$conn/status" &&
			ok "the connector ($conn) runs under its own seccomp filter, no_new_privs" ||
			fail "connector: $(grep -E 'Seccomp|NoNewPrivs' "/proc/$conn/status")"
		if ((EUID == 0)); then
			[[ $(awk '/^Uid:/ {print $2}' "/proc/$conn/status") == 65534 ]] &&
				ok "the connector runs as vmlet's user (65534), not root" ||
				fail "connector uid: $(grep Uid "/proc/$conn/status")"
		fi
	else
		fail "no connector process found"
	fi
	python3 - "$S" <<'PY' && ok "a host client with a bad CONNECT line is closed (sandboxed I/O thread)" || fail "bad line not closed"
import socket, sys
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.settimeout(5)
c.connect(sys.argv[1])
c.sendall(b"HELLO 52\n")
assert c.recv(16) == b""
PY
	stop
	rc=$?
	((rc == 0)) && [[ ! -e $S ]] && ok "exit 0, the socket removed" || fail "exit $rc, $(ls -l "$S" 2>&1)"
	grep -q "vsock: 0 bytes to the guest, 0 from it" "$TMPD/err" &&
		ok "the run's end logs the vsock bytes" || fail "no vsock line: $(grep -i vsock "$TMPD/err")"
	for _ in $(seq 40); do
		[[ -n $conn && -e /proc/$conn ]] || break
		sleep 0.05
	done
	[[ -n $conn && ! -e /proc/$conn ]] && ok "the connector ended with vmlet" ||
		fail "connector $conn still there"
fi

mkdir -p "$TMPD/ch"
if start "$TMPD/ch/vsock.sock" --channel-dir "$TMPD/ch"; then
	grep -q "virtio-vsock: guest CID $cid, host socket $TMPD/ch/vsock.sock" "$TMPD/err" &&
		ok "--channel-dir: DIR/vsock.sock, logged" || fail "no vsock line: $(grep vsock "$TMPD/err")"
	stop
	[[ ! -e $TMPD/ch/vsock.sock ]] || fail "socket left in the channel dir"
fi
finish
