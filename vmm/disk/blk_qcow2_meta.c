// SPDX-License-Identifier: MIT
/*
 * blk_qcow2_meta.c - qcow2 metadata: the L2 table cache (write-back for
 * new entries outside writethrough), refcounts and cluster allocation at
 * the end of the file, and the barriers that order them on disk (the
 * rules are in blk_qcow2.h).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/blk_qcow2.h"
#include "vmm/util/log.h"

int qcow2_sync(struct blk *b)
{
	if (b->cache == BLK_CACHE_WRITETHROUGH)
		return 0; /* O_DSYNC: each write was on stable storage as it returned */
	return fdatasync(b->fd) ? -errno : 0;
}

/* ---- L2 tables ------------------------------------------------------------ */

static bool qcow2_l2_dirty(const struct qcow2_l2 *s)
{
	return s->dirty_lo != s->dirty_hi;
}

/* The dirty entries of one table, in whole 512-byte sectors. */
static int qcow2_l2_writeback(struct blk *b, struct qcow2_l2 *s)
{
	struct qcow2 *q = b->priv;
	uint64_t lo = ((uint64_t)s->dirty_lo * 8) & ~511ull;
	uint64_t hi = ((uint64_t)s->dirty_hi * 8 + 511) & ~511ull;
	int r;

	if (!qcow2_l2_dirty(s))
		return 0;
	if (hi > q->cluster_size)
		hi = q->cluster_size;
	r = blk_fd_pwrite(b, b->fd, (uint8_t *)s->t + lo, hi - lo, s->offset + lo);
	if (!r)
		s->dirty_lo = s->dirty_hi = 0;
	return r;
}

int qcow2_meta_flush(struct blk *b)
{
	struct qcow2 *q = b->priv;
	bool dirty = false;
	int r;

	for (unsigned int i = 0; i < QCOW_L2_CACHE; i++)
		dirty |= qcow2_l2_dirty(&q->l2[i]);
	if (!dirty)
		return 0;
	/* the clusters the dirty entries point at, and their refcounts, first */
	r = qcow2_sync(b);
	for (unsigned int i = 0; !r && i < QCOW_L2_CACHE; i++)
		r = qcow2_l2_writeback(b, &q->l2[i]);
	return r;
}

/* The cache slot holding the table at off, read in when missing (the
 * least recently used slot is reused; if it is dirty, every dirty table
 * is written back first). */
static int qcow2_l2_slot(struct blk *b, uint64_t off, struct qcow2_l2 **out)
{
	struct qcow2 *q = b->priv;
	struct qcow2_l2 *slot = &q->l2[0];
	int r;

	for (unsigned int i = 0; i < QCOW_L2_CACHE; i++) {
		if (q->l2[i].offset == off) {
			q->l2[i].age = ++q->clock;
			*out = &q->l2[i];
			return 0;
		}
		if (q->l2[i].age < slot->age)
			slot = &q->l2[i];
	}
	if (qcow2_l2_dirty(slot) && (r = qcow2_meta_flush(b)))
		return r;
	slot->offset = 0;
	r = blk_fd_pread(b, b->fd, slot->t, q->cluster_size, off);
	if (r)
		return r;
	slot->offset = off;
	slot->age = ++q->clock;
	*out = slot;
	return 0;
}

int qcow2_l2_get(struct blk *b, uint64_t off, uint64_t **t)
{
	struct qcow2_l2 *s;
	int r = qcow2_l2_slot(b, off, &s);

	if (!r)
		*t = s->t;
	return r;
}

int qcow2_lookup(struct blk *b, uint64_t gofs, uint64_t *entry)
{
	struct qcow2 *q = b->priv;
	uint64_t l1i = gofs >> (q->cluster_bits * 2 - 3), l2i, l2off, *t;
	int r;

	*entry = 0;
	if (l1i >= q->l1_size)
		return 0;
	l2off = be64toh(q->l1[l1i]) & QCOW_OFFSET_MASK;
	if (!l2off)
		return 0;
	if (!qcow2_off_ok(q, l2off))
		return error_errno(-EIO, "blk: '%s': qcow2 l1 entry %llu is corrupt", b->path,
				   (unsigned long long)l1i);
	r = qcow2_l2_get(b, l2off, &t);
	if (r)
		return r;
	l2i = (gofs >> q->cluster_bits) & (q->l2_entries - 1);
	*entry = be64toh(t[l2i]);
	return 0;
}

