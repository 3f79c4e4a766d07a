#!/usr/bin/env bash
# Build and run the libFuzzer targets tests/fuzz/*_fuzz.c (clang,
# -fsanitize=fuzzer,address,undefined) for SECONDS seconds each (argument 1,
# else $FUZZ_SECONDS, else 60); further arguments name the targets to run
# (default: all).
#
# A target declares what it links in comment lines:
#   FUZZ_SRCS: files or globs (relative to the top directory)
#   FUZZ_PKGS: pkg-config packages (optional)
# Optional companions: tests/fuzz/NAME.dict (libFuzzer dictionary) and
# tests/fuzz/NAME.seeds.sh (run with a directory to fill with seed inputs).
# Corpora live in build/fuzz/NAME-corpus, crash reproducers in build/fuzz/.
# Exit 0 when nothing was found, 77 when clang is missing, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
secs=${1:-${FUZZ_SECONDS:-60}}
shift $(($# > 0 ? 1 : 0))
out=build/fuzz
command -v clang >/dev/null || { echo "fuzz: skip: clang not installed"; exit 77; }
mkdir -p "$out"
# generated sources a target may list (build/gen/: the schema table)
make --no-print-directory -s gen || { echo "fuzz: cannot generate build/gen/"; exit 1; }
cflags=(-std=gnu11 -D_GNU_SOURCE -I. -g -O1 -fno-omit-frame-pointer
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)

targets=("$@")
if ((${#targets[@]} == 0)); then
	for t in tests/fuzz/*_fuzz.c; do [[ -f $t ]] && targets+=("$(basename "$t" .c)"); done
fi

for name in "${targets[@]}"; do
	t=tests/fuzz/$name.c
	[[ -f $t ]] || { echo "fuzz: no target $t"; exit 1; }
	srcs=$(sed -n 's/^.*FUZZ_SRCS:[[:space:]]*//p' "$t" | head -n 1)
	pkgs=$(sed -n 's/^.*FUZZ_PKGS:[[:space:]]*//p' "$t" | head -n 1)
	if [[ -z $srcs ]]; then
		echo "fuzz: $name declares no FUZZ_SRCS, not run"
		continue
	fi
	bin=$out/$name
	# shellcheck disable=SC2086
	if [[ ! -x $bin ]] || [[ -n $(find $t $srcs -newer "$bin" -print -quit 2>/dev/null) ]]; then
		echo "fuzz: building $name"
		# shellcheck disable=SC2086
		clang "${cflags[@]}" ${pkgs:+$(pkg-config --cflags $pkgs)} -o "$bin" "$t" $srcs \
			${pkgs:+$(pkg-config --libs $pkgs)} || { echo "fuzz: $name does not build"; exit 1; }
	fi
	corpus=$out/$name-corpus seeds=$out/$name-seeds
	mkdir -p "$corpus" "$seeds"
	[[ -x tests/fuzz/$name.seeds.sh ]] && tests/fuzz/$name.seeds.sh "$seeds"
	dict=()
	[[ -f tests/fuzz/$name.dict ]] && dict=(-dict="tests/fuzz/$name.dict")
	echo "fuzz: running $name for ${secs}s"
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
		"${dict[@]}" -artifact_prefix="$out/$name-" -print_final_stats=1 \
		"$corpus" "$seeds" >"$out/$name.log" 2>&1 ||
		{ tail -n 40 "$out/$name.log"; echo "fuzz: $name FAILED (reproducer in $out/)"; exit 1; }
	grep -E '^stat::(number_of_executed_units|new_units_added)' "$out/$name.log" || true
done
echo "fuzz: ok"
