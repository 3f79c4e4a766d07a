// SPDX-License-Identifier: MIT
/*
 * blk_io.c - the positioned-I/O helpers every format uses (blk_format.h):
 * whole-length vectored reads and writes on an fd, with O_DIRECT bounce
 * buffering (the iovec arithmetic is vmm/util/iov.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/blk_format.h"
#include "vmm/util/iov.h"

static bool blk_dio_ok(const struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	uint64_t a = b->dio_align;

	if (!a)
		return true;
	if (off & (a - 1))
		return false;
	for (int i = 0; i < n; i++)
		if (((uintptr_t)iov[i].iov_base | iov[i].iov_len) & (a - 1))
			return false;
	return true;
}

/* Plain loop: all of [off, off+len) or -errno; reading at EOF gives
 * zeroes, writing nothing is -EIO. */
static int fd_full(int fd, uint8_t *p, uint64_t len, uint64_t off, bool write)
{
	while (len) {
		ssize_t r = write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0 && write)
			return -EIO;
		if (r == 0) {
			memset(p, 0, len);
			return 0;
		}
		p += r;
		off += (uint64_t)r;
		len -= (uint64_t)r;
	}
	return 0;
}

/* Write back the aligned span [start, end) of buf, which holds the write
 * ending at wend. Past the image's last whole block (a raw image of an
 * unaligned size, blk.tail_fd), only up to wend and without O_DIRECT:
 * the whole block would grow the file. */
static int blk_bounce_write(struct blk *b, int fd, uint8_t *buf, uint64_t start, uint64_t end,
			    uint64_t wend)
{
	uint64_t tail = b->size & ~((uint64_t)b->dio_align - 1);
	int r;

	if (fd != b->fd || b->tail_fd < 0 || end <= tail)
		return fd_full(fd, buf, end - start, start, true);
	r = start < tail ? fd_full(fd, buf, tail - start, start, true) : 0;
	if (!r && wend > tail)
		r = fd_full(b->tail_fd, buf + (tail > start ? tail - start : 0),
			    wend - (tail > start ? tail : start), tail > start ? tail : start,
			    true);
	return r;
}

/* O_DIRECT with unaligned guest buffers: go through an aligned bounce
 * buffer covering the aligned span (read-modify-write for writes). */
static int blk_bounce(struct blk *b, int fd, const struct iovec *iov, int n, uint64_t off,
		      bool write)
{
	uint64_t a = b->dio_align, len = iov_size(iov, n);
	uint64_t start = off & ~(a - 1), end = (off + len + a - 1) & ~(a - 1);
	uint8_t *buf, *p;
	int r = 0;

	if (posix_memalign((void **)&buf, a, end - start))
		return -ENOMEM;
	if (!write || start != off || end != off + len)
		r = fd_full(fd, buf, end - start, start, false);
	p = buf + (off - start);
	for (int i = 0; !r && i < n; i++) {
		if (write)
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
		else
			memcpy(iov[i].iov_base, p, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	if (!r && write)
		r = blk_bounce_write(b, fd, buf, start, end, off + len);
	free(buf);
	return r;
}

/* One vectored transfer; a short one (EOF, signal) is finished segment
 * by segment. Unaligned requests on an O_DIRECT file go through bounce
 * buffers. */
static int blk_fd_rw(struct blk *b, int fd, const struct iovec *iov, int n, uint64_t off,
		     bool write)
{
	uint64_t len = iov_size(iov, n);
	ssize_t r;

	if (!blk_dio_ok(b, iov, n, off))
		return blk_bounce(b, fd, iov, n, off, write);
	do
		r = write ? pwritev(fd, iov, n, (off_t)off) : preadv(fd, iov, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if ((uint64_t)r == len)
		return 0;
	for (int i = 0; i < n; i++) {
		uint64_t l = iov[i].iov_len, skip = (uint64_t)r < l ? (uint64_t)r : l;
		uint8_t *p = (uint8_t *)iov[i].iov_base + skip;
		int e;

		r -= (ssize_t)skip;
		e = fd_full(fd, p, l - skip, off + skip, write);
		if (e)
			return e;
		off += l;
	}
	return 0;
}

int blk_fd_preadv(struct blk *b, int fd, const struct iovec *iov, int n, uint64_t off)
{
	return blk_fd_rw(b, fd, iov, n, off, false);
}

int blk_fd_pwritev(struct blk *b, int fd, const struct iovec *iov, int n, uint64_t off)
{
	return blk_fd_rw(b, fd, iov, n, off, true);
}

int blk_fd_pread(struct blk *b, int fd, void *buf, uint64_t len, uint64_t off)
{
	struct iovec v = {buf, len};

	return blk_fd_preadv(b, fd, &v, 1, off);
}

int blk_fd_pwrite(struct blk *b, int fd, const void *buf, uint64_t len, uint64_t off)
{
	struct iovec v = {(void *)(uintptr_t)buf, len};

	return blk_fd_pwritev(b, fd, &v, 1, off);
}
