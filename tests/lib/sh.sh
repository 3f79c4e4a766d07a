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
# tiny_guests MODE...: build tests/data/vmm_tiny_guest.S (see its MODEs) as
# $TMPD/modeMODE.elf for each MODE; skips without binutils.
tiny_guests() {
	command -v as >/dev/null && command -v ld >/dev/null || skip "no binutils"
	local m
	for m in "$@"; do
		as --64 --defsym MODE="$m" -o "$TMPD/g$m.o" tests/data/vmm_tiny_guest.S &&
			ld -m elf_x86_64 -static -nostdlib -T tests/data/vmm_tiny_guest.ld \
				-o "$TMPD/mode$m.elf" "$TMPD/g$m.o" ||
			{ fail "cannot build tiny guest mode $m"; finish; }
	done
}
