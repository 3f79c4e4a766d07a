#!/usr/bin/env bash
# The shared KubeVirt resolution corpus (../shared/spec/cases), run against
# vmlet and against its sanitizer build (any ASan/UBSan report fails).
source "$(dirname "$0")/../lib/sh.sh"
cases=../shared/spec/cases
tool=../shared/tools/kv-conformance
[[ -d $cases && -x $tool ]] || skip "../shared/spec/cases not present"
out=$("$tool" --vmlet "$VMLET" "$cases") || fail "conformance: $(echo "$out" | tail -n 20)"
echo "$out" | tail -n 1
if [[ -x $VMLET_SAN ]]; then
	export ASAN_OPTIONS=detect_leaks=1:exitcode=99
	out=$("$tool" --vmlet "$VMLET_SAN" "$cases") || fail "conformance under ASan/UBSan: $(echo "$out" | tail -n 20)"
	echo "san: $(echo "$out" | tail -n 1)"
fi
finish
