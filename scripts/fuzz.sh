#!/usr/bin/env bash
# Build the libFuzzer targets (clang, ASan+UBSan+libFuzzer) and run each for
# SECONDS (argument, else $FUZZ_SECONDS, else 60). Seeds: the shared
# conformance cases (../shared/spec/cases, each case as one multi-document
# file and each file alone) and examples/vm. Crashes land in build/fuzz/.
# Exit 0 when nothing was found, 77 when clang is missing, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
secs=${1:-${FUZZ_SECONDS:-60}}
out=build/fuzz
command -v clang >/dev/null || { echo "fuzz: skip: clang not installed"; exit 77; }
mkdir -p "$out/corpus" "$out/seeds"

srcs=(spec/*.c vmm/vm_config.c)
flags=(-std=gnu11 -D_GNU_SOURCE -I. -g -O1 -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       $(pkg-config --cflags yaml-0.1 json-c))
bin=$out/resolve_fuzz
if [[ ! -x $bin ]] || [[ -n $(find spec tests/fuzz vmm/vm_config.c -newer "$bin" -print -quit) ]]; then
	echo "fuzz: building $bin"
	clang "${flags[@]}" -o "$bin" tests/fuzz/resolve_fuzz.c "${srcs[@]}" \
		$(pkg-config --libs yaml-0.1 json-c) || exit 1
fi

# seeds
if [[ -d ../shared/spec/cases ]]; then
	for d in ../shared/spec/cases/*/; do
		n=$(basename "$d")
		for f in "$d"*.yaml; do
			cat "$f"
			echo "---"
		done >"$out/seeds/$n.yaml"
		for f in "$d"*.yaml; do cp "$f" "$out/seeds/$n-$(basename "$f")"; done
	done
fi
for f in examples/vm/*.yaml; do cat "$f"; echo "---"; done >"$out/seeds/examples-vm.yaml"

echo "fuzz: running $bin for ${secs}s"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
	-dict=tests/fuzz/resolve.dict -artifact_prefix="$out/" -print_final_stats=1 \
	"$out/corpus" "$out/seeds" 2>&1 | grep -vE '^#[0-9]+\s+(NEW|REDUCE|pulse)'
rc=${PIPESTATUS[0]}
if ((rc != 0)); then
	echo "fuzz: FAILED (status $rc); reproducer in $out/"
	exit 1
fi
echo "fuzz: ok"
