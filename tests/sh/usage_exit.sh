#!/usr/bin/env bash
# Every usage error exits 2, as the README's "Exit statuses" says, for each
# command (issue 28, finding 10): unknown options and commands, missing
# and malformed option values, extra arguments, options that exclude each
# other. --smp, --memory, --grace-period, --tap's name and --firmware with
# --kernel were checked only after the manifests were resolved and exited 1.
# Nothing here may start a guest: each case ends at the command line.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
M=examples/vm

want2() { # ARGS...: vmlet ARGS exits 2 with a message on stderr
	local rc
	timeout 20 "$VMLET" "$@" >/dev/null 2>"$TMPD/err" </dev/null
	rc=$?
	if [[ $rc == 2 && -s $TMPD/err ]]; then
		ok "vmlet $*: 2"
	else
		fail "vmlet $*: exit $rc, want 2 ($(head -c 160 "$TMPD/err"))"
	fi
}

want2
want2 bogus-command
for cmd in resolve run probe; do
	want2 "$cmd" --bogus
	want2 "$cmd" -f "$M" extra-argument
	want2 "$cmd" -f
	want2 "$cmd" --vm
	want2 "$cmd" -f "$M" --volume noequals
done
want2 resolve -f "$M" -o bogus
want2 resolve -f "$M" -o
want2 resolve -f "$M" --bench x
for cmd in run probe; do
	want2 "$cmd" -f "$M" --smp x
	want2 "$cmd" -f "$M" --smp 0,1,1
	want2 "$cmd" -f "$M" --memory x
	want2 "$cmd" -f "$M" --memory 1Mi
	want2 "$cmd" -f "$M" --cpu-vendor x
	want2 "$cmd" -f "$M" --log-format x
	want2 "$cmd" -f "$M" --log-level x
	want2 "$cmd" -f "$M" --tap eth0=a-tap-name-longer-than-15
	want2 "$cmd" -f "$M" --seccomp=x
	want2 "$cmd" -f "$M" --user x
done
want2 probe -f "$M" -o bogus
want2 run -f "$M" --grace-period x
want2 run -f "$M" --grace-period -5
want2 run -f "$M" --firmware /nonexistent --kernel /nonexistent
want2 run -f "$M" --kernel /nonexistent --firmware /nonexistent
want2 run -f "$M" --console bogus
want2 run -f "$M" --console-max-size x
want2 run -f "$M" --run-strategy x
want2 run -f "$M" --jail relative
want2 ctl
want2 ctl /nonexistent.sock
want2 ctl /nonexistent.sock bogus-verb
want2 ctl -o x /nonexistent.sock status
want2 ctl --bogus
want2 ctl /nonexistent.sock status extra
finish
