# Sourced by the disk builders (tests/bios/mkdisk.sh, tests/efi/mkdisk.sh;
# POSIX sh): pieces of a bootable disk image, made without mounting
# anything or being root.

# disk_ext4 OUT SIZE_MB LABEL DIR [UUID]: an ext4 file system image of DIR's
# contents (mke2fs -d), labelled LABEL, with the file system UUID given
disk_ext4() {
	mke2fs -q -t ext4 -L "$3" ${5:+-U "$5"} -d "$4" -F "$1" "$2M" >/dev/null 2>&1 ||
		{ echo "disk: mke2fs of $4 failed (Debian package e2fsprogs)" >&2; return 1; }
}

# disk_fat OUT SIZE_MB LABEL: an empty FAT file system image (mkfs.vfat
# picks FAT12/16/32 by the size, as distributions' installers do)
disk_fat() {
	rm -f "$1"
	truncate -s "$2M" "$1"
	mkfs.vfat -n "$3" "$1" >/dev/null
}

# disk_put DISK PART LBA: write the partition image PART into DISK at
# sector LBA (512-byte sectors)
disk_put() {
	dd if="$2" of="$1" bs=512 seek="$3" conv=notrunc status=none
}

# disk_mb FILE...: the size of the files in MiB, rounded up, plus 8 MiB
# (room for a file system's own metadata)
disk_mb() {
	_b=0
	for _f; do _b=$((_b + $(stat -c %s "$_f"))); done
	echo $((_b / 1048576 + 8))
}
