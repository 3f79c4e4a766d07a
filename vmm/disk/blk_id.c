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

#define BLK_ID_SPAN (1u << 20)

static uint64_t blk_id_hash_span(int fd, uint64_t off, uint64_t len, uint64_t h, uint8_t *buf)
{
	while (len) {
		size_t n = len > 65536 ? 65536 : (size_t)len;
		ssize_t got = pread(fd, buf, n, (off_t)off);

		if (got <= 0)
			return h ^ 0xdead; /* unreadable: never equal to a read one */
		for (ssize_t i = 0; i < got; i++)
			h = (h ^ buf[i]) * 0x100000001b3ull; /* FNV-1a */
		off += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return h;
}

int blk_id_read(const struct blk *be, struct blk_id *id)
{
	struct stat st;
	uint64_t head, tail;
	uint8_t *buf;

	memset(id, 0, sizeof(*id));
	if (!be || fstat(be->fd, &st))
		return -EIO;
	buf = malloc(65536);
	if (!buf)
		return -ENOMEM;
	id->size = be->size;
	id->file_size = (uint64_t)st.st_size;
	id->mtime_s = st.st_mtim.tv_sec;
	id->mtime_ns = st.st_mtim.tv_nsec;
	head = id->file_size < BLK_ID_SPAN ? id->file_size : BLK_ID_SPAN;
	tail = id->file_size - head < BLK_ID_SPAN ? id->file_size - head : BLK_ID_SPAN;
	id->hash = blk_id_hash_span(be->fd, 0, head, 0xcbf29ce484222325ull, buf);
	id->hash = blk_id_hash_span(be->fd, id->file_size - tail, tail, id->hash, buf);
	free(buf);
	return 0;
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
