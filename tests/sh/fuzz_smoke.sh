#!/usr/bin/env bash
# Every libFuzzer target (tests/fuzz/*_fuzz.c) builds and runs a few seconds
# each (scripts/fuzz.sh): a target that no longer compiles or links fails
# here, and each run first replays the seeds kept in tests/fuzz/corpus/
# (the reproducers of the bugs fuzzing found). `make fuzz` and .ci/run run
# them longer.
source "$(dirname "$0")/../lib/sh.sh"
n=0
for t in tests/fuzz/*_fuzz.c; do n=$((n + 1)); done
((n > 0)) || fail "no fuzz targets in tests/fuzz"
scripts/fuzz.sh "${FUZZ_SMOKE_SECONDS:-5}"
rc=$?
((rc == 77)) && skip "clang or libFuzzer not installed"
((rc == 0)) || fail "a fuzz target does not build or found a problem (see build/fuzz/)"
for t in tests/fuzz/*_fuzz.c; do
	name=$(basename "$t" .c)
	grep -q '^Done [0-9]* runs' "build/fuzz/$name.log" 2>/dev/null ||
		fail "$name did not run to the end"
done
finish
