// SPDX-License-Identifier: MIT
/* gpt.c - GPT header and entry-array verification, partition list. */
#include "firmware/efi/gpt.h"

const uint8_t gpt_type_esp[16] = {0x28, 0x73, 0x2a, 0xc1, 0x1f, 0xf8, 0xd2, 0x11,
				  0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b};

#define GPT_HDR_MIN   92u
#define GPT_ARRAY_MAX (1u << 20) /* entry array bytes we are willing to read */

struct gpt_hdr {
	uint64_t alt_lba, first_usable, last_usable, entries_lba;
	uint32_t n_entries, entry_size, array_crc;
	uint8_t disk_guid[16];
};

static bool is_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Parse and check the header block read from lba. */
static int gpt_check_header(const struct blkdev *dev, uint8_t *blk, uint64_t lba, struct gpt_hdr *h)
{
	uint32_t size = le32(blk + 12), crc = le32(blk + 16);

	if (memcmp(blk, "EFI PART", 8) || size < GPT_HDR_MIN || size > dev->block_size)
		return -FW_ENOENT;
	put_le32(blk + 16, 0);
	if (efi_crc32(0, blk, size) != crc || le64(blk + 24) != lba)
		return -FW_ENOENT;
	h->alt_lba = le64(blk + 32);
	h->first_usable = le64(blk + 40);
	h->last_usable = le64(blk + 48);
	memcpy(h->disk_guid, blk + 56, 16);
	h->entries_lba = le64(blk + 72);
	h->n_entries = le32(blk + 80);
	h->entry_size = le32(blk + 84);
	h->array_crc = le32(blk + 88);
	if (h->first_usable > h->last_usable || h->last_usable >= dev->n_blocks)
		return -FW_ENOENT;
	/* 128 * 2^n bytes, and a whole number of entries per block or blocks
	 * per entry. */
	if (h->entry_size < 128 || (h->entry_size & (h->entry_size - 1)) ||
	    h->entry_size > BLK_MAX_BLOCK)
		return -FW_ENOENT;
	if (h->n_entries > GPT_ARRAY_MAX / h->entry_size)
		return -FW_ENOENT;
	uint64_t bytes = (uint64_t)h->n_entries * h->entry_size;
	uint64_t blocks = (bytes + dev->block_size - 1) / dev->block_size;

	if (!in_bounds(h->entries_lba, blocks, dev->n_blocks) || h->entries_lba < 1)
		return -FW_ENOENT;
	return 0;
}

static void gpt_take_entry(struct gpt *g, const struct gpt_hdr *h, const uint8_t *e, uint32_t idx)
{
	struct gpt_part *p;

	if (is_zero(e, 16) || g->n_parts >= GPT_MAX_PARTS)
		return;
	uint64_t first = le64(e + 32), last = le64(e + 40);

	if (first > last || first < h->first_usable || last > h->last_usable)
		return; /* malformed entry: never used */
	p = &g->parts[g->n_parts++];
	p->number = idx + 1;
	memcpy(p->type_guid, e, 16);
	memcpy(p->part_guid, e + 16, 16);
	p->first_lba = first;
	p->last_lba = last;
	p->attributes = le64(e + 48);
	for (int i = 0; i < 36; i++)
		p->name[i] = le16(e + 56 + 2 * i);
	p->name[36] = 0;
}

/* Read the entry array block by block: CRC over all of it, keep the used
 * entries. On a CRC mismatch g->n_parts is reset. */
static int gpt_read_entries(const struct blkdev *dev, const struct gpt_hdr *h, uint8_t *blk,
			    struct gpt *g)
{
	uint64_t bytes = (uint64_t)h->n_entries * h->entry_size;
	uint32_t bs = dev->block_size, crc = 0, idx = 0;
	uint32_t per = h->entry_size <= bs ? bs / h->entry_size : 1;
	uint32_t span = h->entry_size <= bs ? bs : h->entry_size; /* bytes per step */
	uint64_t off = h->entries_lba * bs;
	int ret;

	g->n_parts = 0;
	while (bytes) {
		uint32_t n = bytes < span ? (uint32_t)bytes : span;

		ret = blk_read_bytes(dev, off, n, blk);
		if (ret)
			return ret;
		crc = efi_crc32(crc, blk, n);
		for (uint32_t i = 0; i < per && (i + 1) * h->entry_size <= n; i++, idx++)
			gpt_take_entry(g, h, blk + i * h->entry_size, idx);
		off += n;
		bytes -= n;
	}
	if (crc != h->array_crc) {
		g->n_parts = 0;
		return -FW_ENOENT;
	}
	return 0;
}

static int gpt_try(const struct blkdev *dev, uint64_t lba, uint8_t *blk, struct gpt *out)
{
	struct gpt_hdr h;
	int ret;

	ret = blk_read(dev, lba, 1, blk);
	if (ret)
		return ret;
	ret = gpt_check_header(dev, blk, lba, &h);
	if (ret)
		return ret;
	ret = gpt_read_entries(dev, &h, blk, out);
	if (ret)
		return ret;
	memcpy(out->disk_guid, h.disk_guid, 16);
	out->first_usable = h.first_usable;
	out->last_usable = h.last_usable;
	return 0;
}

int gpt_read(const struct blkdev *dev, struct gpt *out)
{
	uint8_t blk[BLK_MAX_BLOCK] __attribute__((aligned(16)));
	int ret;

	memset(out, 0, sizeof(*out));
	if (dev->n_blocks < 3 || dev->block_size > BLK_MAX_BLOCK)
		return -FW_ENOENT;
	ret = gpt_try(dev, 1, blk, out);
	if (ret != -FW_ENOENT)
		return ret;
	/* The backup header sits in the last block; its entries precede it. */
	ret = gpt_try(dev, dev->n_blocks - 1, blk, out);
	if (ret == 0)
		out->from_backup = true;
	return ret;
}

const struct gpt_part *gpt_find_type(const struct gpt *g, const uint8_t type[16])
{
	for (unsigned int i = 0; i < g->n_parts; i++)
		if (!memcmp(g->parts[i].type_guid, type, 16))
			return &g->parts[i];
	return NULL;
}
