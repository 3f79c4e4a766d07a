#!/usr/bin/env bash
# vmlet's own UEFI boots from CD (issue 22 item 3): the AHCI driver
# (firmware/lib/ahci.c) speaks ATAPI to vmlet's CD-ROM drive (PACKET, READ
# CAPACITY, READ(10) of 2048-byte blocks), the firmware reads the El
# Torito catalog of an ISO made by xorriso (tests/efi/mkiso.sh), exposes
# its EFI image as a FAT file system under a CDROM() device path node and
# runs tests/efi/testapp.c from it (PASS, boot.dp=.../Sata(0)/CDROM(0));
# vmlet no longer warns that the firmware cannot boot a CD-ROM. Then the
# layouts distributions use (a BIOS default entry, EFI in a section; a
# sector count of 1, the size from the FAT), and bootOrder across a
# virtio disk, a SATA disk and the CD; an empty drive and an open tray
# are passed over; a Boot#### option naming the image by its CDROM() node
# alone boots. Last, the driver against a drive
# no one here wrote: QEMU q35's ICH9 AHCI with ide-cd, the same firmware
# and ISO (QEMU sends the unit attention of a new medium first).
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

have_kvm || skip "no usable /dev/kvm"
[[ -z $(efi_tools) ]] || skip "$(efi_tools)"
command -v xorriso >/dev/null && command -v mkfs.vfat >/dev/null || skip "no xorriso or mkfs.vfat"
tests/efi/build-efi.sh tests/efi/testapp.c "$TMPD/testapp.efi" || exit 1
tests/efi/mkiso.sh "$TMPD/testapp.efi" "$TMPD/efi.iso" || exit 1
ISO_BIOS=1 ISO_COUNT=1 tests/efi/mkiso.sh "$TMPD/testapp.efi" "$TMPD/both.iso" || exit 1
tests/efi/mkesp.sh "$TMPD/testapp.efi" "$TMPD/a.img"
cp "$TMPD/a.img" "$TMPD/b.img"

# run_efi NAME EFI_VM_YAML_ARGS...: boots; sets $dp (boot.dp= of the app)
run_efi() {
	local name=$1
	shift
	efi_vm_yaml "$name" "$@" >"$TMPD/$name.yaml"
	timeout 120 "$VMLET" run -f "$TMPD/$name.yaml" --console "file:$TMPD/$name.out" \
		>"$TMPD/$name.log" 2>&1
	rc=$?
	dp=$(grep -a '^boot.dp=' "$TMPD/$name.out" 2>/dev/null | tr -d '\r' | head -n1)
	dp=${dp#boot.dp=}
	if ((rc != 0)) || ! grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/$name.out" 2>/dev/null; then
		sed 's/^/    /' "$TMPD/$name.out" "$TMPD/$name.log" 2>/dev/null | tail -n 30
		return 1
	fi
}

# 1. an EFI-only ISO, the VM's one disk
if run_efi cd disk=cd:"$TMPD/efi.iso" bus=cd:cdrom; then
	ok "an EFI VM boots the ISO's El Torito EFI image from its CD-ROM (boot.dp=$dp)"
else
	fail "the EFI VM did not boot from CD (exit $rc)"
fi
[[ $dp == */Sata\(0\)/CDROM\(0\) ]] && ok "loaded from Sata(0)/CDROM(0)" ||
	fail "device path '$dp', want .../Sata(0)/CDROM(0)"
grep -q '^efi: sata 00:[0-9a-f]*\.0 port 0: CD-ROM [0-9]* MiB' "$TMPD/cd.out" &&
	grep -q '^efi: disk: El Torito EFI image 0 at block [0-9]*, 2048 blocks' "$TMPD/cd.out" &&
	ok "the firmware found the drive and the 4 MiB image in the catalog" ||
	fail "no 'efi: sata ... CD-ROM' or 'El Torito EFI image 0 ..., 2048 blocks' line"
grep -qi 'cd-rom.*cannot boot' "$TMPD/cd.log" &&
	fail "vmlet still warns that the firmware cannot boot a CD-ROM" ||
	ok "no warning for the CD-ROM of an EFI VM"

# 2. BIOS default entry, EFI in a section with a sector count of 1
if run_efi both disk=cd:"$TMPD/both.iso" bus=cd:cdrom &&
	[[ $dp == */Sata\(0\)/CDROM\(1\) ]] &&
	grep -q '^efi: disk: El Torito EFI image 1 at block [0-9]*, 2048 blocks' "$TMPD/both.out"; then
	ok "BIOS + EFI ISO, EFI entry's count 1: the size from the FAT, boot entry 1 ($dp)"
else
	fail "BIOS + EFI ISO with count 1: exit $rc, dp '$dp'"
fi

# 3. bootOrder across buses: virtio a, SATA b (port 0), CD c (port 1)
disks=(disk=a:"$TMPD/a.img":A disk=b:"$TMPD/b.img":B disk=c:"$TMPD/efi.iso":C bus=b:sata
	bus=c:cdrom)
for want in c a b; do
	case $want in
	a) args=("${disks[@]//:A/:1}") && args=("${args[@]//:B/:2}") && args=("${args[@]//:C/:3}") ;;
	b) args=("${disks[@]//:A/:3}") && args=("${args[@]//:B/:1}") && args=("${args[@]//:C/:2}") ;;
	c) args=("${disks[@]//:A/:2}") && args=("${args[@]//:B/:3}") && args=("${args[@]//:C/:1}") ;;
	esac
	if ! run_efi "order-$want" "${args[@]}"; then
		fail "bootOrder first '$want': the VM did not boot (exit $rc)"
		continue
	fi
	case $want in
	a) [[ $dp == */Pci\(*\)/HD\(1\) && $dp != *Sata* ]] ;;
	b) [[ $dp == */Sata\(0\)/HD\(1\) ]] ;;
	c) [[ $dp == */Sata\(1\)/CDROM\(0\) ]] ;;
	esac && ok "bootOrder 1 on '$want' boots it ($dp)" ||
		fail "bootOrder 1 on '$want' booted $dp"
