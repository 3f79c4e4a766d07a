#!/usr/bin/env bash
# The VMI annotations KubeVirt reads to change the domain or the
# virt-launcher pod (spec/fields_annot.c), on a running VM: what vmlet
# already does (kubevirt.io/disablePCIHole64: "True": vmlet's host bridge
# has no 64-bit window) passes silently; CRI-O's load-balancing and quota
# annotations, also when an instancetype brings them, and a PCI placement
# vmlet does not follow are warnings that `run` logs with field and source;
# kubevirt.io/ignitiondata, which the guest would miss, stops `run` before
# the guest starts. KubeVirt's own view (resolve) is untouched.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
tiny_guests 5

vm() { # ANNOTATION-LINES [INSTANCETYPE]
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: an, namespace: default}\n'
	printf 'spec:\n  runStrategy: Once\n'
	[[ -n ${2:-} ]] && printf '  instancetype: {name: %s}\n' "$2"
	printf '  template:\n    metadata:\n      annotations:\n%s\n    spec:\n      domain:\n' "$1"
	[[ -n ${2:-} ]] || printf '        memory: {guest: 64Mi}\n'
	printf '        devices: {autoattachPodInterface: false}\n'
}
A='        kubevirt.io/disablePCIHole64: "True"
        kubevirt.io/placePCIDevicesOnRootComplex: "false"
        cpu-quota.crio.io: disable'
vm "$A" >"$TMPD/vm.yaml"
timeout 60 "$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode5.elf" >"$TMPD/out" 2>"$TMPD/err"
rc=$?
python3 - "$TMPD/err" "$TMPD/vm.yaml" <<'PY' && ((rc == 0)) && grep -q tiny-guest "$TMPD/out" &&
import json, sys
logs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
w = {l["field"]: l for l in logs if l.get("level") == "warning" and "field" in l}
p = "spec.template.metadata.annotations"
assert p + "[kubevirt.io/disablePCIHole64]" not in w, w
a = w[p + "[kubevirt.io/placePCIDevicesOnRootComplex]"]
assert a["source"] == sys.argv[2] + ":10:51" and "PCI root bus" in a["msg"], a
q = w[p + "[cpu-quota.crio.io]"]
assert q["source"] == sys.argv[2] + ":11:28" and "no CRI-O" in q["msg"], q
PY
	ok "run: disablePCIHole64 True silent, placePCIDevicesOnRootComplex false and cpu-quota.crio.io warned (field, source), exit 0" ||
	fail "run with annotations: exit $rc, $(grep -i warn "$TMPD/err" | head -5)"
"$VMLET" resolve -f "$TMPD/vm.yaml" >/dev/null 2>"$TMPD/err" && [[ ! -s $TMPD/err ]] &&
	ok "resolve (KubeVirt's view): no warning" || fail "plain resolve: $(cat "$TMPD/err")"

# an instancetype's annotations (the common n1 class carries these three)
{
	vm '        app: x' n1
	printf -- '---\napiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n'
	printf 'metadata: {name: n1}\nspec:\n  annotations:\n    cpu-load-balancing.crio.io: disable\n'
	printf '    cpu-quota.crio.io: disable\n    irq-load-balancing.crio.io: disable\n'
	printf '  cpu: {guest: 1}\n  memory: {guest: 64Mi}\n'
} >"$TMPD/it.yaml"
"$VMLET" resolve -f "$TMPD/it.yaml" -o config >/dev/null 2>"$TMPD/err"
rc=$?
n=$(grep -c "warning: spec.template.metadata.annotations\[\(cpu-load-balancing\|cpu-quota\|irq-load-balancing\).crio.io\]: no CRI-O" "$TMPD/err")
((rc == 0 && n == 3)) && ok "an instancetype's CRI-O annotations: three warnings" ||
	fail "instancetype annotations: exit $rc, $n warnings: $(cat "$TMPD/err")"

vm "$A
        kubevirt.io/ignitiondata: '{\"ignition\": {\"version\": \"3.3.0\"}}'" >"$TMPD/ign.yaml"
timeout 60 "$VMLET" run -f "$TMPD/ign.yaml" --kernel "$TMPD/mode5.elf" >"$TMPD/out" 2>"$TMPD/err"
rc=$?
((rc == 1)) && [[ ! -s $TMPD/out ]] &&
	grep -q "^$TMPD/ign.yaml:12:35: spec.template.metadata.annotations\[kubevirt.io/ignitiondata\]: vmlet has no fw_cfg device" "$TMPD/err" &&
	ok "ignitiondata: run refuses before the guest starts (exit 1, FILE:LINE:COL)" ||
	fail "ignitiondata: exit $rc, $(grep -v '^{' "$TMPD/err" | head -3)"
finish
