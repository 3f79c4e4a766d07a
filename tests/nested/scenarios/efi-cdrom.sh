# Boot from CD through vmlet's own UEFI on the real KVM (issue 22 item 3):
# an ISO made on the host by grub-mkrescue (Debian's GRUB for EFI and BIOS,
# xorriso, mtools) holding the L2 kernel (Debian's generic kernel) and
# initramfs in /boot and a grub.cfg that boots them; the VM's only disk is
# that ISO as a cdrom with bootOrder 1. The firmware drives the CD-ROM over
# ATAPI, finds GRUB's EFI image in the El Torito catalog (boot entry 1,
# after the BIOS one), runs its BOOTX64.EFI; GRUB reads grub.cfg, the
# kernel and the initramfs from the ISO 9660 file system through the
# firmware's BlockIo on the CD; Linux reaches userspace through EFI and its
# own ahci, sr_mod and isofs read the CD: a token file holds the host's
# line. (Cost: about 60 s of L1 time on a quiet host.)
GROUP=devices # tests/sh/nested_devices.sh
L2_FLAVOR=generic SHAPE=1,2,1 MEM=512Mi TIMEBOX=300
host_prep() {
	local t=$SCN_DIR/iso
	command -v grub-mkrescue >/dev/null && command -v xorriso >/dev/null &&
		[ -d /usr/lib/grub/x86_64-efi ] || return 1
	mkdir -p "$t/boot/grub" && cp "$L2_KERNEL" "$t/boot/vmlinuz" &&
		cp "$L2_INITRD" "$t/boot/initrd.img" || return 1
	echo "efi-cd-$RANDOM$RANDOM" >"$SCN_DIR/token" && cp "$SCN_DIR/token" "$t/token.txt"
	md5sum <"$L2_KERNEL" | cut -c1-32 >"$SCN_DIR/kernel.md5"
	printf '%s\n' "set timeout=0" \
		"echo \"vmlet-cd: GRUB boots Linux from the CD\"" \
		"linux /boot/vmlinuz console=ttyS0 quiet panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN" \
		"initrd /boot/initrd.img" \
		"echo \"vmlet-cd: GRUB loaded the kernel and initrd\"" \
		"boot" >"$t/boot/grub/grub.cfg"
	grub-mkrescue -o "$SCN_DIR/cd.iso" "$t" >"$SCN_DIR/mkrescue.log" 2>&1 || return 1
	rm -rf "$t"
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: cd, cdrom: {bus: sata}, bootOrder: 1}" "      - {name: cd, hostDisk: {path: /scn/$SCN/cd.iso, type: Disk}}" |
		sed 's/^        cpu: /        firmware: {bootloader: {efi: {secureBoot: false}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
# no --kernel, no --cmdline: the firmware boots the CD
l1() {
	timeout -s KILL "${TIMEBOX:-150}" vmlet run -f "$D/vm.yaml" --console stdio --log-format text \
		2>"$D/vmm.log"
}
l2() {
	fw=/sys/firmware/efi
	rep efi "platform=$(cat $fw/fw_platform_size 2>/dev/null) runtime-map=$(ls $fw/runtime-map 2>/dev/null | wc -l)"
	rep cmdline "$(cat /proc/cmdline)"
	mod ahci sr_mod cdrom isofs
	n=0
	while [ ! -e /sys/block/sr0 ] && [ $n -lt 150 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	if mount -t iso9660 -o ro /dev/sr0 /mnt; then
		rep cd-token "$(cat /mnt/token.txt)"
		rep cd-kernel "$(md5sum </mnt/boot/vmlinuz | cut -c1-32)"
		umount /mnt
	fi
}
host_check() {
	[[ $(rep cmdline) == "BOOT_IMAGE=/boot/vmlinuz "*"nested.scn=$SCN"* ]] &&
		ok "GRUB from the CD booted the kernel with its command line: $(rep cmdline)" ||
		fail "command line '$(rep cmdline)'"
	[[ $(rep efi) == "platform=64 runtime-map="[1-9]* ]] && ok "Linux booted through EFI: $(rep efi)" ||
		fail "EFI: '$(rep efi)'"
	grep -aq 'efi: sata 00:[0-9a-f.]* port 0: CD-ROM' "$C" &&
		grep -aq 'efi: disk: El Torito EFI image 1 at block' "$C" &&
		ok "the firmware found the CD-ROM and the ISO's EFI image (boot entry 1)" ||
		fail "no 'efi: sata ... CD-ROM' / 'El Torito EFI image 1' line on the console"
	grep -aq 'Welcome to GRUB' "$C" && grep -aq 'vmlet-cd: GRUB loaded the kernel and initrd' "$C" &&
		ok "GRUB ran from the CD and loaded the kernel and initrd from its ISO 9660 file system" ||
		fail "no GRUB lines on the console"
	[[ $(rep cd-token) == "$(cat "$D/token")" ]] &&
		ok "Linux's ahci, sr_mod and isofs read the CD: the token is the host's" ||
		fail "token from /dev/sr0 '$(rep cd-token)', want '$(cat "$D/token")'"
	[[ $(rep cd-kernel) == "$(cat "$D/kernel.md5")" ]] &&
		ok "the kernel on the CD reads back whole (md5 $(rep cd-kernel))" ||
		fail "the kernel read from /dev/sr0: '$(rep cd-kernel)'"
}
