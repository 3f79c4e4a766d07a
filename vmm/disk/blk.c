// SPDX-License-Identifier: MIT
/*
 * blk.c - opening and closing images (blk.h): the file is opened with the
 * flags of its cache mode, then the format is chosen (forced by the caller
 * or by the image's magic) and its opener fills in the ops.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/disk/blk_format.h"
#include "vmm/log.h"

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

static int blk_open_fd(struct blk *b, const char *path, bool ro, enum blk_cache cache)
{
	int flags = (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC;

	if (cache == BLK_CACHE_WRITETHROUGH)
		flags |= O_DSYNC;
	if (cache == BLK_CACHE_NONE) {
		b->fd = open(path, flags | O_DIRECT);
		if (b->fd >= 0) {
			b->dio_align = blk_dio_align(b->fd);
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

int blk_direct_io(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (errno != EINVAL)
		return -errno;
	/* EINVAL: O_DIRECT refused, unless the file cannot be opened at all */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
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
