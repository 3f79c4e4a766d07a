/* SPDX-License-Identifier: MIT */
/*
 * blk_format.h - what an image format implementation sees (not for the
 * users of blk.h): the format openers blk.c chooses between, and the
 * positioned-I/O helpers of blk_io.c.
 *
 * A format opener is called by blk_open_format() with b->fd open (flags
 * of b->read_only and b->cache), b->path, b->read_only and b->cache set;
 * it fills b->ops, b->format, b->size and b->priv, or returns -errno
 * having logged an error naming the image (b->priv freed; blk.c closes
 * the fd). b->ops->close frees b->priv; blk.c closes the fd after it.
 */
#ifndef VMLET_DISK_BLK_FORMAT_H
#define VMLET_DISK_BLK_FORMAT_H

#include "vmm/disk/blk.h"

/* Format openers (blk_raw.c, blk_qcow2_open.c). */
int blk_raw_init(struct blk *b);
int blk_qcow2_init(struct blk *b);

/*
 * Whole-length positioned I/O on fd (the image's, or a format's other
 * file): all of the bytes or -errno; reads at or past end of file give
 * zeroes; writes that make no progress are -EIO. When b->dio_align is set
 * (O_DIRECT) unaligned buffers or offsets go through an aligned bounce
 * buffer (read-modify-write for writes). Host errors come back as they
 * are (-EIO, -ENOSPC...).
 */
int blk_fd_preadv(struct blk *b, int fd, const struct iovec *iov, int n, uint64_t off);
int blk_fd_pwritev(struct blk *b, int fd, const struct iovec *iov, int n, uint64_t off);
int blk_fd_pread(struct blk *b, int fd, void *buf, uint64_t len, uint64_t off);
int blk_fd_pwrite(struct blk *b, int fd, const void *buf, uint64_t len, uint64_t off);

#endif /* VMLET_DISK_BLK_FORMAT_H */
