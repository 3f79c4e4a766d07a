/* SPDX-License-Identifier: MIT */
/*
 * blk.h - the block device the EFI parsers read from: a read callback over
 * fixed-size blocks. virtio-blk, a memory buffer (tests, ramdisks) and a
 * partition window over another device all look like this.
 */
#ifndef FW_EFI_BLK_H
#define FW_EFI_BLK_H

#include "firmware/efi/util.h"

#define BLK_MAX_BLOCK 4096u

struct blkdev {
	/* Read count blocks starting at lba into buf; 0 or -errno. Never
	 * called with lba + count beyond n_blocks. */
	int (*read)(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf);
	void *ctx;
	uint32_t block_size; /* power of two, 512..BLK_MAX_BLOCK */
	uint64_t n_blocks;
	uint64_t offset; /* first block of this window on the parent (ctx) */
};

/* A device over a memory buffer (len rounded down to whole blocks). */
void blk_init_mem(struct blkdev *dev, const void *buf, uint64_t len, uint32_t block_size);

/* A window [first, first + n) of parent's blocks; fails with -FW_ERANGE if
 * it does not lie within parent. */
int blk_init_part(struct blkdev *dev, const struct blkdev *parent, uint64_t first, uint64_t n);

/*
 * A read cache over a device whose every request is costly (virtio-blk:
 * exits and a round trip through the VMM): reads smaller than a window go
 * through BLK_CACHE_WINS aligned windows of BLK_CACHE_WIN bytes, each read
 * whole at its first use (booting from an ESP: two requests instead of one
 * per sector or cluster); whole windows and what alloc cannot provide go
 * straight to the device. Nothing invalidates a window: for read-only
 * devices. The windows are replaced round-robin.
 */
#define BLK_CACHE_WIN  65536u
#define BLK_CACHE_WINS 8u

struct blk_cache {
	const struct blkdev *raw;
	void *(*alloc)(size_t bytes); /* a window's buffer, at its first use */
	struct {
		uint64_t lba;
		uint8_t *buf;
		bool valid;
	} win[BLK_CACHE_WINS];
	unsigned int next;
};

/* dev reads raw through c (both must stay as long as dev). */
void blk_init_cached(struct blkdev *dev, struct blk_cache *c, const struct blkdev *raw,
		     void *(*alloc)(size_t bytes));

/* Bounds-checked block read; -FW_ERANGE beyond the end. */
int blk_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf);

/* Read len bytes at byte offset off (any alignment); partial blocks go
 * through a bounce buffer of one block on the stack. */
int blk_read_bytes(const struct blkdev *dev, uint64_t off, uint64_t len, void *buf);

#endif /* FW_EFI_BLK_H */
