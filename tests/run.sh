#!/usr/bin/env bash
# Run every test program: unit tests (normal and sanitizer builds) and the
# shell tests in tests/sh/. Each program exits 0 (pass), 77 (skip) or
# anything else (fail). Prints one line per program and a final
# "N passed, M failed, K skipped"; exits non-zero if anything failed.
#
# Environment: VMLET (default ./vmlet), VMLET_SAN (sanitizer build of vmlet),
# TEST_FILTER (substring to select tests), TEST_TIMEOUT (seconds, default 900),
# TEST_LOGDIR (the logs, default build/test-logs).
#
# KVM: a shell test that asks for a usable /dev/kvm (have_kvm, tests/lib/sh.sh)
# and gets none here is run again, after the others, inside the nested L1
# (tests/nested/run-tests: an emulated AMD host with kvm_amd, this host's
# root file system read-only under an overlay): "PASS sh/NAME (nested)".
# One that skipped for it counts by its L1 result alone; one that passed
# without its KVM part counts once, by its L1 result. VMLET_TEST_KVM=nested:
# as if this host had no usable /dev/kvm (develop and test that route);
# =skip: no L1, such tests skip as before. VMLET_TEST_NESTED_JOBS: L1s at
# once (default 2, at most the CPUs).
set -u
cd "$(dirname "$0")/.."
export VMLET=${VMLET:-./vmlet}
export VMLET_SAN=${VMLET_SAN:-build/san/vmlet}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
filter=${TEST_FILTER:-}
tmo=${TEST_TIMEOUT:-900}
logdir=${TEST_LOGDIR:-build/test-logs}
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed=()
# sh/nested_ovmf (and, on a host without a usable /dev/kvm, sh/ovmf_vm in
# the nested L1) need tests/nested's patched L0, built from source once
# (scripts/build-qemu-l0, about 5 CPU-minutes): with VMLET_TEST_NESTED_OVMF=run
# (.ci/run sets it) the build starts now, in the background on one job
# beside the tests, under nice, and sh/nested_ovmf with it: its one L1 CPU
# runs beside the other tests (most leave a core idle), once the build it
# waits for (a lock) is done; its line is printed after the others'. A
# sh/ovmf_vm for the nested L1 runs after the others. Without
# VMLET_TEST_NESTED_OVMF=run these run only where the L0 is already built
# (else a skip), sh/nested_ovmf last.
if [[ -z $filter || sh/nested_ovmf == *"$filter"* || sh/ovmf_vm == *"$filter"* ]] &&
	[[ -f tests/sh/nested_ovmf.sh && ${VMLET_TEST_NESTED_OVMF:-} == run ]]; then
	QEMU_L0_JOBS=1 scripts/build-qemu-l0 >"$logdir/build-qemu-l0.log" 2>&1 &
fi
nested=() # "NAME TEST HOST-STATUS" of tests to run in the nested L1
ovmf_bg=  # the background sh/nested_ovmf's pid

