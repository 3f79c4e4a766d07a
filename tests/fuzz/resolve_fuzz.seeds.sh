#!/usr/bin/env bash
# Seeds for resolve_fuzz: each conformance case as one multi-document input
# and each of its files alone, and examples/vm. $1: the seed directory.
set -u
dir=$1
for d in tests/conformance/cases/*/ tests/conformance/vmlet-cases/*/; do
	n=$(basename "$d")
	for f in "$d"*.yaml; do cat "$f"; echo "---"; done >"$dir/$n.yaml"
	for f in "$d"*.yaml; do cp "$f" "$dir/$n-$(basename "$f")"; done
done
for f in examples/vm/*.yaml; do cat "$f"; echo "---"; done >"$dir/examples-vm.yaml"
