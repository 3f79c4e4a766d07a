#!/usr/bin/env bash
# `vmlet probe` end to end: the embedded probe guest boots on vmlet's VMM
# for a topology matrix (non-powers of two, 64 vCPUs), several memory sizes
# (one above 4 GiB: guest memory is mapped lazily, so 5 GiB costs nothing)
# and both vendor enumerations, and what it reports must match what the
# configuration promises (exit 0, "match": true).
#
# The independent oracle (the same dumped probe ELF under QEMU microvm must
# report the same per-vCPU ids as under vmlet) is tests/sh/probe_qemu_vmlet.sh.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
"$VMLET" probe --dump-guest "$TMPD/probe.elf" 2>"$TMPD/err" ||
	skip "vmlet has no probe guest: $(cat "$TMPD/err")"

probe() { # NAME ARGS... : vmlet probe must exit 0 with "match":true
	local name=$1 rc
	shift
	timeout 120 "$VMLET" probe -o json --show-console "$@" >"$TMPD/out.json" 2>"$TMPD/console"
	rc=$?
	if ((rc == 0)) && grep -q '"match": *true' "$TMPD/out.json"; then
		ok "$name"
	else
		fail "$name: exit $rc"
		grep -v '^VMLET\|=' "$TMPD/console" | tail -n 15 | sed 's/^/    /'
	fi
}

MATRIX="1/1/1 2/1/1 1/2/1 1/1/2 2/2/2 3/1/1 1/3/1 1/1/3 2/3/2 4/2/1 1/16/2 4/8/2" # 4/8/2 = 64
for vendor in intel amd; do
	for topo in $MATRIX; do
		probe "$vendor $topo" --smp "${topo//\//,}" --memory 128Mi --cpu-vendor "$vendor"
	done
done
for mem in 64Mi 1000Mi 3Gi 5Gi; do
	probe "intel 2/2/1 $mem" --smp 2,2,1 --memory "$mem" --cpu-vendor intel
	probe "amd 1/3/1 $mem" --smp 1,3,1 --memory "$mem" --cpu-vendor amd
done

finish
