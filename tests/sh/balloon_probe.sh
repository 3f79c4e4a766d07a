#!/usr/bin/env bash
# The memory balloon on vmlet's PCI bus as the probe guest sees it: a VM
# without autoattachMemBalloon gets a virtio-balloon function (1af4:1045,
# the last slot, after virtio-rng and the guest agent's virtio-serial
# controller 1af4:1043) and `resolve -o config` says so with free
# page reporting; autoattachMemBalloon: false gives neither, and
# dedicatedCpuPlacement keeps the balloon but turns reporting off.
source "$(dirname "$0")/../lib/sh.sh"

[[ -x $VMLET ]] || skip "no $VMLET"

vm() { # $1: more lines under devices (8 spaces in), $2: more under domain
	cat <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: bal, namespace: default}
spec:
  runStrategy: Always
  template:
    spec:
      domain:
        memory: {guest: 128Mi}
${2:-}        devices:
          rng: {}
          autoattachPodInterface: false
$1
YAML
}
vm "" >"$TMPD/default.yaml"
vm "          autoattachMemBalloon: false" >"$TMPD/off.yaml"
vm "" "        cpu: {dedicatedCpuPlacement: true, cores: 1}
" >"$TMPD/dedicated.yaml"

cfg() { "$VMLET" resolve -f "$1" -o config 2>/dev/null |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["memBalloon"], d["freePageReporting"])'; }
[[ $(cfg "$TMPD/default.yaml") == "True True" ]] && ok "default: a balloon with free page reporting" ||
	fail "default config: $(cfg "$TMPD/default.yaml")"
[[ $(cfg "$TMPD/off.yaml") == "False False" ]] && ok "autoattachMemBalloon: false: no balloon" ||
	fail "off config: $(cfg "$TMPD/off.yaml")"
[[ $(cfg "$TMPD/dedicated.yaml") == "True False" ]] &&
	ok "dedicatedCpuPlacement: a balloon without free page reporting" ||
	fail "dedicated config: $(cfg "$TMPD/dedicated.yaml")"

have_kvm || skip "no usable /dev/kvm"
pci() { timeout 120 "$VMLET" probe -f "$1" -o json 2>"$TMPD/err" | tail -n 1 |
	python3 -c 'import json,sys; d=json.load(sys.stdin)["guest"]["pci"]; print(" ".join(p["address"] + "=" + p["device"] for p in d))'; }
got=$(pci "$TMPD/default.yaml")
[[ $got == *" 00:01.0=1044 00:02.0=1043 00:03.0=1045" ]] &&
	ok "the probe finds virtio-balloon after virtio-rng and virtio-serial: $got" ||
	fail "default: PCI functions '$got' $(head -3 "$TMPD/err")"
got=$(pci "$TMPD/off.yaml")
[[ -n $got && $got != *1045* ]] && ok "autoattachMemBalloon: false: no balloon on the bus: $got" ||
	fail "off: PCI functions '$got' $(head -3 "$TMPD/err")"
finish
