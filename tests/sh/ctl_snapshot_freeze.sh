#!/usr/bin/env bash
# `vmlet ctl SOCKET snapshot DIR` freezes the guest's filesystems through
# the guest agent (vmm/ctl/client.c, docs/snapshot.md: Filesystem freeze),
# against a stand-in control socket (its status says whether an agent is
# connected; it answers the snapshot ok or with an error) and a stand-in
# agent on SOCKET.org.qemu.guest_agent.0. Both write what they are asked
# into one log, in order: with an agent, guest-fsfreeze-freeze comes before
# the snapshot and guest-fsfreeze-thaw after it, also when vmlet refuses
# the snapshot; an agent that refuses to freeze gets no snapshot taken but
# a thaw all the same; --no-freeze, no agent connected and a paused guest
# take the snapshot without asking the agent, and the output says so; a
# channel gone at the thaw is expected after --stop (the answer says the
# snapshot holds the guest frozen) and an error after --resume.
source "$(dirname "$0")/../lib/sh.sh"
SOCK=$TMPD/api.sock
CH=$SOCK.org.qemu.guest_agent.0
LOG=$TMPD/log

agent() { # MODE (good|refuse|vanish: the channel goes after the freeze): serve clients on $CH until killed
	rm -f "$CH"
	python3 - "$CH" "$1" "$LOG" 2>/dev/null <<'PY' &
import json, os, socket, sys
path, mode, log = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path + ".new")  # listening before the name the test waits for exists
s.listen(1)
os.rename(path + ".new", path)
state = "thawed"
while True:
    c, _ = s.accept()
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
            with open(log, "a") as f:
                f.write(cmd + "\n")
            if mode == "refuse" and cmd == "guest-fsfreeze-freeze":
                ans = {"error": {"class": "GenericError", "desc": "cannot freeze"}}
            elif cmd == "guest-fsfreeze-freeze":
                state, ans = "frozen", {"return": 2}
            elif cmd == "guest-fsfreeze-thaw":
                n = 2 if state == "frozen" else 0
                state, ans = "thawed", {"return": n}
            else:
                ans = {"error": {"class": "CommandNotFound", "desc": cmd}}
            try:
                c.sendall(json.dumps(ans).encode() + b"\n")
            except OSError:
                pass
            if mode == "vanish" and cmd == "guest-fsfreeze-freeze":
                import os
                os.unlink(path)
                sys.exit(0)
    c.close()
PY
	APID=$!
	for _ in $(seq 100); do [[ -S $CH ]] && return; sleep 0.05; done
}
stop_agent() { kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null; }

vm() { # CONNECTED STATE SNAPSHOT-ANSWER (ok|fail): a stand-in control socket
	rm -f "$SOCK"
	python3 - "$SOCK" "$1" "$2" "$3" "$LOG" 2>/dev/null <<'PY' &
import json, os, socket, sys
path, conn, state, snap, log = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path + ".new")  # listening before the name the test waits for exists
s.listen(4)
os.rename(path + ".new", path)
while True:
    c, _ = s.accept()
    msg, _, _, _ = c.recvmsg(4096, socket.CMSG_SPACE(16))
    req = json.loads(msg.split(b"\n")[0])
    if req["verb"] == "snapshot":
        with open(log, "a") as f:
            f.write("snapshot\n")
        ans = {"ok": True} if snap == "ok" else {"ok": False, "error": "no room"}
    else:
        ans = {"ok": True, "state": state, "agent_connected": conn == "true"}
    c.sendall(json.dumps(ans).encode() + b"\n")
    c.close()
PY
	VPID=$!
	for _ in $(seq 100); do [[ -S $SOCK ]] && return; sleep 0.05; done
}
stop_vm() { kill "$VPID" 2>/dev/null; wait "$VPID" 2>/dev/null; }
order() { tr '\n' ' ' <"$LOG" 2>/dev/null; }

# snap NAME ARGS...: run the snapshot into $TMPD/NAME; sets out, rc, got
snap() {
	local d=$TMPD/$1
	shift
	: >"$LOG"
	out=$("$VMLET" ctl "$SOCK" snapshot "$d" "$@" 2>"$TMPD/err")
	rc=$?
	got=$(order)
}

