#!/usr/bin/env bash
# Run every test program: unit tests (normal and sanitizer builds) and the
# shell tests in tests/sh/. Each program exits 0 (pass), 77 (skip) or
# anything else (fail). Prints one line per program and a final
# "N passed, M failed, K skipped"; exits non-zero if anything failed.
#
# Environment: VMLET (default ./vmlet), VMLET_SAN (sanitizer build of vmlet),
# TEST_FILTER (substring to select tests), TEST_TIMEOUT (seconds, default 900).
set -u
cd "$(dirname "$0")/.."
export VMLET=${VMLET:-./vmlet}
export VMLET_SAN=${VMLET_SAN:-build/san/vmlet}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
filter=${TEST_FILTER:-}
tmo=${TEST_TIMEOUT:-900}
logdir=build/test-logs
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed=()

run_one() {
	local name=$1; shift
	[[ -n $filter && $name != *"$filter"* ]] && return
	local log="$logdir/$(echo "$name" | tr '/ ' '__').log"
	local t0=$SECONDS
	timeout "$tmo" "$@" >"$log" 2>&1
	local rc=$?
	local dt=$((SECONDS - t0))
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-48s %3ss\n' "$name" "$dt" ;;
	77) skip=$((skip + 1)); printf 'SKIP %-48s %s\n' "$name" "$(grep -m1 -i 'skip' "$log" | cut -c1-80)" ;;
	*) fail=$((fail + 1)); failed+=("$name"); printf 'FAIL %-48s (status %d, log %s)\n' "$name" "$rc" "$log"
	   tail -n 25 "$log" | sed 's/^/    | /' ;;
	esac
}

for t in build/tests/unit/*_test; do
	[[ -x $t ]] && run_one "unit/$(basename "$t")" "$t"
done
for t in build/san/tests/unit/*_test; do
	[[ -x $t ]] && run_one "unit-san/$(basename "$t")" "$t"
done
for t in tests/sh/*.sh; do
	[[ -f $t ]] && run_one "sh/$(basename "$t" .sh)" bash "$t"
done

echo
if ((fail)); then
	echo "failed: ${failed[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0 && pass > 0))
