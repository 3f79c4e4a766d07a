#!/usr/bin/env bash
# Build and run the libFuzzer targets tests/fuzz/*_fuzz.c for SECONDS seconds
# each (argument 1, else $FUZZ_SECONDS, else 60); further arguments name the
# targets to run (default: all). FUZZ_PARALLEL=N runs N targets at a time
# (CI: 2, one per core), each for SECONDS.
#
#   scripts/fuzz.sh [--cpu] SECONDS [TARGET...]
#
# FUZZ_RSS_MB (default 2048) is libFuzzer's RSS limit. A long run of a
# target that starts a thread per input needs more: ASan keeps a context
# for every thread ever created (about 170 bytes each, never reused), so
# virtio_blk_fuzz's RSS grows by ~1.5 MB per CPU-second with a flat live
# heap (seen: 2.1 million thread contexts in the run that hit 2 GiB).
#
# SECONDS is wall-clock time, libFuzzer's -max_total_time. With --cpu it is
# the fuzzer's own CPU time (user + system): the run goes on until the
# process has used that much, however busy the machine is, and then gets
# SIGUSR1, libFuzzer's graceful stop (final stats, exit 0). That is the mode
# for a long run reported in CPU-minutes. Either way each target's line
# "fuzz: NAME: cpu S s, wall W s" gives both figures, measured by the shell
# (the fuzzer's rusage), not estimated.
#
# The targets are built by `make fuzz-targets`: clang, the whole library
# instrumented (-fsanitize=fuzzer-no-link,address,undefined) as
# build/fuzz/libvmlet.a, each target linked with libFuzzer as
# build/fuzz/NAME. A target may ask for extra libFuzzer flags in a comment
# line "FUZZ_ARGS: -max_len=65536".
#
# Inputs: build/fuzz/NAME-corpus (kept between runs, grows), the seeds that
# tests/fuzz/NAME.seeds.sh writes into build/fuzz/NAME-seeds, and the seeds
# kept in the repo, tests/fuzz/corpus/NAME/ (hand-made inputs and the
# reproducers of every bug a fuzzer found: each run replays them first).
# Crash reproducers go to build/fuzz/NAME-crash-*.
#
# Exit 0 when nothing was found, 77 when clang or libFuzzer is missing,
# 1 otherwise (a target does not build, or a fuzzer found a problem).
set -u
cd "$(dirname "$0")/.."
cpu_mode=0
if [[ ${1:-} == --cpu ]]; then
	cpu_mode=1
	shift
fi
secs=${1:-${FUZZ_SECONDS:-60}}
shift $(($# > 0 ? 1 : 0))
out=build/fuzz
command -v clang >/dev/null || { echo "fuzz: skip: clang not installed"; exit 77; }
echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return d && n < 0; }' |
	clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null ||
	{ echo "fuzz: skip: clang has no libFuzzer (libclang-rt-dev)"; exit 77; }
mkdir -p "$out"
trap 'rm -f "$out/.times.$$"' EXIT

# fuzz_child_cpu: set cpu_now to the user + system seconds of this shell's
# waited-for children. `times` must run in this shell (a subshell's children
# are its own), so it goes through a file; its second line is
# "XmY.YYYs XmY.YYYs".
fuzz_child_cpu() {
	times >"$out/.times.$$"
	cpu_now=$(awk 'NR == 2 {
		n = split($0, f, /[ms ]+/); s = 0
		for (i = 1; i + 1 <= n; i += 2) s += f[i] * 60 + f[i + 1]
		printf "%d\n", s }' "$out/.times.$$")
}

# fuzz_stop_at_cpu PID SECONDS: poll PID's CPU time (/proc/PID/stat fields
# 14 and 15, in clock ticks) and send SIGUSR1 once it reaches SECONDS.
fuzz_stop_at_cpu() {
	local pid=$1 budget=$(($2 * $(getconf CLK_TCK))) used
	while kill -0 "$pid" 2>/dev/null; do
		used=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null) || break
		if ((used >= budget)); then
			kill -USR1 "$pid" 2>/dev/null
			break
		fi
		sleep 5
	done
}

