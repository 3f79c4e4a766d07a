#!/usr/bin/env bash
# `vmlet ctl SOCKET guest-info` against stand-in guest agents on the
# channel socket SOCKET.org.qemu.guest_agent.0 (QEMU's guest-agent
# protocol, as qemu-ga answers it): stale bytes before the handshake are
# skipped (guest-sync-delimited, 0xFF sentinels), each query's "return"
# lands under its key and an error answer is kept as such; an agent that
# never answers times out (exit 1), one that floods a never-ending answer
# is cut off at the reply cap (exit 1), one whose answers are not UTF-8
# is no answer (exit 1: its bytes never reach the output), no socket is
# exit 1. The agent is
# untrusted: none of them hangs or crashes the client.
source "$(dirname "$0")/../lib/sh.sh"
SOCK=$TMPD/api.sock
CH=$SOCK.org.qemu.guest_agent.0

agent() { # MODE: serve one client on $CH
	rm -f "$CH"
	python3 - "$CH" "$1" 2>/dev/null <<'PY' &
import json, os, socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path + ".new")  # listening before the name the test waits for exists
s.listen(1)
os.rename(path + ".new", path)
c, _ = s.accept()
if mode == "silent":
    time.sleep(30)
    sys.exit(0)
if mode == "badutf8":  # answers every request with a string that is not UTF-8
    buf = b""
    while True:
        d = c.recv(4096)
        if not d:
            break
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            line = line.lstrip(b"\xff")
            if not line:
                continue
            req = json.loads(line)
            if req["execute"] == "guest-sync-delimited":
                c.sendall(b"\xff" + json.dumps({"return": req["arguments"]["id"]}).encode() + b"\n")
            else:
                c.sendall(b'{"return": {"host-name": "l2\xfe\xc0\xafguest"}}\n')
    sys.exit(0)
if mode == "flood":
    c.sendall(b'{"return": "' + b"a" * (2 << 20))
    time.sleep(30)
    sys.exit(0)
# a good agent, with stale answers of an earlier client in the channel
c.sendall(b'{"return": 12345}\n{"return": {"trunc')
answers = {
    "guest-info": {"version": "7.2.0", "supported_commands": []},
    "guest-get-osinfo": {"id": "debian", "kernel-release": "6.1.0-test"},
    "guest-get-host-name": {"host-name": "l2guest"},
    "guest-network-get-interfaces": [{"name": "lo", "ip-addresses": [
        {"ip-address-type": "ipv4", "ip-address": "127.0.0.1", "prefix": 8}]}],
    "guest-get-fsinfo": [{"name": "vda1", "mountpoint": "/", "type": "ext4"}],
}
buf = b""
while True:
    d = c.recv(4096)
    if not d:
        break
    buf += d
    while True:
        if buf.startswith(b"\xff"):  # the client resets our parser
            buf = buf[1:]
            continue
        nl = buf.find(b"\n")
        if nl < 0:
            break
        req, buf = json.loads(buf[:nl]), buf[nl + 1:]
        cmd = req["execute"]
        if cmd == "guest-sync-delimited":
            c.sendall(b'{"return": 1}\n\xff' + json.dumps({"return": req["arguments"]["id"]}).encode() + b"\n")
        elif cmd in answers:
            c.sendall(json.dumps({"return": answers[cmd]}).encode() + b"\n")
        else:
            c.sendall(json.dumps({"error": {"class": "GenericError", "desc": "not here"}}).encode() + b"\n")
PY
	APID=$!
	for _ in $(seq 100); do [[ -S $CH ]] && return; sleep 0.05; done
}

agent good
out=$("$VMLET" ctl "$SOCK" guest-info 2>"$TMPD/err")
rc=$?
python3 - "$out" <<'PY' && ((rc == 0)) && ok "guest-info: handshake past stale bytes, every query answered" ||
import json, sys
o = json.loads(sys.argv[1])
assert o["agent"]["version"] == "7.2.0", o
assert o["os"]["id"] == "debian" and o["os"]["kernel-release"] == "6.1.0-test", o
assert o["hostname"]["host-name"] == "l2guest", o
assert o["interfaces"][0]["ip-addresses"][0]["ip-address"] == "127.0.0.1", o
assert o["filesystems"][0]["mountpoint"] == "/", o
assert o["users"]["error"]["class"] == "GenericError", o
PY
	fail "guest-info (exit $rc): $out $(cat "$TMPD/err")"
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null

agent good
out=$("$VMLET" ctl -o text "$CH" guest-info 2>"$TMPD/err")
grep -q '^hostname: {"host-name":"l2guest"}' <<<"$out" && ok "guest-info on the channel path itself, -o text" ||
	fail "-o text: $out $(cat "$TMPD/err")"
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null

agent silent
"$VMLET" ctl "$SOCK" guest-info >/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q "did not answer in time" "$TMPD/err" && ok "a silent agent: timed out, exit 1" ||
	fail "silent agent: exit $rc, $(cat "$TMPD/err")"
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null

agent flood
"$VMLET" ctl "$SOCK" guest-info >/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q "too long" "$TMPD/err" && ok "an endless answer: cut off at the cap, exit 1" ||
	fail "flooding agent: exit $rc, $(cat "$TMPD/err")"
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null

agent badutf8
out=$("$VMLET" ctl "$SOCK" guest-info 2>"$TMPD/err")
rc=$?
if ((rc == 1)) && ! grep -q guest <<<"$out"; then
	ok "an agent answering with bytes that are not UTF-8: no answer, exit 1"
else
	fail "non-UTF-8 agent: exit $rc, $(od -c <<<"$out" | head -3) $(cat "$TMPD/err")"
fi
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null

rm -f "$CH"
"$VMLET" ctl "$SOCK" guest-info >/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && ok "no agent socket: exit 1 ($(cat "$TMPD/err"))" || fail "no socket: exit $rc"
finish
