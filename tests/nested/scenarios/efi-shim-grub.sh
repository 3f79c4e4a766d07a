# A distribution's UEFI boot chain on vmlet's own firmware (issue 13 part
# 2), on the real KVM: a disk laid out as Debian installs it
# (tests/efi/mkdisk.sh: GPT, ESP with shim as \EFI\BOOT\BOOTX64.EFI and
# GRUB next to it, \EFI\debian\grub.cfg finding a separate ext4 /boot by
# its UUID, /boot/grub/grub.cfg's menu entry loading the L2 kernel and
# initramfs). CHAIN=signed (default: Debian's shim-signed and the
# monolithic grub-efi-amd64-signed, as on Debian's cloud images) or
# CHAIN=unsigned (shim-unsigned, GRUB made with grub-mkimage from
# grub-efi-amd64-bin). Secure boot is off. Linux must reach userspace with
# the command line GRUB gave it (BOOT_IMAGE=/vmlinuz first), through EFI
# (/sys/firmware/efi, runtime services mapped), having read the kernel from
# the ext4 partition (GRUB's lines on the console), and see the variables
# shim leaves for the OS (MokListRT, SbatLevelRT) in efivarfs.
SHAPE=1,2,1 MEM=256Mi TIMEBOX=400 CHAIN=${CHAIN:-signed}
host_prep() {
	tests/efi/mkdisk.sh $([ "$CHAIN" = signed ] && echo --signed) "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 quiet panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN" \
		"$SCN_DIR/disk.img" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: disk, disk: {bus: virtio}}" "      - {name: disk, hostDisk: {path: /scn/$SCN/disk.img, type: Disk}}" |
		sed 's/^        cpu: /        firmware: {bootloader: {efi: {secureBoot: false}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
# no --kernel, no --cmdline (they would be shim's load options): the
# firmware boots the disk
l1() {
	timeout -s KILL "${TIMEBOX:-150}" vmlet run -f "$D/vm.yaml" --console stdio --log-format text \
		2>"$D/vmm.log"
}
l2() {
	fw=/sys/firmware/efi
	rep efi "platform=$(cat $fw/fw_platform_size 2>/dev/null) runtime-map=$(ls $fw/runtime-map 2>/dev/null | wc -l)"
	rep cmdline "$(cat /proc/cmdline)"
	mod virtio_pci virtio_blk
	for i in 1 2 3 4 5; do [ -e /sys/block/vda/vda2 ] && break; sleep 1; done
	rep parts "$(ls -d /sys/block/vda/vda* 2>/dev/null | sed 's|.*/||' | tr '\n' ' ')"
	mod efivarfs
	mount -t efivarfs efivarfs $fw/efivars && rep efivars "$(ls $fw/efivars | sed 's/-.*//' | sort | tr '\n' ' ')"
}
host_check() {
	[[ $(rep cmdline) == "BOOT_IMAGE=/vmlinuz "*"nested.scn=$SCN"* ]] &&
		ok "GRUB booted the kernel with its command line: $(rep cmdline)" ||
		fail "command line '$(rep cmdline)'"
	[[ $(rep efi) == "platform=64 runtime-map="[1-9]* ]] && ok "Linux booted through EFI: $(rep efi)" ||
		fail "EFI: '$(rep efi)'"
	[[ $(rep parts) == "vda1 vda2 " ]] && ok "the disk's ESP and /boot: $(rep parts)" ||
		fail "partitions '$(rep parts)'"
	grep -aq 'Welcome to GRUB' "$C" && grep -aq 'vmlet-efi: GRUB boots Linux' "$C" &&
		grep -aq 'vmlet-efi: GRUB loaded the kernel and initrd' "$C" &&
		ok "GRUB ($CHAIN) on the console: its grub.cfg on /boot loaded the kernel" ||
		fail "no GRUB lines on the console"
	# shim mirrors its MOK lists and SBAT level for the OS, secure boot or not
	[[ " $(rep efivars) " == *" MokListRT "*" SbatLevelRT "* ]] &&
		ok "shim ran: its variables for the OS are there: $(rep efivars)" ||
		fail "no MokListRT/SbatLevelRT from shim among the EFI variables: '$(rep efivars)'"
	# what shim and GRUB asked vmlet's firmware for and it does not have
	grep -a 'Locate[A-Za-z]*: no ' "$C" "$D/vmm.log" 2>/dev/null | sed 's/.*efi: /    firmware: /' | sort -u
}
