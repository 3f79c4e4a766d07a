# SATA (issue 22) through Linux's own drivers: the generic Debian kernel's
# ahci, libata and sd_mod (the cloud kernel has no AHCI driver) on vmlet's
# ICH9 AHCI, and the same disks under QEMU -M q35 (its ICH9 AHCI at 00:1f.2,
# ide-hd) in the same L1 as the oracle (scenario sata-qemu). Disks, each on
# the same AHCI port under both VMMs:
#   port 0  sata-data   raw hostDisk, ext4 made on the host: a file read, one
#                       written and fsynced (the host finds it in the image),
#                       fstrim
#   port 1  (no serial) raw hostDisk, 4096-byte physical sectors: 1 MiB of
#                       random bytes written (O_DIRECT, fsync) and read back,
#                       another MiB written then discarded (blkdiscard): the
#                       host finds the first in the image and zeros (a hole)
#                       for the second; its serial is the VMM's default
#   port 2  sata-qcow2  qcow2 containerDisk (ephemeral; QEMU: snapshot=on):
#                       the whole device's checksum against the image's
#   port 3  CD-ROM      an ISO made on the host with xorriso (hostDisk; QEMU:
#                       ide-cd): Linux's sr_mod and isofs mount it, its
#                       files' checksums are the host's, a write is refused
# (No readOnly disk: KubeVirt refuses one on SATA, "sata hard-disks do not
# support read-only", and so does vmlet's resolve, conformance case
# v82-sata-read-only-disk; QEMU refuses a read-only ide-hd as well.)
# Per port, what Linux made of the disk must be the same under both VMMs:
# vendor, model, revision, serial, sectors, logical and physical sector
# size, rotational, write cache, discard granularity and maximum, libata's
# TRIM mode, NCQ queue depth; libata's IDENTIFY dump is compared as a note;
# for the CD-ROM, vendor, model, revision, size, sector size, read-only.
# (TIMEBOX: QEMU's L2 once needed 403 s on a host with a load of 15, 260 s of
# it between reading the data disk and fstrim's answer; 60 s when quiet)
GROUP=devices # tests/sh/nested_devices.sh
L2_FLAVOR=generic SHAPE=1,2,1 MEM=512Mi COMPARE=sata-qemu TIMEBOX=600

# sata_images DIR: the disk images (the same bytes for both VMMs but the
# token, a random line the guest reads back)
sata_images() {
	local t=$1/tree
	echo "sata-from-the-host-$RANDOM$RANDOM" >"$1/token"
	mkdir -p "$t/data" "$t/qcow" "$1/cdroot/qcow"
	cp "$1/token" "$t/data/hello.txt"
	echo "sata-qcow2" >"$t/qcow/qcow.txt"
	head -c 2097152 /dev/urandom >"$t/qcow/random.bin"
	mkdir -p "$t/iso/dir"
	head -c 1048576 /dev/urandom >"$t/iso/dir/random.bin"
	echo "sata-cd-$RANDOM$RANDOM" >"$t/iso/hello.txt"
	(cd "$t/iso" && md5sum hello.txt dir/random.bin) | awk '{ print $2 "=" $1 }' | tr '\n' ' ' |
		sed 's/ $//' >"$1/iso.md5"
	xorriso -as mkisofs -quiet -R -J -V SATA_CD -o "$1/cd.iso" "$t/iso" 2>/dev/null || return 1
	mke2fs -q -t ext4 -d "$t/data" -F "$1/data.img" 32M >/dev/null &&
		mke2fs -q -t ext4 -d "$t/qcow" -F "$t/qcow.raw" 16M >/dev/null &&
		md5sum <"$t/qcow.raw" | cut -c1-32 >"$1/qcow.md5" &&
		qemu-img convert -q -f raw -O qcow2 "$t/qcow.raw" "$1/cdroot/qcow/disk.qcow2" &&
		truncate -s 24M "$1/scratch.img" || return 1
	rm -rf "$t"
}

