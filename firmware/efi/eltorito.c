// SPDX-License-Identifier: MIT
/*
 * eltorito.c - the EFI boot images of an El Torito CD (eltorito.h).
 *
 * Catalog entries are 32 bytes: the validation entry (header id 1, its 16
 * words summing to 0, key 55h AAh), the initial/default entry, then
 * section headers (90h, 91h for the last) each followed by its count of
 * section entries, any of which may be followed by extension entries
 * (44h). A boot entry: indicator 88h bootable / 00h not, media type, load
 * segment, system type, sector count (512-byte units) at 6, load RBA
 * (2048-byte blocks) at 8.
 */
#include "firmware/efi/eltorito.h"

#define CAT_ENTRIES   (ELTORITO_BLOCK / 32)
#define HDR_MORE      0x90
#define HDR_LAST      0x91
#define ENT_BOOTABLE  0x88
#define ENT_EXTENSION 0x44

static const char brvd_id[] = "EL TORITO SPECIFICATION";

/* The catalog's block from the Boot Record Volume Descriptor at
 * buf (ELTORITO_BLOCK bytes); 0 when it is not one. */
static uint32_t brvd_catalog(const uint8_t *d)
{
	uint8_t want[32] = {0};

	memcpy(want, brvd_id, sizeof(brvd_id) - 1);
	if (d[0] != 0 || memcmp(d + 1, "CD001", 5) || d[6] != 1 || memcmp(d + 7, want, 32))
		return 0;
	return le32(d + 0x47);
}

static bool validation_ok(const uint8_t *e)
{
	uint16_t sum = 0;

	for (int i = 0; i < 32; i += 2)
		sum = (uint16_t)(sum + le16(e + i));
	return e[0] == 1 && e[30] == 0x55 && e[31] == 0xaa && sum == 0;
}

/* Bytes of the FAT volume whose boot sector is at block start, 0 when the
 * sector is no sane BPB (bytes per sector a power of two 512..4096). */
static uint64_t fat_bytes(const struct blkdev *dev, uint64_t start)
{
	uint8_t bs[512];
	uint32_t bps, total;

	if (blk_read_bytes(dev, start * ELTORITO_BLOCK, sizeof(bs), bs))
		return 0;
	bps = le16(bs + 11);
	total = le16(bs + 19) ? le16(bs + 19) : le32(bs + 32);
	if (bps < 512 || bps > 4096 || (bps & (bps - 1)) || bs[13] == 0)
		return 0;
	return (uint64_t)total * bps;
}

/* Keep the bootable entry e (boot entry number num) when it is for EFI. */
static void add_image(const struct blkdev *dev, const uint8_t *e, uint8_t platform, uint32_t num,
		      struct eltorito *out)
{
	uint64_t start = le32(e + 8), left, bytes = (uint64_t)le16(e + 6) * 512, count;

	if (e[0] != ENT_BOOTABLE || platform != ELTORITO_PLATFORM_EFI || out->n >= ELTORITO_MAX ||
	    start == 0 || start >= dev->n_blocks)
		return;
	left = dev->n_blocks - start;
	if (bytes < 1024) /* 0 or 1 sector: the size is the FAT volume's */
		bytes = fat_bytes(dev, start);
	count = bytes ? (bytes + ELTORITO_BLOCK - 1) / ELTORITO_BLOCK : left;
	out->img[out->n++] = (struct eltorito_image){
	    .entry = num, .start = start, .count = count < left ? count : left};
}

/* The section headers and entries from catalog entry 2 on. */
static void walk_sections(const struct blkdev *dev, const uint8_t *cat, struct eltorito *out)
{
	uint32_t num = 1;
	unsigned int i = 2;

	while (i < CAT_ENTRIES) {
		const uint8_t *h = cat + 32 * i++;
		unsigned int left;

		if (h[0] != HDR_MORE && h[0] != HDR_LAST)
			return;
		left = le16(h + 2);
		while (left && i < CAT_ENTRIES) {
			const uint8_t *e = cat + 32 * i++;

			if (e[0] == ENT_EXTENSION)
				continue; /* belongs to the entry before */
			add_image(dev, e, h[1], num++, out);
			left--;
		}
		if (h[0] == HDR_LAST)
			return;
	}
}

int eltorito_read(const struct blkdev *dev, struct eltorito *out)
{
	uint8_t buf[ELTORITO_BLOCK] __attribute__((aligned(16)));
	uint32_t cat;
	int ret;

	out->n = 0;
	if (dev->block_size != ELTORITO_BLOCK || dev->n_blocks <= ELTORITO_BRVD_LBA)
		return -FW_ENOENT;
	ret = blk_read(dev, ELTORITO_BRVD_LBA, 1, buf);
	if (ret)
		return ret;
	cat = brvd_catalog(buf);
	if (!cat)
		return -FW_ENOENT;
	if (cat >= dev->n_blocks)
		return -FW_EBADMSG;
	ret = blk_read(dev, cat, 1, buf);
	if (ret)
		return ret;
	if (!validation_ok(buf))
		return -FW_EBADMSG;
	/* the default entry is for the validation entry's platform */
	add_image(dev, buf + 32, buf[1], 0, out);
	walk_sections(dev, buf, out);
	return out->n ? 0 : -FW_ENOENT;
}
