// SPDX-License-Identifier: MIT
/*
 * blk_raw.c - opening images (format by magic), the raw format, and the
 * positioned-I/O helpers every format uses (blk.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/dev/blk.h"
#include "vmm/log.h"

uint64_t blk_iov_len(const struct iovec *iov, int n)
{
	uint64_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

int blk_iov_slice(const struct iovec *src, int n, uint64_t skip, uint64_t len, struct iovec *dst)
{
	int k = 0;

	for (int i = 0; i < n && len; i++) {
		uint64_t l = src[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		dst[k].iov_base = (uint8_t *)src[i].iov_base + skip;
		dst[k].iov_len = l - skip < len ? l - skip : len;
		len -= dst[k].iov_len;
		skip = 0;
		k++;
	}
	return k;
}

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

/* O_DIRECT with unaligned guest buffers: go through an aligned bounce
 * buffer covering the aligned span (read-modify-write for writes). */
static int blk_bounce(struct blk *b, int fd, const struct iovec *iov, int n, uint64_t off,
		      bool write)
{
	uint64_t a = b->dio_align, len = blk_iov_len(iov, n);
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
		r = fd_full(fd, buf, end - start, start, true);
	free(buf);
	return r;
}

/* One vectored transfer; a short one (EOF, signal) is finished segment
 * by segment. Unaligned requests on an O_DIRECT file go through bounce
 * buffers. */
static int blk_fd_rw(struct blk *b, int fd, const struct iovec *iov, int n, uint64_t off,
		     bool write)
{
	uint64_t len = blk_iov_len(iov, n);
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

/* ---- raw ------------------------------------------------------------------- */

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

static void raw_close(struct blk *b)
{
	(void)b;
}

static const struct blk_ops raw_ops = {
    raw_preadv, raw_pwritev, raw_flush, raw_discard, raw_write_zeroes, raw_close,
};

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
	return 0;
}

/* ---- open -------------------------------------------------------------------- */

static int blk_open_fd(struct blk *b, const char *path, bool ro, enum blk_cache cache)
{
	int flags = (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC;

	if (cache == BLK_CACHE_WRITETHROUGH)
		flags |= O_DSYNC;
	if (cache == BLK_CACHE_NONE) {
		b->fd = open(path, flags | O_DIRECT);
		if (b->fd >= 0) {
			b->dio_align = 512;
			return 0;
		}
		if (errno != EINVAL)
			return -errno;
		log_warn("blk: '%s' does not support O_DIRECT (cache none), "
			 "using the page cache",
			 path);
	}
	b->fd = open(path, flags);
	return b->fd < 0 ? -errno : 0;
}

int blk_open(struct blk **out, const char *path, bool read_only, enum blk_cache cache)
{
	return blk_open_format(out, path, read_only, cache, NULL);
}

int blk_open_format(struct blk **out, const char *path, bool read_only, enum blk_cache cache,
		    const char *format)
{
	uint8_t magic[4] = {0};
	struct blk *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->fd = -1;
	b->path = strdup(path);
	b->read_only = read_only;
	b->cache = cache;
	if (!b->path) {
		r = -ENOMEM;
		goto out_free;
	}
	r = blk_open_fd(b, path, read_only, cache);
	if (r) {
		error_errno(r, "blk: cannot open '%s'%s", path, read_only ? " read-only" : "");
		goto out_free;
	}
	r = blk_fd_pread(b, b->fd, magic, sizeof(magic), 0);
	if (r)
		error_errno(r, "blk: cannot read '%s'", path);
	else if (format && !strcmp(format, "raw"))
		r = blk_raw_init(b);
	else if (!memcmp(magic, "QFI\xfb", 4))
		r = blk_qcow2_init(b);
	else if (format && strcmp(format, "raw"))
		r = error_errno(-EINVAL, "blk: '%s' is not a %s image", path, format);
	else
		r = blk_raw_init(b);
	if (r)
		goto out_free;
	*out = b;
	return 0;
out_free:
	if (b->fd >= 0)
		close(b->fd);
	free(b->path);
	free(b);
	return r;
}

void blk_close(struct blk *b)
{
	if (!b)
		return;
	if (b->ops && b->ops->close)
		b->ops->close(b);
	if (b->fd >= 0)
		close(b->fd);
	free(b->path);
	free(b);
}
