#!/usr/bin/env bash
# docs/fields.md walked row by row (issue 23: "the table and the code
# agree"): every "implemented" and "differently" row gets a VM with that
# field set to a value its condition selects, run by `vmlet probe` (the
# probe guest boots with it and must match what vmlet expects); a
# "differently" row must bring vmlet's warning naming the field, an
# "implemented" row none, and neither may be refused. Rows this host
# cannot run are printed with the reason (tests/lib/fields_walk.py,
# NOT_HERE: host CPU pinning, huge pages, the pod network, files under
# /var/run/kubevirt-private, secure boot, kernel files...), and most are
# run by the shell test named there.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"

nice -n 10 python3 tests/lib/fields_walk.py "$VMLET" "$TMPD" "$@" >"$TMPD/walk.out" 2>&1
rc=$?
grep -v '^ok: ' "$TMPD/walk.out"
n_ok=$(grep -c '^ok: ' "$TMPD/walk.out")
((rc == 0)) && ((n_ok >= 100 || $# > 0)) && ok "fields walk: $n_ok rows ran as the table says" ||
	fail "fields walk: exit $rc, $n_ok rows ok"
finish
