# OVMF boots from CD (issue 22 item 3) on the real KVM: a VM with
# efi.secureBoot (and features.smm) runs Debian's OVMF, whose own ATAPI and
# El Torito stack reads vmlet's CD-ROM drive. The ISO (xorriso) carries as
# its El Torito EFI image the ESP of tests/efi/mkdisk.sh --signed
# --esp-boot (Microsoft-signed shim as \EFI\BOOT\BOOTX64.EFI, Debian's
# signed GRUB, the L2 kernel and initramfs, \EFI\debian\grub.cfg; larger
# than the entry's 16-bit sector count holds), and in its ISO 9660 tree
# the same kernel, initramfs and grub.cfg (GRUB names a CD partition by
# its disk, cd0) and a token. Linux (Debian's signed generic kernel) must
# reach userspace with secure boot on under OVMF, and its own sr_mod and
# isofs read the token back.
# Not in tests/nested/scenarios: it needs the patched L0, tests/nested/run
# --l0 patched --scenarios tests/nested/scenarios-ovmf (README: "OVMF
# scenarios").
L2_FLAVOR=generic SHAPE=1,2,1 MEM=512Mi TIMEBOX=600
host_prep() {
	local t=$SCN_DIR/iso first last
	command -v xorriso >/dev/null || return 1
	tests/efi/mkdisk.sh --signed --esp-boot "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN" \
		"$SCN_DIR/disk.img" || return 1
	first=$(sgdisk -i 1 "$SCN_DIR/disk.img" | sed -n 's/^First sector: \([0-9]*\).*/\1/p')
	last=$(sgdisk -i 1 "$SCN_DIR/disk.img" | sed -n 's/^Last sector: \([0-9]*\).*/\1/p')
	mkdir -p "$t/EFI/debian" || return 1
	dd if="$SCN_DIR/disk.img" of="$t/efi.img" bs=512 skip="$first" count=$((last - first + 1)) \
		status=none || return 1
	MTOOLS_SKIP_CHECK=1 mcopy -i "$t/efi.img" ::/EFI/debian/grub.cfg "$t/EFI/debian/grub.cfg" &&
		cp "$L2_KERNEL" "$t/vmlinuz" && cp "$L2_INITRD" "$t/initrd.img" || return 1
	echo "ovmf-cd-$RANDOM$RANDOM" >"$SCN_DIR/token" && cp "$SCN_DIR/token" "$t/token.txt"
	xorriso -as mkisofs -quiet -R -J -V VMLET_OVMF -o "$SCN_DIR/cd.iso" -e efi.img -no-emul-boot \
		"$t" >/dev/null 2>&1 || return 1
	rm -rf "$t" "$SCN_DIR/disk.img"
	cp /usr/share/OVMF/OVMF_CODE_4M.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$SCN_DIR/" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: cd, cdrom: {bus: sata}, bootOrder: 1}" "      - {name: cd, hostDisk: {path: /scn/$SCN/cd.iso, type: Disk}}" |
		sed 's/^        cpu: /        features: {smm: {enabled: true}}\n        firmware: {bootloader: {efi: {secureBoot: true}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
# L1 has no /usr/share/OVMF: the images come along in the scenario folder
l1() {
	VMLET_OVMF_CODE=$D/OVMF_CODE_4M.fd VMLET_OVMF_VARS=$D/OVMF_VARS_4M.ms.fd \
		timeout -s KILL "${TIMEBOX:-150}" vmlet run -f "$D/vm.yaml" --efi-vars "$D/vars.fd" \
		--console stdio --log-format text 2>"$D/vmm.log"
}
l2() {
	fw=/sys/firmware/efi
	rep efi "platform=$(cat $fw/fw_platform_size 2>/dev/null) runtime-map=$(ls $fw/runtime-map 2>/dev/null | wc -l)"
	rep cmdline "$(cat /proc/cmdline)"
	rep sbdmesg "$(dmesg | grep -o 'Secure boot [a-z]*' | head -n 1)"
	rep bios "$(cat /sys/class/dmi/id/bios_vendor)"
	mod ahci sr_mod cdrom isofs
	n=0
	while [ ! -e /sys/block/sr0 ] && [ $n -lt 150 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	if mount -t iso9660 -o ro /dev/sr0 /mnt; then
		rep cd-token "$(cat /mnt/token.txt)"
		umount /mnt
	fi
}
host_check() {
	[[ $(rep cmdline) == "BOOT_IMAGE=/vmlinuz "*"nested.scn=$SCN"* ]] &&
		ok "signed GRUB from the CD booted the signed kernel: $(rep cmdline)" ||
		fail "command line '$(rep cmdline)'"
	[[ $(rep efi) == "platform=64 runtime-map="[1-9]* ]] && ok "Linux booted through EFI: $(rep efi)" ||
		fail "EFI: '$(rep efi)'"
	[[ $(rep sbdmesg) == "Secure boot enabled" ]] && ok "secure boot on: '$(rep sbdmesg)'" ||
		fail "secure boot: dmesg '$(rep sbdmesg)'"
	[[ $(rep bios) == *"EFI Development Kit II"* || $(rep bios) == EDK* ]] &&
		ok "the firmware is OVMF: $(rep bios)" || fail "BIOS vendor '$(rep bios)'"
	grep -aq 'BdsDxe: starting Boot[0-9A-F]* "UEFI QEMU DVD-ROM' "$C" &&
		ok "OVMF's boot manager started the CD-ROM's boot option: $(grep -ao 'BdsDxe: starting [^(]*' "$C" | head -n 1)" ||
		fail "no 'BdsDxe: starting Boot#### \"UEFI QEMU DVD-ROM' line on the console"
	grep -aq 'Welcome to GRUB' "$C" && grep -aq 'vmlet-efi: GRUB loaded the kernel and initrd from cd0' "$C" &&
		ok "GRUB ran from the CD and loaded the kernel and initrd from its ISO 9660 file system (cd0)" ||
		fail "no GRUB lines (loaded ... from cd0) on the console"
	[[ $(rep cd-token) == "$(cat "$D/token")" ]] &&
		ok "Linux's sr_mod and isofs read the CD: the token is the host's" ||
		fail "token from /dev/sr0 '$(rep cd-token)', want '$(cat "$D/token")'"
}
