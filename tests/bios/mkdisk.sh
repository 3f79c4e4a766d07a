#!/bin/sh
# Make a BIOS-bootable disk image the way a distribution's legacy images
# are: an MBR partition table with syslinux's MBR boot code and one active
# FAT partition holding SYSLINUX (installed with the mtools-based
# `syslinux`, no mount, no root), a Linux kernel, its initrd and
# syslinux.cfg booting them with the given command line.
#   tests/bios/mkdisk.sh KERNEL INITRD "CMDLINE" OUT.img   (DISK_MB, default 64)
# Needs Debian's syslinux, syslinux-common, mtools, dosfstools, python3.
set -eu
kernel=$1 initrd=$2 cmdline=$3 out=$4
mb=${DISK_MB:-64}
mbr=/usr/lib/syslinux/mbr/mbr.bin
[ -f "$mbr" ] || { echo "mkdisk: no $mbr (Debian package syslinux-common)" >&2; exit 1; }
command -v syslinux >/dev/null || { echo "mkdisk: no syslinux (Debian package syslinux)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MTOOLS_SKIP_CHECK=1
part_mb=$((mb - 1))
truncate -s "${part_mb}M" "$tmp/fat.img"
mkfs.vfat -n VMLETBIOS "$tmp/fat.img" >/dev/null
printf 'DEFAULT linux\nPROMPT 0\nTIMEOUT 0\nSAY vmlet-bios: syslinux boots Linux\nLABEL linux\n  KERNEL /vmlinuz\n  INITRD /initrd\n  APPEND %s\n' \
	"$cmdline" >"$tmp/syslinux.cfg"
mcopy -i "$tmp/fat.img" "$kernel" ::/vmlinuz
mcopy -i "$tmp/fat.img" "$initrd" ::/initrd
mcopy -i "$tmp/fat.img" "$tmp/syslinux.cfg" ::/syslinux.cfg
syslinux --install "$tmp/fat.img"
rm -f "$out"
truncate -s "${mb}M" "$out"
# MBR: syslinux's boot code (440 bytes), one active partition (type 0x0e,
# FAT16 LBA) from sector 2048 to the end, the 0x55AA signature
python3 - "$out" "$mbr" "$((part_mb * 2048))" <<'PY'
import struct, sys
out, mbr, sectors = sys.argv[1], sys.argv[2], int(sys.argv[3])
code = open(mbr, "rb").read()[:440]
entry = struct.pack("<B3sB3sII", 0x80, b"\xfe\xff\xff", 0x0E, b"\xfe\xff\xff", 2048, sectors)
sector = code.ljust(446, b"\0") + entry + bytes(48) + b"\x55\xaa"
with open(out, "r+b") as f:
    f.write(sector)
PY
dd if="$tmp/fat.img" of="$out" bs=512 seek=2048 conv=notrunc status=none
