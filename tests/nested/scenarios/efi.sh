# The kernel through vmlet's own UEFI firmware: its EFI stub from
# \EFI\BOOT\BOOTX64.EFI on a virtio-blk ESP (GPT + FAT), our initramfs by
# initrd= from the same ESP, the command line as the load options. Linux
# must see EFI (64-bit), its runtime services mapped, and read and write
# variables through efivarfs; with efi.persistent the variable the guest
# wrote is in the variable store file vmlet keeps (--efi-vars).
SHAPE=1,5,1 MEM=256Mi BOOT=efi
host_prep() {
	ESP_MB=40 ESP_EXTRA="$L2_INITRD:/initrd.img" tests/efi/mkesp.sh "$L2_KERNEL" "$SCN_DIR/esp.img" ||
		return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: esp, disk: {bus: virtio}}" "      - {name: esp, hostDisk: {path: /scn/$SCN/esp.img, type: Disk}}" |
		sed 's/^        cpu: /        firmware: {bootloader: {efi: {secureBoot: false, persistent: true}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
l1() { vmlet_run --efi-vars "$D/efivars"; }
l2() {
	fw=/sys/firmware/efi
	rep efi "platform=$(cat $fw/fw_platform_size 2>/dev/null) runtime-map=$(ls $fw/runtime-map 2>/dev/null | wc -l)"
	mod efivarfs
	mount -t efivarfs efivarfs $fw/efivars || return
	g=8be4df61-93ca-11d2-aa0d-00e098032b8c
	rep efi-lang "$(tail -c +5 $fw/efivars/PlatformLang-$g | tr -d '\000')"
	t=$fw/efivars/NestedTest-6e657374-6564-4c32-8e9f-0a1b2c3d4e5f
	printf '\007\000\000\000written-by-l2' >$t # attributes NV|BS|RT, then the data
	rep efi-var "$(tail -c +5 $t)"
}
host_check() {
	[[ $(rep efi) == "platform=64 runtime-map="[1-9]* ]] && ok "Linux booted through EFI: $(rep efi)" ||
		fail "EFI: '$(rep efi)'"
	[[ $(rep efi-lang) == en-US ]] && ok "efivarfs: PlatformLang=en-US" || fail "PlatformLang '$(rep efi-lang)'"
	[[ $(rep efi-var) == written-by-l2 ]] && ok "efivarfs: a variable written and read back" ||
		fail "variable read back: '$(rep efi-var)'"
	# the variable's name, UTF-16LE, in the persistent store
	l1_get "scn/$SCN/efivars" "$D/efivars" && grep -aq "N.e.s.t.e.d.T.e.s.t" "$D/efivars" &&
		ok "the variable is in the persistent store (efi.persistent)" ||
		fail "the variable is not in the persistent store $D/efivars"
}
