#!/usr/bin/env bash
# Strict decoding against KubeVirt's schema on real manifests, and vmlet's
# output checked against the same schema:
#  - every instancetype and preference KubeVirt's common-instancetypes ship
#    (tests/data/common-instancetypes, Apache-2.0) decodes without an error
#    or a warning, and resolves with a VM: each instancetype with one
#    preference, each preference with one instancetype;
#  - examples/ resolves without a warning about its fields;
#  - every `resolve --list -o json` output above stays inside the schema
#    (tests/conformance/schema_check.py: keys, types, enum values).
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
command -v python3 >/dev/null || skip "no python3"
data=tests/data/common-instancetypes
vm() { # $1 instancetype, $2 preference
	cat <<EOT
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: sweep, namespace: default}
spec:
  instancetype: {name: $1}
  preference: {name: $2}
  template:
    spec:
      domain:
        devices: {}
      volumes:
      - name: rootdisk
        containerDisk: {image: quay.io/containerdisks/fedora:latest}
  runStrategy: Always
EOT
}
names() { sed -n 's/^  name: //p' "$data/$1.yaml"; }
its=$(names instancetypes) prefs=$(names preferences)
(($(echo "$its" | wc -l) == 65 && $(echo "$prefs" | wc -l) == 57)) ||
	fail "expected 65 instancetypes and 57 preferences in $data"

n=0
resolve() { # $1 instancetype, $2 preference
	n=$((n + 1))
	if ! vm "$1" "$2" | "$VMLET" resolve --list -o json -f - -f "$data" >"$TMPD/out$n.json" 2>"$TMPD/err"; then
		fail "$1 + $2: $(head -3 "$TMPD/err")"
	elif [[ -s $TMPD/err ]]; then
		fail "$1 + $2: warnings: $(head -3 "$TMPD/err")"
	fi
}
for it in $its; do resolve "$it" alpine; done
for p in $prefs; do resolve u1.2xlarge "$p"; done
ok "$n resolutions with the common-instancetypes"

"$VMLET" resolve --list -o json -f examples/vm >"$TMPD/example-vm.json" 2>"$TMPD/err" ||
	fail "examples/vm: $(head -3 "$TMPD/err")"
grep -E "unknown field|Required|invalid value|unsupported value" "$TMPD/err" && fail "examples/vm: field warnings"
"$VMLET" resolve --list -o json -f examples/kubernetes/configmap.yaml >"$TMPD/example-cm.json" 2>"$TMPD/err" ||
	fail "examples/kubernetes/configmap.yaml: $(head -3 "$TMPD/err")"
grep -E "unknown field|Required|invalid value|unsupported value" "$TMPD/err" && fail "examples/kubernetes: field warnings"

out=$(python3 tests/conformance/schema_check.py "$TMPD"/*.json) || fail "output outside KubeVirt's schema: $(echo "$out" | head -5)"
ok "$(ls "$TMPD"/*.json | wc -l) outputs inside KubeVirt's schema"
finish