host_prep() {
	local d=/scn/$SCN
	command -v qemu-img >/dev/null && command -v xorriso >/dev/null || return 1
	sata_images "$SCN_DIR" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: data, serial: sata-data, disk: {bus: sata}}
          - {name: scratch, blockSize: {custom: {logical: 512, physical: 4096}}, disk: {bus: sata}}
          - {name: qcow, serial: sata-qcow2, disk: {bus: sata}}
          - {name: cd, cdrom: {bus: sata}}" "      - {name: data, hostDisk: {path: $d/data.img, type: Disk}}
      - {name: scratch, hostDisk: {path: $d/scratch.img, type: Disk}}
      - {name: qcow, containerDisk: {image: example/qcow}}
      - {name: cd, hostDisk: {path: $d/cd.iso, type: Disk}}" >"$SCN_DIR/vm.yaml"
}

l1() {
	if [ "$VMM" = qemu ]; then
		# KubeVirt's disks as libvirt gives them to QEMU: cache=none,
		# discard=unmap; the ports in disk order, as vmlet's
		mkdir -p /var/tmp # (snapshot=on: its overlay, there in QEMU 7.2)
		qemu_run \
			-drive "file=$D/data.img,format=raw,if=none,id=d0,cache=none,discard=unmap" \
			-device ide-hd,drive=d0,bus=ide.0,serial=sata-data \
			-drive "file=$D/scratch.img,format=raw,if=none,id=d2,cache=none,discard=unmap" \
			-device ide-hd,drive=d2,bus=ide.1,physical_block_size=4096 \
			-drive "file=$D/cdroot/qcow/disk.qcow2,format=qcow2,if=none,id=d3,cache=none,discard=unmap,snapshot=on" \
			-device ide-hd,drive=d3,bus=ide.2,serial=sata-qcow2 \
			-drive "file=$D/cd.iso,format=raw,if=none,id=d4,media=cdrom,readonly=on" \
			-device ide-cd,drive=d4,bus=ide.3
	else
		vmlet_run --disk-root "$D/cdroot"
	fi
}

# ---- L2 ---------------------------------------------------------------------

