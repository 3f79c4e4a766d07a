#!/usr/bin/env bash
# KubeVirt's admission rules (docs/resolution.md §19) refuse alike in
# `resolve -o json`, `resolve -o config` and `run`: for every admission case
# of tests/conformance/vmlet-cases (v12 on), exit 1, every line of its
# expected-error.txt on stderr, nothing on stdout, and `run` starts no guest.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
tiny_guests 5

n=0
for d in tests/conformance/vmlet-cases/v[1-9][0-9]-*/; do
	id=$(basename "$d")
	num=${id%%-*}
	((10#${num#v} >= 12)) && [[ -f $d/expected-error.txt ]] || continue
	n=$((n + 1))
	for mode in json config run; do
		if [[ $mode == run ]]; then
			timeout 20 "$VMLET" run -f "$d/vm.yaml" --kernel "$TMPD/mode5.elf" \
				--log-format text >"$TMPD/out" 2>"$TMPD/err"
		else
			timeout 20 "$VMLET" resolve -o $mode -f "$d/vm.yaml" >"$TMPD/out" 2>"$TMPD/err"
		fi
		rc=$?
		bad=
		((rc == 1)) || bad="exit $rc"
		[[ -s $TMPD/out ]] && bad+=" stdout not empty"
		grep -q "tiny-guest" "$TMPD/out" "$TMPD/err" && bad+=" the guest started"
		while IFS= read -r line; do
			[[ -z $line ]] && continue
			grep -qF -- "$line" "$TMPD/err" || bad+=" lacks '$line'"
		done <"$d/expected-error.txt"
		grep -qE "^$d/?vm.yaml:[0-9]+:[0-9]+: " "$TMPD/err" || bad+=" no FILE:LINE:COL"
		[[ -z $bad ]] || fail "$id ($mode):$bad: $(head -2 "$TMPD/err")"
	done
done
((n >= 58)) && ok "$n admission cases refused by resolve -o json, -o config and run" ||
	fail "only $n admission cases"
finish
