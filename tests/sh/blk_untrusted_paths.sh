#!/usr/bin/env bash
# Untrusted names must not reach host files (issue 28, findings 2 and 3,
# the open side). Each case plants an attack and checks that the guest
# never sees the host's "secret" file and that vmlet names what it refused:
#  - a containerDisk qcow2 whose backing file is any host file (absolute,
#    "../", or a FIFO that would hang the start): refused, as KubeVirt's
#    virt-handler refuses a containerDisk with a backing file;
#  - a hostDisk qcow2 chain is raw anyway; a backing file of a qcow2 image
#    opened by vmlet is a plain name in the image's directory
#    (tests/unit/blk_untrusted_test.c);
#  - a containerDisk under --disk-root whose file, or a directory on its
#    path, is a symlink planted in the root that leads out of it, or a
#    containerDisk.path with "..": not opened (openat2 RESOLVE_BENEATH);
#  - kernelBoot.container's initrdPath through such a symlink: not loaded.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no usable /dev/kvm"
command -v qemu-img >/dev/null || skip "no qemu-img"
command -v as >/dev/null && command -v ld >/dev/null || skip "no binutils"

python3 - "$TMPD/secret" <<'PY'
import sys
open(sys.argv[1], "wb").write(b"host secret\n" * (1 << 17))
PY
secret=$(head -c 1048576 "$TMPD/secret" | sha256sum | cut -d' ' -f1)
mkdir -p "$TMPD/root/rootdisk" "$TMPD/outside"
cp "$TMPD/secret" "$TMPD/outside/disk.img"

# the VM, its containerDisk with containerDisk.path $1 (none when empty)
cd_vm() {
	vm_manifest cdisk 64Mi Always rootdisk=@quay.io/containerdisks/fedora:latest |
		sed "s|containerDisk: {image: \([^}]*\)}|containerDisk: {image: \1${1:+, path: $1}}|"
}
cd_vm >"$TMPD/vm.yaml"

# refused LABEL ERE ARGS...: the probe must fail, name the disk, say ERE,
# and never show the guest the secret
refused() {
	local label=$1 ere=$2
	shift 2
	timeout -k 5 60 "$VMLET" probe -f "$TMPD/vm.yaml" -o json "$@" >"$TMPD/out.json" 2>"$TMPD/err"
	local rc=$?
	if grep -q "$secret" "$TMPD/out.json"; then
		fail "$label: the guest read the host's secret file"
	elif ((rc == 0)); then
		fail "$label: the probe ran"
	elif ((rc == 124 || rc == 137)); then
		fail "$label: the start hung"
	elif ! grep -qE -- "$ere" "$TMPD/err" || ! grep -qE "${NAMED:-disk 'rootdisk'}" "$TMPD/err"; then
		fail "$label: exit $rc, error: $(tail -n 3 "$TMPD/err")"
	else
		ok "$label: refused ($(grep -oE -- "$ere" "$TMPD/err" | head -n 1))"
	fi
}

# a qcow2 containerDisk whose backing file is the secret, named three ways
cd_backing() { # NAME
	rm -f "$TMPD/root/rootdisk/"*
	(cd "$TMPD/root/rootdisk" && qemu-img create -q -f qcow2 -u -b "$1" -F raw disk.qcow2 1M) ||
		fail "qemu-img create -b $1"
}
cd_backing "$TMPD/secret"
refused "containerDisk qcow2, absolute backing file" "backing file" \
	--disk-root "$TMPD/root"
cd_backing "../../secret"
refused "containerDisk qcow2, ../ backing file" "backing file" \
	--disk-root "$TMPD/root"
cd_backing "fifo"
mkfifo "$TMPD/root/rootdisk/fifo"
refused "containerDisk qcow2, a FIFO as backing file" "backing file" \
	--disk-root "$TMPD/root"
cd_backing "$TMPD/secret"
refused "containerDisk qcow2 through --volume, backing file" "backing file" \
	--volume "rootdisk=$TMPD/root/rootdisk/disk.qcow2"

# links planted in the disk root
rm -rf "$TMPD/root/rootdisk"
mkdir -p "$TMPD/root/rootdisk"
ln -s "$TMPD/secret" "$TMPD/root/rootdisk/disk.img"
refused "containerDisk: the image is a symlink out of the root" "symbolic link" \
	--disk-root "$TMPD/root"
rm -rf "$TMPD/root/rootdisk"
ln -s "$TMPD/outside" "$TMPD/root/rootdisk"
refused "containerDisk: its directory is a symlink out of the root" \
	"leads out" --disk-root "$TMPD/root"
rm -f "$TMPD/root/rootdisk"
mkdir -p "$TMPD/root/rootdisk"
mkfifo "$TMPD/root/rootdisk/fifo"
cd_vm /fifo >"$TMPD/vm.yaml"
refused "containerDisk: the image is a FIFO" "not a regular file" --disk-root "$TMPD/root"
cd_vm /../../outside/disk.img >"$TMPD/vm.yaml"
# refused at resolve (KubeVirt's rule) or at open: never read
NAMED="rootdisk|volumes\[0\]" refused "containerDisk.path with .." "relative components|leads out" \
	--disk-root "$TMPD/root"

# kernelBoot.container: the initrd through a symlink planted in the root
as --64 --defsym MODE=5 -o "$TMPD/g5.o" tests/data/vmm_tiny_guest.S &&
	ld -m elf_x86_64 -static -nostdlib -T tests/data/vmm_tiny_guest.ld \
		-o "$TMPD/root/kernel.elf" "$TMPD/g5.o" || { fail "cannot build the tiny guest"; finish; }
kernel_vm() { # INITRD-PATH
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n'
	printf 'metadata: {name: kb, namespace: default}\nspec:\n  runStrategy: Once\n  template:\n    spec:\n'
	printf '      domain:\n        memory: {guest: 64Mi}\n'
	printf '        devices: {autoattachPodInterface: false}\n'
	printf '        firmware:\n          kernelBoot:\n            container:\n'
	printf '              {image: k, kernelPath: /kernel.elf, initrdPath: %s}\n' "$1"
}
boot_refused() { # LABEL INITRD-PATH ERE
	kernel_vm "$2" >"$TMPD/kb.yaml"
	timeout -k 5 60 "$VMLET" run -f "$TMPD/kb.yaml" --disk-root "$TMPD/root" --log-format text \
		>/dev/null 2>"$TMPD/err"
	local rc=$?
	if ((rc == 0)); then
		fail "$1: the VM booted with the host file as its initrd"
	elif grep -qE -- "$3" "$TMPD/err"; then
		ok "$1: refused ($(grep -oE -- "$3" "$TMPD/err" | head -n 1))"
	else
		fail "$1: exit $rc, error: $(tail -n 3 "$TMPD/err")"
	fi
}
kernel_vm /kernel.elf >"$TMPD/kb.yaml"
timeout -k 5 60 "$VMLET" run -f "$TMPD/kb.yaml" --disk-root "$TMPD/root" >/dev/null 2>"$TMPD/err" &&
	ok "kernelBoot from the disk root boots" || fail "kernelBoot: $(tail -n 3 "$TMPD/err")"
ln -s "$TMPD/secret" "$TMPD/root/initrd"
boot_refused "initrdPath: a symlink out of the root" /initrd "initrd.*symbolic link"
ln -s "$TMPD/outside" "$TMPD/root/boot"
boot_refused "initrdPath: through a directory symlink out of the root" /boot/disk.img \
	"initrd.*leads out"
mkfifo "$TMPD/root/initrd.fifo"
boot_refused "initrdPath: a FIFO" /initrd.fifo "initrd.*not a regular file"
finish
