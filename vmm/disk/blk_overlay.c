// SPDX-License-Identifier: MIT
/*
 * blk_overlay.c - a throw-away copy-on-write overlay over a read-only
 * image (blk.h, blk_overlay_open()): KubeVirt's ephemeral containerDisk.
 *
 * Guest writes go to a sparse scratch file of the disk's size at the same
 * offsets; an in-memory bitmap says which 512-byte sectors the scratch
 * holds, so no sector is ever copied up and no metadata is written. The
 * bitmap is allocated per region of OVL_REGION_SECTORS sectors on the
 * first write into the region. Reads are split into runs of sectors from
 * the scratch and from the image. Discard and write-zeroes punch the
 * scratch (it reads zeroes) and mark the sectors as its own. The scratch
 * file is unlinked once open, so nothing is left after vmlet exits,
 * however it exits; flush has nothing to make durable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/blk.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"

#define OVL_REGION_SHIFT   16 /* 65536 sectors (32 MiB) per bitmap region */
#define OVL_REGION_SECTORS (1ull << OVL_REGION_SHIFT)
#define OVL_SEGS	   260 /* iovec entries of one run (>= virtio-blk's) */

struct overlay {
	struct blk *base, *scratch;
	uint64_t n_regions;
	uint64_t **map; /* per region: OVL_REGION_SECTORS bits, or NULL */
};

static bool ovl_test(const struct overlay *o, uint64_t s)
{
	const uint64_t *m = o->map[s >> OVL_REGION_SHIFT];

	s &= OVL_REGION_SECTORS - 1;
	return m && (m[s / 64] >> (s % 64) & 1);
}

static int ovl_mark(struct overlay *o, uint64_t s, uint64_t n)
{
	for (; n; s++, n--) {
		uint64_t **m = &o->map[s >> OVL_REGION_SHIFT], i = s & (OVL_REGION_SECTORS - 1);

		if (!*m && !(*m = calloc(OVL_REGION_SECTORS / 64, 8)))
			return -ENOMEM;
		(*m)[i / 64] |= 1ull << (i % 64);
	}
	return 0;
}

/* Sectors from s (at most max) in the same place as s; *mine: scratch. */
static uint64_t ovl_run(const struct overlay *o, uint64_t s, uint64_t max, bool *mine)
{
	uint64_t n = 1;

	*mine = ovl_test(o, s);
	while (n < max && ovl_test(o, s + n) == *mine)
		n++;
	return n;
}

static bool ovl_aligned(uint64_t off, uint64_t len)
{
	return !(off % 512) && !(len % 512);
}

static int ovl_preadv(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	struct overlay *o = b->priv;
	uint64_t len = iov_size(iov, n), done = 0;
	struct iovec part[OVL_SEGS];
	int r = 0;

	if (!ovl_aligned(off, len) || n > OVL_SEGS)
		return -EINVAL;
	while (!r && done < len) {
		bool mine;
		uint64_t c = 512 * ovl_run(o, (off + done) / 512, (len - done) / 512, &mine);
		int k = iov_slice(iov, n, done, c, part);

		r = blk_preadv(mine ? o->scratch : o->base, part, k, off + done);
		done += c;
	}
	return r;
}

static int ovl_pwritev(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	struct overlay *o = b->priv;
	uint64_t len = iov_size(iov, n);
	int r;

	if (!ovl_aligned(off, len))
		return -EINVAL;
	r = blk_pwritev(o->scratch, iov, n, off);
	return r ? r : ovl_mark(o, off / 512, len / 512);
}

static int ovl_flush(struct blk *b)
{
	(void)b; /* thrown away at exit: nothing to make durable */
	return 0;
}

static int ovl_write_zeroes(struct blk *b, uint64_t off, uint64_t len, bool unmap)
{
	struct overlay *o = b->priv;
	int r;

	(void)unmap;
	if (!ovl_aligned(off, len))
		return -EINVAL;
	r = blk_write_zeroes(o->scratch, off, len, true);
	return r ? r : ovl_mark(o, off / 512, len / 512);
}

static int ovl_discard(struct blk *b, uint64_t off, uint64_t len)
{
	return ovl_write_zeroes(b, off, len, true);
}

static void ovl_close(struct blk *b)
{
	struct overlay *o = b->priv;

	if (!o)
		return;
	for (uint64_t i = 0; o->map && i < o->n_regions; i++)
		free(o->map[i]);
	free(o->map);
	blk_close(o->scratch);
	blk_close(o->base);
	free(o);
	b->priv = NULL;
	b->backing = NULL;
}

static const struct blk_ops overlay_ops = {
    ovl_preadv, ovl_pwritev, ovl_flush, ovl_discard, ovl_write_zeroes, ovl_close,
};

/* A sparse scratch file of size bytes in dir, unnamed (file_tmp()): used
 * through the descriptor that made it, never reopened by name. */
static int ovl_scratch(struct blk **out, const char *dir, uint64_t size)
{
	int fd = file_tmp(dir);

	if (fd < 0)
		return error_errno(fd, "blk: cannot create an overlay file in '%s'", dir);
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return error_errno(-errno, "blk: cannot create an overlay file in '%s'", dir);
	}
	return blk_open_fd(out, fd, "(overlay)", NULL, false, BLK_CACHE_WRITEBACK, "raw");
}

int blk_overlay_open(struct blk **out, struct blk *base, const char *dir)
{
	struct overlay *o = calloc(1, sizeof(*o));
	struct blk *b = calloc(1, sizeof(*b));
	int r = -ENOMEM;

	if (!o || !b || !(b->path = strdup(base->path)))
		goto fail;
	o->n_regions = (base->size / 512 + OVL_REGION_SECTORS - 1) >> OVL_REGION_SHIFT;
	o->map = calloc(o->n_regions ? o->n_regions : 1, sizeof(*o->map));
	if (!o->map)
		goto fail;
	r = ovl_scratch(&o->scratch, dir, base->size);
	if (r)
		goto fail;
	o->base = base;
	*b = (struct blk){.ops = &overlay_ops,
			  .path = b->path,
			  .format = "overlay",
			  .size = base->size,
			  .cache = BLK_CACHE_WRITEBACK,
			  .fd = -1,
			  .tail_fd = -1,
			  .priv = o,
			  .backing = base};
	*out = b;
	return 0;
fail:
	if (o)
		free(o->map);
	free(o);
	if (b)
		free(b->path);
	free(b);
	return r;
}
