#!/usr/bin/env bash
# docs/fields.md against KubeVirt's schema (scripts/gen-fields walks every
# field under VirtualMachineSpec: a field without a row, or a row naming no
# field, fails), and the table at work: `resolve -o config` warns and
# refuses with FILE:LINE:COL and the field's path, `run` logs the same
# warnings as JSON lines with field and source, and refuses before starting.
source "$(dirname "$0")/../lib/sh.sh"
command -v python3 >/dev/null || skip "no python3"

out=$(scripts/gen-fields 2>&1) && ok "table covers the schema: $out" || fail "gen-fields: $out"
# a schema field without a row fails, naming it
grep -v '^| `spec.template.spec.domain.cpu.model`' docs/fields.md >"$TMPD/missing.md"
scripts/gen-fields --table "$TMPD/missing.md" >"$TMPD/err" 2>&1 && fail "a missing row passed"
grep -q 'spec.template.spec.domain.cpu.model: a schema field without a row' "$TMPD/err" &&
	ok "a missing row fails, naming the field" || fail "missing row: $(cat "$TMPD/err")"
# a row for no schema field fails; so does an unknown treatment
{ cat docs/fields.md; echo '| `spec.template.spec.domain.cpu.socket` |  | implemented |  |'; } >"$TMPD/extra.md"
scripts/gen-fields --table "$TMPD/extra.md" >"$TMPD/err" 2>&1 && fail "a row for no field passed"
grep -q "cpu.socket: not a field of KubeVirt's schema" "$TMPD/err" && ok "a row for no field fails" ||
	fail "extra row: $(cat "$TMPD/err")"
sed 's/| implemented |/| ignored |/' docs/fields.md >"$TMPD/bad.md"
scripts/gen-fields --table "$TMPD/bad.md" >/dev/null 2>&1 && fail "an unknown treatment passed" ||
	ok "an unknown treatment fails"

vm() { # BODY (the template spec's lines, 6 spaces in)
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: f, namespace: default}\n'
	printf 'spec:\n  template:\n    spec:\n%s\n  runStrategy: Once\n' "$1"
}
vm '      domain:
        memory: {guest: 64Mi}
        launchSecurity: {sev: {}}
        devices:
          autoattachPodInterface: false
          autoattachInputDevice: true
        firmware: {bootloader: {efi: {secureBoot: false}}}' >"$TMPD/sev.yaml"
"$VMLET" resolve -f "$TMPD/sev.yaml" -o config >"$TMPD/out" 2>"$TMPD/err" && fail "launchSecurity accepted"
grep -qx "$TMPD/sev.yaml:9:25: spec.template.spec.domain.launchSecurity: vmlet cannot run encrypted guests (SEV, SEV-SNP, TDX): the guest would run unencrypted" "$TMPD/err" &&
	[[ ! -s $TMPD/out ]] && ok "resolve -o config refuses launchSecurity (FILE:LINE:COL: path)" ||
	fail "launchSecurity: $(cat "$TMPD/err")"
grep -q "^$TMPD/sev.yaml:12:34: warning: spec.template.spec.domain.devices.autoattachInputDevice: vmlet has no input device (USB tablet)$" "$TMPD/err" &&
	ok "resolve -o config warns about a field run differently" || fail "no input-device warning: $(cat "$TMPD/err")"
# KubeVirt's own view (resolve without -o config) is untouched
"$VMLET" resolve -f "$TMPD/sev.yaml" >/dev/null 2>"$TMPD/err" && [[ ! -s $TMPD/err ]] &&
	ok "resolve (KubeVirt's VMI) neither warns nor refuses" || fail "plain resolve: $(cat "$TMPD/err")"

vm '      domain:
        devices: {autoattachPodInterface: false}' >"$TMPD/nomem.yaml"
"$VMLET" resolve -f "$TMPD/nomem.yaml" >/dev/null 2>"$TMPD/err" && fail "a VM without memory resolved"
grep -q "spec.template.spec.domain.memory: no memory requested, at least one of 'spec.domain.memory.guest', 'spec.domain.memory.hugepages.size' or 'spec.domain.resources.requests.memory' must be set" "$TMPD/err" &&
	ok "no memory request: refused as KubeVirt refuses it" || fail "no memory: $(cat "$TMPD/err")"

if have_kvm && command -v as >/dev/null; then
	tiny_guests 5
	sed -e '/launchSecurity/d' "$TMPD/sev.yaml" >"$TMPD/warn.yaml"
	timeout 60 "$VMLET" run -f "$TMPD/warn.yaml" --kernel "$TMPD/mode5.elf" --seccomp=off \
		>"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	python3 - "$TMPD/err" "$TMPD/warn.yaml" <<'PY' && ((rc == 0)) && ok "run: the warning is a JSON log line with field and source" || fail "run (exit $rc): $(head -3 "$TMPD/err")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
w = [l for l in lines if l.get("field") == "spec.template.spec.domain.devices.autoattachInputDevice"]
assert len(w) == 1 and w[0]["level"] == "warning", lines
assert w[0]["source"] == sys.argv[2] + ":11:34", w[0]
assert "vmlet has no input device" in w[0]["msg"], w[0]
PY
	timeout 60 "$VMLET" run -f "$TMPD/sev.yaml" --kernel "$TMPD/mode5.elf" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	((rc == 1)) && grep -q "^$TMPD/sev.yaml:9:25: spec.template.spec.domain.launchSecurity: " "$TMPD/err" &&
		! grep -q "tiny-guest" "$TMPD/out" && ok "run refuses launchSecurity before starting (exit 1)" ||
		fail "run with launchSecurity: exit $rc, $(head -3 "$TMPD/err")"
fi
finish
