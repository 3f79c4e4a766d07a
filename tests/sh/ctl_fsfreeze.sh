#!/usr/bin/env bash
# `vmlet ctl SOCKET fsfreeze|fsthaw|fsfreeze-status` against stand-in guest
# agents on SOCKET.org.qemu.guest_agent.0 (vmm/ctl/agent.h): a good agent
# freezes (its count printed), says frozen, thaws; an agent that refuses
# has its error printed with its control bytes (a terminal escape) made
# harmless, exit 1; answers of the wrong shape (a string for a count, an
# unknown freeze state) are refused, exit 1; a silent agent times out; a
# control socket that says no agent is connected gets that said (not the
# agent's timeout).
source "$(dirname "$0")/../lib/sh.sh"
SOCK=$TMPD/api.sock
CH=$SOCK.org.qemu.guest_agent.0

agent() { # MODE: serve clients on $CH until killed
	rm -f "$CH"
	python3 - "$CH" "$1" 2>/dev/null <<'PY' &
import json, os, socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path + ".new")  # listening before the name the test waits for exists
s.listen(1)
os.rename(path + ".new", path)
state = "thawed"
while True:
    c, _ = s.accept()
    if mode == "silent":
        time.sleep(30)
        sys.exit(0)
    buf = b""
    while True:
        try:
            d = c.recv(4096)
        except OSError:
            d = b""
        if not d:
            break
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            line = line.lstrip(b"\xff")
            if not line:
                continue
            req = json.loads(line)
            cmd = req["execute"]
            if cmd == "guest-sync-delimited":
                ans = {"return": req["arguments"]["id"]}
                c.sendall(b"\xff" + json.dumps(ans).encode() + b"\n")
                continue
            if mode == "refuse":
                ans = {"error": {"class": "GenericError",
                                 "desc": "freeze failed\x1b]0;owned\x07 here"}}
            elif mode == "shape":
                ans = {"return": "melted" if cmd == "guest-fsfreeze-status" else "lots"}
            elif cmd == "guest-fsfreeze-freeze":
                state, ans = "frozen", {"return": 2}
            elif cmd == "guest-fsfreeze-thaw":
                n = 2 if state == "frozen" else 0
                state, ans = "thawed", {"return": n}
            elif cmd == "guest-fsfreeze-status":
                ans = {"return": state}
            else:
                ans = {"error": {"class": "CommandNotFound", "desc": cmd}}
            try:
                c.sendall(json.dumps(ans).encode() + b"\n")
            except OSError:
                pass
    c.close()
PY
	APID=$!
	for _ in $(seq 100); do [[ -S $CH ]] && return; sleep 0.05; done
}
stop_agent() { kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null; }

agent good
a= b= c= d=
a=$("$VMLET" ctl "$SOCK" fsfreeze 2>&1) &&
	b=$("$VMLET" ctl "$SOCK" fsfreeze-status 2>&1) &&
	c=$("$VMLET" ctl -o text "$CH" fsthaw 2>&1) &&
	d=$("$VMLET" ctl -o text "$SOCK" fsfreeze-status 2>&1)
[[ $a == '{"ok":true,"filesystems":2}' && $b == '{"ok":true,"status":"frozen"}' &&
	$c == 'filesystems: 2' && $d == 'status: thawed' ]] &&
	ok "freeze (2 filesystems), status frozen, thaw, status thawed" ||
	fail "good agent: '$a' '$b' '$c' '$d'"
stop_agent

agent refuse
"$VMLET" ctl "$SOCK" fsfreeze >"$TMPD/out" 2>"$TMPD/err"
rc=$?
if ((rc == 1)) && grep -q 'GenericError: freeze failed?]0;owned? here' "$TMPD/err" &&
	! grep -q $'\x1b' "$TMPD/err"; then
	ok "a refusing agent: its error printed without its control bytes, exit 1"
else
	fail "refusing agent: exit $rc, $(od -c "$TMPD/err" | head -5)"
fi
stop_agent

agent shape
"$VMLET" ctl "$SOCK" fsfreeze >/dev/null 2>"$TMPD/err"
rc1=$?
"$VMLET" ctl "$SOCK" fsfreeze-status >"$TMPD/out" 2>>"$TMPD/err"
rc2=$?
((rc1 == 1 && rc2 == 1)) && [[ $(grep -c "wrong shape" "$TMPD/err") == 2 && ! -s $TMPD/out ]] &&
	ok "answers of the wrong shape (a string count, state 'melted'): refused, exit 1" ||
	fail "wrong shapes: exit $rc1/$rc2, $(cat "$TMPD/err" "$TMPD/out")"
stop_agent

agent silent
"$VMLET" ctl "$SOCK" fsthaw >/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q "did not answer in time" "$TMPD/err" && ok "a silent agent: timed out, exit 1" ||
	fail "silent agent: exit $rc, $(cat "$TMPD/err")"
stop_agent

# a control socket whose VM says the guest has no agent running
python3 - "$SOCK" 2>/dev/null <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1] + ".new")  # listening before the name the test waits for exists
s.listen(4)
os.rename(sys.argv[1] + ".new", sys.argv[1])
while True:
    c, _ = s.accept()
    c.recv(1024)
    c.sendall(b'{"ok":true,"state":"Running","agent_connected":false}\n')
    c.close()
PY
SPID=$!
for _ in $(seq 100); do [[ -S $SOCK ]] && break; sleep 0.05; done
agent silent
"$VMLET" ctl "$SOCK" fsfreeze >/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q "no guest agent is connected" "$TMPD/err" &&
	ok "no agent connected (the VM's status says so): said so, exit 1" ||
	fail "no agent connected: exit $rc, $(cat "$TMPD/err")"
stop_agent
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null

rm -f "$CH"
"$VMLET" ctl "$SOCK.none" fsfreeze-status >/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q "no guest-agent channel there" "$TMPD/err" && ok "no channel socket: exit 1" ||
	fail "no socket: exit $rc, $(cat "$TMPD/err")"
finish
