#!/usr/bin/env bash
# vmlet run --jail DIR (vmm/sandbox/jail.h): the guest's worker is PID 1 of new
# PID, mount and IPC namespaces and has a network namespace of its own (a
# host abstract unix socket is out of reach); its filesystem is DIR only, read-only; no
# core dumps and a bounded number of open files; still confined by seccomp
# with no capabilities; the guest runs, is reachable over the control
# socket, powers off on SIGTERM (a signal into the namespace's init); each
# restart gets a new jail; cgroup v2 limits are set or skipped with a
# reason (this machine may only have cgroup v1); bad --jail values are
# usage errors.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ $(id -u) == 0 ]] || skip "--jail needs root (namespaces, pivot_root)"
"$VMLET" run --help 2>&1 | grep -q -- '--jail' || skip "vmlet run has no --jail yet"
unshare -m -p -i -f true 2>/dev/null || skip "cannot create namespaces here"
tiny_guests 0 2
JAIL=$TMPD/jail
mkdir "$JAIL" && touch "$JAIL/MARKER"
SOCK=$TMPD/api.sock
field() { sed -n "s/^$2:[[:space:]]*//p" "$1"; }

"$VMLET" run --kernel "$TMPD/mode0.elf" --jail "$JAIL" --api-socket "$SOCK" --log-format text \
	>"$TMPD/out" 2>"$TMPD/err" &
PID=$!
# (generous: a loaded host can take seconds to start a VM)
for _ in $(seq 600); do
	grep -q "tiny-guest: up" "$TMPD/out" && [[ -S $SOCK ]] && break
	kill -0 $PID 2>/dev/null || break
	sleep 0.05
done
W=$(pgrep -P $PID | head -1)
if [[ -z $W ]]; then
	fail "no worker: $(tail -3 "$TMPD/err")"
	finish
fi
[[ $(field /proc/$W/status NSpid) =~ ^$W[[:space:]]+1$ ]] && ok "worker is PID 1 of its namespace" ||
	fail "NSpid: $(field /proc/$W/status NSpid)"
for ns in mnt pid ipc net; do
	[[ $(readlink /proc/$W/ns/$ns) != "$(readlink /proc/$PID/ns/$ns)" ]] && ok "own $ns namespace" ||
		fail "$ns namespace shared with the supervisor"
done
[[ $(ls /proc/$W/root/) == MARKER ]] && ok "its filesystem is the jail directory" ||
	fail "root has: $(ls /proc/$W/root/ | head -5 | tr '\n' ' ')"
touch /proc/$W/root/written 2>/dev/null && fail "jail root is writable" || ok "jail root is read-only"
[[ ! -e $JAIL/written ]] || fail "a file appeared in the jail"
grep -q "^Max core file size *0 *0 " /proc/$W/limits && ok "no core dumps" || fail "core limit"
nofile=$(awk '/^Max open files/ {print $5}' /proc/$W/limits)
((nofile <= 4096)) && ok "open files limited ($nofile)" || fail "open files limit $nofile"
[[ $(field /proc/$W/status Seccomp) == 2 && $(field /proc/$W/status CapEff) == 0000000000000000 ]] &&
	ok "still seccomp-confined, no capabilities" || fail "sandbox: $(grep -E 'Seccomp|CapEff' /proc/$W/status)"
"$VMLET" ctl "$SOCK" status | grep -q '"state":"Running"' && ok "control socket answers" || fail "ctl status"
if grep -q "jail: cgroup .*: cpu.max 100000 100000, memory.max" "$TMPD/err"; then
	ok "cgroup v2 limits set: $(grep -o 'cpu.max.*' "$TMPD/err")"
	cg=$(sed -n 's/^0:://p' /proc/$W/cgroup)
	[[ $(cat "/sys/fs/cgroup$cg/cpu.max") == "100000 100000" ]] && ok "worker's cgroup has cpu.max" ||
		fail "worker cgroup $cg: cpu.max $(cat "/sys/fs/cgroup$cg/cpu.max")"
elif grep -q "jail: no cgroup limits: " "$TMPD/err"; then
	ok "cgroup limits skipped: $(grep -o 'no cgroup limits: .*' "$TMPD/err")"
else
	fail "no cgroup line"
fi
kill -TERM $PID
timeout 60 tail --pid=$PID -f /dev/null
kill -KILL $PID 2>/dev/null
wait $PID
rc=$?
[[ $rc == 0 ]] && ok "SIGTERM: power button reached the jailed guest, exit 0" || fail "exit $rc"
[[ ! -e $SOCK ]] && ok "socket removed" || fail "socket left behind"

# a host daemon's abstract unix socket is out of the jail's reach: the main
# thread's test hook connects to @vmlet-test-hook (seccomp=log lets the
# calls through, so only the network namespace stands in the way); the
# listener counts the connections it got
python3 - "$TMPD/accepted" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0vmlet-test-hook")
s.listen(4)
s.settimeout(60)
n = 0
open(sys.argv[1], "w").write("ready\n")
try:
    while True:
        c, _ = s.accept()
        n += 1
        open(sys.argv[1], "w").write("%d\n" % n)
        c.close()
except socket.timeout:
    pass
PY
LPID=$!
for _ in $(seq 200); do [[ -s $TMPD/accepted ]] && break; sleep 0.05; done
VMLET_TEST_FORBIDDEN=main:unix-connect "$VMLET" run --kernel "$TMPD/mode0.elf" --jail "$JAIL" \
	--seccomp=log --grace-period 0 --log-format text >"$TMPD/out2" 2>"$TMPD/err2" &
PID2=$!
wait_log "$TMPD/err2" "survived 'unix-connect'" 300 || fail "no hook line: $(tail -2 "$TMPD/err2")"
kill -TERM $PID2
wait $PID2
kill $LPID 2>/dev/null
wait $LPID 2>/dev/null
grep -q "survived 'unix-connect' (-1)" "$TMPD/err2" && [[ $(cat "$TMPD/accepted") == ready ]] &&
	ok "host abstract socket unreachable from the jail" ||
	fail "jail reached @vmlet-test-hook: $(grep -o "survived.*" "$TMPD/err2"), listener: $(cat "$TMPD/accepted")"

# each restart is a new jail
# (stopped during the second restart's 2 s backoff; a SIGTERM that came
# later, on a loaded host, met a third run: once more)
vm_manifest j 64Mi RerunOnFailure >"$TMPD/vm.yaml"
for try in 1 2 3; do
	rm -f "$TMPD/out" "$TMPD/err"
	"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode2.elf" --jail "$JAIL" --log-format text \
		>"$TMPD/out" 2>"$TMPD/err" &
	PID=$!
	wait_log "$TMPD/err" "restart 2 in" 300 || fail "no second restart: $(tail -2 "$TMPD/err")"
	kill -TERM $PID && wait $PID
	rc=$?
	n=$(grep -c "jail: confined to" "$TMPD/err")
	((n > 2)) || break
	echo "note: the SIGTERM came after the 2 s backoff: again"
done
[[ $rc == 0 && $n == 2 ]] && ok "reboots restarted in a new jail each ($n runs), exit 0" ||
	{ fail "restarts in the jail: exit $rc, $n jails"; tail -3 "$TMPD/err"; }

for bad in relative/dir / "$TMPD/missing"; do
	"$VMLET" run --kernel "$TMPD/mode0.elf" --jail "$bad" >/dev/null 2>&1
	[[ $? == 2 ]] && ok "--jail '$bad': usage error" || fail "--jail '$bad' accepted"
done
finish
