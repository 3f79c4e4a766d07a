#!/usr/bin/env bash
# Linux from a BIOS disk under vmlet: SeaBIOS -> syslinux's MBR -> SYSLINUX
# on a FAT partition (tests/bios/mkdisk.sh) -> Debian's cloud kernel and a
# busybox initrd (tests/efi/mkinitrd.sh), the disk a virtio hostDisk of a
# VirtualMachine with bootloader.bios.useSerial. By default a smoke test
# that ends when Linux's own real-mode setup code prints "Probing EDD"
# (the kernel and initrd were loaded through SeaBIOS's INT 13h and SYSLINUX
# handed over; ~30-90 s here, everything at emulated CPL0); BIOS_LINUX=1
# goes on to userspace as far as the time box allows (our kvm-pvm hosts
# cannot run the decompressed kernel, docs/hosts.md: tests/nested boots it
# to userspace on a real KVM) and also boots the disk under QEMU q35 TCG as
# the oracle.
#   BIOS_LINUX_SECONDS=400   time box
source "$(dirname "$0")/../lib/sh.sh"

full=0
[[ ${BIOS_LINUX:-0} == 1 ]] && full=1
have_kvm || skip "no usable /dev/kvm"
[[ -f /usr/share/seabios/bios-microvm.bin ]] || skip "Debian's seabios is not installed"
command -v syslinux >/dev/null && [[ -f /usr/lib/syslinux/mbr/mbr.bin ]] ||
	skip "no syslinux (Debian packages syslinux, syslinux-common)"
command -v mcopy >/dev/null && command -v mkfs.vfat >/dev/null || skip "no mtools/dosfstools"
scripts/fetch-kernel >/dev/null 2>&1 || skip "cannot fetch linux-image-cloud-amd64"
tests/efi/mkinitrd.sh "$TMPD/initrd.img" || skip "cannot build the initrd"
DISK_MB=32 tests/bios/mkdisk.sh build/vmlinuz "$TMPD/initrd.img" \
	"console=ttyS0 panic=-1 rdinit=/init" "$TMPD/disk.img" || { fail "mkdisk"; finish; }
cat >"$TMPD/vm.yaml" <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: bios-linux, namespace: default}
spec:
  runStrategy: Once
  template:
    spec:
      domain:
        memory: {guest: 512Mi}
        firmware:
          bootloader:
            bios: {useSerial: true}
        devices:
          autoattachPodInterface: false
          disks:
          - {name: boot, disk: {bus: virtio}}
      volumes:
      - {name: boot, hostDisk: {path: $TMPD/disk.img, type: Disk}}
YAML

if ((full)); then limit=${BIOS_LINUX_SECONDS:-900}; else limit=${BIOS_LINUX_SECONDS:-400}; fi
setup='Probing EDD'
done_re='^VMLET-EFI-LINUX: done'
"$VMLET" run -f "$TMPD/vm.yaml" --log-format text --grace-period 0 --console "file:$TMPD/out" \
	>"$TMPD/log" 2>&1 &
pid=$!
t0=$SECONDS
while ((SECONDS - t0 < limit)) && kill -0 $pid 2>/dev/null; do
	grep -aq "$done_re" "$TMPD/out" 2>/dev/null && break
	((full)) || ! grep -aq "$setup" "$TMPD/out" 2>/dev/null || break
	sleep 1
done
kill $pid 2>/dev/null
wait $pid
rc=$?
grep -aoE 'SeaBIOS \(version [^)]*\)|SYSLINUX [0-9.]+|vmlet-bios: [A-Za-z ]+|Probing EDD|Linux version [^ ]+|Run /init|VMLET-EFI-LINUX: [a-z ]+' \
	"$TMPD/out" | sed 's/^/    /'
echo "    (vmlet exit status $rc after $((SECONDS - t0)) s)"
grep -E 'warning|error' "$TMPD/log" | grep -v 'unclaimed' | sed 's/^/    /'
n=$n_fail
for m in "SeaBIOS (version" "SYSLINUX" "vmlet-bios: syslinux boots Linux" "$setup"; do
	grep -aqF "$m" "$TMPD/out" || fail "no '$m' on the console within ${limit}s"
done
((n == n_fail)) && ok "SeaBIOS booted SYSLINUX from the virtio disk; it loaded Linux, whose setup code ran"
if ((full)); then
	if grep -aq "$done_re" "$TMPD/out"; then
		ok "Linux reached userspace under vmlet"
	elif grep -q 'triple fault' "$TMPD/log"; then
		fail "the guest triple-faulted"
	else
		echo "note: no userspace within ${limit}s (on kvm-pvm hosts expected: docs/hosts.md)"
	fi
	if command -v qemu-system-x86_64 >/dev/null; then
		timeout 600 qemu-system-x86_64 -M q35 -accel tcg -cpu qemu64 -m 512 -nodefaults \
			-no-user-config -nographic -serial stdio -no-reboot \
			-drive "file=$TMPD/disk.img,if=none,id=d0,format=raw" \
			-device virtio-blk-pci,drive=d0 </dev/null >"$TMPD/qemu" 2>&1
		grep -aq "$done_re" "$TMPD/qemu" && ok "QEMU q35 TCG boots the same disk to userspace" ||
			fail "QEMU TCG did not reach userspace: $(tail -c 400 "$TMPD/qemu")"
	fi
fi
finish