vm true Running ok
agent good
snap s1
((rc == 0)) && [[ $got == "guest-fsfreeze-freeze snapshot guest-fsfreeze-thaw " &&
	$out == '{"ok":true,"frozen":true,"freeze":"frozen (2 filesystems), thawed"}' &&
	-f $TMPD/s1/state ]] && ok "agent connected: frozen, snapshot, thawed; the output says frozen" ||
	fail "frozen snapshot: exit $rc, order '$got', out '$out', $(cat "$TMPD/err")"

: >"$LOG"
out=$("$VMLET" ctl -o text "$SOCK" snapshot "$TMPD/s2" --stop 2>"$TMPD/err")
rc=$?
((rc == 0)) && [[ $(order) == "guest-fsfreeze-freeze snapshot guest-fsfreeze-thaw " &&
	$out == 'freeze: frozen (2 filesystems), thawed' ]] && ok "--stop, -o text: the same" ||
	fail "--stop text: exit $rc, order '$(order)', out '$out', $(cat "$TMPD/err")"

snap s3 --no-freeze
((rc == 0)) && [[ $got == "snapshot " &&
	$out == '{"ok":true,"frozen":false,"freeze":"not frozen (--no-freeze)"}' ]] &&
	ok "--no-freeze: the agent is not asked" ||
	fail "--no-freeze: exit $rc, order '$got', out '$out', $(cat "$TMPD/err")"
stop_vm

vm true Running fail
snap s4 --resume
((rc == 1)) && [[ $got == "guest-fsfreeze-freeze snapshot guest-fsfreeze-thaw " &&
	! -e $TMPD/s4/state ]] && grep -q "no room" "$TMPD/err" &&
	ok "vmlet refuses the snapshot: thawed all the same, exit 1" ||
	fail "failed snapshot: exit $rc, order '$got', $(cat "$TMPD/err")"
stop_vm
stop_agent

vm true Running ok
agent refuse
snap s5
((rc == 1)) && [[ $got == "guest-fsfreeze-freeze guest-fsfreeze-thaw " && ! -e $TMPD/s5/state ]] &&
	grep -q "GenericError: cannot freeze" "$TMPD/err" &&
	ok "the agent refuses to freeze: no snapshot, a thaw all the same, exit 1" ||
	fail "refused freeze: exit $rc, order '$got', $(cat "$TMPD/err")"
stop_vm
stop_agent

agent good
vm false Running ok
snap s6
((rc == 0)) && [[ $got == "snapshot " &&
	$out == '{"ok":true,"frozen":false,"freeze":"not frozen (no agent)"}' ]] &&
	ok "no agent connected: snapshot as before, 'not frozen (no agent)'" ||
	fail "no agent: exit $rc, order '$got', out '$out', $(cat "$TMPD/err")"
stop_vm

vm true Paused ok
snap s7
((rc == 0)) && [[ $got == "snapshot " && $out == *'"not frozen (paused)"'* ]] &&
	ok "a paused guest (its agent cannot answer): not frozen (paused)" ||
	fail "paused: exit $rc, order '$got', out '$out', $(cat "$TMPD/err")"
stop_vm
stop_agent

# the channel gone after the freeze (vmlet ended): expected after --stop
vm true Running ok
agent vanish
snap s9 --stop
((rc == 0)) && [[ $out == *'"frozen (2 filesystems), the snapshot holds it frozen: thaw it once restored"'* ]] &&
	ok "--stop, the channel gone at the thaw: exit 0, the answer says the snapshot holds it frozen" ||
	fail "vanish --stop: exit $rc, out '$out', $(cat "$TMPD/err")"
stop_agent
agent vanish
snap s10 --resume
((rc == 1)) && grep -q "the guest may still be frozen" "$TMPD/err" &&
	ok "--resume, the thaw fails: exit 1, 'the guest may still be frozen'" ||
	fail "vanish --resume: exit $rc, out '$out', $(cat "$TMPD/err")"
stop_agent
stop_vm

"$VMLET" ctl "$SOCK" snapshot "$TMPD/s8" --freeze >/dev/null 2>&1
rc=$?
((rc == 2)) && ok "an unknown option: usage, exit 2" || fail "unknown option: exit $rc"
finish
