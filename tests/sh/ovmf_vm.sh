#!/usr/bin/env bash
# OVMF VMs (vmm/boot/ovmf_boot.h) as far as this machine can run them: a
# secure-boot EFI VM with VMLET_OVMF_SMM=0 picks Debian's OVMF_CODE_4M.fd
# (without SMM) and gets its variable
# store NAME.ovmf-vars.fd next to the manifest, made from
# OVMF_VARS_4M.ms.fd (afresh each start without efi.persistent, kept with
# it or with --efi-vars); the flash is mapped and the firmware starts at
# the reset vector (it leaves the reset vector: the boot vCPU is seen in
# the flash, in 32-bit protected mode, or OVMF gets further where the KVM
# runs its SSE code, which kvm-pvm cannot). --firmware takes a flash image
# too (bring your own firmware: OVMF_CODE_4M.fd, secure boot off, template
# OVMF_VARS_4M.fd). Refused with clear messages: no OVMF installed (names
# the Debian package), a vars file of the wrong size, the probe of a
# secure-boot VM; by default (features.smm) the SMM build, refused where the
# host's KVM has no SMM (kvm-pvm). The real boots (shim -> GRUB -> Linux, a refused
# unsigned loader, variables across a restart) are nested scenarios:
# tests/nested/scenarios/ovmf-*.sh.
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

have_kvm || skip "no usable /dev/kvm"
# the build without SMM for what follows, up to the SMM part at the end
export VMLET_OVMF_SMM=0
[[ -f /usr/share/OVMF/OVMF_CODE_4M.fd && -f /usr/share/OVMF/OVMF_VARS_4M.ms.fd ]] ||
	skip "Debian's ovmf package is not installed"

truncate -s 1M "$TMPD/d.img"
mkdir -p "$TMPD/m"
efi_vm_yaml sbvm sb=true disk=d:$TMPD/d.img >"$TMPD/m/vm.yaml"

efi_refused "a secure-boot VM without OVMF" 1 "Debian package 'ovmf'" \
	env VMLET_OVMF_CODE=$TMPD/none.fd "$VMLET" run -f "$TMPD/m/vm.yaml" --console none

# starts OVMF: the store made from the template, the flash at the reset vector
started() { # LOG: OVMF ran from the flash (crashed in it on kvm-pvm, or ran on)
	grep -q "ovmf: booting $1" "$2" &&
		{ grep -q 'rip=0xff[c-f][0-9a-f]\{5\} .*cs=0x10' "$2" || [[ $3 == 124 ]]; }
}
timeout 15 "$VMLET" run -f "$TMPD/m/vm.yaml" --console "file:$TMPD/con" --log-format text \
	>"$TMPD/log" 2>&1
rc=$?
v=$TMPD/m/sbvm.ovmf-vars.fd
if started /usr/share/OVMF/OVMF_CODE_4M.fd "$TMPD/log" $rc && [[ -f $v ]] &&
	(($(stat -c %s "$v") == $(stat -c %s /usr/share/OVMF/OVMF_VARS_4M.ms.fd))) &&
	grep -q "variable store $v created from /usr/share/OVMF/OVMF_VARS_4M.ms.fd" "$TMPD/log"; then
	ok "secure boot: OVMF_CODE_4M.fd ran from the flash (status $rc), $v from OVMF_VARS_4M.ms.fd"
else
	fail "secure-boot VM (status $rc)"
	cat "$TMPD/log"
fi
grep -q 'features.smm: SMM emulated for OVMF VMs.*VMLET_OVMF_SMM=0' "$TMPD/log" &&
	ok "features.smm: the warning says where there is no SMM" || fail "no warning for features.smm"
# not persistent: made afresh at the next start
printf 'garbage' | dd of="$v" conv=notrunc status=none
timeout 15 "$VMLET" run -f "$TMPD/m/vm.yaml" --console none >"$TMPD/log2" 2>&1
grep -q "variable store $v created" "$TMPD/log2" && ! grep -q garbage "$v" &&
	ok "without efi.persistent the store is made afresh at each start" ||
	fail "the store was not renewed"

