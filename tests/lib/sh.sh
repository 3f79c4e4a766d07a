# Sourced by tests/sh/*.sh. Helpers for shell tests.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
VMLET=${VMLET:-./vmlet}
VMLET_SAN=${VMLET_SAN:-build/san/vmlet}
TMPD=$(mktemp -d /tmp/vmlet-test.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT
n_fail=0
fail() { echo "FAIL: $*"; n_fail=$((n_fail + 1)); }
ok() { echo "ok: $*"; }
skip() { echo "skip: $*"; exit 77; }
finish() { if ((n_fail)); then echo "$n_fail check(s) failed"; exit 1; fi; exit 0; }
have_kvm() { [[ -r /dev/kvm && -w /dev/kvm ]]; }
