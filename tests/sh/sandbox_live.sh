#!/usr/bin/env bash
# The sandbox of a running vmlet (vmm/sandbox/sandbox.h), on by default:
#  - /proc says every thread is confined: Seccomp 2 (filter), NoNewPrivs 1,
#    no capabilities (effective, permitted, bounding);
#  - each role's filter is live: the VMLET_TEST_FORBIDDEN hook makes that
#    role's thread attempt a forbidden call and vmlet dies with SIGSYS;
#  - --seccomp=log lets it through, --seccomp=off installs no filter;
#  - --user UID:GID switches every thread to that user; started as root
#    without --user, vmlet switches to 65534:65534; --user 0:0 stays root;
#  - a non-root user with access to /dev/kvm runs it (private /dev/kvm node
#    in a mount namespace, so the host's device is left alone).
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
"$VMLET" run --help 2>&1 | grep -q -- '--seccomp' || skip "vmlet run has no --seccomp yet"
tiny_guests 0 1
HOLD=$TMPD/mode1.elf # prints a line, then never powers off

# start [ENV=V...] -- ARGS...: vmlet run ARGS in the background; wait for
# the guest's line. PID is vmlet's pid.
start() {
	local envs=()
	while [[ $1 != -- ]]; do envs+=("$1"); shift; done
	shift
	: >"$TMPD/out"
	env "${envs[@]}" "$VMLET" run --kernel "$HOLD" --grace-period 0 --log-format text "$@" \
		>"$TMPD/out" 2>"$TMPD/err" &
	PID=$!
	# (generous: a loaded host can take seconds to start a VM)
	for _ in $(seq 600); do
		grep -q "tiny-guest: up" "$TMPD/out" && return 0
		kill -0 "$PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
stop() {
	kill -TERM "$PID" 2>/dev/null
	timeout 60 tail --pid="$PID" -f /dev/null
	kill -KILL "$PID" 2>/dev/null
	wait "$PID"
}

field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$1"; }

# ---- confinement as /proc shows it --------------------------------------
# Every task, not only the main one: the disk's I/O thread starts while main
# still holds its capabilities (and drops its own), the vCPU threads after
# main dropped them (and inherit that); all must end up the same.
truncate -s 1M "$TMPD/disk.raw"
vm_manifest sb 64Mi Once d="$TMPD/disk.raw" >"$TMPD/vm.yaml"
# confined TASKDIR: empty when the task is fully confined, else what is not
confined() {
	local st=$1/status k want=(Seccomp=2 NoNewPrivs=1 CapEff=0000000000000000
		CapPrm=0000000000000000 CapInh=0000000000000000 CapAmb=0000000000000000)
	[[ $(id -u) == 0 ]] && want+=(CapBnd=0000000000000000)
	for k in "${want[@]}"; do
		[[ $(field "$st" "${k%%=*}") == "${k#*=}" ]] || printf ' %s=%s' "${k%%=*}" "$(field "$st" "${k%%=*}")"
	done
}
if start -- -f "$TMPD/vm.yaml" --smp 4; then
	st=/proc/$PID/status
	[[ $(field "$st" Seccomp) == 2 ]] && ok "Seccomp: 2" || fail "Seccomp: $(field "$st" Seccomp)"
	[[ $(field "$st" NoNewPrivs) == 1 ]] && ok "NoNewPrivs: 1" || fail "NoNewPrivs: $(field "$st" NoNewPrivs)"
	n=0 bad=0 vcpus=0 blk=0
	for t in /proc/$PID/task/*; do
		n=$((n + 1))
		why=$(confined "$t")
		[[ -z $why ]] || { bad=$((bad + 1)); echo "unconfined thread $(cat "$t/comm"):$why"; }
		case $(cat "$t/comm") in vcpu*) vcpus=$((vcpus + 1)) ;; vmlet-blk*) blk=$((blk + 1)) ;; esac
	done
	((bad == 0 && n >= 6)) && ok "all $n threads: Seccomp 2, NoNewPrivs 1, no capabilities" ||
		fail "$bad of $n threads not fully confined"
	((vcpus == 4 && blk >= 1)) && ok "4 vCPU threads and $blk block I/O thread(s) among them" ||
		fail "$vcpus vCPU threads, $blk block threads"
	grep -q "sandbox: applied: seccomp kill" "$TMPD/err" && ok "sandbox logged" || fail "no sandbox log line"
	stop
	[[ $? == 5 ]] && ok "stopped: exit 5" || fail "stop: exit $?"
else
	fail "vmlet did not start: $(tail -3 "$TMPD/err")"
fi

# ---- every role's filter is live ----------------------------------------
# main's effective allowlist is its own: no vCPU ioctl, no new thread (the
# vCPU threads start before main is confined and do not widen its filter)
for hook in main main:exec-mmap main:socket main:unix-connect main:exec main:kvm-run main:thread \
	vcpu vcpu:ioctl vcpu:exec-mmap vcpu:socket vcpu:unix-connect vcpu:thread; do
	timeout 20 env VMLET_TEST_FORBIDDEN=$hook "$VMLET" run --kernel "$HOLD" --grace-period 0 \
		--log-format text >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	if ((rc == 128 + 31)); then ok "$hook: killed by SIGSYS"; else
		fail "$hook: exit $rc, want SIGSYS ($((128 + 31)))"; tail -3 "$TMPD/err"; fi
done

# the block I/O role, live: its thread starts before main drops privileges;
# a vCPU writing to an fd it does not own (the disk image: denied-fd)
for hook in blk-io blk-io:socket blk-io:ioctl blk-io:fallocate blk-io:blkdiscard vcpu:denied-fd; do
	timeout 20 env VMLET_TEST_FORBIDDEN=$hook "$VMLET" run -f "$TMPD/vm.yaml" --kernel "$HOLD" \
		--grace-period 0 --log-format text >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	if ((rc == 128 + 31)); then ok "$hook: killed by SIGSYS"; else
		fail "$hook: exit $rc, want SIGSYS ($((128 + 31)))"; tail -3 "$TMPD/err"; fi
done

# --seccomp=log: the same violation is allowed (and logged by the kernel)
if start VMLET_TEST_FORBIDDEN=main:socket -- --seccomp=log; then
	grep -q "survived 'socket'" "$TMPD/err" && ok "--seccomp=log: main survives socket(AF_INET)" ||
		fail "--seccomp=log: no survival line"
	stop
else
	fail "--seccomp=log: vmlet died: $(tail -2 "$TMPD/err")"
fi

# --seccomp=off: no filter, still no capabilities
if start -- --seccomp=off --smp 2; then
	[[ $(field /proc/$PID/status Seccomp) == 0 ]] && ok "--seccomp=off: Seccomp 0" || fail "--seccomp=off: filter installed"
	bad=0
	for t in /proc/$PID/task/*; do
		[[ $(confined "$t") == ' Seccomp=0' ]] || bad=$((bad + 1))
	done
	((bad == 0)) && ok "--seccomp=off: every thread still has no capabilities, NoNewPrivs 1" ||
		fail "--seccomp=off: $bad threads kept capabilities"
	stop
else
	fail "--seccomp=off: vmlet did not start"
fi

# ---- users --------------------------------------------------------------
# ids THREADS-WANTED: how many of vmlet's tasks do not have Uid/Gid WANTED
ids_off() {
	local t bad=0
	for t in /proc/$PID/task/*; do
		[[ $(field "$t/status" Uid) == "$1 $1 $1 $1" && $(field "$t/status" Gid) == "$1 $1 $1 $1" ]] ||
			bad=$((bad + 1))
	done
	echo $bad
}
if [[ $(id -u) == 0 ]]; then
	# started as root without --user: every thread gives up root
	# (issue 28: a confined thread that reached a root-owned socket or
	# file got root's access to it)
	if start -- -f "$TMPD/vm.yaml" --smp 2; then
		bad=$(ids_off 65534)
		((bad == 0)) && ok "root without --user: every thread runs as 65534:65534" ||
			fail "root without --user: $bad threads kept other ids"
		grep -q "sandbox: applied: .*uid 65534" "$TMPD/err" && ok "sandbox logged uid 65534" ||
			fail "no uid 65534 in the sandbox log line"
		stop
		[[ $? == 5 ]] && ok "default user: stopped, exit 5" || fail "default user: stop: exit $?"
	else
		fail "default user: vmlet did not start: $(tail -2 "$TMPD/err")"
	fi
	# root that may not change ids (no CAP_SETUID/CAP_SETGID, as a
	# container's root with its capabilities dropped): stays uid 0 and says
	# so, instead of failing at the switch
	if command -v setpriv >/dev/null; then
		: >"$TMPD/out"
		setpriv --bounding-set=-setuid,-setgid "$VMLET" run --kernel "$HOLD" --grace-period 0 \
			--log-format text >"$TMPD/out" 2>"$TMPD/err" &
		PID=$!
		for _ in $(seq 600); do
			grep -q "tiny-guest: up" "$TMPD/out" && break
			kill -0 "$PID" 2>/dev/null || break
			sleep 0.05
		done
		if grep -q "tiny-guest: up" "$TMPD/out"; then
			bad=$(ids_off 0)
			((bad == 0)) && grep -q "without CAP_SETUID/CAP_SETGID: staying uid 0" "$TMPD/err" &&
				ok "root without CAP_SETUID: stays uid 0, with a warning" ||
				fail "root without CAP_SETUID: $bad threads switched, or no warning"
			stop
		else
			stop
			fail "root without CAP_SETUID: vmlet did not start: $(tail -2 "$TMPD/err")"
		fi
	fi
	# --user 0:0 keeps root (capabilities still dropped)
	if start -- --user 0:0; then
		bad=$(ids_off 0)
		((bad == 0)) && ok "--user 0:0: stays root" || fail "--user 0:0: $bad threads switched"
		stop
	else
		fail "--user 0:0: vmlet did not start: $(tail -2 "$TMPD/err")"
	fi
	if start -- --user 65534:65534 --smp 2; then
		bad=0
		for t in /proc/$PID/task/*; do
			[[ $(field "$t/status" Uid) == '65534 65534 65534 65534' &&
				$(field "$t/status" Gid) == '65534 65534 65534 65534' ]] || bad=$((bad + 1))
		done
		((bad == 0)) && ok "--user 65534:65534: every thread switched" || fail "--user: $bad threads kept their ids"
		stop
	else
		fail "--user: vmlet did not start: $(tail -2 "$TMPD/err")"
	fi

	# a non-root user who can open /dev/kvm, nothing else
	if command -v unshare >/dev/null && command -v setpriv >/dev/null; then
		cp "$VMLET" "$TMPD/vmlet" && chmod 755 "$TMPD" "$TMPD/vmlet" && chmod 644 "$TMPD"/mode*.elf
		mknod "$TMPD/kvm" c 10 232 2>/dev/null && chown 65534:65534 "$TMPD/kvm" && chmod 600 "$TMPD/kvm"
		# (a /tmp mounted nodev cannot serve a device node: not checked then)
		if [[ -c $TMPD/kvm ]] && (: <"$TMPD/kvm") 2>/dev/null; then
			# /proc is read once the guest runs (it runs only after the
			# sandbox is applied), and the SIGTERM comes after that
			timeout 90 unshare -m sh -c '
				mount --bind "$1/kvm" /dev/kvm &&
				exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
					"$1/vmlet" run --kernel "$1/mode0.elf" --log-format text \
					--grace-period 5 >"$1/nonroot.out" & pid=$!
				i=0
				until grep -q "tiny-guest: up" "$1/nonroot.out" 2>/dev/null; do
					i=$((i + 1)); [ $i -le 600 ] && kill -0 $pid 2>/dev/null || break
					sleep 0.05
				done
				grep -E "^(Uid|CapEff|Seccomp)" /proc/$pid/status > "$1/nonroot.status"
				kill -TERM $pid; wait $pid' sh "$TMPD" 2>"$TMPD/nonroot.err"
			rc=$?
			if ((rc == 0)) && grep -q $'^Uid:\t65534' "$TMPD/nonroot.status" &&
				grep -q $'^Seccomp:\t2' "$TMPD/nonroot.status"; then
				ok "non-root user with /dev/kvm access: ran, confined, powered off on SIGTERM"
			else
				fail "non-root run: exit $rc"; cat "$TMPD/nonroot.status" "$TMPD/nonroot.err" 2>/dev/null | tail -5
			fi
		else
			echo "note: cannot create or open a device node here; non-root run not checked"
		fi
	fi
fi
finish