# links planted next to the manifest (issue 28, finding 7): the store used
# to be written through NAME.ovmf-vars.fd.tmp, opened O_CREAT|O_TRUNC and
# so through a link there (its target truncated and overwritten, then the
# link renamed over the store and the flash mapped from the target); the
# store itself a link was opened through it
printf 'precious\n' >"$TMPD/victim"
ln -s "$TMPD/victim" "$v.tmp"
timeout 15 "$VMLET" run -f "$TMPD/m/vm.yaml" --console none >"$TMPD/log5" 2>&1
[[ $(cat "$TMPD/victim") == precious && -L $v.tmp && -f $v && ! -L $v ]] &&
	grep -q "variable store $v created" "$TMPD/log5" &&
	ok "a link planted at the store's old temporary name is left alone" ||
	{ fail "link at $v.tmp: victim '$(head -c 40 "$TMPD/victim")'"; cat "$TMPD/log5"; }
rm -f "$v.tmp"
ln -s "$TMPD/victim" "$TMPD/linked.fd"
efi_refused "--efi-vars a symlink" 1 "is a symbolic link" \
	"$VMLET" run -f "$TMPD/m/vm.yaml" --efi-vars "$TMPD/linked.fd" --console none
[[ $(cat "$TMPD/victim") == precious ]] && ok "its target is untouched" ||
	fail "the link's target was written"

# --efi-vars: kept; a store of the wrong size is refused
cp /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$TMPD/mine.fd"
printf 'KEEP-ME' | dd of="$TMPD/mine.fd" bs=1 seek=300000 conv=notrunc status=none
timeout 15 "$VMLET" run -f "$TMPD/m/vm.yaml" --efi-vars "$TMPD/mine.fd" --console none \
	>"$TMPD/log3" 2>&1
! grep -q "created" "$TMPD/log3" && grep -q "variables in $TMPD/mine.fd" "$TMPD/log3" &&
	grep -aq KEEP-ME "$TMPD/mine.fd" && ok "--efi-vars: the given store is used and kept" ||
	{ fail "--efi-vars"; cat "$TMPD/log3"; }
truncate -s 4096 "$TMPD/small.fd"
efi_refused "a store of the wrong size" 1 "has 4096 bytes" \
	"$VMLET" run -f "$TMPD/m/vm.yaml" --efi-vars "$TMPD/small.fd" --console none

# bring your own firmware: a flash image as --firmware, secure boot off
efi_vm_yaml byo disk=d:$TMPD/d.img >"$TMPD/m/byo.yaml"
timeout 15 "$VMLET" run -f "$TMPD/m/byo.yaml" --firmware /usr/share/OVMF/OVMF_CODE_4M.fd \
	--console none --log-format text >"$TMPD/log4" 2>&1
rc=$?
started /usr/share/OVMF/OVMF_CODE_4M.fd "$TMPD/log4" $rc &&
	grep -q "created from /usr/share/OVMF/OVMF_VARS_4M.fd" "$TMPD/log4" &&
	ok "--firmware OVMF_CODE_4M.fd: flash boot, store from OVMF_VARS_4M.fd (status $rc)" ||
	{ fail "--firmware OVMF_CODE_4M.fd (status $rc)"; cat "$TMPD/log4"; }

efi_refused "probe of a secure-boot VM" 1 "secure boot is requested" \
	"$VMLET" probe -f "$TMPD/m/vm.yaml"

# SMM (the default for features.smm, docs/firmware.md "SMM"): OVMF's SMM build on a
# platform with SMM; a host whose KVM has none (kvm-pvm) refuses it before
# anything is made, naming features.smm and the host
rm -f "$v"
env -u VMLET_OVMF_SMM timeout 15 "$VMLET" run -f "$TMPD/m/vm.yaml" --console none --log-format text \
	>"$TMPD/log6" 2>&1
rc=$?
if grep -q "features.smm: this host's KVM.* has no SMM" "$TMPD/log6"; then
	((rc == 1)) && [[ ! -e $v ]] && ok "SMM on a KVM without SMM refused (status 1, no store): $(
		grep -o "features.smm: this host's KVM[^:]*" "$TMPD/log6")" ||
		{ fail "SMM refusal (status $rc)"; cat "$TMPD/log6"; }
	if grep -q kvm-pvm /proc/modules 2>/dev/null || [[ -e /sys/module/kvm_pvm ]]; then
		grep -q "KVM (kvm-pvm) has no SMM" "$TMPD/log6" && ok "the refusal names kvm-pvm" ||
			fail "the refusal does not name kvm-pvm"
	fi
elif started /usr/share/OVMF/OVMF_CODE_4M.secboot.fd "$TMPD/log6" $rc &&
	grep -q 'SMM on, the variable flash writable only from SMM' "$TMPD/log6"; then
	ok "features.smm: OVMF_CODE_4M.secboot.fd ran with SMM (status $rc)"
else
	fail "features.smm with SMM (status $rc)"
	cat "$TMPD/log6"
fi
finish
