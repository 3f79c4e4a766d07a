#!/bin/sh
# Build and run every libFuzzer target tests/fuzz/*_fuzz.c for SECONDS
# seconds each (default 60). A target names the sources it links in a
# "FUZZ_SRCS:" comment line. Corpora live in build/fuzz/<target>-corpus.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
out=build/fuzz
mkdir -p "$out"
CFLAGS="-std=gnu11 -D_GNU_SOURCE -I. -g -O1 -fsanitize=fuzzer,address,undefined"
for t in tests/fuzz/*_fuzz.c; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .c)
	srcs=$(sed -n 's/^.*FUZZ_SRCS:[[:space:]]*//p' "$t" | head -n 1)
	echo "fuzz: building $name"
	# shellcheck disable=SC2086
	clang $CFLAGS -o "$out/$name" "$t" $srcs
	mkdir -p "$out/$name-corpus"
	echo "fuzz: running $name for ${secs}s"
	"$out/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 "$out/$name-corpus" >"$out/$name.log" 2>&1 ||
		{ tail -n 40 "$out/$name.log"; echo "fuzz: $name FAILED"; exit 1; }
	grep -E '^stat::number_of_executed_units' "$out/$name.log" || true
done
echo "fuzz: ok"
