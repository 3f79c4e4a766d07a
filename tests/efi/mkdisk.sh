#!/bin/sh
# Make a UEFI-bootable disk image laid out as a Debian installation or
# cloud image, without mounting anything or being root:
#   GPT, partition 1 the EFI System Partition (FAT):
#     \EFI\BOOT\BOOTX64.EFI   shim (the removable-media path firmware boots)
#     \EFI\BOOT\grubx64.efi   GRUB (shim loads grubx64.efi from its own folder)
#     \EFI\debian\shimx64.efi, grubx64.efi   (what grub-install puts there)
#     \EFI\debian\grub.cfg    GRUB's prefix is /EFI/debian: this finds /boot
#                             by its file system UUID and loads /grub/grub.cfg
#   partition 2: /boot, ext4 labelled vmletboot (UUID below): vmlinuz,
#     initrd.img, grub/grub.cfg, whose menu entry boots KERNEL with INITRD and
#     CMDLINE (GRUB puts BOOT_IMAGE=/vmlinuz in front)
# With --esp-boot there is no /boot partition: the kernel, initrd and the
# whole grub.cfg are on the ESP. GRUB prints "vmlet-efi: GRUB boots Linux",
# then "vmlet-efi: GRUB loaded the kernel and initrd from hd0,gpt2" (gpt1:
# the ESP) before it starts the kernel.
#
#   tests/efi/mkdisk.sh [--signed] [--esp-boot] KERNEL INITRD "CMDLINE" OUT.img
#
# Unsigned (default): shim-unsigned's shimx64.efi and a GRUB made with
# grub-mkimage from grub-efi-amd64-bin (prefix /EFI/debian, the modules this
# layout needs built in). --signed: Debian's signed binaries, shim-signed's
# shimx64.efi.signed (Microsoft's signature) and grub-efi-amd64-signed's
# monolithic grubx64.efi.signed (Debian's; its own early config finds
# /EFI/debian/grub.cfg), taken from the installed packages or else fetched
# with apt-get download into build/efi-pkgs/. SHIM=PATH and GRUB=PATH
# override either. Exit 1 with the reason (a Debian package name) when
# something is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/disk.sh"
signed=0 espboot=0
while [ $# -gt 4 ]; do
	case $1 in
	--signed) signed=1 ;;
	--esp-boot) espboot=1 ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 4 ] || { sed -n '/^#   tests/p' "$0" >&2; exit 2; }
kernel=$1 initrd=$2 cmdline=$3 out=$4
# /boot's file system UUID, which the ESP's grub.cfg searches for: two disks
# of one VM need different ones (BOOT_UUID=...), or GRUB may take the other's
BOOT_UUID=${BOOT_UUID:-564d4c45-5442-4f4f-9442-4f4f54000001}
die() { echo "mkdisk: $*" >&2; exit 1; }
command -v sgdisk >/dev/null && command -v mcopy >/dev/null && command -v mkfs.vfat >/dev/null ||
	die "needs gdisk, mtools and dosfstools"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MTOOLS_SKIP_CHECK=1

# pkg_file PACKAGE PATH: PATH of the installed PACKAGE, or the same file
# from the package's .deb (apt-get download), cached in build/efi-pkgs
pkg_file() {
	[ -f "$2" ] && { echo "$2"; return; }
	c=$here/../../build/efi-pkgs/$1
	if [ ! -f "$c$2" ]; then
		mkdir -p "$tmp/deb" "$c"
		(cd "$tmp/deb" && apt-get download "$1" >/dev/null 2>&1) &&
			dpkg-deb -x "$tmp"/deb/"$1"_*.deb "$c" ||
			{ echo "mkdisk: $2 not installed and apt-get download $1 failed" >&2; return 1; }
	fi
	[ -f "$c$2" ] || { echo "mkdisk: no $2 in $1" >&2; return 1; }
	echo "$c$2"
}

if [ $signed = 1 ]; then
	shim=${SHIM:-$(pkg_file shim-signed /usr/lib/shim/shimx64.efi.signed)} || exit 1
	grub=${GRUB:-$(pkg_file grub-efi-amd64-signed /usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed)} ||
		exit 1
