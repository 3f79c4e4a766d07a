#!/usr/bin/env bash
# The guest-agent channel's host socket (docs/devices.md: Guest-agent channel): a
# sandboxed `vmlet run` binds API_SOCKET.org.qemu.guest_agent.0 (mode 0600)
# next to --api-socket, or DIR/NAME with --channel-dir, before the guest
# runs, and removes it after; `vmlet ctl metrics` shows the channel's
# state and byte counts; a stale socket there is replaced, and a file
# or symlink planted at the path stops the start without being touched.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
tiny_guests 0
AGENT=org.qemu.guest_agent.0
vm_manifest chan 64Mi Once >"$TMPD/vm.yaml"

start() { # SOCKET_PATH ARGS...: vmlet runs the tiny guest until the power button
	local s=$1; shift
	: >"$TMPD/out"
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

stop() { # the guest powers off: exit 0
	"$VMLET" ctl "$TMPD/api.sock" power-button >/dev/null
	wait "$PID"
}

mode() { stat -c %a "$1"; }

# next to the control socket, sandboxed (--seccomp=kill is the default)
S=$TMPD/api.sock.$AGENT
if start "$S"; then
	[[ -S $S && $(mode "$S") == 600 ]] && ok "the agent's socket next to --api-socket, 0600" ||
		fail "socket $S: $(ls -l "$S" 2>&1)"
	python3 - "$S" <<'PY' && ok "a host client connects" || fail "connect to $S"
import socket, sys
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(sys.argv[1])
c.close()
PY
	# the metrics: this guest has no virtio driver, so nothing is open yet
	m=$("$VMLET" ctl "$TMPD/api.sock" metrics)
	want='vmlet_channel_guest_open{channel="org.qemu.guest_agent.0"} 0
vmlet_channel_host_connected{channel="org.qemu.guest_agent.0"} 0
vmlet_channel_rx_bytes_total{channel="org.qemu.guest_agent.0"} 0
vmlet_channel_tx_bytes_total{channel="org.qemu.guest_agent.0"} 0'
	[[ $(grep '^vmlet_channel' <<<"$m" | sort) == "$want" ]] &&
		ok "metrics: the channel's state and bytes (agent not connected)" ||
		fail "channel metrics: $(grep vmlet_channel <<<"$m")"
	"$VMLET" ctl "$TMPD/api.sock" status | grep -q '"agent_connected":false' &&
		ok "status: agent_connected false" || fail "status: $("$VMLET" ctl "$TMPD/api.sock" status)"
	stop
	rc=$?
	((rc == 0)) && [[ ! -e $S ]] && ok "after the run (exit 0) the socket is gone" ||
		fail "exit $rc, $(ls -l "$S" 2>&1)"
	grep -q "channel '$AGENT': 0 bytes to the guest, 0 from it" "$TMPD/err" &&
		ok "the run's end logs the channel's bytes" || fail "no channel line: $(grep -i "channel\|interface '" "$TMPD/err")"
fi

# --channel-dir: a stale socket is replaced
mkdir -p "$TMPD/ch"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TMPD/ch/$AGENT"
if start "$TMPD/ch/$AGENT" --channel-dir "$TMPD/ch"; then
	grep -q "port '$AGENT' on $TMPD/ch/$AGENT" "$TMPD/err" &&
		ok "--channel-dir: the stale socket replaced" || fail "no port line: $(tail -3 "$TMPD/err")"
	stop
	[[ ! -e $TMPD/ch/$AGENT ]] || fail "socket left in the channel dir"
fi

# a symlink planted at the path (to a file of the user's): refused, untouched
echo precious >"$TMPD/target"
ln -s "$TMPD/target" "$TMPD/ch/$AGENT"
"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode0.elf" --channel-dir "$TMPD/ch" \
	--log-format text >/dev/null 2>"$TMPD/err"
rc=$?
[[ $rc == 1 && -L $TMPD/ch/$AGENT && $(cat "$TMPD/target") == precious ]] &&
	grep -q "exists and is not a socket" "$TMPD/err" &&
	ok "a symlink at the socket path: the start fails (exit 1), nothing touched" ||
	fail "symlink: exit $rc, $(tail -2 "$TMPD/err"), $(ls -l "$TMPD/ch")"
finish
