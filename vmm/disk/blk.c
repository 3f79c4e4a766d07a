// SPDX-License-Identifier: MIT
/*
 * blk.c - opening and closing images (blk.h): the file is opened as its
 * blk_where allows (vmm/util/file.h: beneath its root, regular files only
 * unless a block device is allowed), given the flags of its cache mode,
 * then the format is chosen (forced by the caller or by the image's magic)
 * and its opener fills in the ops.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/disk/blk_format.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"

/* The O_DIRECT alignment of fd (offsets, lengths and buffers): what the
 * kernel reports (statx, Linux 6.1), a block device's logical sector
 * size, else 4096 (a multiple of any sector size in use). */
static uint32_t blk_dio_align(int fd)
{
	struct statx sx;
	uint32_t a;
	int ssz;

	if (!statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) && (sx.stx_mask & STATX_DIOALIGN) &&
	    sx.stx_dio_offset_align) {
		a = sx.stx_dio_offset_align > sx.stx_dio_mem_align ? sx.stx_dio_offset_align
								   : sx.stx_dio_mem_align;
		if (a >= 512 && !(a & (a - 1)))
			return a;
	}
	if (!ioctl(fd, BLKSSZGET, &ssz) && ssz >= 512 && !(ssz & (ssz - 1)))
		return (uint32_t)ssz;
	return 4096;
}

/* O_DIRECT on fd (cache none): 0, or -EINVAL when its file system
 * refuses it (the open has the same check, FMODE_CAN_ODIRECT). */
static int blk_set_direct(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT))
		return -errno;
	return 0;
}

int blk_fd_direct_io(int fd)
{
	int fl = fcntl(fd, F_GETFL), r;

	if (fl < 0)
		return -errno;
	r = blk_set_direct(fd);
	if (r && r != -EINVAL)
		return r;
	if (!r && fcntl(fd, F_SETFL, fl))
		return -errno;
	return !r;
}

/* The cache mode's flags on b->fd: O_DIRECT through F_SETFL (with a
 * warning and the page cache where the file system refuses it); O_DSYNC,
 * which F_SETFL cannot set, by reopening the descriptor itself (its
 * /proc/self/fd link: the same file, whatever its name is now). */
static int blk_set_cache(struct blk *b, enum blk_cache cache)
{
	char self[64];
	int fd, fl, r;

	if (cache == BLK_CACHE_NONE) {
		r = blk_set_direct(b->fd);
		if (!r)
			b->dio_align = blk_dio_align(b->fd);
		else if (r == -EINVAL)
			log_warn("blk: '%s' does not support O_DIRECT (cache none), "
				 "using the page cache",
				 b->path);
		return r == -EINVAL ? 0 : r;
	}
	fl = fcntl(b->fd, F_GETFL);
	if (fl < 0)
		return -errno;
	if (cache != BLK_CACHE_WRITETHROUGH || (fl & O_DSYNC))
		return 0;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", b->fd);
	fd = open(self, (fl & O_ACCMODE) | O_DSYNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(b->fd);
	b->fd = fd;
	return 0;
}

int blk_direct_io(const char *path, const struct blk_where *w)
{
	int fd = file_open(&w->file, path, O_RDONLY), r;

	if (fd < 0)
		return fd;
	r = blk_fd_direct_io(fd);
	close(fd);
	return r;
}

int blk_open(struct blk **out, const char *path, bool read_only, enum blk_cache cache)
{
	return blk_open_format(out, path, read_only, cache, NULL);
}

int blk_open_format(struct blk **out, const char *path, bool read_only, enum blk_cache cache,
		    const char *format)
{
	static const struct blk_where dflt = {.file = {.follow = true}};

	return blk_open_at(out, path, &dflt, read_only, cache, format);
}

int blk_open_at(struct blk **out, const char *path, const struct blk_where *w, bool read_only,
		enum blk_cache cache, const char *format)
{
	int fd = file_open(&w->file, path,
			   (read_only ? O_RDONLY : O_RDWR) |
			       (cache == BLK_CACHE_WRITETHROUGH ? O_DSYNC : 0));

	if (fd < 0)
		return error_errno(fd, "blk: cannot open '%s'%s%s", path,
				   read_only ? " read-only" : "", file_why(fd));
	return blk_open_fd(out, fd, path, w, read_only, cache, format);
}

/* The format, chosen by the caller or by the image's magic. */
static int blk_init_format(struct blk *b, const char *format)
{
	uint8_t magic[4] = {0};
	int r = blk_fd_pread(b, b->fd, magic, sizeof(magic), 0);

	if (r)
		return error_errno(r, "blk: cannot read '%s'", b->path);
	if (format && !strcmp(format, "raw"))
		return blk_raw_init(b);
	if (!memcmp(magic, "QFI\xfb", 4))
		return blk_qcow2_init(b);
	if (format && strcmp(format, "raw"))
		return error_errno(-EINVAL, "blk: '%s' is not a %s image", b->path, format);
	return blk_raw_init(b);
}

int blk_open_fd(struct blk **out, int fd, const char *name, const struct blk_where *w,
		bool read_only, enum blk_cache cache, const char *format)
{
	struct blk *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	b->fd = fd;
	b->tail_fd = -1;
	b->path = strdup(name);
	b->read_only = read_only;
	b->cache = cache;
	b->no_backing = w && w->no_backing;
	if (!b->path) {
		r = -ENOMEM;
		goto out_free;
	}
	r = blk_set_cache(b, cache);
	if (r) {
		error_errno(r, "blk: cannot open '%s' in its cache mode", name);
		goto out_free;
	}
	r = blk_init_format(b, format);
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
	blk_lock_forget(b);
	if (b->ops && b->ops->close)
		b->ops->close(b);
	if (b->fd >= 0)
		close(b->fd);
	free(b->path);
	free(b);
}
