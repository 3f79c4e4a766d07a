#!/bin/sh
# check-links.sh [BUILD] - the layering rules where the linker sees them
# (docs/architecture.md "Layering"): what the objects of arch/ and spec/ call, whatever
# the source spelled. A bare prototype, a macro that hides ioctl or a
# function pointer taken by name all leave an undefined symbol in the
# object; this check reads those with nm. Exit 0 and "links: ok", or one
# line per offending symbol ("OBJECT: SYMBOL: rule") and exit 1; exit 2
# when an object of a source is missing (build first: make vmlet).
#
#  arch/x86_64 objects may use each other, libc and the compiler's runtime
#    (libgcc), and never ioctl or syscall: pure builders.
#  spec/ objects may use each other, the generated tables (BUILD/gen), the
#    config helpers of the contract (vmm/vm_config.c), libc, libgcc,
#    libyaml and json-c; never ioctl or syscall, nothing of the VMM.
set -u
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# libpath NAME: the file the compiler links for NAME (libc.so.6 ...)
libpath() {
	p=$(${CC:-gcc} -print-file-name="$1")
	[ -f "$p" ] || p=$(find /lib /usr/lib -name "$1" 2>/dev/null | head -n 1)
	[ -f "$p" ] || { echo "links: cannot find $1" >&2; exit 2; }
	printf '%s\n' "$p"
}
dyn_syms() { # the symbols shared libraries export, without versions
	for l in "$@"; do nm -D --defined-only "$l"; done | awk '{print $NF}' | sed 's/@.*//'
}
defined() { # the global symbols objects define
	nm --defined-only "$@" 2>/dev/null | awk 'NF == 3 && $2 ~ /[A-Z]/ {print $3}'
}
# objects ROOT...: the objects of the sources under ROOT (missing: exit 2)
objects() {
	for src in $(find "$@" -name '*.c' -type f | LC_ALL=C sort); do
		o=$build/${src%.c}.o
		[ -f "$o" ] || { echo "links: $o missing (build first)" >&2; exit 2; }
		printf '%s\n' "$o"
	done
}

dyn_syms "$(libpath libc.so.6)" "$(libpath libm.so.6)" >"$tmp/libc"
nm --defined-only "$(${CC:-gcc} -print-libgcc-file-name)" 2>/dev/null |
	awk 'NF == 3 {print $3}' >>"$tmp/libc"
echo _GLOBAL_OFFSET_TABLE_ >>"$tmp/libc"
dyn_syms "$(libpath libyaml-0.so.2)" "$(libpath libjson-c.so.5)" >"$tmp/libs"

arch_objs=$(objects arch) || exit 2
spec_objs=$(objects spec) || exit 2
gen_objs=$(find "$build/gen" -name '*.o' 2>/dev/null)
[ -n "$gen_objs" ] || { echo "links: $build/gen has no objects (build first)" >&2; exit 2; }
cfg_obj=$build/vmm/vm_config.o
[ -f "$cfg_obj" ] || { echo "links: $cfg_obj missing (build first)" >&2; exit 2; }

# shellcheck disable=SC2086
defined $arch_objs | sort -u >"$tmp/arch.def"
# shellcheck disable=SC2086
defined $spec_objs $gen_objs "$cfg_obj" | sort -u >"$tmp/spec.def"
sort -u "$tmp/libc" -o "$tmp/libc"
sort -u "$tmp/libc" "$tmp/libs" >"$tmp/speclibs"

nbad=0
# check OBJ ALLOWED RULE: every undefined symbol of OBJ is in ALLOWED
# (a sorted list) and is neither ioctl nor syscall
check() {
	nm -u "$1" | awk 'NF == 2 {print $2}' | sed 's/@.*//' | sort -u >"$tmp/undef"
	for s in $(comm -23 "$tmp/undef" "$2") $(grep -xE 'ioctl|syscall' "$tmp/undef"); do
		echo "$1: $s: $3"
		nbad=$((nbad + 1))
	done
}
sort -u "$tmp/arch.def" "$tmp/libc" | grep -vxE 'ioctl|syscall' >"$tmp/arch.ok"
sort -u "$tmp/spec.def" "$tmp/speclibs" | grep -vxE 'ioctl|syscall' >"$tmp/spec.ok"
for o in $arch_objs; do
	check "$o" "$tmp/arch.ok" "arch/ uses only arch/, libc and libgcc; no ioctl, no syscall"
done
for o in $spec_objs; do
	check "$o" "$tmp/spec.ok" "spec/ uses only spec/, the config helpers, libc, libyaml and json-c"
done
if [ "$nbad" -gt 0 ]; then
	echo "links: $nbad violation(s)"
	exit 1
fi
echo "links: ok"