run_one() {
	local name=$1; shift
	[[ -n $filter && $name != *"$filter"* ]] && return
	local log="$logdir/$(echo "$name" | tr '/ ' '__').log"
	local t0=$SECONDS
	local mark=$log.kvm
	[[ $mark == /* ]] || mark=$PWD/$mark
	rm -f "$mark"
	VMLET_TEST_KVM_MARK=$mark timeout "$tmo" "$@" >"$log" 2>&1
	local rc=$?
	local dt=$((SECONDS - t0))
	if [[ -e $mark && ${VMLET_TEST_KVM:-} != skip && $name == sh/* ]] && ((rc == 0 || rc == 77)); then
		nested+=("$name ${@: -1} $rc")
		printf 'NEST %-48s %s\n' "$name" "(host: $([[ $rc == 0 ]] && echo "passed without its KVM part" ||
			grep -m1 -i 'skip' "$log" | cut -c1-60); runs in the nested L1 below)"
		return
	fi
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

# run_nested: the tests in nested[] inside the L1s, counted by their outcome
# there (one that passed here without its KVM part: by its outcome there)
run_nested() {
	local dir=$logdir/nested e name t hrc n st dt log tests=() note
	rm -rf "$dir"
	for e in "${nested[@]}"; do tests+=("${e#* }") && tests[-1]=${tests[-1]% *}; done
	echo "nested: ${#nested[@]} tests need a KVM this host cannot give; running them in the nested L1 (output: $dir)"
	tests/nested/run-tests --jobs "${VMLET_TEST_NESTED_JOBS:-2}" --timeout "$tmo" "$dir" "${tests[@]}" 2>&1 |
		tee "$logdir/nested.log" | sed -u 's/^/nested: /'
	local rrc=${PIPESTATUS[0]}
	for e in "${nested[@]}"; do
		read -r name t hrc <<<"$e"
		log="$logdir/$(echo "$name" | tr '/ ' '__').log"
		if ((rrc != 0)); then # no L1: as if there were no route
			note="no L1: $(grep -m1 -E '^skip:|^run-tests:' "$logdir/nested.log" | cut -c1-60)"
			if ((hrc == 0)); then
				pass=$((pass + 1)); printf 'PASS %-48s %s\n' "$name" "(host, without its KVM part; $note)"
			elif ((rrc == 77)); then
				skip=$((skip + 1)); printf 'SKIP %-48s %s\n' "$name" "no usable /dev/kvm; $note"
			else
				fail=$((fail + 1)); failed+=("$name"); printf 'FAIL %-48s %s\n' "$name" "(nested: $note)"
			fi
			continue
		fi
		n=$(basename "$t" .sh)
		read -r st dt <<<"$(awk -v n="$n" '$1 == n {print $2, $3}' "$dir/results")"
		cp "$dir/logs/$n.log" "$log" 2>/dev/null || echo "(no log: see $dir)" >"$log"
		case $st in
		0) pass=$((pass + 1)); printf 'PASS %-48s %3ss\n' "$name (nested)" "$dt" ;;
		77) skip=$((skip + 1)); printf 'SKIP %-48s %s\n' "$name (nested)" "$(grep -m1 -i 'skip' "$log" | cut -c1-80)" ;;
		*) fail=$((fail + 1)); failed+=("$name")
		   if [[ $st == died ]]; then
			printf 'FAIL %-48s (its L1 died in it: %s; %s)\n' "$name (nested)" "${dt//_/ }" "$dir/l1-*/console.log"
		   elif [[ $st == notrun || -z $st ]]; then
			printf 'FAIL %-48s (not run: its L1 ended first, %s; %s)\n' "$name (nested)" "${dt//_/ }" "$dir/l1-*/console.log"
		   else
			printf 'FAIL %-48s (%s after %ss in the L1, log %s)\n' "$name (nested)" "$(status_text "$st")" "$dt" "$log"
		   fi
		   show_log "$log" ;;
		esac
	done
}

# sh/nested_ovmf in the background (VMLET_TEST_NESTED_OVMF=run): its
# PASS/FAIL/SKIP line, in $logdir/nested_ovmf.line, is counted at the end
# (its L1 holds four OVMF scenarios: 881 s at a load of 7-12,
# docs/testing.md; its own time box is 1400 s; in the background it also
# waits for the L0's build, about 5 minutes on one job: at least 2100 s)
ovmf_tmo=$((tmo < 1500 ? 1500 : tmo))
[[ ${VMLET_TEST_NESTED_OVMF:-} == run ]] && ovmf_tmo=$((tmo < 2100 ? 2100 : tmo))
if [[ -f tests/sh/nested_ovmf.sh && ${VMLET_TEST_NESTED_OVMF:-} == run ]] &&
	[[ -z $filter || sh/nested_ovmf == *"$filter"* ]]; then
	(tmo=$ovmf_tmo run_one sh/nested_ovmf bash tests/sh/nested_ovmf.sh >"$logdir/nested_ovmf.line") &
	ovmf_bg=$!
fi
for t in build/tests/unit/*_test; do
	[[ -x $t ]] && run_one "unit/$(basename "$t")" "$t"
done
for t in build/san/tests/unit/*_test; do
	[[ -x $t ]] && run_one "unit-san/$(basename "$t")" "$t"
done
# the nested groups: their L1's time box (840 s) and, after a hang, one
# rerun in a fresh L1 (tests/sh/nested_linux.sh)
nested_tmo=$((tmo < 1800 ? 1800 : tmo))
for t in tests/sh/*.sh; do
	[[ $t == tests/sh/nested_ovmf.sh ]] && continue # last, below
	case $t in
	tests/sh/nested_linux.sh | tests/sh/nested_devices.sh) tmo=$nested_tmo run_one "sh/$(basename "$t" .sh)" bash "$t" ;;
	*) [[ -f $t ]] && run_one "sh/$(basename "$t" .sh)" bash "$t" ;;
	esac
done

((${#nested[@]})) && run_nested
# sh/nested_ovmf: the background one's result, or (its L0 built before
# and not VMLET_TEST_NESTED_OVMF=run) run now, last
if [[ -n $ovmf_bg ]]; then
	wait "$ovmf_bg"
	cat "$logdir/nested_ovmf.line"
	case $(head -c 4 "$logdir/nested_ovmf.line") in
	PASS) pass=$((pass + 1)) ;;
	SKIP) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); failed+=(sh/nested_ovmf) ;;
	esac
elif [[ -f tests/sh/nested_ovmf.sh ]]; then
	tmo=$ovmf_tmo run_one sh/nested_ovmf bash tests/sh/nested_ovmf.sh
fi

echo
if ((fail)); then
	echo "failed: ${failed[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0 && pass > 0))
