#!/usr/bin/env bash
# Seeds for resolve_fuzz: each conformance case as one multi-document input
# and each of its files alone, examples/vm, and a VM with 2 x 10,000 labels
# (330 KB: a large input to grow and mutate). $1: the seed directory.
set -u
dir=$1
for d in tests/conformance/cases/*/ tests/conformance/vmlet-cases/*/; do
	n=$(basename "$d")
	for f in "$d"*.yaml; do cat "$f"; echo "---"; done >"$dir/$n.yaml"
	for f in "$d"*.yaml; do cp "$f" "$dir/$n-$(basename "$f")"; done
done
for f in examples/vm/*.yaml; do cat "$f"; echo "---"; done >"$dir/examples-vm.yaml"
{
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: big\n  labels:\n'
	seq -f '    k%07g: v' 0 9999
	printf 'spec:\n  runStrategy: Always\n  template:\n    metadata:\n      labels:\n'
	seq -f '        t%07g: v' 0 9999
	printf '    spec:\n      domain:\n        memory: {guest: 64Mi}\n        devices: {}\n'
} >"$dir/big-labels.yaml"
