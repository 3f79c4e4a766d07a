#!/bin/sh
# Make a BIOS-bootable disk image the way distributions make legacy images,
# without mounting anything or being root. Two layouts:
#   syslinux (default)  an MBR partition table with syslinux's MBR boot code
#                       and one active FAT partition holding SYSLINUX
#                       (installed with the mtools-based `syslinux`), the
#                       kernel, its initrd and syslinux.cfg
#   grub (--grub)       GPT, as Debian's cloud images: GRUB's boot.img in the
#                       protective MBR, its core.img (grub-mkimage -O i386-pc,
#                       the configuration embedded) in a BIOS boot partition,
#                       the kernel and initrd in /boot of an ext4 partition
#                       labelled vmletroot
# Either prints "vmlet-bios: <loader> boots Linux" on the BIOS console and
# boots KERNEL with INITRD and CMDLINE.
#   tests/bios/mkdisk.sh [--grub] KERNEL INITRD "CMDLINE" OUT.img   (DISK_MB, default 64)
# Needs Debian's syslinux + syslinux-common (or grub-pc-bin + gdisk +
# e2fsprogs), mtools, dosfstools, python3.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/../lib/disk.sh"
grub=0
[ "$1" = --grub ] && { grub=1; shift; }
kernel=$1 initrd=$2 cmdline=$3 out=$4
mb=${DISK_MB:-64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -f "$out"
truncate -s "${mb}M" "$out"

if [ $grub = 1 ]; then
	gdir=/usr/lib/grub/i386-pc
	[ -f $gdir/boot.img ] && command -v grub-mkimage >/dev/null ||
		{ echo "mkdisk: no GRUB for i386-pc (Debian package grub-pc-bin)" >&2; exit 1; }
	printf 'set timeout=0\necho "vmlet-bios: GRUB boots Linux"\n%s\n%s\n%s\nboot\n' \
		"search --no-floppy --label --set=root vmletroot" "linux /boot/vmlinuz $cmdline" \
		"initrd /boot/initrd.img" >"$tmp/early.cfg"
	grub-mkimage -O i386-pc -o "$tmp/core.img" -p '(hd0,gpt2)/boot/grub' -c "$tmp/early.cfg" \
		biosdisk part_gpt ext2 normal linux echo search search_label configfile boot
	mkdir -p "$tmp/root/boot"
	cp "$kernel" "$tmp/root/boot/vmlinuz"
	cp "$initrd" "$tmp/root/boot/initrd.img"
	disk_ext4 "$tmp/root.ext4" "$((mb - 4))" vmletroot "$tmp/root"
	sgdisk -n 1:2048:+1M -t 1:ef02 -n 2:4096:+$((mb - 4))M -t 2:8300 "$out" >/dev/null
	disk_put "$out" "$tmp/core.img" 2048
	disk_put "$out" "$tmp/root.ext4" 4096
	# boot.img's code (440 bytes: the protective MBR's table stays) with
	# the LBA of core.img at 0x5c and "the boot drive" (0xff) at 0x64;
	# core.img's first sector (diskboot.img) loads the rest from its
	# blocklist at 0x1f4: the LBA after it, the sector count, segment 0x820
	python3 - "$out" "$tmp/core.img" "$gdir/boot.img" <<'PY'
import os, struct, sys
out, core, boot = sys.argv[1:4]
start, n = 2048, (os.path.getsize(core) + 511) // 512
code = bytearray(open(boot, "rb").read()[:440])
struct.pack_into("<Q", code, 0x5C, start)
code[0x64] = 0xFF
with open(out, "r+b") as f:
    f.write(code)
    f.seek(start * 512 + 0x1F4)
    f.write(struct.pack("<QHH", start + 1, n - 1, 0x820))
PY
	exit 0
fi

mbr=/usr/lib/syslinux/mbr/mbr.bin
[ -f "$mbr" ] || { echo "mkdisk: no $mbr (Debian package syslinux-common)" >&2; exit 1; }
command -v syslinux >/dev/null || { echo "mkdisk: no syslinux (Debian package syslinux)" >&2; exit 1; }
export MTOOLS_SKIP_CHECK=1
part_mb=$((mb - 1))
disk_fat "$tmp/fat.img" "$part_mb" VMLETBIOS
printf 'DEFAULT linux\nPROMPT 0\nTIMEOUT 0\nSAY vmlet-bios: syslinux boots Linux\nLABEL linux\n  KERNEL /vmlinuz\n  INITRD /initrd\n  APPEND %s\n' \
	"$cmdline" >"$tmp/syslinux.cfg"
mcopy -i "$tmp/fat.img" "$kernel" ::/vmlinuz
mcopy -i "$tmp/fat.img" "$initrd" ::/initrd
mcopy -i "$tmp/fat.img" "$tmp/syslinux.cfg" ::/syslinux.cfg
syslinux --install "$tmp/fat.img"
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
disk_put "$out" "$tmp/fat.img" 2048
