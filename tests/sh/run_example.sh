#!/usr/bin/env bash
# `make run` on a host without a usable KVM (issue 21), forced on any host
# with VMLET_KVM_DEVICE naming a device that does not exist:
#  1. vmlet's error names the cause and what to do (vmm/kvm_diag.h; every
#     cause is covered by tests/unit/kvm_diag_test.c), exit 1;
#  2. scripts/run-example (make run) then says it boots the example inside
#     tests/nested's emulated host with a real KVM, runs the same
#     `vmlet probe -f examples/vm` there, shows its report and exits with
#     its status (0: match). About 25 s of one CPU here once the kernels
#     are in build/ (the first run downloads them: tests/nested/run); a
#     host where the emulated host cannot be had skips with the reason.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
dev=/nonexistent/kvm

VMLET_KVM_DEVICE=$dev "$VMLET" probe -f examples/vm >"$TMPD/out" 2>"$TMPD/err"
rc=$?
sed 's/^/  | /' "$TMPD/err"
((rc == 1)) && ok "vmlet probe without its KVM device: exit 1" || fail "vmlet probe: exit $rc, want 1"
grep -q "^vmlet: error: kvm: no usable KVM: cannot open $dev (No such file or directory): " "$TMPD/err" &&
	ok "the error names the device and the errno" || fail "no 'kvm: no usable KVM' line"
grep -q '^vmlet: error: kvm: what to do: ' "$TMPD/err" && ok "and what to do" || fail "no 'what to do' line"
if [[ -d /sys/class/misc/kvm ]]; then # this host has a KVM driver: the node is what is missing
	grep -q "the device node $dev does not exist" "$TMPD/err" && ok "cause: no device node" ||
		fail "cause: not 'no device node' on a host with a KVM driver"
fi

t0=$SECONDS
VMLET_KVM_DEVICE=$dev scripts/run-example >"$TMPD/run" 2>&1
rc=$?
sed 's/^/  | /' "$TMPD/run"
echo "run-example: $((SECONDS - t0))s, exit $rc"
if ((rc == 77)); then
	skip "the emulated host cannot run here: $(grep -m1 '^skip:' "$TMPD/run")"
fi
grep -q 'kvm: no usable KVM' "$TMPD/run" && ok "make run shows vmlet's cause first" || fail "no cause shown"
grep -q '^run: No usable KVM here, so vmlet boots the example inside an emulated host' "$TMPD/run" &&
	ok "the banner says it runs nested" || fail "no banner"
grep -q '@@L1 kvm up=' "$TMPD/run" && ok "the emulated host loaded its KVM" || fail "no KVM in L1"
sed -n '/^run: vmlet probe -f examples\/vm in the emulated host:/,$p' "$TMPD/run" | grep -q '^match: yes$' &&
	ok "the probe in the emulated host: match: yes" || fail "no 'match: yes' from the probe in L1"
((rc == 0)) && ok "make run's exit status is the probe's (0)" || fail "exit $rc, want 0"
finish
