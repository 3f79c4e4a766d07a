# BIOS boot, the KubeVirt default: Debian's SeaBIOS (vmm/boot/bios_boot.c) boots
# a disk made as distributions make legacy images (tests/bios/mkdisk.sh:
# syslinux's MBR and SYSLINUX on an active FAT partition) that loads the L2
# kernel and initramfs; bootloader.bios.useSerial, the disk with a bootOrder
# behind a blank one. LOADER=GRUB lays the disk out as Debian's cloud images
# instead (GPT, GRUB's boot.img in the protective MBR, core.img in a BIOS
# boot partition, /boot on ext4): it passes too, but takes about twice as
# long in L1 (~90-180 s against ~50 s), so the harness runs SYSLINUX. Linux
# must reach userspace with the memory map SeaBIOS reports, vmlet's ACPI
# tables as SeaBIOS placed them (table-loader) and vmlet's SMBIOS (type 1:
# KubeVirt, firmware.serial; the BIOS vendor SeaBIOS's own type 0).
SHAPE=1,2,1 MEM=256Mi TIMEBOX=400 LOADER=${LOADER:-syslinux}
host_prep() {
	local mb
	mb=$((($(stat -c %s "$L2_KERNEL") + $(stat -c %s "$L2_INITRD")) / 1048576 + 8))
	DISK_MB=$mb tests/bios/mkdisk.sh $([ "$LOADER" = GRUB ] && echo --grub) "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 quiet panic=-1 rdinit=/init nested.scn=$SCN" "$SCN_DIR/boot.img" ||
		return 1
	truncate -s 1M "$SCN_DIR/blank.img"
	cp /usr/share/seabios/bios-microvm.bin "$SCN_DIR/" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: blank, disk: {bus: virtio}}
          - {name: boot, disk: {bus: virtio}, bootOrder: 1}" \
		"      - {name: blank, hostDisk: {path: /scn/$SCN/blank.img, type: Disk}}
      - {name: boot, hostDisk: {path: /scn/$SCN/boot.img, type: Disk}}" |
		sed 's/^        cpu: /        firmware: {serial: nested-bios-serial, bootloader: {bios: {useSerial: true}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
# no --kernel: SeaBIOS boots the disk (L1 has no /usr/share/seabios)
l1() {
	VMLET_SEABIOS=$D/bios-microvm.bin timeout -s KILL "${TIMEBOX:-150}" vmlet run -f "$D/vm.yaml" \
		--console stdio --log-format text 2>"$D/vmm.log"
}
l2() {
	d=/sys/class/dmi/id
	rep dmi "bios=$(cat $d/bios_vendor) sys=$(cat $d/sys_vendor) product=$(cat $d/product_name)" \
		"serial=$(cat $d/product_serial)"
	rep acpi "$(dmesg | grep -o 'ACPI: [A-Z]\{4\} 0x[0-9A-F]* [0-9A-F]* ([^)]*)' | cut -d' ' -f2,5,6 | tr '\n' ';')"
	rep e820 "$(dmesg | grep -c 'BIOS-e820:') entries, $(dmesg | grep -o 'BIOS-e820: \[mem 0x0*100000-0x[0-9a-f]*\] usable')"
	rep cmdline "$(cat /proc/cmdline)"
	rep disks "$(for b in /sys/block/vd*; do echo "${b##*/}:$(cat "$b/size")"; done | tr '\n' ' ')"
}
host_check() {
	[[ $(rep cmdline) == "BOOT_IMAGE="*"/vmlinuz "*"nested.scn=$SCN"* ]] &&
		ok "$LOADER booted the kernel with its command line: $(rep cmdline)" ||
		fail "command line '$(rep cmdline)'"
	[[ $(rep dmi) == "bios=SeaBIOS sys=KubeVirt product=None serial=nested-bios-serial" ]] &&
		ok "SMBIOS: $(rep dmi)" || fail "SMBIOS '$(rep dmi)'"
	[[ $(rep acpi) == *"XSDT (v01 VMLET"* && $(rep acpi) == *"FACP (v06 VMLET"* &&
		$(rep acpi) == *"APIC (v05 VMLET"* && $(rep acpi) == *"MCFG (v01 VMLET"* ]] &&
		ok "vmlet's ACPI tables, placed by SeaBIOS: $(rep acpi)" || fail "ACPI '$(rep acpi)'"
	grep -aq 'SeaBIOS (version' "$C" && grep -aq "vmlet-bios: $LOADER boots Linux" "$C" &&
		ok "SeaBIOS and $LOADER on the serial console (useSerial)" ||
		fail "no SeaBIOS/$LOADER lines on the console"
}
