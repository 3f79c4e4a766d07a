#!/usr/bin/env bash
# vmlet resolve: inputs (files, directories, stdin, $VMLET_MANIFEST), output
# formats (json, yaml, config, --list, --explain), --vm, exit statuses.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
ex=examples/vm

# default: the VMI as JSON, identical whether read from a dir, files or stdin
"$VMLET" resolve -f $ex >"$TMPD/dir.json" || fail "resolve -f DIR"
"$VMLET" resolve -f $ex/vm.yaml -f $ex/instancetype.yaml -f $ex/preference.yaml >"$TMPD/files.json" \
	|| fail "resolve -f FILE..."
joined() { for f in $ex/*.yaml; do cat "$f"; echo ---; done; }
joined | "$VMLET" resolve -f - >"$TMPD/stdin.json" 2>"$TMPD/stdin.err" || fail "resolve -f -"
cmp -s "$TMPD/dir.json" "$TMPD/files.json" && ok "dir == files" || fail "dir and files differ"
cmp -s "$TMPD/dir.json" "$TMPD/stdin.json" && ok "dir == stdin" || fail "dir and stdin differ"
VMLET_MANIFEST="$(joined)" "$VMLET" resolve >"$TMPD/env.json" || fail "VMLET_MANIFEST"
cmp -s "$TMPD/dir.json" "$TMPD/env.json" && ok "dir == VMLET_MANIFEST" || fail "VMLET_MANIFEST differs"
python3 - "$TMPD/dir.json" <<'PY' || fail "VMI content"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["kind"] == "VirtualMachineInstance", v["kind"]
cpu = v["spec"]["domain"]["cpu"]
assert (cpu["sockets"], cpu["cores"], cpu["threads"]) == (2, 1, 2), cpu
assert v["metadata"]["annotations"]["kubevirt.io/cluster-instancetype-name"] == "example.small"
PY

# -o yaml is the same document
"$VMLET" resolve -f $ex -o yaml >"$TMPD/vmi.yaml" || fail "-o yaml"
python3 - "$TMPD/vmi.yaml" "$TMPD/dir.json" <<'PY' && ok "yaml == json" || fail "-o yaml differs from json"
import json, sys, yaml
assert yaml.safe_load(open(sys.argv[1])) == json.load(open(sys.argv[2]))
PY

# --list: VM after sync, VMI, ControllerRevisions
"$VMLET" resolve -f $ex --list >"$TMPD/list.json" || fail "--list"
python3 - "$TMPD/list.json" <<'PY' && ok "--list" || fail "--list content"
import json, sys
l = json.load(open(sys.argv[1]))
kinds = [i["kind"] for i in l["items"]]
assert kinds == ["VirtualMachine", "VirtualMachineInstance", "ControllerRevision", "ControllerRevision"], kinds
ref = l["items"][0]["status"]["instancetypeRef"]["controllerRevisionRef"]["name"]
assert ref == "example-example.small-v1beta1-5d0b3b36-0c8e-4a43-9c3c-3f1bbd0e7a11-1", ref
PY

# -o config
"$VMLET" resolve -f $ex -o config --disk-root "$TMPD" >"$TMPD/cfg.json" || fail "-o config"
python3 - "$TMPD/cfg.json" <<'PY' && ok "-o config" || fail "-o config content"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["cpu"]["vcpus"] == 4 and c["memory"]["bytes"] == 256 << 20, c
assert c["terminationGracePeriodSeconds"] == 10
assert any(d["name"] == "scratch" and d["source"] == "emptyDisk" for d in c["disks"]), c["disks"]
assert c["interfaces"][0]["model"] == "virtio" and c["rng"] is True
PY

# --explain names who set what
"$VMLET" resolve -f $ex --explain >"$TMPD/explain.txt" || fail "--explain"
grep -q 'spec.domain.cpu.sockets .* instancetype example.small' "$TMPD/explain.txt" \
	&& grep -q 'preference example.spread' "$TMPD/explain.txt" \
	&& grep -q 'terminationGracePeriodSeconds .* VM example' "$TMPD/explain.txt" \
	&& ok "--explain" || fail "--explain content: $(head -5 "$TMPD/explain.txt")"

# --vm picks one of several VMs; without it, several VMs are an error
sed 's/name: example$/name: second/' $ex/vm.yaml >"$TMPD/second.yaml"
"$VMLET" resolve -f $ex -f "$TMPD/second.yaml" --vm second >"$TMPD/second.json" \
	&& grep -q '"name": "second"' "$TMPD/second.json" && ok "--vm" || fail "--vm second"
"$VMLET" resolve -f $ex -f "$TMPD/second.yaml" >/dev/null 2>"$TMPD/err"
[[ $? == 1 ]] && grep -q -- '--vm' "$TMPD/err" && ok "ambiguous VM" || fail "several VMs without --vm"

# a ConfigMap manifest holding the VM, its instancetype and preference
if [[ -f examples/kubernetes/configmap.yaml ]]; then
	"$VMLET" resolve -f examples/kubernetes/configmap.yaml >"$TMPD/cm.json" 2>"$TMPD/cm.err" \
		&& grep -q '"kubevirt.io/cluster-instancetype-name"' "$TMPD/cm.json" \
		&& ok "ConfigMap input" || fail "ConfigMap input: $(head -3 "$TMPD/cm.err")"
fi

# seed-era forms resolve with a deprecation warning
cat >"$TMPD/seed.yaml" <<'EOT'
apiVersion: kubevirt.io/v1alpha1
kind: VirtualMachine
metadata:
  name: myvm
  labels:
    kubevirt.io/flavor: small
spec:
  domain:
    resources:
      requests:
        memory: 64Mi
---
apiVersion: kubevirt.io/v1alpha1
kind: VirtualMachinePreset
metadata:
  name: small
spec:
  selector:
    matchLabels:
      kubevirt.io/flavor: small
  domain:
    cpu:
      cores: 2
EOT
"$VMLET" resolve -f "$TMPD/seed.yaml" >"$TMPD/seed.json" 2>"$TMPD/seed.err" || fail "seed-era VM"
grep -q 'seed.yaml:1:1: warning: .*seed-era' "$TMPD/seed.err" && grep -q '"cores": 2' "$TMPD/seed.json" \
	&& grep -q 'virtualmachinepreset.kubevirt.io/small' "$TMPD/seed.json" \
	&& ok "seed-era VM + VirtualMachinePreset" || fail "seed-era: $(cat "$TMPD/seed.err")"

# usage errors: exit 2
for args in "" "--bogus" "-f" "-f $ex -o xml" "-f $ex extra" "-f $ex --volume novalue"; do
	# shellcheck disable=SC2086
	env -u VMLET_MANIFEST "$VMLET" resolve $args >"$TMPD/out" 2>/dev/null
	rc=$?
	[[ $rc == 2 && ! -s $TMPD/out ]] && ok "usage '$args' -> 2" || fail "usage '$args' -> $rc"
done
"$VMLET" resolve --help | grep -q 'usage: vmlet resolve' && ok "--help" || fail "--help"
finish
