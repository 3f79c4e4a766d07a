#!/usr/bin/env bash
# The resolution corpus in tests/conformance (the team's shared cases and
# vmlet's own), run against vmlet and against its sanitizer build (any
# ASan/UBSan report fails). Every output object is also checked against
# KubeVirt's schema (tests/conformance/schema_check.py).
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
command -v python3 >/dev/null || skip "no python3"
tool=tests/conformance/kv-conformance
cases=(tests/conformance/cases tests/conformance/vmlet-cases)
n=$(ls -d tests/conformance/cases/*/ | wc -l)
((n >= 102)) || fail "only $n shared cases in tests/conformance/cases"
out=$("$tool" --vmlet "$VMLET" "${cases[@]}") || fail "conformance: $(echo "$out" | tail -n 20)"
echo "$out" | tail -n 1
if [[ -x $VMLET_SAN ]]; then
	export ASAN_OPTIONS=detect_leaks=1:exitcode=99
	out=$("$tool" --vmlet "$VMLET_SAN" "${cases[@]}") || fail "conformance under ASan/UBSan: $(echo "$out" | tail -n 20)"
	echo "san: $(echo "$out" | tail -n 1)"
fi
finish
