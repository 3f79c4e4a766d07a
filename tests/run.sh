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
	*) fail=$((fail + 1)); failed+=("$name")
	   printf 'FAIL %-48s (%s after %ss, load %s, log %s)\n' "$name" "$(status_text "$rc")" \
		"$dt" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" "$log"
	   show_log "$log" ;;
	esac
}

status_text() { # exit status of `timeout TEST` in words
	case $1 in
	124) echo "timed out (TEST_TIMEOUT=${tmo}s)" ;;
	12[5-7]) echo "status $1 (could not run)" ;;
	1[3-9][0-9] | 2[0-5][0-9]) echo "killed by signal $(($1 - 128)) ($(kill -l $(($1 - 128)) 2>/dev/null))" ;;
	*) echo "status $1" ;;
	esac
}

# show_log LOG: enough of a failed test's log to diagnose it from the
# runner's output alone (CI keeps nothing else): all of a short log; of a
# long one, every failed check and error line (numbered), then its end.
show_log() {
	local n
	n=$(wc -l <"$1")
	if ((n <= 150)); then
		sed 's/^/    | /' "$1"
		return
	fi
	echo "    | ($n lines: the failed checks and errors, then the last 100 lines)"
	grep -naE '^ *FAIL|check failed|ERROR|error:|AddressSanitizer|LeakSanitizer|runtime error|Segmentation|Aborted|timed out' "$1" |
		head -n 60 | sed 's/^/    | /'
	echo "    | ..."
	tail -n 100 "$1" | sed 's/^/    | /'
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
