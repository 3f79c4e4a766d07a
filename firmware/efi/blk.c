// SPDX-License-Identifier: MIT
/* blk.c - block device helpers: memory-backed devices, partition windows,
 * a read cache, byte-granular reads. */
#include "firmware/efi/blk.h"

static int mem_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	memcpy(buf, (const uint8_t *)dev->ctx + lba * dev->block_size, count * dev->block_size);
	return 0;
}

void blk_init_mem(struct blkdev *dev, const void *buf, uint64_t len, uint32_t block_size)
{
	dev->read = mem_read;
	dev->ctx = (void *)(uintptr_t)buf;
	dev->block_size = block_size;
	dev->n_blocks = len / block_size;
	dev->offset = 0;
}

static int part_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	return blk_read(dev->ctx, dev->offset + lba, count, buf);
}

int blk_init_part(struct blkdev *dev, const struct blkdev *parent, uint64_t first, uint64_t n)
{
	if (!in_bounds(first, n, parent->n_blocks))
		return -FW_ERANGE;
	dev->read = part_read;
	dev->ctx = (void *)(uintptr_t)parent;
	dev->block_size = parent->block_size;
	dev->n_blocks = n;
	dev->offset = first;
	return 0;
}

/* The window at lba (aligned), read now if need be; NULL: read through. */
static const uint8_t *cache_window(struct blk_cache *c, uint64_t lba, uint64_t win)
{
	uint64_t n = c->raw->n_blocks - lba < win ? c->raw->n_blocks - lba : win;
	unsigned int i;

	for (i = 0; i < BLK_CACHE_WINS; i++)
		if (c->win[i].valid && c->win[i].lba == lba)
			return c->win[i].buf;
	i = c->next++ % BLK_CACHE_WINS;
	c->win[i].valid = false;
	if (!c->win[i].buf && c->alloc)
		c->win[i].buf = c->alloc(BLK_CACHE_WIN);
	if (!c->win[i].buf || blk_read(c->raw, lba, n, c->win[i].buf))
		return NULL;
	c->win[i].lba = lba;
	c->win[i].valid = true;
	return c->win[i].buf;
}

static int cached_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	struct blk_cache *c = dev->ctx;
	uint64_t win = BLK_CACHE_WIN / dev->block_size;
	uint8_t *out = buf;

	while (count) {
		uint64_t w = lba & ~(win - 1), in = lba - w,
			 n = count < win - in ? count : win - in;
		const uint8_t *p = n < win ? cache_window(c, w, win) : NULL;
		int ret = 0;

		if (p)
			memcpy(out, p + in * dev->block_size, n * dev->block_size);
		else
			ret = blk_read(c->raw, lba, n, out);
		if (ret)
			return ret;
		out += n * dev->block_size;
		lba += n;
		count -= n;
	}
	return 0;
}

void blk_init_cached(struct blkdev *dev, struct blk_cache *c, const struct blkdev *raw,
		     void *(*alloc)(size_t bytes))
{
	memset(c, 0, sizeof(*c));
	c->raw = raw;
	c->alloc = alloc;
	dev->read = cached_read;
	dev->ctx = c;
	dev->block_size = raw->block_size;
	dev->n_blocks = raw->n_blocks;
	dev->offset = 0;
}

int blk_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	if (!in_bounds(lba, count, dev->n_blocks))
		return -FW_ERANGE;
	if (!count)
		return 0;
	return dev->read(dev, lba, count, buf);
}

int blk_read_bytes(const struct blkdev *dev, uint64_t off, uint64_t len, void *buf)
{
	uint8_t bounce[BLK_MAX_BLOCK] __attribute__((aligned(16)));
	uint32_t bs = dev->block_size;
	uint8_t *out = buf;
	int ret;

	if (!in_bounds(off, len, dev->n_blocks * bs))
		return -FW_ERANGE;
	while (len) {
		uint64_t lba = off / bs;
		uint32_t in = (uint32_t)(off % bs);

		if (in == 0 && len >= bs) {
			uint64_t n = len / bs;

			ret = blk_read(dev, lba, n, out);
			if (ret)
				return ret;
			out += n * bs;
			off += n * bs;
			len -= n * bs;
			continue;
		}
		uint64_t chunk = bs - in < len ? bs - in : len;

		ret = blk_read(dev, lba, 1, bounce);
		if (ret)
			return ret;
		memcpy(out, bounce + in, chunk);
		out += chunk;
		off += chunk;
		len -= chunk;
	}
	return 0;
}
