#!/usr/bin/env bash
# Build and run the libFuzzer targets tests/fuzz/*_fuzz.c for SECONDS seconds
# each (argument 1, else $FUZZ_SECONDS, else 60); further arguments name the
# targets to run (default: all).
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
secs=${1:-${FUZZ_SECONDS:-60}}
shift $(($# > 0 ? 1 : 0))
out=build/fuzz
command -v clang >/dev/null || { echo "fuzz: skip: clang not installed"; exit 77; }
echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return d && n < 0; }' |
	clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null ||
	{ echo "fuzz: skip: clang has no libFuzzer (libclang-rt-dev)"; exit 77; }
mkdir -p "$out"

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

for name in "${targets[@]}"; do
	bin=$out/$name corpus=$out/$name-corpus seeds=$out/$name-seeds kept=tests/fuzz/corpus/$name
	mkdir -p "$corpus" "$seeds"
	if [[ -x tests/fuzz/$name.seeds.sh ]]; then
		tests/fuzz/$name.seeds.sh "$seeds" || { echo "fuzz: $name.seeds.sh failed"; exit 1; }
	fi
	dirs=("$corpus" "$seeds")
	[[ -d $kept ]] && dirs+=("$kept")
	args=()
	[[ -f tests/fuzz/$name.dict ]] && args+=(-dict="tests/fuzz/$name.dict")
	# shellcheck disable=SC2207
	args+=($(sed -n 's/^.*FUZZ_ARGS:[[:space:]]*//p' "tests/fuzz/$name.c" | head -n 1))
	echo "fuzz: running $name for ${secs}s"
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
		"${args[@]}" -artifact_prefix="$out/$name-" -print_final_stats=1 \
		"${dirs[@]}" >"$out/$name.log" 2>&1 ||
		{ tail -n 40 "$out/$name.log"; echo "fuzz: $name FAILED (reproducer in $out/)"; exit 1; }
	grep -E '^stat::(number_of_executed_units|new_units_added)' "$out/$name.log" || true
done
echo "fuzz: ok"