done

# 4. an empty drive (no volume) and one with its tray open, first in the
# boot order: passed over, the ESP behind them boots
efi_vm_yaml empty disk=esp:"$TMPD/a.img":2 >"$TMPD/empty.yaml"
sed -i 's|^          disks:|          disks:\n          - {name: cd, cdrom: {}, bootOrder: 1}\n          - {name: open, cdrom: {tray: open}}|
	s|^      volumes:|      volumes:\n      - {name: open, hostDisk: {path: '"$TMPD"'/efi.iso, type: Disk}}|' \
	"$TMPD/empty.yaml"
timeout 120 "$VMLET" run -f "$TMPD/empty.yaml" --console "file:$TMPD/empty.out" >"$TMPD/empty.log" 2>&1
rc=$?
dp=$(grep -a '^boot.dp=' "$TMPD/empty.out" 2>/dev/null | tr -d '\r' | head -n1)
if ((rc == 0)) && grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/empty.out" && [[ $dp == */HD\(1\) ]] &&
	(($(grep -c 'port [01]: CD-ROM without a usable medium' "$TMPD/empty.out") == 2)); then
	ok "an empty drive and an open tray are passed over; the ESP boots (${dp#boot.dp=})"
else
	sed 's/^/    /' "$TMPD/empty.out" "$TMPD/empty.log" 2>/dev/null | tail -n 20
	fail "empty drive / open tray: exit $rc, '$dp'"
fi

# 5. a Boot#### option in the short form, from the image's CDROM() node
# (tests/efi/vars.c with load options "short" writes Boot0007 ->
# CDROM(...)/\EFI\VMLET\VARS2.EFI and BootOrder; persistent variables):
# the second start boots that option (its data "from-boot0007")
tests/efi/build-efi.sh tests/efi/vars.c "$TMPD/vars.efi" || exit 1
ESP_EXTRA="$TMPD/vars.efi:/EFI/VMLET/VARS2.EFI" tests/efi/mkiso.sh "$TMPD/vars.efi" "$TMPD/vars.iso" ||
	exit 1
efi_vm_yaml cd-vars mem=64Mi persistent=true disk=cd:"$TMPD/vars.iso":1 bus=cd:cdrom >"$TMPD/vars.yaml"
for k in 1 2; do
	timeout 60 "$VMLET" run -f "$TMPD/vars.yaml" --efi-vars "$TMPD/vars.store" \
		$( ((k == 1)) && echo --cmdline short) --console "file:$TMPD/vars$k.out" \
		>"$TMPD/vars$k.log" 2>&1
	echo "rc=$?" >>"$TMPD/vars$k.out"
done
if grep -q '^vars.options=short' "$TMPD/vars1.out" && grep -q '^vars.count=0' "$TMPD/vars1.out" &&
	grep -q '^vars.options=from-boot0007' "$TMPD/vars2.out" &&
	grep -q '^vars.count=1' "$TMPD/vars2.out" && grep -q '^efi: Boot0007' "$TMPD/vars2.out"; then
	ok "Boot0007 in the short form CDROM()/\\EFI\\VMLET\\VARS2.EFI is found and booted"
else
	sed 's/^/    /' "$TMPD/vars1.out" "$TMPD/vars2.out" | tail -n 30
	fail "Boot0007 from the CDROM() node was not booted"
fi

# 6. QEMU's CD-ROM drive (q35: AHCI at 00:1f.2, ide-cd on port 0)
if command -v qemu-system-x86_64 >/dev/null; then
	timeout 120 qemu-system-x86_64 -enable-kvm -cpu "$QEMU_CPU_INTEL,+rdrand" -m 128 \
		-nodefaults -no-user-config -nographic -display none -no-reboot \
		-device isa-debug-exit,iobase=0xf4,iosize=4 -M q35 -bios /usr/share/qemu/qboot.rom \
		-kernel build/fw/efi.elf -append rtc \
		-drive "if=none,id=cd,file=$TMPD/both.iso,format=raw,readonly=on,media=cdrom" \
		-device ide-cd,drive=cd,bus=ide.0 -serial "file:$TMPD/qemu.out" >"$TMPD/qemu.log" 2>&1
	rc=$?
	dp=$(grep -a '^boot.dp=' "$TMPD/qemu.out" 2>/dev/null | tr -d '\r' | head -n1)
	if ((rc == 0)) && grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/qemu.out" &&
		[[ $dp == */Pci\(1f,2\)/Sata\(0\)/CDROM\(1\) ]]; then
		ok "QEMU q35's ide-cd: the firmware boots the ISO (${dp#boot.dp=})"
	else
		sed 's/^/    /' "$TMPD/qemu.out" "$TMPD/qemu.log" 2>/dev/null | tail -n 20
		fail "QEMU q35's ide-cd: exit $rc, '$dp'"
	fi
fi
finish
