// SPDX-License-Identifier: MIT
/*
 * blk_id.c - a disk's identity for snapshots (blk_id.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/disk/blk.h"
#include "vmm/disk/blk_id.h"
#include "vmm/util/log.h"

#define BLK_ID_SPAN  (1u << 20)
#define BLK_ID_ALIGN 4096u /* O_DIRECT: buffer, offset and length (cache none) */
#define BLK_ID_CHUNK 65536u

/*
 * FNV-1a over [off, off + len) of fd, continuing from *h. The reads are
 * aligned (buffer, offset and length to BLK_ID_ALIGN) so that an O_DIRECT
 * descriptor (cache none) reads like any other; the bytes before off in
 * the first chunk are skipped. 0, or -EIO when the span cannot be read.
 */
static int blk_id_hash_span(int fd, uint64_t off, uint64_t len, uint64_t *h, uint8_t *buf)
{
	while (len) {
		uint64_t at = off & ~(uint64_t)(BLK_ID_ALIGN - 1), skip = off - at;
		ssize_t got = pread(fd, buf, BLK_ID_CHUNK, (off_t)at);
		size_t use;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= (ssize_t)skip)
			return -EIO;
		use = (size_t)got - (size_t)skip;
		if (use > len)
			use = (size_t)len;
		for (size_t i = 0; i < use; i++)
			*h = (*h ^ buf[skip + i]) * 0x100000001b3ull;
		off += use;
		len -= use;
	}
	return 0;
}

int blk_id_read(const struct blk *be, struct blk_id *id)
{
	struct stat st;
	uint64_t head, tail;
	void *buf;
	int r;

	memset(id, 0, sizeof(*id));
	if (!be || fstat(be->fd, &st))
		return -EIO;
	if (posix_memalign(&buf, BLK_ID_ALIGN, BLK_ID_CHUNK))
		return -ENOMEM;
	id->size = be->size;
	id->file_size = (uint64_t)st.st_size;
	id->mtime_s = st.st_mtim.tv_sec;
	id->mtime_ns = st.st_mtim.tv_nsec;
	head = id->file_size < BLK_ID_SPAN ? id->file_size : BLK_ID_SPAN;
	tail = id->file_size - head < BLK_ID_SPAN ? id->file_size - head : BLK_ID_SPAN;
	id->hash = 0xcbf29ce484222325ull;
	r = blk_id_hash_span(be->fd, 0, head, &id->hash, buf);
	if (!r)
		r = blk_id_hash_span(be->fd, id->file_size - tail, tail, &id->hash, buf);
	free(buf);
	return r;
}

int blk_id_check(const struct blk *be, const char *name, const struct blk_id *saved)
{
	struct blk_id now;
	int r = blk_id_read(be, &now);

	if (r)
		return error_errno(r, "restore: %s: cannot read the disk's identity", name);
	if (saved->size != now.size || saved->file_size != now.file_size)
		return error_errno(
		    -EINVAL,
		    "restore: disk '%s' is not the disk of the snapshot: %s %llu, "
		    "the snapshot's %llu",
		    name, saved->size != now.size ? "virtual size" : "size",
		    (unsigned long long)(saved->size != now.size ? now.size : now.file_size),
		    (unsigned long long)(saved->size != now.size ? saved->size : saved->file_size));
	if (saved->hash != now.hash || saved->mtime_s != now.mtime_s ||
	    saved->mtime_ns != now.mtime_ns)
		return error_errno(-EINVAL,
				   "restore: disk '%s' is not the disk of the snapshot, or was "
				   "written since (%s differs)",
				   name, saved->hash != now.hash ? "its content" : "its mtime");
	return 0;
}
