#!/bin/sh
# Make a GPT disk image whose EFI System Partition (FAT16) holds
#   \EFI\BOOT\BOOTX64.EFI  (the given application)
#   \TEST\DATA.BIN         (16 KiB, byte i = (i*7+3) mod 256)
#   \TEST\A long file name.txt
#   tests/efi/mkesp.sh APP.efi OUT.img   (ESP_MB=size of the ESP, default 8;
#   ESP_EXTRA="host-file:/path ..." adds files)
set -eu
app=$1 out=$2
mb=${ESP_MB:-8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MTOOLS_SKIP_CHECK=1
truncate -s "${mb}M" "$tmp/fat.img"
mkfs.vfat -n VMLETESP "$tmp/fat.img" >/dev/null
python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 7 + 3) & 255 for i in range(16384)))' >"$tmp/data.bin"
echo "a file with a long name" >"$tmp/long.txt"
mmd -i "$tmp/fat.img" ::/EFI ::/EFI/BOOT ::/TEST
mcopy -i "$tmp/fat.img" "$app" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$tmp/fat.img" "$tmp/data.bin" ::/TEST/DATA.BIN
mcopy -i "$tmp/fat.img" "$tmp/long.txt" "::/TEST/A long file name.txt"
# ESP_EXTRA="host-file:/ESP/PATH ...": more files (the last directory is
# created when missing)
for x in ${ESP_EXTRA:-}; do
	mmd -i "$tmp/fat.img" "::$(dirname "${x#*:}")" 2>/dev/null || true
	mcopy -i "$tmp/fat.img" "${x%%:*}" "::${x#*:}"
done
rm -f "$out"
truncate -s "$((mb + 2))M" "$out"
sgdisk -n "1:2048:+${mb}M" -t 1:ef00 -c 1:ESP "$out" >/dev/null
dd if="$tmp/fat.img" of="$out" bs=512 seek=2048 conv=notrunc status=none