int qcow2_l2_set(struct blk *b, uint64_t l2off, uint64_t gofs, uint64_t host)
{
	struct qcow2 *q = b->priv;
	uint32_t i = (uint32_t)((gofs >> q->cluster_bits) & (q->l2_entries - 1));
	uint64_t e = htobe64(host | QCOW_OFLAG_COPIED);
	struct qcow2_l2 *s;
	int r;

	r = qcow2_l2_slot(b, l2off, &s);
	if (r)
		return r;
	if (!q->l2_deferred) {
		r = blk_fd_pwrite(b, b->fd, &e, 8, l2off + 8ull * i);
		if (!r)
			s->t[i] = e;
		return r;
	}
	s->t[i] = e;
	if (!qcow2_l2_dirty(s)) {
		s->dirty_lo = i;
		s->dirty_hi = i + 1;
	} else {
		s->dirty_lo = i < s->dirty_lo ? i : s->dirty_lo;
		s->dirty_hi = i + 1 > s->dirty_hi ? i + 1 : s->dirty_hi;
	}
	return 0;
}

/* ---- allocation -------------------------------------------------------------- */

/*
 * Set the refcount of host cluster at off to 1 (it was 0). A missing
 * refcount block is made at the end of the file, complete (off's count
 * and its own, when it covers itself), then a barrier, then the refcount
 * table points at it: vmlet killed, or the host crashing, between any two
 * writes leaves at worst clusters counted that nothing points at (leaks),
 * never a pointer to a cluster whose count is 0.
 */
static int qcow2_ref_set(struct blk *b, uint64_t off)
{
	struct qcow2 *q = b->priv;
	uint64_t per_block = q->cluster_size / 2, ci = off >> q->cluster_bits;
	uint64_t rti = ci / per_block, blk_off, nb, be;
	uint16_t one = htobe16(1), *blk;
	int r;

	if (rti >= q->rt_entries)
		return error_errno(-ENOSPC, "blk: '%s': qcow2 refcount table is full", b->path);
	blk_off = be64toh(q->rt[rti]) & QCOW_OFFSET_MASK;
	if (blk_off) {
		if (!qcow2_off_ok(q, blk_off))
			return error_errno(-EIO, "blk: '%s': qcow2 refcount table is corrupt",
					   b->path);
		return blk_fd_pwrite(b, b->fd, &one, 2, blk_off + 2 * (ci % per_block));
	}
	nb = q->file_end;
	q->file_end += q->cluster_size;
	if (posix_memalign((void **)&blk, 4096, q->cluster_size))
		return -ENOMEM;
	memset(blk, 0, q->cluster_size);
	blk[ci % per_block] = one;
	if ((nb >> q->cluster_bits) / per_block == rti)
		blk[(nb >> q->cluster_bits) % per_block] = one;
	r = blk_fd_pwrite(b, b->fd, blk, q->cluster_size, nb);
	free(blk);
	/* a block outside its own range is counted by the next one */
	if (!r && (nb >> q->cluster_bits) / per_block != rti)
		r = qcow2_ref_set(b, nb);
	if (!r)
		r = qcow2_sync(b);
	if (r)
		return r;
	be = htobe64(nb);
	r = blk_fd_pwrite(b, b->fd, &be, 8, q->rt_offset + 8 * rti);
	if (!r)
		q->rt[rti] = be;
	return r;
}

int qcow2_alloc(struct blk *b, uint64_t *off)
{
	struct qcow2 *q = b->priv;

	*off = q->file_end;
	q->file_end += q->cluster_size;
	return qcow2_ref_set(b, *off);
}

int qcow2_l2_for_write(struct blk *b, uint64_t gofs, uint64_t *l2off)
{
	struct qcow2 *q = b->priv;
	uint64_t l1i = gofs >> (q->cluster_bits * 2 - 3), e;
	int r;

	if (l1i >= q->l1_size)
		return -EIO;
	e = be64toh(q->l1[l1i]);
	*l2off = e & QCOW_OFFSET_MASK;
	if (*l2off) {
		if (!qcow2_off_ok(q, *l2off) || !(e & QCOW_OFLAG_COPIED))
			return error_errno(-EIO, "blk: '%s': qcow2 l2 table is shared or corrupt",
					   b->path);
		return 0;
	}
	r = qcow2_alloc(b, l2off);
	if (!r)
		r = blk_fd_pwrite(b, b->fd, q->zero, q->cluster_size, *l2off);
	if (!r)
		r = qcow2_sync(b); /* the table and its refcount before the L1 entry */
	if (r)
		return r;
	e = htobe64(*l2off | QCOW_OFLAG_COPIED);
	r = blk_fd_pwrite(b, b->fd, &e, 8, q->l1_offset + 8 * l1i);
	if (!r)
		q->l1[l1i] = e;
	return r;
}