targets=("$@")
if ((${#targets[@]} == 0)); then
	for t in tests/fuzz/*_fuzz.c; do [[ -f $t ]] && targets+=("$(basename "$t" .c)"); done
fi
for name in "${targets[@]}"; do
	[[ -f tests/fuzz/$name.c ]] || { echo "fuzz: no target tests/fuzz/$name.c"; exit 1; }
done

echo "fuzz: building ${targets[*]}"
make --no-print-directory -j"${FUZZ_JOBS:-2}" FUZZ=1 BUILD="$out" "${targets[@]/#/$out/}" >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log"; echo "fuzz: the fuzz targets do not build"; exit 1; }

# fuzz_one NAME: replay the seeds and fuzz one target; 0, or 1 when it
# found something (its log's tail printed). Run in a subshell, so that its
# `times` counts its own fuzzer only.
fuzz_one() {
	local name=$1 bin=$out/$1 corpus=$out/$1-corpus seeds=$out/$1-seeds kept=tests/fuzz/corpus/$1
	local dirs args wall before start pid rc
	mkdir -p "$corpus" "$seeds"
	if [[ -x tests/fuzz/$name.seeds.sh ]]; then
		tests/fuzz/$name.seeds.sh "$seeds" || { echo "fuzz: $name.seeds.sh failed"; return 1; }
	fi
	dirs=("$corpus" "$seeds")
	[[ -d $kept ]] && dirs+=("$kept")
	args=()
	[[ -f tests/fuzz/$name.dict ]] && args+=(-dict="tests/fuzz/$name.dict")
	# shellcheck disable=SC2207
	args+=($(sed -n 's/^.*FUZZ_ARGS:[[:space:]]*//p' "tests/fuzz/$name.c" | head -n 1))
	wall=$secs
	((cpu_mode)) && wall=$((secs * 20))
	echo "fuzz: running $name for ${secs}s$( ((cpu_mode)) && echo ' of CPU time')"
	fuzz_child_cpu
	before=$cpu_now start=$SECONDS
	# In the background so the budget can be watched; a background job of
	# a script ignores SIGINT, so an interrupt or a TERM is passed on.
	# (ASan hands freed memory back to the OS every second, so RSS follows
	# the live heap more closely.) A target's FUZZ_ARGS come after the
	# defaults and override them (-max_len=...).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_release_to_os_interval_ms=1000} \
		"$bin" -max_total_time="$wall" -timeout=10 -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -max_len=16384 \
		"${args[@]}" -artifact_prefix="$out/$name-" -print_final_stats=1 \
		"${dirs[@]}" >"$out/$name.log" 2>&1 &
	pid=$!
	trap 'kill "$pid" 2>/dev/null; exit 130' INT TERM
	((cpu_mode)) && fuzz_stop_at_cpu "$pid" "$secs"
	wait "$pid"
	rc=$?
	trap - INT TERM
	fuzz_child_cpu
	echo "fuzz: $name: cpu $((cpu_now - before)) s, wall $((SECONDS - start)) s"
	((rc == 0)) ||
		{ tail -n 40 "$out/$name.log"; echo "fuzz: $name FAILED (reproducer in $out/)"; return 1; }
	grep -E '^stat::(number_of_executed_units|new_units_added)' "$out/$name.log" | sed "s/^/$name: /" || true
}

# FUZZ_PARALLEL targets at a time (default 1), each in its own subshell
# that leaves its status in $out/NAME.rc
parallel=${FUZZ_PARALLEL:-1}
trap 'kill $(jobs -p) 2>/dev/null; exit 130' INT TERM
for name in "${targets[@]}"; do
	while (($(jobs -pr | wc -l) >= parallel)); do
		wait -n
	done
	rm -f "$out/$name.rc"
	(
		fuzz_one "$name"
		echo $? >"$out/$name.rc"
	) &
done
wait
failed=0
for name in "${targets[@]}"; do
	[[ $(cat "$out/$name.rc" 2>/dev/null) == 0 ]] || failed=1
done
((failed)) && exit 1
echo "fuzz: ok"
