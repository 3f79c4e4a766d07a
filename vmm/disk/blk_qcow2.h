/* SPDX-License-Identifier: MIT */
/*
 * blk_qcow2.h - the qcow2 format's insides (only blk_qcow2*.c include it):
 * the on-disk constants, the open image's state and the metadata layer
 * the reads and writes use. The layout is QEMU's docs/interop/qcow2.txt.
 *
 *   blk_qcow2.c       guest reads and writes, flush, close (the ops)
 *   blk_qcow2_meta.c  L2 table cache, refcounts, cluster allocation and
 *                     the order metadata reaches the disk in
 *   blk_qcow2_open.c  header, tables, backing file: blk_qcow2_init()
 *
 * Write ordering (what a host crash or power cut may leave; a vmlet kill
 * loses nothing the kernel was handed). The page cache and the disk's
 * cache write back in any order, so a pointer to a new cluster must not
 * be able to reach the disk before what it depends on; qcow2_sync() (an
 * fdatasync(), nothing with writethrough's O_DSYNC, where every write is
 * on stable storage in issue order) is the barrier:
 *   - a cluster's refcount is written before anything points at it;
 *   - a new refcount block is written, then a barrier, then the refcount
 *     table entry pointing at it;
 *   - a new L2 table (zeroed) and its refcount, then a barrier, then its
 *     L1 entry;
 *   - a data cluster is written (all of it: guest data and the old
 *     contents around it) before the L2 entry pointing at it: outside
 *     writethrough, L2 entries that point at new clusters are kept dirty
 *     in the L2 cache (as QEMU's qcow2 cache does) and written back by
 *     qcow2_meta_flush() after a barrier: at the guest's FLUSH, when the
 *     cache evicts the table, at close. With writethrough they are
 *     written as the request completes, after its data and refcounts.
 * So after a host crash an image may leak clusters (counted, pointed at
 * by nothing: qemu-img check exit 3) but never points at a cluster whose
 * refcount or contents did not reach the disk, and everything the guest
 * flushed (writethrough: saw complete) reads back. QEMU gives the same
 * guarantee; it also keeps refcount updates in memory, which vmlet writes
 * at once (they need no barrier of their own: nothing points at the
 * cluster yet).
 */
#ifndef VMLET_DISK_BLK_QCOW2_H
#define VMLET_DISK_BLK_QCOW2_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/disk/blk_format.h"

#define QCOW_OFLAG_COPIED	  (1ull << 63)
#define QCOW_OFLAG_COMPRESSED	  (1ull << 62)
#define QCOW_OFLAG_ZERO		  1ull
#define QCOW_OFFSET_MASK	  0x00fffffffffffe00ull
#define QCOW_INCOMPAT_DIRTY	  1ull
#define QCOW_INCOMPAT_CORRUPT	  2ull
#define QCOW_INCOMPAT_DATA_FILE	  4ull
#define QCOW_INCOMPAT_COMPRESSION 8ull
#define QCOW_INCOMPAT_EXTL2	  16ull
#define QCOW_EXT_BACKING_FORMAT	  0xe2792acau
#define QCOW_MAX_L1_BYTES	  (32u << 20)
#define QCOW_L2_CACHE		  16
#define QCOW_MAX_BACKING	  16 /* backing files under one image */

struct qcow2_l2 {
	uint64_t offset; /* host offset of the table, 0 = slot empty */
	uint64_t *t;
	unsigned int age;
	uint32_t dirty_lo, dirty_hi; /* entries [lo, hi) not on disk; lo == hi: clean */
};

struct qcow2 {
	unsigned int cluster_bits;
	uint64_t cluster_size, l2_entries;
	uint64_t *l1;
	uint32_t l1_size;
	uint64_t l1_offset;
	uint64_t *rt; /* refcount table */
	uint64_t rt_offset, rt_entries;
	uint64_t file_end; /* next free host cluster */
	bool writable_meta;
	bool l2_deferred; /* new L2 entries kept dirty until qcow2_meta_flush */
	struct blk *backing;
	struct qcow2_l2 l2[QCOW_L2_CACHE];
	unsigned int clock;
	uint8_t *zero; /* one zero cluster */
};

/* A cluster-aligned host offset of a cluster inside the file. */
static inline bool qcow2_off_ok(const struct qcow2 *q, uint64_t off)
{
	return off && !(off & (q->cluster_size - 1)) && off < q->file_end;
}

/* -ENOTSUP with an error naming the image and the feature. */
int qcow2_refuse(struct blk *b, const char *feature);

/* ---- blk_qcow2_meta.c ---- */
/* The L2 table at host offset off, through the cache (a dirty table the
 * cache evicts is written back first, after a barrier). */
int qcow2_l2_get(struct blk *b, uint64_t off, uint64_t **t);
/* The L2 entry (decoded) for guest offset gofs; 0 when unallocated. */
int qcow2_lookup(struct blk *b, uint64_t gofs, uint64_t *entry);
/* Point guest offset gofs, whose L2 table is at l2off, at host (with
 * QCOW_OFLAG_COPIED): written now (writethrough) or kept dirty. The
 * cluster's refcount and contents must have been written. */
int qcow2_l2_set(struct blk *b, uint64_t l2off, uint64_t gofs, uint64_t host);
/* The L2 table for gofs, allocated (and made durable, then linked from
 * L1) when missing. */
int qcow2_l2_for_write(struct blk *b, uint64_t gofs, uint64_t *l2off);
/* A new host cluster at the end of the file with refcount 1; its
 * contents are the caller's to write. */
int qcow2_alloc(struct blk *b, uint64_t *off);
/* Write barrier: what was written before reaches stable storage before
 * what is written after (fdatasync; nothing to do with O_DSYNC). */
int qcow2_sync(struct blk *b);
/* Every dirty L2 table on disk, after a barrier (without a final one). */
int qcow2_meta_flush(struct blk *b);

/* ---- blk_qcow2.c ---- */
void qcow2_close(struct blk *b);
extern const struct blk_ops qcow2_ops;

#endif /* VMLET_DISK_BLK_QCOW2_H */
