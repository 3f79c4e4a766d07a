#!/usr/bin/env bash
# --timings (issue 29 part 2, vmm/util/timings.h): a guest run prints each
# phase exactly once and in order (exec, resolved, mapped, loaded,
# first_run, poweroff, exit), also when the guest runs in a forked worker
# (--jail, as root), when it is restarted (RerunOnFailure: the first run's
# stamps stay, printed once) and when it fails to start (the phases
# reached, then exit: no poweroff); without the flag nothing.
# No figure is asserted: only the names, their count and order, and that
# the times since exec do not go backwards.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v as >/dev/null && command -v ld >/dev/null || skip "no binutils"
[[ -x $VMLET ]] || skip "no $VMLET"

as --64 --defsym MODE=5 -o "$TMPD/g.o" tests/data/vmm_tiny_guest.S &&
	ld -m elf_x86_64 -static -nostdlib -T tests/data/vmm_tiny_guest.ld -o "$TMPD/g.elf" "$TMPD/g.o" ||
	skip "cannot build the tiny guest"

# check NAME WANT-PHASES: the timings lines of $TMPD/err
check() {
	local name=$1 want=$2 got prev=-1 t bad=0
	got=$(sed -n 's/^timings: \([a-z_]*\) .*/\1/p' "$TMPD/err" | tr '\n' ' ')
	if [[ $got == "$want " ]]; then ok "$name: $want"; else
		fail "$name: phases '$got', want '$want '"
		sed 's/^/    /' "$TMPD/err"
	fi
	for t in $(sed -n 's/^timings: [a-z_]* *\([0-9]*\) us.*/\1/p' "$TMPD/err"); do
		((t >= prev)) || bad=1
		prev=$t
	done
	((bad)) && fail "$name: times go backwards" || ok "$name: times since exec in order"
}

all="exec resolved mapped loaded first_run poweroff exit"
timeout 60 "$VMLET" run --kernel "$TMPD/g.elf" --log-format text --timings >/dev/null 2>"$TMPD/err"
rc=$?
[[ $rc == 0 ]] && ok "runs with --timings" || fail "exit $rc"
check "one run" "$all"

timeout 60 "$VMLET" run --kernel "$TMPD/g.elf" --log-format text >/dev/null 2>"$TMPD/err"
! grep -q '^timings:' "$TMPD/err" && ok "nothing without --timings" || fail "timings printed without the flag"

# the guest in a forked worker (--jail): its stamps reach the parent (a
# sanitizer build's LeakSanitizer cannot run as PID 1 of the jail's PID
# namespace, /proc being the host's: no leak check there)
if [[ $(id -u) == 0 ]]; then
	mkdir -p "$TMPD/jail"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 60 "$VMLET" run --kernel "$TMPD/g.elf" --jail "$TMPD/jail" --log-format text \
		--timings >/dev/null 2>"$TMPD/err" || fail "--jail run: exit $?"
	check "jailed worker" "$all"
fi

# restarted in-process: the stamps are the first run's, printed once
cat >"$TMPD/vm.yaml" <<'YAMLEND'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: timings}
spec:
  runStrategy: RerunOnFailure
  template:
    spec:
      domain:
        devices: {}
        resources: {requests: {memory: 64Mi}}
YAMLEND
as --64 --defsym MODE=2 -o "$TMPD/r.o" tests/data/vmm_tiny_guest.S &&
	ld -m elf_x86_64 -static -nostdlib -T tests/data/vmm_tiny_guest.ld -o "$TMPD/r.elf" "$TMPD/r.o" ||
	fail "cannot build the rebooting guest"
# mode 2 reboots forever (i8042 reset): RerunOnFailure restarts it in
# workers; SIGTERM after a few restarts, the grace period then stops it
timeout -s TERM -k 30 3 "$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/r.elf" --grace-period 1 \
	--log-format text --timings >/dev/null 2>"$TMPD/err"
n=$(grep -c 'starting the guest again' "$TMPD/err")
((n >= 1)) && ok "restarted $n times" || fail "not restarted"
check "restarted runs" "$all"

# a start that fails before the guest runs: the phases it reached, then exit
timeout 60 "$VMLET" run --kernel "$TMPD/nonexistent" --log-format text --timings \
	>/dev/null 2>"$TMPD/err"
check "failed start" "exec resolved mapped exit"
finish
