#!/usr/bin/env bash
# Seeds for eltorito_fuzz (input format in eltorito_fuzz.c), cut from ISOs
# made by xorriso as tests/efi/mkiso.sh makes them: EFI alone (the default
# entry), a BIOS default entry with EFI in a section, and that one with the
# EFI entry's sector count patched to 1 (the size from the FAT). Each seed:
# the ISO's size in blocks, block 17, the catalog block, the EFI image's
# boot sector. Nothing when xorriso or mkfs.vfat is missing. $1: the seed
# directory.
set -eu
out=$1
command -v xorriso >/dev/null && command -v mkfs.vfat >/dev/null && command -v mmd >/dev/null ||
	exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/tree"
truncate -s 4M "$tmp/tree/efi.img"
mkfs.vfat -n ELTORITO "$tmp/tree/efi.img" >/dev/null
echo app >"$tmp/app"
MTOOLS_SKIP_CHECK=1 mmd -i "$tmp/tree/efi.img" ::/EFI ::/EFI/BOOT
MTOOLS_SKIP_CHECK=1 mcopy -i "$tmp/tree/efi.img" "$tmp/app" ::/EFI/BOOT/BOOTX64.EFI
head -c 2048 /dev/zero >"$tmp/tree/bios.img"
xorriso -as mkisofs -quiet -o "$tmp/efi.iso" -R -e efi.img -no-emul-boot "$tmp/tree" >/dev/null 2>&1
xorriso -as mkisofs -quiet -o "$tmp/both.iso" -R -b bios.img -no-emul-boot -boot-load-size 4 \
	-eltorito-alt-boot -e efi.img -no-emul-boot "$tmp/tree" >/dev/null 2>&1
python3 - "$tmp" "$out" <<'PYEND'
import os, struct, sys
tmp, out = sys.argv[1], sys.argv[2]

def seed(name, iso, count=None):
    b = bytearray(open(os.path.join(tmp, iso), "rb").read())
    cat = struct.unpack_from("<I", b, 17 * 2048 + 0x47)[0]
    c = b[cat * 2048:(cat + 1) * 2048]
    off = 32 if c[1] == 0xEF else 96  # the default entry, or the first section's
    if count is not None:
        struct.pack_into("<H", c, off + 6, count)
    lba = struct.unpack_from("<I", c, off + 8)[0]
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<I", len(b) // 2048) + bytes(b[17 * 2048:18 * 2048]) + bytes(c)
                + bytes(b[lba * 2048:(lba + 1) * 2048]))

seed("efi-default", "efi.iso")
seed("bios-efi-section", "both.iso")
seed("efi-count1", "both.iso", 1)
PYEND
