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
# have_kvm: true when this test may use /dev/kvm. VMLET_TEST_KVM=nested
# says no on a host whose /dev/kvm works, as on one without (to develop and
# test the route below). A no is noted in VMLET_TEST_KVM_MARK (a file,
# set by tests/run.sh): a test that skips for it, or passes without its KVM
# part, is run again inside the nested L1 (tests/nested/run-tests), where
# VMLET_TEST_KVM=l1 and the L1's kvm_amd answers.
have_kvm() {
	[[ ${VMLET_TEST_KVM:-} != nested && -r /dev/kvm && -w /dev/kvm ]] && return 0
	[[ -z ${VMLET_TEST_KVM_MARK:-} ]] || : >"$VMLET_TEST_KVM_MARK"
	return 1
}
# QEMU CPU models for the oracles: qemu64 plus only what a test needs, so
# QEMU shows the same CPU on any x86-64 KVM host, AMD or Intel. Never
# -cpu host (QEMU aborts on an EPYC host under kvm-pvm: MSR 0x10a) nor a
# named model like EPYC (QEMU drops what the host's KVM lacks, differently
# per host). The AMD one: family 0x17 (the probe, like Linux, reads the SMT
# width from 0x8000001E only from Zen on) with TopoExt and leaf 0x8000001E.
QEMU_CPU_INTEL=qemu64,vendor=GenuineIntel
QEMU_CPU_AMD=qemu64,vendor=AuthenticAMD,family=23,model=1,stepping=2,+topoext,xlevel=0x8000001e
# need_qemu_microvm: skip unless qemu-system-x86_64, python3, /dev/kvm and
# a firmware for QEMU's microvm machine are there; sets BIOS to it.
need_qemu_microvm() {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
	command -v python3 >/dev/null || skip "no python3"
	have_kvm || skip "no usable /dev/kvm"
	BIOS=/usr/share/qemu/qboot.rom
	[[ -f $BIOS ]] || BIOS=/usr/share/qemu/bios-microvm.bin
	[[ -f $BIOS ]] || skip "no qboot firmware for microvm"
}
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
# wait_log FILE ERE [TENTHS]: wait until FILE has a line matching ERE, at
# most TENTHS tenths of a second (default 100); 1 if it never came.
wait_log() {
	local i
	for ((i = 0; i < ${3:-100}; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# vm_manifest NAME MEMORY [STRATEGY [DISK=PATH...]]: a VirtualMachine manifest
# on stdout with that guest memory, runStrategy ("" = none), no pod network
# and one virtio disk per DISK=PATH (a hostDisk) or DISK=@IMAGE (a containerDisk)
# (errorPolicy $VM_ERROR_POLICY when set).
vm_manifest() {
	local name=$1 mem=$2 strategy=${3:-} d
	shift $(($# < 3 ? $# : 3))
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n'
	printf 'metadata: {name: %s, namespace: default}\nspec:\n' "$name"
	[[ -n $strategy ]] && printf '  runStrategy: %s\n' "$strategy"
	printf '  template:\n    spec:\n      domain:\n        memory: {guest: %s}\n' "$mem"
	printf '        devices:\n          autoattachPodInterface: false\n'
	(($#)) || return 0
	printf '          disks:\n'
	for d; do
		printf '          - {name: %s, disk: {bus: virtio}%s}\n' "${d%%=*}" \
			"${VM_ERROR_POLICY:+, errorPolicy: $VM_ERROR_POLICY}"
	done
	printf '      volumes:\n'
	for d; do
		if [[ ${d#*=} == @* ]]; then
			printf '      - {name: %s, containerDisk: {image: %s}}\n' "${d%%=*}" "${d#*=@}"
		else
			printf '      - {name: %s, hostDisk: {path: %s, type: Disk}}\n' "${d%%=*}" "${d#*=}"
		fi
	done
}
