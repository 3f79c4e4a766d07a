#!/usr/bin/env bash
# A pod that passes its manifests in $VMLET_MANIFEST (no -f) gets the VM they
# describe: the probe must see examples/vm's resolved topology (2 sockets x
# 1 core x 2 threads from a 4-vCPU instancetype and a spread preference),
# not vmlet's 1-vCPU default. A broken manifest in the variable fails with
# the resolver's error and exit status 1.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
manifest=$(for f in examples/vm/*.yaml; do echo '---'; cat "$f"; done)
out=$(VMLET_MANIFEST="$manifest" timeout 60 "$VMLET" probe -o json 2>"$TMPD/err")
rc=$?
[[ $rc -eq 0 ]] || fail "probe with VMLET_MANIFEST exited $rc: $(tail -n 3 "$TMPD/err")"
topo=$(echo "$out" | python3 -c 'import json,sys; g=json.load(sys.stdin)["guest"]; print(g["sockets"], g["coresPerSocket"], g["threadsPerCore"], len(g["vcpus"]))' 2>/dev/null)
[[ $topo == "2 1 2 4" ]] && ok "guest sees 2/1/2 from VMLET_MANIFEST" || fail "guest topology '$topo', want '2 1 2 4'"

VMLET_MANIFEST="kind: VirtualMachine
apiVersion: kubevirt.io/v1
metadata: {name: bad}
spec:
  template:
    spec:
      domain:
        cpu: {sockets: many}" timeout 60 "$VMLET" probe >"$TMPD/out" 2>"$TMPD/err"
rc=$?
[[ $rc -eq 1 ]] || fail "bad VMLET_MANIFEST: exit $rc, want 1"
grep -q 'spec.template.spec.domain.cpu.sockets' "$TMPD/err" && ok "error names the field" || fail "error lacks the field path: $(cat "$TMPD/err")"
[[ -s $TMPD/out ]] && fail "stdout not empty on error"
finish