# sata_dev SERIAL: /dev/sdX of the disk with that serial (SCSI VPD page 0x80,
# which libata makes of IDENTIFY words 10-19); sata_port_dev N: of AHCI port N
sata_serial() { tail -c +5 "$1/device/vpd_pg80" 2>/dev/null | tr -d '\0' | sed 's/^ *//; s/ *$//'; }
sata_dev() {
	for b in /sys/block/sd*; do
		[ "$(sata_serial "$b")" = "$1" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}
sata_port() { readlink -f "$1/device" | sed -n 's|.*/ata\([0-9]*\)/.*|\1|p'; }
sata_port_dev() {
	for b in /sys/block/sd*; do
		[ "$(sata_port "$b")" = $(($1 + 1)) ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}
one() { tr -s ' ' <"$1" | sed 's/^ //; s/ $//; s/ /_/g'; }

l2() {
	mod ahci sd_mod sr_mod isofs crc32c_generic ext4
	# libata probes the ports and SCSI scans them asynchronously
	n=0
	while [ "$(ls -d /sys/block/sd* /sys/block/sr* 2>/dev/null | wc -l)" -lt 4 ] && [ $n -lt 150 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	rep ahci-bound "$(ls /sys/bus/pci/drivers/ahci 2>/dev/null | grep -c ':')"
	for b in /sys/block/sd*; do
		q=$b/queue dv=$b/device p=$(sata_port "$b")
		rep sata "port=$((p - 1)) serial=$(sata_serial "$b") vendor=$(one "$dv/vendor")" \
			"model=$(one "$dv/model") rev=$(one "$dv/rev") sectors=$(cat "$b/size") ro=$(cat "$b/ro")" \
			"lbs=$(cat "$q/logical_block_size") pbs=$(cat "$q/physical_block_size")" \
			"rot=$(cat "$q/rotational") wc=$(one "$q/write_cache") dgran=$(cat "$q/discard_granularity")" \
			"dmax=$(cat "$q/discard_max_bytes") trim=$(cat "/sys/class/ata_device/dev$p.0/trim" 2>/dev/null)" \
			"qd=$(cat "$dv/queue_depth")"
		rep ata-id "port=$((p - 1)) $(tr -d ' \n' <"/sys/class/ata_device/dev$p.0/id" 2>/dev/null)"
	done
	for b in /sys/block/sr*; do
		[ -e "$b" ] || continue
		dv=$b/device p=$(sata_port "$b")
		rep cd "port=$((p - 1)) vendor=$(one "$dv/vendor") model=$(one "$dv/model") rev=$(one "$dv/rev")" \
			"sectors=$(cat "$b/size") lbs=$(cat "$b/queue/logical_block_size") ro=$(cat "$b/ro")"
		if mount -t iso9660 -o ro "/dev/${b##*/}" /mnt; then
			rep cd-files "$(cd /mnt && md5sum hello.txt dir/random.bin | awk '{ print $2 "=" $1 }' | tr '\n' ' ' | sed 's/ $//')"
			umount /mnt
		fi
		dd if=/dev/zero of="/dev/${b##*/}" bs=2048 count=1 oflag=direct 2>/dev/null &&
			rep cd-write accepted || rep cd-write refused
	done

	dev=$(sata_dev sata-data)
	if [ -n "$dev" ] && mount -t ext4 "$dev" /mnt; then
		rep data-read "$(cat /mnt/hello.txt)"
		echo "back:$(cat /mnt/hello.txt)" >/mnt/from-l2.txt
		sync /mnt/from-l2.txt /mnt # fsync(2) of the file and its directory
		rep data-synced
		rep fstrim "$(fstrim -v /mnt 2>&1)"
		umount /mnt
	fi
	dev=$(sata_port_dev 1)
	if [ -n "$dev" ]; then
		dd if=/dev/urandom of=/tmp/blob bs=65536 count=16 2>/dev/null
		dd if=/tmp/blob of="$dev" bs=65536 seek=16 oflag=direct conv=fsync 2>/dev/null
		dd if=/tmp/blob of="$dev" bs=65536 seek=64 oflag=direct conv=fsync 2>/dev/null
		rep scratch-write "$(md5sum </tmp/blob | cut -c1-32)"
		rep scratch-read "$(dd if="$dev" bs=65536 skip=16 count=16 iflag=direct 2>/dev/null | md5sum | cut -c1-32)"
		blkdiscard -o 4194304 -l 1048576 "$dev" 2>&1 | sed 's/^/@R blkdiscard-error /'
		sync
	fi
	dev=$(sata_dev sata-qcow2)
	[ -n "$dev" ] && rep qcow2-md5 "$(md5sum <"$dev" | cut -c1-32)"
	# (the refused CD write is an I/O error of its own: counted apart)
	rep io-errors "$(dmesg | grep -v ' sr[0-9]' | grep -c -E 'I/O error|EXT4-fs error|exception Emask|failed command')"
}

# ---- host -------------------------------------------------------------------

# the port's "sata" report line of scenario OTHER
sata_other() { sed -n "s/^sata port=$2 /port=$2 /p" "${R%/*/*}/$1/report"; }

host_check() {
	local p mine theirs other=$COMPARE img
	[[ $(rep ahci-bound) == 1 ]] && ok "Linux's ahci bound the controller" || fail "ahci bound $(rep ahci-bound) devices"
	n=$(rep sata | wc -l)
	[[ $n == 3 ]] && ok "$n SATA disks (sd_mod)" || fail "$n SATA disks, want 3: $(rep sata)"
	if [[ $SCN != *-qemu ]]; then
		for p in 0 1 2; do
			mine=$(rep sata | grep "^port=$p ")
			theirs=$(sata_other "$other" "$p")
			[[ -n $mine && $mine == "$theirs" ]] && ok "port $p as under QEMU: $mine" ||
				fail "port $p: vmlet '$mine', QEMU '$theirs'"
		done
		mine=$(rep cd)
		theirs=$(sed -n "s/^cd //p" "${R%/*/*}/$other/report")
		[[ -n $mine && $mine == "$theirs" ]] && ok "CD-ROM as under QEMU: $mine" ||
			fail "CD-ROM: vmlet '$mine', QEMU '$theirs'"
		# libata's IDENTIFY dumps: the words that differ from QEMU's (a note)
		for p in 0 1 2; do
			python3 - "$(rep ata-id | sed -n "s/^port=$p //p")" \
				"$(sed -n "s/^ata-id port=$p //p" "${R%/*/*}/$other/report")" "$p" <<'PYEND'
import sys
a, b, p = sys.argv[1], sys.argv[2], sys.argv[3]
wa = [a[i:i + 4] for i in range(0, len(a), 4)]
wb = [b[i:i + 4] for i in range(0, len(b), 4)]
d = ["%d:%s/%s" % (i, x, y) for i, (x, y) in enumerate(zip(wa, wb)) if x != y]
if len(wa) != 256 or len(wb) != 256:
    d = ["(%d and %d words)" % (len(wa), len(wb))]
print("note: port %s IDENTIFY words vmlet/QEMU differing: %s" % (p, " ".join(d) or "none"))
PYEND
		done
	fi
	[[ $(rep data-read) == "$(cat "$D/token")" ]] && ok "ext4 data disk read" || fail "data disk read '$(rep data-read)'"
	rep fstrim | grep -q 'bytes trimmed' && ok "fstrim: $(rep fstrim)" || fail "fstrim: $(rep fstrim)"
	[[ -n $(rep scratch-write) && $(rep scratch-write) == "$(rep scratch-read)" ]] &&
		ok "1 MiB written (O_DIRECT) read back" || fail "scratch: wrote $(rep scratch-write), read $(rep scratch-read)"
	[[ -z $(rep blkdiscard-error) ]] && ok "blkdiscard" || fail "blkdiscard: $(rep blkdiscard-error)"
	[[ $(rep qcow2-md5) == "$(cat "$D/qcow.md5")" ]] && ok "qcow2 containerDisk read: the image's checksum" ||
		fail "qcow2 read $(rep qcow2-md5), image $(cat "$D/qcow.md5")"
	[[ -n $(rep cd-files) && $(rep cd-files) == "$(cat "$D/iso.md5")" ]] &&
		ok "the ISO's files read through sr_mod and isofs: the host's checksums" ||
		fail "CD files '$(rep cd-files)', want '$(cat "$D/iso.md5")'"
	[[ $(rep cd-write) == refused ]] && ok "a write to the CD-ROM refused" || fail "CD write $(rep cd-write)"
	[[ $(rep io-errors) == 0 ]] && ok "no I/O or ATA error in the guest" || fail "$(rep io-errors) I/O or ATA errors"
	# what the guest wrote and discarded, in the images the host gets back from L1
	img=$D/back.img
	l1_get "scn/$SCN/data.img" "$img" &&
		[[ $(debugfs -R "cat /from-l2.txt" "$img" 2>/dev/null) == "back:$(cat "$D/token")" ]] &&
		ok "the guest's fsynced file is in the image on the host" || fail "the guest's file is not in the image"
	if l1_get "scn/$SCN/scratch.img" "$img"; then
		[[ $(dd if="$img" bs=65536 skip=16 count=16 2>/dev/null | md5sum | cut -c1-32) == "$(rep scratch-write)" ]] &&
			ok "the guest's 1 MiB is in the image" || fail "the guest's 1 MiB is not in the image"
		[[ -n $(rep scratch-write) && $(dd if="$img" bs=65536 skip=64 count=16 2>/dev/null | tr -d '\0' | wc -c) == 0 ]] &&
			ok "the discarded MiB reads as zeros in the image" || fail "the discarded MiB is not zeros in the image"
	else
		fail "no scratch image back from L1"
	fi
	rm -f "$img"
}
