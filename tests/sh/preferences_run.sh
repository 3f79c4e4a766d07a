#!/usr/bin/env bash
# Issues 22 and 27, "done means": every preference of KubeVirt's
# common-instancetypes (tests/data/common-instancetypes, 57) gives a VM
# that `vmlet run` starts and that reaches its guest (the probe guest as
# a direct kernel; its end marker on the console), with the smallest u1
# instancetype meeting the preference's requirements and KubeVirt's
# default pod interface (masquerade, passt here). The guest must see what
# the preference asks for: the vCPUs, the disk on the preferred bus (SATA
# without one), the NIC model (e1000e for windows.*), a TPM. The
# preferences that may not start are listed in tests/lib/preferences_run.py
# (EXCEPT) with the error and the reason (arm64/s390x, launchSecurity,
# e1000/rtl8139 not implemented; Hyper-V where the host's KVM has none,
# and then the windows.* run once more with Hyper-V off in the VM); a
# listed one that starts fails the test, so the list stays true.
# `bash tests/sh/preferences_run.sh --markdown` prints the table of
# docs/manifests.md; a further argument runs only the matching names.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
python3 -c 'import yaml' 2>/dev/null || skip "no python3-yaml"
command -v passt >/dev/null || skip "no passt (the pod interface outside a pod)"
command -v swtpm >/dev/null || skip "no swtpm (the windows.* preferences' TPM)"
VMLET=$(realpath "$VMLET")
"$VMLET" probe --dump-guest "$TMPD/probe.elf" || { fail "vmlet probe --dump-guest"; finish; }
md=()
[[ ${1:-} == --markdown ]] && md=(--markdown) && shift
python3 tests/lib/preferences_run.py "$VMLET" "$TMPD" "$TMPD/probe.elf" "${md[@]}" "$@" >"$TMPD/run.out" 2>&1
rc=$?
cat "$TMPD/run.out"
((rc == 0)) && ok "preferences: every VM started or was refused as listed" || fail "preferences: exit $rc"
finish
