#!/usr/bin/env bash
# Real Linux guests on a real KVM: tests/nested/run boots Debian's cloud
# kernel under vmlet (and under QEMU -enable-kvm, the oracle) inside an L1
# Linux that QEMU's emulator runs with AMD SVM, so that the stock kvm_amd
# is the KVM vmlet meets. Every scenario of tests/nested/scenarios in one
# L1 boot; see tests/nested/README.md. Skips (77, with the reason) where it
# cannot run: no QEMU or busybox-static, no package download for the
# kernels, no SVM under TCG.
#
# One L1 boot, one CPU in it (tests/nested/run's default): issue 12's L2
# triple faults and hangs and L1's own panics came from the emulated SVM
# with two L1 CPUs (QEMU's L2 failed there as well as vmlet's) and were
# not seen in many boots with one (the figures: tests/nested/README.md).
#
# One rerun, for one kind of failure only: when every failed scenario
# hung (its time box ran out) or was cut short by L1 dying, those
# scenarios run once more in a fresh L1, and the first attempt stays
# printed above with a "nested: RERUN" line naming them. The residual
# one-CPU hang (1 in ~95 vmlet guest runs, not attributed: docs/testing.md "Real
# Linux guests") must not decide a CI run by chance, but it must stay
# visible. A wrong result, a triple fault, an L2 panic or a second hang
# fails at once.
#
# Two groups, one L1 boot each, so that each fits its time box: a
# scenario whose file says GROUP=devices (SATA, Hyper-V, vsock, the agent's
# credentials and metrics, snapshot) runs in tests/sh/nested_devices.sh,
# every other one here. NESTED_ARGS with its own --only picks by name.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
group=${NESTED_GROUP:-linux} sel=()
for f in tests/nested/scenarios/*.sh; do
	g=$(sed -n 's/^GROUP=\([a-z-]*\).*/\1/p' "$f" | head -n 1)
	[[ ${g:-linux} == "$group" ]] && sel+=("$(basename "$f" .sh)")
done
((${#sel[@]})) || { echo "FAIL: no nested scenario in group $group"; exit 1; }
only=(--only "$(IFS=,; echo "${sel[*]}")")
[[ " ${NESTED_ARGS:-} " == *" --only "* ]] && only=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
tests/nested/run ${NESTED_ARGS:-} "${only[@]}" | tee "$log"
rc=${PIPESTATUS[0]}
((rc == 1)) || exit "$rc"

# the first attempt's outcomes (check.py: "NAME VMM OUTCOME", "L1 - STATE")
out=$(sed -n 's/^nested: L1 exit .*; console log \(.*\)\/console.log$/\1/p' "$log" | tail -1)
[[ -n $out && -r $out/outcomes ]] || exit 1
outcome() { awk -v n="$1" '$1 == n {$1 = $2 = ""; sub(/^ +/, ""); print}' "$out/outcomes"; }
failed=$(sed -n 's/^FAIL: \([^:]*\):.*/\1/p' "$log" | sort -u)
rerun=()
for n in $failed; do
	case $n/$(outcome "$n") in
	L1/panic | L1/hang) ;;
	*/hang | */"L1 died" | */"not run") ;; # rerun below, from the outcomes
	*) exit 1 ;; # a failure of another kind: no rerun
	esac
done
for n in $(awk '$1 != "L1" && ($3 == "hang" || $3 " " $4 == "L1 died" || $3 " " $4 == "not run") {print $1}' "$out/outcomes"); do
	rerun+=("$n")
done
((${#rerun[@]})) || exit 1
# with the QEMU oracles (the dmesg comparison needs a QEMU L2 in the same L1)
# and their twins, so every check runs as in the first attempt
sdir=tests/nested/scenarios
for f in "$sdir"/*.sh; do
	[[ " ${sel[*]} " == *" $(basename "$f" .sh) "* ]] || continue # another group's
	grep -q 'VMM=qemu' "$f" || continue
	rerun+=("$(basename "$f" .sh)")
	rerun+=($(sed -n 's/.*COMPARE=\([^ ]*\).*/\1/p' "$f"))
done
for n in "${rerun[@]}"; do # and the QEMU twin of a vmlet scenario
	rerun+=($(grep -l "COMPARE=$n\b" "$sdir"/*.sh 2>/dev/null | xargs -r -n1 basename | sed 's/\.sh$//'))
done
list=$(printf '%s\n' "${rerun[@]}" | sort -u | paste -sd,)
echo "nested: RERUN once in a fresh L1 (first attempt above: $out): $list"
tests/nested/run ${NESTED_ARGS:-} --only "$list"
