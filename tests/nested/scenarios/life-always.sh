# runStrategy Always: the guest's `reboot -f` restarts it (vmlet runs the
# guest in a worker and starts it again); the second boot finds the mark
# the first one left on its disk and waits for the power button, which
# SIGTERM presses: vmlet exits 0.
SHAPE=1,1,1 MEM=256Mi
host_prep() {
	truncate -s 1M "$SCN_DIR/mark.img"
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: mark, disk: {bus: virtio}}" "      - {name: mark, hostDisk: {path: /scn/$SCN/mark.img, type: Disk}}" |
		sed 's/runStrategy: Once/runStrategy: Always/' >"$SCN_DIR/vm.yaml"
}
l1() { vm_run_on "@R pwrbtn-listening" 'kill -TERM $(pidof vmlet)'; }
l2() {
	mod virtio_pci virtio_blk
	if [ "$(dd if=/dev/vda bs=6 count=1 2>/dev/null)" = boot-1 ]; then
		rep restarted yes
		L2_END=pwrbtn_wait
	else
		printf boot-1 | dd of=/dev/vda bs=512 conv=sync,fsync 2>/dev/null
		rep first-boot marked
		L2_END=reboot
	fi
}
host_check() {
	[[ $(rep first-boot) == marked && $(rep restarted) == yes ]] &&
		ok "the guest's reboot restarted it (runStrategy Always), the disk kept its mark" ||
		fail "first boot '$(rep first-boot)', restarted '$(rep restarted)'"
	rep power-button | grep -q pressed && ok "SIGTERM: the power button ended the restarted guest" ||
		fail "no power button in the restarted guest"
}
