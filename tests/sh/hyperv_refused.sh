#!/usr/bin/env bash
# Hyper-V enlightenments (features.hyperv, clock.timer.hyperv,
# features.kvm.hidden; docs/devices.md): `vmlet resolve -o config` gives
# the features KubeVirt's defaults and webhook leave on (synictimer brings
# synic and vpindex, tlbflush and ipi vpindex, spinlocks 4096 retries by
# default, "enabled: false" off); what libvirt or QEMU refuse is refused
# naming the field (synictimer without clock.timer.hyperv, tlbflush.direct
# without vapic, fewer than 4095 spinlock retries, a vendorid of 13
# characters); evmcs on an AMD guest is refused; on a host whose KVM has
# no Hyper-V emulation (kvm-pvm) `vmlet probe` refuses the VM with that
# reason instead of starting a guest without them; kvm.hidden alone boots
# the probe guest. The guest's view is proven on a real KVM by the nested
# scenario hyperv (tests/nested/scenarios/hyperv.sh).
source "$(dirname "$0")/../lib/sh.sh"
command -v python3 >/dev/null || skip "no python3"

vm() { # NAME FEATURES-LINES [CLOCK-LINES]
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: %s, namespace: default}\n' "$1"
	printf 'spec:\n  runStrategy: Once\n  template:\n    spec:\n      domain:\n'
	printf '        memory: {guest: 64Mi}\n        devices: {autoattachPodInterface: false}\n'
	printf '        features:\n%s' "$2"
	[[ -z ${3:-} ]] || printf '        clock:\n%s' "$3"
}
TIMER='          timer: {hyperv: {}}
'
features() { # FILE: the config's hyperv features, space-separated
	"$VMLET" resolve -f "$1" -o config | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(d["hyperv"]["features"]), d["hyperv"]["spinlockRetries"], d["kvmHidden"])'
}

vm deps '          hyperv: {synictimer: {direct: {}}, tlbflush: {}, relaxed: {enabled: false}, spinlocks: {}}
          kvm: {hidden: true}
' "$TIMER" >"$TMPD/deps.yaml"
got=$(features "$TMPD/deps.yaml")
want="spinlocks vpindex synic synictimer synictimer.direct tlbflush time 4096 True"
[[ $got == "$want" ]] && ok "dependencies filled in as KubeVirt's webhook: $got" ||
	fail "config: '$got', want '$want'"
vm pass '          hypervPassthrough: {enabled: true}
' '' >"$TMPD/pass.yaml"
got=$("$VMLET" resolve -f "$TMPD/pass.yaml" -o config | python3 -c 'import json, sys; print(json.load(sys.stdin)["hyperv"]["passthrough"])')
[[ $got == True ]] && ok "hypervPassthrough: passthrough in the config" || fail "passthrough: '$got'"

refused() { # NAME FEATURES CLOCK ERE
	vm "$1" "$2" "$3" >"$TMPD/$1.yaml"
	if "$VMLET" resolve -f "$TMPD/$1.yaml" -o config >/dev/null 2>"$TMPD/$1.err"; then
		fail "$1: resolved"
	elif grep -qE "$4" "$TMPD/$1.err"; then
		ok "$1 refused: $(head -1 "$TMPD/$1.err" | sed 's/^[^ ]* //')"
	else
		fail "$1: $(cat "$TMPD/$1.err")"
	fi
}
refused stimer-no-time '          hyperv: {synictimer: {}}
' '' 'features\.hyperv\.synictimer: needs clock\.timer\.hyperv'
refused direct-no-vapic '          hyperv: {tlbflush: {direct: {}}, vapic: {enabled: false}}
' "$TIMER" 'features\.hyperv\.tlbflush\.direct: needs vapic'
refused spinlocks-few '          hyperv: {spinlocks: {spinlocks: 4094}}
' '' 'spinlocks\.spinlocks: HyperV spinlock retry count must be at least 4095'
refused vendor-long '          hyperv: {vendorid: {vendorid: "thirteenchars"}}
' '' 'vendorid\.vendorid: libvirt wants a HyperV vendor_id of 1 to 12 characters, got 13'

have_kvm || { finish; }

# evmcs on an AMD guest: refused before anything else is asked of KVM
vm evmcs '          hyperv: {evmcs: {}}
' '' >"$TMPD/evmcs.yaml"
timeout 60 "$VMLET" probe -f "$TMPD/evmcs.yaml" --cpu-vendor amd >"$TMPD/evmcs.out" 2>&1
rc=$?
((rc != 0)) && grep -q "features.hyperv.evmcs: the enlightened VMCS is Intel's" "$TMPD/evmcs.out" &&
	ok "evmcs on an AMD guest refused (exit $rc)" || fail "evmcs on AMD: exit $rc, $(tail -2 "$TMPD/evmcs.out")"

# the host's KVM without Hyper-V: refused, naming the field
vm full '          hyperv: {relaxed: {}, vapic: {}, synictimer: {}}
' "$TIMER" >"$TMPD/full.yaml"
hv=$(python3 -c 'import fcntl
with open("/dev/kvm", "rb") as f: print(fcntl.ioctl(f.fileno(), 0xAE03, 44))' 2>/dev/null)
if [[ $hv == 0 ]]; then
	timeout 60 "$VMLET" probe -f "$TMPD/full.yaml" >"$TMPD/full.out" 2>&1
	rc=$?
	((rc != 0)) && grep -q "features.hyperv: this host's KVM has no Hyper-V emulation" "$TMPD/full.out" &&
		! grep -q "^match:" "$TMPD/full.out" &&
		ok "no Hyper-V in this host's KVM: refused (exit $rc)" || fail "full: exit $rc, $(tail -2 "$TMPD/full.out")"
	vm pass '          hypervPassthrough: {enabled: true}
' '' >"$TMPD/pass.yaml"
	timeout 60 "$VMLET" probe -f "$TMPD/pass.yaml" >"$TMPD/pass.out" 2>&1
	rc=$?
	((rc != 0)) && grep -q "features.hypervPassthrough: this host's KVM has no Hyper-V emulation" "$TMPD/pass.out" &&
		ok "hypervPassthrough without Hyper-V in KVM: refused (exit $rc)" || fail "pass: exit $rc, $(tail -2 "$TMPD/pass.out")"
else
	echo "note: this host's KVM emulates Hyper-V: the refusal is not tested here"
fi

# kvm.hidden alone needs nothing of KVM
vm hidden '          kvm: {hidden: true}
' '' >"$TMPD/hidden.yaml"
timeout 120 "$VMLET" probe -f "$TMPD/hidden.yaml" >"$TMPD/hidden.out" 2>&1
grep -q "^match: yes" "$TMPD/hidden.out" && ok "kvm.hidden: the probe guest boots" ||
	fail "kvm.hidden: $(tail -3 "$TMPD/hidden.out")"
finish
