#!/usr/bin/env bash
# A host without a usable /dev/kvm still runs the tests that need one: in
# the nested L1 (tests/nested/run-tests), reported "(nested)" and counted.
# VMLET_TEST_KVM=nested makes this host such a host for tests/run.sh;
# boot_manifest_env (vmlet's probe guest, 4 vCPUs) must pass in the L1 on
# its kvm_amd, not skip; ovmf_vm goes to the patched L0 (below). Skips (77)
# where no L1 can be had (no QEMU with virtio-9p, no busybox-static, no
# kernel download...): the reason shown.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
[[ ${VMLET_TEST_KVM:-} == l1 ]] && skip "already inside a nested L1"
logs=$TMPD/logs
VMLET_TEST_KVM=nested TEST_FILTER=boot_manifest_env TEST_LOGDIR=$logs tests/run.sh >"$TMPD/out" 2>&1
rc=$?
cat "$TMPD/out"
grep -q '^SKIP sh/boot_manifest_env .*no L1: skip:' "$TMPD/out" &&
	skip "no nested L1 here: $(grep -m1 '^skip:' "$logs/nested.log")"
((rc == 0)) && ok "tests/run.sh exit 0" || fail "tests/run.sh exit $rc"
grep -q '^NEST sh/boot_manifest_env .*no /dev/kvm' "$TMPD/out" &&
	ok "on this host the test asked for KVM and was sent to the L1" ||
	fail "not sent to the L1 (no NEST line)"
grep -qE '^PASS sh/boot_manifest_env \(nested\) +[0-9]+s$' "$TMPD/out" &&
	ok "reported PASS ... (nested)" || fail "no 'PASS sh/boot_manifest_env (nested)' line"
grep -qx '1 passed, 0 failed, 0 skipped' "$TMPD/out" &&
	ok "counted once, as passed" || fail "count: $(tail -n 1 "$TMPD/out")"
con=$(echo "$logs"/nested/l1-*/console.log)
grep -q '^@@L1 kvm ' "$con" && grep -q '^@@T END boot_manifest_env rc=0 ' "$con" &&
	ok "it ran in the L1, after kvm_amd gave /dev/kvm" || fail "not in the L1's console ($con)"
grep -q '^ok: guest sees 2/1/2 from VMLET_MANIFEST' "$logs/sh_boot_manifest_env.log" &&
	ok "the probe guest booted there" || fail "no probe result in its log"

# ovmf_vm (OVMF in L2, which aborts this host's QEMU as L0) goes to an L1
# under the patched L0 (tests/nested/hostfs/l0-patched), not to one under
# this host's QEMU; where that L0 is not built (here an empty folder, and
# no build asked for) it skips saying so, and no L1 boots for it
VMLET_TEST_KVM=nested VMLET_TEST_NESTED_OVMF='' QEMU_L0_BUILD_DIR=$TMPD/no-l0 TEST_FILTER=ovmf_vm \
	TEST_LOGDIR=$TMPD/logs2 tests/run.sh >"$TMPD/out2" 2>&1
cat "$TMPD/out2"
grep -q '^SKIP sh/ovmf_vm (nested) *skip: no patched L0 built (scripts/build-qemu-l0' "$TMPD/out2" &&
	grep -q 'then under the patched L0: tests/sh/ovmf_vm.sh' "$TMPD/out2" &&
	ok "ovmf_vm: sent to the patched L0, a skip with the reason where it is not built" ||
	fail "ovmf_vm: not sent to the patched L0, or no reason"
grep -q '^@@RT boot' "$TMPD"/logs2/nested/l1-*/console.log 2>/dev/null &&
	fail "ovmf_vm: an L1 was booted without the patched L0"
finish