else
	shim=${SHIM:-/usr/lib/shim/shimx64.efi}
	[ -f "$shim" ] || die "no $shim (Debian package shim-unsigned)"
	grub=${GRUB:-}
	if [ -z "$grub" ]; then
		[ -d /usr/lib/grub/x86_64-efi ] && command -v grub-mkimage >/dev/null ||
			die "no grub-mkimage for x86_64-efi (Debian package grub-efi-amd64-bin)"
		grub=$tmp/grubx64.efi
		grub-mkimage -O x86_64-efi -o "$grub" -p /EFI/debian part_gpt part_msdos fat ext2 normal \
			linux echo test search search_fs_uuid search_fs_file search_label configfile boot
	fi
fi

# the menu GRUB shows (timeout 0: it boots the first entry at once)
printf 'set timeout=0\nset default=0\necho "vmlet-efi: GRUB boots Linux"\n%s\n%s\n%s\n%s\n}\n' \
	"menuentry 'Debian GNU/Linux' {" "	linux /vmlinuz $cmdline" "	initrd /initrd.img" \
	"	echo \"vmlet-efi: GRUB loaded the kernel and initrd from \$root\"" >"$tmp/menu.cfg"

esp_mb=16
[ $espboot = 1 ] && esp_mb=$(disk_mb "$kernel" "$initrd" "$shim" "$grub")
disk_fat "$tmp/esp.img" "$esp_mb" VMLETESP
mmd -i "$tmp/esp.img" ::/EFI ::/EFI/BOOT ::/EFI/debian
mcopy -i "$tmp/esp.img" "$shim" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$tmp/esp.img" "$grub" ::/EFI/BOOT/grubx64.efi
mcopy -i "$tmp/esp.img" "$shim" ::/EFI/debian/shimx64.efi
mcopy -i "$tmp/esp.img" "$grub" ::/EFI/debian/grubx64.efi
boot_mb=0
if [ $espboot = 1 ]; then
	mcopy -i "$tmp/esp.img" "$kernel" ::/vmlinuz
	mcopy -i "$tmp/esp.img" "$initrd" ::/initrd.img
	mcopy -i "$tmp/esp.img" "$tmp/menu.cfg" ::/EFI/debian/grub.cfg
else
	# as grub-install writes it for a separate /boot
	printf "search.fs_uuid %s root\nset prefix=(\$root)'/grub'\nconfigfile \$prefix/grub.cfg\n" \
		"$BOOT_UUID" >"$tmp/esp.cfg"
	mcopy -i "$tmp/esp.img" "$tmp/esp.cfg" ::/EFI/debian/grub.cfg
	mkdir -p "$tmp/boot/grub"
	cp "$kernel" "$tmp/boot/vmlinuz"
	cp "$initrd" "$tmp/boot/initrd.img"
	cp "$tmp/menu.cfg" "$tmp/boot/grub/grub.cfg"
	boot_mb=$(disk_mb "$kernel" "$initrd")
	disk_ext4 "$tmp/boot.ext4" "$boot_mb" vmletboot "$tmp/boot" "$BOOT_UUID"
fi

# GPT: the ESP from sector 2048, /boot right after it, 1 MiB spare at the end
rm -f "$out"
truncate -s "$((esp_mb + boot_mb + 2))M" "$out"
boot_lba=$((2048 + esp_mb * 2048))
if [ $espboot = 1 ]; then
	sgdisk -n "1:2048:+${esp_mb}M" -t 1:ef00 -c 1:ESP "$out" >/dev/null
else
	sgdisk -n "1:2048:+${esp_mb}M" -t 1:ef00 -c 1:ESP \
		-n "2:$boot_lba:+${boot_mb}M" -t 2:8300 -c 2:boot "$out" >/dev/null
	disk_put "$out" "$tmp/boot.ext4" "$boot_lba"
fi
disk_put "$out" "$tmp/esp.img" 2048
