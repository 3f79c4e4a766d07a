#!/usr/bin/env bash
# KubeVirt fields `vmlet run` implements (docs/fields.md), on the tiny PVH
# guest: startStrategy Paused (ctl status Paused and no guest output until
# ctl resume); autoattachSerialConsole: false (no COM1: the guest's writes
# reach nothing); dedicatedCpuPlacement (each vCPU thread allowed exactly
# its own CPU of those vmlet may use, read from /proc/PID/task/*/status),
# isolateEmulatorThread (main and I/O threads on one more CPU), and too few
# CPUs refused naming the field.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
tiny_guests 0 5
SOCK=$TMPD/api.sock

vm() { # NAME TEMPLATE-SPEC-LINES DEVICES-LINES
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: %s, namespace: default}\n' "$1"
	printf 'spec:\n  runStrategy: Once\n  template:\n    spec:\n%s      domain:\n        memory: {guest: 64Mi}\n' "$2"
	printf '%s        devices:\n          autoattachPodInterface: false\n%s' "$3" "$4"
	printf '          disks: [{name: s, disk: {bus: virtio}}]\n'
	printf '      volumes: [{name: s, emptyDisk: {capacity: 1Mi}}]\n'
}
wait_for() { # FILE ERE PID: until FILE matches (generous: a loaded host)
	for _ in $(seq 600); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
stop_vm() { # PID: power button, then the exit status
	kill -TERM "$1" 2>/dev/null
	timeout 60 tail --pid="$1" -f /dev/null
	kill -KILL "$1" 2>/dev/null
	wait "$1"
}

# ---- startStrategy: Paused
vm paused '      startStrategy: Paused
' '' '' >"$TMPD/paused.yaml"
"$VMLET" run -f "$TMPD/paused.yaml" --kernel "$TMPD/mode0.elf" --api-socket "$SOCK" \
	--log-format text >"$TMPD/out" 2>"$TMPD/err" &
PID=$!
if wait_for "$TMPD/err" "started paused" "$PID" && [[ -S $SOCK ]]; then
	st=$("$VMLET" ctl -o text "$SOCK" status | sed -n 's/^state: //p')
	sleep 0.3
	[[ $st == Paused && ! -s $TMPD/out ]] && ok "startStrategy Paused: ctl status Paused, the guest has not run" ||
		fail "paused start: state '$st', guest output '$(cat "$TMPD/out")'"
	"$VMLET" ctl "$SOCK" metrics | grep -q '^vmlet_paused 1$' && ok "metrics: vmlet_paused 1" ||
		fail "no vmlet_paused 1"
	"$VMLET" ctl "$SOCK" resume && wait_for "$TMPD/out" "tiny-guest: up" "$PID" &&
		[[ $("$VMLET" ctl -o text "$SOCK" status | sed -n 's/^state: //p') == Running ]] &&
		ok "ctl resume: the guest runs" || fail "resume: $(cat "$TMPD/out") $(tail -2 "$TMPD/err")"
	"$VMLET" ctl "$SOCK" power-button >/dev/null
	timeout 60 tail --pid="$PID" -f /dev/null
	wait "$PID"
	rc=$?
	((rc == 0)) && ok "powered off after resume: exit 0" || fail "paused VM: exit $rc"
else
	fail "paused VM did not come up: $(tail -3 "$TMPD/err")"
	kill -KILL "$PID" 2>/dev/null
fi
timeout 60 "$VMLET" run -f "$TMPD/paused.yaml" --kernel "$TMPD/mode5.elf" --grace-period 1 \
	--log-format text >"$TMPD/out2" 2>"$TMPD/err2" &
PID=$!
wait_for "$TMPD/err2" "started paused" "$PID" && grep -q "without --api-socket: nothing can resume" "$TMPD/err2" &&
	ok "Paused without --api-socket: warned" || fail "no warning: $(cat "$TMPD/err2")"
stop_vm "$PID"
[[ ! -s $TMPD/out2 ]] && ok "...and the guest never ran" || fail "guest ran: $(cat "$TMPD/out2")"

# ---- autoattachSerialConsole
for a in true false; do
	vm serial '' '' "          autoattachSerialConsole: $a
" >"$TMPD/serial.yaml"
	timeout 60 "$VMLET" run -f "$TMPD/serial.yaml" --kernel "$TMPD/mode5.elf" --log-format text \
		>"$TMPD/out.$a" 2>"$TMPD/err.$a"
	echo "serial $a: exit $?" >>"$TMPD/serial.rc"
done
grep -q "tiny-guest: up" "$TMPD/out.true" && grep -q "serial true: exit 0" "$TMPD/serial.rc" &&
	ok "autoattachSerialConsole: true: the guest's COM1 output is on stdout" ||
	fail "serial true: $(cat "$TMPD/serial.rc") $(cat "$TMPD/out.true")"
[[ ! -s $TMPD/out.false ]] && grep -q "serial false: exit 0" "$TMPD/serial.rc" &&
	grep -q "write of 1 bytes at 0x3f8 is unclaimed" "$TMPD/err.false" &&
	ok "autoattachSerialConsole: false: no COM1 (writes unclaimed, no output), exit 0" ||
	fail "serial false: $(cat "$TMPD/serial.rc") out '$(cat "$TMPD/out.false")' $(tail -3 "$TMPD/err.false")"

# ---- dedicatedCpuPlacement / isolateEmulatorThread
ALLOWED=$(sed -n 's/^Cpus_allowed_list:\t//p' /proc/$$/status)
vm iso '' '        cpu: {cores: 1, dedicatedCpuPlacement: true, isolateEmulatorThread: true}
' '' >"$TMPD/iso.yaml"
mapfile -t CPUS < <(python3 -c 'import os; print("\n".join(map(str, sorted(os.sched_getaffinity(0)))))')
affinity() { # PID COMM: Cpus_allowed_list of that thread
	local t
	for t in /proc/"$1"/task/*; do
		[[ $(cat "$t/comm" 2>/dev/null) == "$2" ]] && sed -n 's/^Cpus_allowed_list:\t//p' "$t/status"
	done
}
pinned() { # YAML [PREFIX...]: start it; PID set once the guest is up
	local y=$1
	shift
	local n=$((++RUNS))
	"$@" "$VMLET" run -f "$y" --kernel "$TMPD/mode0.elf" --grace-period 1 --log-format text \
		>"$TMPD/out.$n" 2>"$TMPD/err.$n" &
	PID=$!
	ERR=$TMPD/err.$n
	wait_for "$TMPD/out.$n" "tiny-guest: up" "$PID"
}
RUNS=0
if ((${#CPUS[@]} >= 2)); then
	vm pin '' '        cpu: {cores: 2, dedicatedCpuPlacement: true}
' '' >"$TMPD/pin.yaml"
	if pinned "$TMPD/pin.yaml"; then
		a0=$(affinity "$PID" vcpu0) a1=$(affinity "$PID" vcpu1) am=$(affinity "$PID" vmlet)
		[[ $a0 == "${CPUS[0]}" && $a1 == "${CPUS[1]}" ]] &&
			ok "dedicatedCpuPlacement: vcpu0 on CPU $a0, vcpu1 on CPU $a1" ||
			fail "vCPU affinity: vcpu0 '$a0' vcpu1 '$a1' (allowed ${CPUS[*]})"
		[[ $am == "$ALLOWED" ]] && ok "main thread keeps CPUs $am without isolateEmulatorThread" ||
			fail "main thread on '$am', not '$ALLOWED'"
	else
		fail "pinned VM did not come up: $(tail -3 "$ERR")"
	fi
	stop_vm "$PID"
	if pinned "$TMPD/iso.yaml"; then
		a0=$(affinity "$PID" vcpu0) am=$(affinity "$PID" vmlet) ab=$(affinity "$PID" vmlet-blk)
		[[ $a0 == "${CPUS[0]}" && $am == "${CPUS[1]}" && $ab == "${CPUS[1]}" ]] &&
			ok "isolateEmulatorThread: vcpu0 on CPU $a0, main and blk threads on CPU $am" ||
			fail "isolated: vcpu0 '$a0' main '$am' blk '$ab' (allowed ${CPUS[*]})"
	else
		fail "isolated VM did not come up: $(tail -3 "$ERR")"
	fi
	stop_vm "$PID"
else
	echo "only one CPU allowed: the two-CPU placements are not checked"
fi
# one allowed CPU: one vCPU fits, one vCPU plus the emulator thread does not
vm one '' '        cpu: {cores: 1, dedicatedCpuPlacement: true}
' '' >"$TMPD/one.yaml"
taskset -c "${CPUS[0]}" true 2>/dev/null || skip "no taskset"
if pinned "$TMPD/one.yaml" taskset -c "${CPUS[0]}"; then
	[[ $(affinity "$PID" vcpu0) == "${CPUS[0]}" ]] && ok "one vCPU pinned to the one CPU" ||
		fail "one vCPU: '$(affinity "$PID" vcpu0)'"
fi
stop_vm "$PID"
timeout 60 taskset -c "${CPUS[0]}" "$VMLET" run -f "$TMPD/iso.yaml" --kernel "$TMPD/mode5.elf" \
	--log-format text >"$TMPD/out" 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q "spec.template.spec.domain.cpu.dedicatedCpuPlacement: 1 vCPUs need 2 host CPUs of their own" "$TMPD/err" &&
	[[ ! -s $TMPD/out ]] && ok "too few CPUs: refused naming the field (exit 1)" ||
	fail "too few CPUs: exit $rc, $(tail -2 "$TMPD/err")"
finish
