#!/usr/bin/env bash
# examples/kubernetes/ and the Containerfile, checked offline (there is no
# cluster and no container engine here):
#  - kubectl (if installed) decodes the Pod and the Deployment into their
#    typed form (`kubectl set serviceaccount --local`, which converts to
#    typed objects); a field kubectl drops is a misspelled or unknown field. `kubectl create --dry-run=client` needs an API server
#    for discovery, so it cannot run here.
#  - python3-yaml checks what the pod contract promises: vmlet as the
#    entrypoint, /dev/kvm via devices.kubevirt.io/kvm, non-root, read-only
#    root filesystem, no privilege escalation, no capabilities, seccomp
#    RuntimeDefault, the ConfigMap mounted where -f points, and a
#    terminationGracePeriodSeconds covering the VM's own.
#  - the VM in the ConfigMap resolves with vmlet (once resolve exists).
source "$(dirname "$0")/../lib/sh.sh"
command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml missing"
K=examples/kubernetes

if command -v kubectl >/dev/null; then
	for f in "$K"/*.yaml; do
		grep -qE '^kind: (Pod|Deployment)$' "$f" || continue
		if ! timeout 60 kubectl set serviceaccount --local -f "$f" default -o yaml \
			>"$TMPD/$(basename "$f").typed" 2>"$TMPD/kubectl.err"; then
			cat "$TMPD/kubectl.err"; fail "kubectl cannot decode $f"; continue
		fi
		if python3 - "$f" "$TMPD/$(basename "$f").typed" <<'PY'
import sys, yaml
src = list(yaml.safe_load_all(open(sys.argv[1])))
typed = list(yaml.safe_load_all(open(sys.argv[2])))
typed = typed[0]["items"] if len(typed) == 1 and typed[0].get("kind") == "List" else typed
bad = []
def walk(a, b, path):
    if isinstance(a, dict):
        if not isinstance(b, dict):
            bad.append(path); return
        for k, v in a.items():
            if k not in b:
                bad.append(path + "." + str(k))
            else:
                walk(v, b[k], path + "." + str(k))
    elif isinstance(a, list):
        if not isinstance(b, list) or len(b) != len(a):
            bad.append(path); return
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, "%s[%d]" % (path, i))
for s, t in zip(src, typed):
    walk(s, t, s["kind"])
if bad:
    print("fields kubectl dropped (unknown or misspelled):", *bad, sep="\n  ")
    sys.exit(1)
PY
		then ok "kubectl decodes $f without dropping fields"; else fail "$f has unknown fields"; fi
	done
else
	echo "note: kubectl not installed, typed decoding not checked"
fi

python3 - "$K" "$TMPD" <<'PY' || fail "pod contract"
import os, sys, yaml
kdir, tmp = sys.argv[1], sys.argv[2]
objs = [o for f in sorted(os.listdir(kdir)) if f.endswith(".yaml")
        for o in yaml.safe_load_all(open(os.path.join(kdir, f)))]
cms = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ConfigMap"}
errors = []
def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        errors.append(what)

pods = [(o["kind"] + "/" + o["metadata"]["name"],
         o["spec"] if o["kind"] == "Pod" else o["spec"]["template"]["spec"])
        for o in objs if o["kind"] in ("Pod", "Deployment")]
check({k.split("/")[0] for k, _ in pods} == {"Pod", "Deployment"}, "a Pod and a Deployment")
for name, spec in pods:
    psc = spec.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser", 0) != 0, name + ": non-root")
    check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", name + ": seccomp RuntimeDefault")
    vm = [c for c in spec["containers"] if c["name"] == "vmlet"]
    check(len(vm) == 1, name + ": a vmlet container")
    if not vm:
        continue
    c = vm[0]
    sc = c.get("securityContext", {})
    check(sc.get("readOnlyRootFilesystem") is True, name + ": read-only root filesystem")
    check(sc.get("allowPrivilegeEscalation") is False, name + ": no privilege escalation")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], name + ": drops all capabilities")
    check(not sc.get("privileged"), name + ": not privileged")
    check(c["resources"]["limits"].get("devices.kubevirt.io/kvm") == "1", name + ": /dev/kvm via devices.kubevirt.io/kvm")
    check("command" not in c and c["args"][0] in ("run", "probe"), name + ": vmlet is the entrypoint")
    args = c["args"]
    fdir = args[args.index("-f") + 1]
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    cmname = vols.get(mounts.get(fdir), {}).get("configMap", {}).get("name")
    check(cmname in cms, name + ": -f %s is the mounted ConfigMap" % fdir)
    if cmname not in cms:
        continue
    vms = [yaml.safe_load(v) for v in cms[cmname]["data"].values()]
    vmobj = [v for v in vms if v["kind"] == "VirtualMachine"][0]
    vm_grace = vmobj["spec"]["template"]["spec"].get("terminationGracePeriodSeconds", 30)
    pod_grace = spec.get("terminationGracePeriodSeconds", 30)
    check(vm_grace <= pod_grace <= vm_grace + 10,
          name + ": pod grace %ss covers the VM's %ss" % (pod_grace, vm_grace))
    mem_limit = c["resources"]["limits"].get("memory", "")
    check(mem_limit.endswith("Mi") and int(mem_limit[:-2]) > 256, name + ": memory limit above guest memory")
    if "--api-socket" in args:
        sock_dir = os.path.dirname(args[args.index("--api-socket") + 1])
        check(sock_dir in mounts and "emptyDir" in vols[mounts[sock_dir]], name + ": api socket on an emptyDir")
    os.makedirs(os.path.join(tmp, "cm"), exist_ok=True)
    for k, v in cms[cmname]["data"].items():
        open(os.path.join(tmp, "cm", k), "w").write(v)
sys.exit(1 if errors else 0)
PY

# Containerfile: multi-stage, empty final image, static vmlet as entrypoint
grep -q '^FROM .* AS build' Containerfile && grep -q '^FROM scratch' Containerfile &&
	grep -q 'make static' Containerfile && grep -q '^ENTRYPOINT \["/vmlet"\]' Containerfile &&
	grep -qE '^USER [1-9][0-9]*:[1-9]' Containerfile && ok "Containerfile: static, scratch, non-root" ||
	fail "Containerfile shape"

if "$VMLET" resolve --help >/dev/null 2>&1 && [[ -d $TMPD/cm ]]; then
	"$VMLET" resolve -f "$TMPD/cm" -o json >"$TMPD/vm.json" 2>"$TMPD/resolve.err" &&
		ok "the ConfigMap's VM resolves" || { cat "$TMPD/resolve.err"; fail "ConfigMap VM does not resolve"; }
else
	echo "note: resolve not available yet, ConfigMap VM not resolved"
fi
finish
