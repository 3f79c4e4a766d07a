// SPDX-License-Identifier: MIT
/*
 * blk_raw.c - the raw format: the image file (or block device) is the
 * disk, byte for byte (blk_format.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/disk/blk_format.h"
#include "vmm/util/log.h"

static int raw_preadv(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	return blk_fd_preadv(b, b->fd, iov, n, off);
}

static int raw_pwritev(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	return blk_fd_pwritev(b, b->fd, iov, n, off);
}

static int raw_flush(struct blk *b)
{
	return fdatasync(b->fd) ? -errno : 0;
}

static int raw_discard(struct blk *b, uint64_t off, uint64_t len)
{
	if (!fallocate(b->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len))
		return 0;
	/* discard is a hint: a filesystem without hole punching is fine */
	return errno == EOPNOTSUPP ? 0 : -errno;
}

static int raw_write_zeroes(struct blk *b, uint64_t off, uint64_t len, bool unmap)
{
	static const uint8_t zero[65536] __attribute__((aligned(4096)));
	int mode = unmap ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
			 : FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
	int r;

	if (!fallocate(b->fd, mode, (off_t)off, (off_t)len))
		return 0;
	if (errno != EOPNOTSUPP && errno != EINVAL)
		return -errno;
	while (len) {
		uint64_t c = len < sizeof(zero) ? len : sizeof(zero);

		r = blk_fd_pwrite(b, b->fd, zero, c, off);
		if (r)
			return r;
		off += c;
		len -= c;
	}
	return 0;
}

/* The descriptor without O_DIRECT that writes the unaligned tail of an
 * O_DIRECT image (blk_format.h: blk.tail_fd), or -1. */
struct raw {
	int tail_fd;
};

static void raw_close(struct blk *b)
{
	struct raw *r = b->priv;

	if (r && r->tail_fd >= 0)
		close(r->tail_fd);
	free(r);
	b->priv = NULL;
	b->tail_fd = -1;
}

static const struct blk_ops raw_ops = {
    raw_preadv, raw_pwritev, raw_flush, raw_discard, raw_write_zeroes, raw_close,
};

/*
 * An O_DIRECT image whose size is not a multiple of the alignment: a
 * write into its last, partial block cannot be done with O_DIRECT
 * without writing the whole block, which would grow the file. That part
 * goes through a second descriptor of the same file without O_DIRECT
 * (blk_io.c), opened here from b->fd itself (its /proc/self/fd link),
 * before any sandbox.
 */
static int raw_tail_fd(struct blk *b)
{
	struct raw *r;
	char self[64];

	if (b->read_only || !b->dio_align || !(b->size & (b->dio_align - 1)))
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", b->fd);
	r->tail_fd = open(self, O_RDWR | O_CLOEXEC);
	if (r->tail_fd < 0) {
		free(r);
		return error_errno(-errno, "blk: '%s': cannot open its unaligned tail", b->path);
	}
	b->priv = r;
	b->tail_fd = r->tail_fd;
	return 0;
}

int blk_raw_init(struct blk *b)
{
	struct stat st;
	uint64_t sz;

	if (fstat(b->fd, &st))
		return error_errno(-errno, "blk: cannot stat '%s'", b->path);
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(b->fd, BLKGETSIZE64, &sz))
			return error_errno(-errno, "blk: cannot size '%s'", b->path);
	} else {
		sz = (uint64_t)st.st_size;
	}
	b->size = sz;
	b->ops = &raw_ops;
	b->format = "raw";
	return raw_tail_fd(b);
}
