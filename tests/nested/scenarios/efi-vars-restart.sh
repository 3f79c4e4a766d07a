# EFI variables across a guest reboot (runStrategy RerunOnFailure: vmlet
# restarts the guest in a new worker) under vmlet's own firmware, twice:
# with efi.persistent the variable the first boot wrote through efivarfs
# is there after the restart; without it too, as in KubeVirt, where a
# guest reboot stays in the same VMI and its NVRAM (only a new VMI starts
# from a fresh one). Each VM's second boot is told apart by a mark disk.
SHAPE=1,1,1 MEM=256Mi BOOT=efi
host_prep() {
	local p
	ESP_MB=40 ESP_EXTRA="$L2_INITRD:/initrd.img" tests/efi/mkesp.sh "$L2_KERNEL" "$SCN_DIR/esp.img" ||
		return 1
	for p in true false; do
		truncate -s 1M "$SCN_DIR/mark-$p.img"
		vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: esp, disk: {bus: virtio}}
          - {name: mark, serial: mark, disk: {bus: virtio}}" "      - {name: esp, hostDisk: {path: /scn/$SCN/esp.img, type: Disk}}
      - {name: mark, hostDisk: {path: /scn/$SCN/mark-$p.img, type: Disk}}" |
			sed -e "s/^        cpu: /        firmware: {bootloader: {efi: {secureBoot: false, persistent: $p}}}\n        cpu: /" \
				-e 's/runStrategy: Once/runStrategy: RerunOnFailure/' >"$SCN_DIR/vm-$p.yaml"
	done
	cp "$SCN_DIR/vm-true.yaml" "$SCN_DIR/vm.yaml" # what the harness resolves
}
l1() {
	cp "$D/vm-true.yaml" "$D/vm.yaml" && L2_APPEND=efivm=persistent vmlet_run --efi-vars "$D/efivars" ||
		return
	cp "$D/vm-false.yaml" "$D/vm.yaml" && L2_APPEND=efivm=volatile vmlet_run
}
l2() {
	mod virtio_pci virtio_blk efivarfs
	vm=$(l2_arg efivm)
	mount -t efivarfs efivarfs /sys/firmware/efi/efivars || { rep efi-$vm no-efivarfs; return; }
	t=/sys/firmware/efi/efivars/NestedRestart-6e657374-6564-4c32-8e9f-0a1b2c3d4e5f
	mark=$(disk_by_serial mark)
	if [ "$(dd if="$mark" bs=6 count=1 2>/dev/null)" = boot-1 ]; then
		rep efi-$vm-restarted "$(tail -c +5 $t 2>/dev/null || echo absent)"
	else
		printf boot-1 | dd of="$mark" bs=512 conv=sync,fsync 2>/dev/null
		printf '\007\000\000\000before-reboot' >$t # NV|BS|RT, then the data
		rep efi-$vm-wrote "$(tail -c +5 $t)"
		L2_END=reboot
	fi
}
host_check() {
	local p
	for p in persistent volatile; do
		[[ $(rep efi-$p-wrote) == before-reboot ]] && ok "$p: the first boot wrote the variable" ||
			fail "$p: the first boot wrote '$(rep efi-$p-wrote)'"
		[[ $(rep efi-$p-restarted) == before-reboot ]] &&
			ok "$p: the variable is there after the guest's reboot (a restart in a new worker)" ||
			fail "$p: after the reboot the variable is '$(rep efi-$p-restarted)', want before-reboot"
	done
}
