#!/usr/bin/env bash
# Linux through vmlet's UEFI firmware under vmlet itself. By default a
# smoke test that ends at the stub's first message (~40 s here: the stub
# runs at emulated CPL0); EFI_LINUX=1 goes on as far as the time box allows
# (minutes on our hosts). An EFI VirtualMachine whose ESP (a
# virtio hostDisk) holds Debian's cloud kernel as \EFI\BOOT\BOOTX64.EFI and
# whose --initrd (tests/efi/mkinitrd.sh) reaches the stub through
# LoadFile2. The stub must print its first message (fail otherwise); then,
# as far as the time box allows, the kernel must report "EFI v2.100 by
# vmlet" and /init its marker lines (ok, or a note when the time box ended
# first). A guest that crashes is reported with vmlet's own warnings (a KVM
# internal error names the instruction bytes and registers).
#
# Our kvm-pvm hosts (docs/hosts.md) emulate all of the
# kernel's CPL0 code (the stub, ExitBootServices and the decompressor take
# ~1.5 min), and the kernel then executes instructions they cannot emulate
# although KVM reports them supported: cmpxchg16b (SLUB, right after
# "Memory: ..."), with clearcpuid=cx16 xrstor (FPU init), with noxsave too
# the int3 of the kernel's alternatives self-test ("x86/fpu: x87 FPU will
# use FXSAVE" is the last line): no kernel gets to userspace here. On a real
# KVM host none of this applies and the boot takes well under a second;
# the same firmware and kernel are checked to userspace in `make test`
# under QEMU TCG (efi_linux_tcg.sh).
#   EFI_LINUX_KERNEL=path/to/vmlinuz  use this kernel (else scripts/fetch-kernel)
#   EFI_LINUX_SECONDS=900              time box
#   EFI_LINUX_CMDLINE="..."            appended to the kernel command line
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

full=0
[[ ${EFI_LINUX:-0} == 1 ]] && full=1
have_kvm || skip "no usable /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
command -v sgdisk >/dev/null && command -v mcopy >/dev/null || skip "no gdisk/mtools"
kernel=${EFI_LINUX_KERNEL:-build/vmlinuz}
ko=
if [[ -z ${EFI_LINUX_KERNEL:-} ]]; then
	scripts/fetch-kernel >/dev/null 2>&1 || skip "cannot fetch linux-image-cloud-amd64"
	ko=build/vmlinuz.efivarfs.ko
fi
tests/efi/mkinitrd.sh "$TMPD/initrd.img" $ko || skip "cannot build the initrd"
ESP_MB=32 tests/efi/mkesp.sh "$kernel" "$TMPD/esp.img"
efi_vm_yaml efi-linux mem=512Mi disk=esp:$TMPD/esp.img >"$TMPD/vm.yaml"

if ((full)); then limit=${EFI_LINUX_SECONDS:-900}; else limit=${EFI_LINUX_SECONDS:-400}; fi
stub='EFI stub: Loaded initrd from LINUX_EFI_INITRD_MEDIA_GUID device path'
"$VMLET" run -f "$TMPD/vm.yaml" --initrd "$TMPD/initrd.img" --log-format text \
	--cmdline "console=ttyS0 earlyprintk=serial panic=-1 ${EFI_LINUX_CMDLINE:-}" --grace-period 0 \
	--console "file:$TMPD/out" >"$TMPD/log" 2>&1 &
pid=$!
t0=$SECONDS
while ((SECONDS - t0 < limit)) && kill -0 $pid 2>/dev/null; do
	grep -aq '^VMLET-EFI-LINUX: done' "$TMPD/out" 2>/dev/null && break
	((full)) || ! grep -aq "$stub" "$TMPD/out" 2>/dev/null || break
	sleep 1
done
kill $pid 2>/dev/null
wait $pid
rc=$?
grep -aE '^efi: |EFI stub|efi: EFI v2|Run /init|^VMLET-EFI-LINUX' "$TMPD/out" | sed 's/^/    /'
echo "    (vmlet exit status $rc after $((SECONDS - t0)) s)"
grep -E 'warning|error' "$TMPD/log" | sed 's/^/    /'
if grep -aq "$stub" "$TMPD/out"; then
	ok "the Linux EFI stub ran and loaded the initrd through LoadFile2"
else
	fail "no EFI stub message within ${limit}s"
fi
((full)) || finish # the smoke test ends here (EFI_LINUX=1: the whole way)
if grep -aq 'efi: EFI v2.100 by vmlet' "$TMPD/out"; then
	ok "Linux booted past ExitBootServices and sees vmlet's system table"
else
	echo "note: the kernel did not get to its EFI line within ${limit}s"
fi
if grep -aq '^VMLET-EFI-LINUX: done' "$TMPD/out"; then
	ok "Linux reached userspace under vmlet"
elif grep -q 'triple fault' "$TMPD/log"; then
	fail "the guest triple-faulted"
elif grep -q 'KVM internal error' "$TMPD/log"; then
	echo "note: the guest stopped on an instruction this host's KVM cannot emulate (see above)"
else
	echo "note: the kernel did not reach userspace within ${limit}s (emulated CPL0)"
fi
finish
