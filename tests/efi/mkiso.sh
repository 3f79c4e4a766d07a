#!/bin/sh
# Make an ISO 9660 image that boots APP.efi from CD under UEFI through El
# Torito: the FAT volume of tests/efi/mkesp.sh (the same files:
# \EFI\BOOT\BOOTX64.EFI, \TEST\...) as the EFI boot image (platform 0xEF,
# no emulation), laid out by Debian's xorriso.
#   tests/efi/mkiso.sh APP.efi OUT.iso
# ISO_BIOS=1: a BIOS no-emulation default entry first and the EFI image in
# a section after it (as grub-mkrescue and distributions do);
# ISO_COUNT=N: the EFI entry's sector count patched to N (0 or 1: the
# firmware must take the size from the FAT, as for distributions' ISOs).
set -eu
app=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/tree"
ESP_MB=4 "$(dirname "$0")/mkesp.sh" "$app" "$tmp/disk.img"
dd if="$tmp/disk.img" of="$tmp/tree/efi.img" bs=1M skip=1 count=4 status=none
echo "vmlet El Torito test" >"$tmp/tree/README.TXT"
boot="-e efi.img -no-emul-boot"
if [ -n "${ISO_BIOS:-}" ]; then
	head -c 2048 /dev/zero >"$tmp/tree/bios.img"
	boot="-b bios.img -no-emul-boot -boot-load-size 4 -eltorito-alt-boot $boot"
fi
rm -f "$out"
# shellcheck disable=SC2086 # $boot: several options
xorriso -as mkisofs -quiet -o "$out" -R -J -V VMLETCD $boot "$tmp/tree" >/dev/null 2>&1
[ -z "${ISO_COUNT:-}" ] && exit 0
python3 - "$out" "$ISO_COUNT" <<'PYEND'
import struct, sys
path, count = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(17 * 2048 + 0x47)
    cat = struct.unpack("<I", f.read(4))[0] * 2048
    f.seek(cat)
    c = f.read(2048)
    # default entry (validation platform 0xEF), else the first 0xEF section
    offs = [32] if c[1] == 0xEF else []
    i = 64
    while i < 2048 and c[i] in (0x90, 0x91):
        n = struct.unpack_from("<H", c, i + 2)[0]
        if c[i + 1] == 0xEF:
            offs.append(i + 32)
        i += 32 * (n + 1)
    f.seek(cat + offs[0] + 6)
    f.write(struct.pack("<H", count))
PYEND
