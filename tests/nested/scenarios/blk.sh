# virtio-blk through Linux's driver, five disks told apart by their serial
# (/sys/block/vdX/serial): an ext4 data disk made on the host (read a file,
# write one, fstrim, sync; the host then finds the write in the image), a
# readOnly one (writes refused), a qcow2 containerDisk, an emptyDisk (its
# size, a write read back), and the cloud-init NoCloud seed (label cidata,
# its user-data). blockMultiQueue: one queue per vCPU. Shape: 3 cores, Intel CPUID.
SHAPE=1,3,1 MEM=256Mi VENDOR=intel
host_prep() {
	local t=$SCN_DIR/tree
	echo "from-the-host-$RANDOM$RANDOM" >"$SCN_DIR/token"
	mkdir -p "$t/data" "$t/ro" "$t/qcow" "$SCN_DIR/cdroot/cont"
	cp "$SCN_DIR/token" "$t/data/hello.txt"
	echo "read-only-disk" >"$t/ro/ro.txt"
	echo "qcow2-disk" >"$t/qcow/qcow.txt"
	mke2fs -q -t ext4 -d "$t/data" -F "$SCN_DIR/data.img" 32M >/dev/null &&
		mke2fs -q -t ext4 -d "$t/ro" -F "$SCN_DIR/ro.img" 8M >/dev/null &&
		mke2fs -q -t ext4 -d "$t/qcow" -F "$t/qcow.raw" 16M >/dev/null &&
		qemu-img convert -q -f raw -O qcow2 "$t/qcow.raw" "$SCN_DIR/cdroot/cont/disk.qcow2" || return 1
	rm -rf "$t"
	local d=/scn/$SCN
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          blockMultiQueue: true
          disks:
          - {name: data, serial: nested-data, disk: {bus: virtio}}
          - {name: ro, serial: nested-ro, disk: {bus: virtio, readonly: true}}
          - {name: cont, serial: nested-qcow2, disk: {bus: virtio}}
          - {name: empty, serial: nested-empty, disk: {bus: virtio}}
          - {name: seed, disk: {bus: virtio}}" "      - {name: data, hostDisk: {path: $d/data.img, type: Disk}}
      - {name: ro, hostDisk: {path: $d/ro.img, type: Disk}}
      - {name: cont, containerDisk: {image: example/cont}}
      - {name: empty, emptyDisk: {capacity: 64Mi}}
      - name: seed
        cloudInitNoCloud:
          userData: |
            #cloud-config
            # nested-user-data-marker" >"$SCN_DIR/vm.yaml"
}
l1() { vmlet_run --disk-root "$D/cdroot"; }
l2() {
	mod virtio_pci virtio_blk isofs
	for b in /sys/block/vd*; do
		rep disk "${b##*/} serial=$(cat "$b/serial") ro=$(cat "$b/ro") sectors=$(cat "$b/size")" \
			"queues=$(ls -d "$b"/mq/* | wc -l) discard_max=$(cat "$b/queue/discard_max_bytes")"
	done
	dev=$(disk_by_serial nested-data)
	if mount -t ext4 "$dev" /mnt; then
		rep data-read "$(cat /mnt/hello.txt)"
		echo "back:$(cat /mnt/hello.txt)" >/mnt/from-l2.txt
		rep fstrim "$(fstrim -v /mnt 2>&1)"
		sync
		umount /mnt
	fi
	dev=$(disk_by_serial nested-ro)
	dd if=/dev/zero of="$dev" bs=4096 count=1 oflag=direct 2>/dev/null && rep ro-write accepted ||
		rep ro-write refused
	mount -t ext4 -o ro "$dev" /mnt && rep ro-read "$(cat /mnt/ro.txt)" && umount /mnt
	dev=$(disk_by_serial nested-qcow2)
	mount -t ext4 -o ro "$dev" /mnt && rep qcow2-read "$(cat /mnt/qcow.txt)" && umount /mnt
	dev=$(disk_by_serial nested-empty)
	echo nested-empty-pattern | dd of="$dev" bs=4096 conv=sync oflag=direct 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	rep empty-read "$(dd if="$dev" bs=4096 count=1 iflag=direct 2>/dev/null | head -n 1)"
	# the seed: an ISO 9660 volume labelled cidata (the volume identifier at
	# byte 40 of the primary volume descriptor, sector 16: upper case there,
	# as ISO 9660 wants; cloud-init accepts both)
	dev=
	for b in /sys/block/vd*; do
		l=$(dd if="/dev/${b##*/}" bs=1 skip=32808 count=6 2>/dev/null | tr A-Z a-z)
		[ "$l" = cidata ] && dev=/dev/${b##*/}
	done
	mount -t iso9660 -o ro "$dev" /mnt && rep cidata "$dev $(ls /mnt | tr '\n' ' ')" &&
		rep user-data "$(grep nested /mnt/user-data)" && umount /mnt
}
host_check() {
	local n
	n=$(rep disk | wc -l)
	[[ $n == 5 ]] && ok "5 virtio-blk disks" || fail "$n virtio-blk disks, want 5: $(rep disk)"
	for s in nested-data nested-ro nested-qcow2 nested-empty; do
		rep disk | grep -q "serial=$s " && ok "serial $s" || fail "no disk with serial $s"
	done
	rep disk | grep -q "serial=nested-ro ro=1" && ok "readOnly disk: ro=1" || fail "readOnly disk not ro"
	rep disk | grep -q "serial=nested-empty ro=0 sectors=131072 " && ok "emptyDisk: 64 MiB" ||
		fail "emptyDisk: $(rep disk | grep nested-empty)"
	[[ $(rep disk | grep -c ' queues=3 ') == 5 ]] && ok "blockMultiQueue: 3 queues each (3 vCPUs)" ||
		fail "queue counts: $(rep disk | grep -o 'queues=[0-9]*' | tr '\n' ' ')"
	[[ $(rep data-read) == "$(cat "$D/token")" ]] && ok "ext4 data disk read" ||
		fail "data disk read '$(rep data-read)'"
	rep fstrim | grep -q 'bytes trimmed' && ok "fstrim: $(rep fstrim)" || fail "fstrim: $(rep fstrim)"
	[[ $(rep ro-write) == refused ]] && ok "readOnly disk refused a write" || fail "readOnly disk: write $(rep ro-write)"
	[[ $(rep ro-read) == read-only-disk ]] && ok "readOnly disk mounted" || fail "readOnly disk read '$(rep ro-read)'"
	[[ $(rep qcow2-read) == qcow2-disk ]] && ok "qcow2 containerDisk read" || fail "qcow2 read '$(rep qcow2-read)'"
	[[ $(rep empty-read) == nested-empty-pattern ]] && ok "emptyDisk write read back" ||
		fail "emptyDisk read '$(rep empty-read)'"
	rep cidata | grep -q 'user-data' && ok "cloud-init seed (cidata): $(rep cidata)" || fail "no cidata seed: $(rep cidata)"
	[[ $(rep user-data) == "# nested-user-data-marker" ]] && ok "cloud-init user-data" ||
		fail "user-data '$(rep user-data)'"
	# the guest's write, in the image the host gets back from L1
	l1_get "scn/$SCN/data.img" "$D/data.back.img" &&
		[[ $(debugfs -R "cat /from-l2.txt" "$D/data.back.img" 2>/dev/null) == "back:$(cat "$D/token")" ]] &&
		ok "the guest's write is in the image on the host" ||
		fail "the guest's write is not in the image on the host"
	rm -f "$D/data.back.img"
}
