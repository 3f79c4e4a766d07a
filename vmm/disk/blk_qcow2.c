// SPDX-License-Identifier: MIT
/*
 * blk_qcow2.c - qcow2 images, versions 2 and 3: guest reads and writes,
 * flush and close (the format's blk_ops; metadata in blk_qcow2_meta.c,
 * opening in blk_qcow2_open.c, the order writes reach the disk in
 * blk_qcow2.h). Writes allocate clusters at the end of the file with
 * 16-bit refcounts kept exact (qemu-img check stays clean); zero clusters
 * and backing files (any format blk_open() knows, "raw" when the
 * backing-format extension says so) are read through.
 *
 * Refused with an error naming the image and the feature: encryption,
 * compressed clusters, external data files, extended L2 entries,
 * non-zlib compression types, images marked dirty or corrupt, unknown
 * incompatible features; writing is refused for images with internal
 * snapshots or refcount widths other than 16 bits (reading works).
 *
 * Every metadata value read from the image is untrusted: offsets are
 * checked for alignment and range before use, tables are bounded. Tables
 * (L1, L2, refcount) must lie inside the file and so must a data cluster
 * to be written: new clusters are allocated at the end of the file, so one
 * the image already points at there would be handed out twice. (A data
 * cluster past the end reads as zeroes.) A backing chain that loops or has
 * more than QCOW_MAX_BACKING files is refused.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/blk_qcow2.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"

int qcow2_refuse(struct blk *b, const char *feature)
{
	return error_errno(-ENOTSUP, "blk: '%s': qcow2 %s is not supported", b->path, feature);
}

/* ---- reads ------------------------------------------------------------------ */

static int qcow2_iov_zero(const struct iovec *iov, int n)
{
	for (int i = 0; i < n; i++)
		memset(iov[i].iov_base, 0, iov[i].iov_len);
	return 0;
}

static int qcow2_backing_read(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	struct qcow2 *q = b->priv;
	uint64_t len = iov_size(iov, n), have;
	struct iovec *part;
	int k, r;

	if (!q->backing || off >= q->backing->size)
		return qcow2_iov_zero(iov, n);
	have = q->backing->size - off;
	if (have >= len)
		return blk_preadv(q->backing, iov, n, off);
	/* the backing image is shorter: read what it has, zero the rest */
	part = calloc((size_t)n + 1, sizeof(*part));
	if (!part)
		return -ENOMEM;
	k = iov_slice(iov, n, 0, have, part);
	r = blk_preadv(q->backing, part, k, off);
	k = iov_slice(iov, n, have, len - have, part);
	if (!r)
		qcow2_iov_zero(part, k);
	free(part);
	return r;
}

/* One piece inside a single cluster. */
static int qcow2_read_piece(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	struct qcow2 *q = b->priv;
	uint64_t e, host;
	int r;

	r = qcow2_lookup(b, off, &e);
	if (r)
		return r;
	if (e & QCOW_OFLAG_COMPRESSED)
		return qcow2_refuse(b, "compressed cluster");
	host = e & QCOW_OFFSET_MASK;
	if (e & QCOW_OFLAG_ZERO)
		return qcow2_iov_zero(iov, n);
	if (!host)
		return qcow2_backing_read(b, iov, n, off);
	if (host & (q->cluster_size - 1))
		return error_errno(-EIO, "blk: '%s': qcow2 l2 entry is corrupt", b->path);
	/* past the end of the file (a corrupt image): zeroes, as a hole */
	return blk_fd_preadv(b, b->fd, iov, n, host + (off & (q->cluster_size - 1)));
}

/* Split [off, off+len) at cluster boundaries and call fn per piece. */
static int qcow2_each(struct blk *b, const struct iovec *iov, int n, uint64_t off,
		      int (*fn)(struct blk *, const struct iovec *, int, uint64_t))
{
	struct qcow2 *q = b->priv;
	uint64_t len = iov_size(iov, n), done = 0;
	struct iovec *part;
	int r = 0;

	if (off > b->size || len > b->size - off)
		return -EIO;
	part = calloc((size_t)n + 1, sizeof(*part));
	if (!part)
		return -ENOMEM;
	while (!r && done < len) {
		uint64_t in = (off + done) & (q->cluster_size - 1);
		uint64_t c = q->cluster_size - in < len - done ? q->cluster_size - in : len - done;
		int k = iov_slice(iov, n, done, c, part);

		r = fn(b, part, k, off + done);
		done += c;
	}
	free(part);
	return r;
}

static int qcow2_preadv(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	return qcow2_each(b, iov, n, off, qcow2_read_piece);
}

/* ---- writes ---------------------------------------------------------------- */

/* One piece inside a single cluster. */
static int qcow2_write_piece(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	struct qcow2 *q = b->priv;
	uint64_t in = off & (q->cluster_size - 1), cstart = off - in, e, l2off, host;
	uint64_t len = iov_size(iov, n);
	uint8_t *buf;
	int r;

	r = qcow2_lookup(b, off, &e);
	if (r)
		return r;
	host = e & QCOW_OFFSET_MASK;
	if (host && !(e & QCOW_OFLAG_ZERO)) {
		if (!(e & QCOW_OFLAG_COPIED) || (e & QCOW_OFLAG_COMPRESSED) ||
		    !qcow2_off_ok(q, host))
			return error_errno(-EIO, "blk: '%s': qcow2 cluster is shared or corrupt",
					   b->path);
		return blk_fd_pwritev(b, b->fd, iov, n, host + in);
	}
	/* allocate: the new cluster holds old contents around the write */
	r = qcow2_l2_for_write(b, off, &l2off);
	if (r)
		return r;
	if (posix_memalign((void **)&buf, 4096, q->cluster_size))
		return -ENOMEM;
	struct iovec whole = {buf, q->cluster_size};
	if (len == q->cluster_size)
		r = 0;
	else if (e & QCOW_OFLAG_ZERO)
		memset(buf, 0, q->cluster_size);
	else
		r = qcow2_backing_read(b, &whole, 1, cstart);
	for (int i = 0; !r && i < n; i++) {
		memcpy(buf + in, iov[i].iov_base, iov[i].iov_len);
		in += iov[i].iov_len;
	}
	if (!r)
		r = qcow2_alloc(b, &host);
	if (!r)
		r = blk_fd_pwrite(b, b->fd, buf, q->cluster_size, host);
	free(buf);
	/* data and refcount first, then the L2 entry pointing at it */
	return r ? r : qcow2_l2_set(b, l2off, off, host);
}

static int qcow2_pwritev(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	struct qcow2 *q = b->priv;

	if (!q->writable_meta)
		return -EROFS;
	return qcow2_each(b, iov, n, off, qcow2_write_piece);
}

/* The guest's FLUSH: the dirty L2 entries after what they point at, then
 * all of it to stable storage. */
static int qcow2_flush(struct blk *b)
{
	int r = qcow2_meta_flush(b);

	if (!r && fdatasync(b->fd))
		r = -errno;
	return r;
}

static int qcow2_discard(struct blk *b, uint64_t off, uint64_t len)
{
	(void)b;
	(void)off;
	(void)len;
	return 0; /* a hint; clusters stay allocated */
}

static int qcow2_write_zeroes(struct blk *b, uint64_t off, uint64_t len, bool unmap)
{
	struct qcow2 *q = b->priv;
	int r = 0;

	(void)unmap;
	while (!r && len) {
		uint64_t c = q->cluster_size - (off & (q->cluster_size - 1));
		struct iovec v = {q->zero, c < len ? c : len};

		r = qcow2_pwritev(b, &v, 1, off);
		off += v.iov_len;
		len -= v.iov_len;
	}
	return r;
}

void qcow2_close(struct blk *b)
{
	struct qcow2 *q = b->priv;
	int r;

	if (!q)
		return;
	r = qcow2_meta_flush(b);
	if (r)
		error_errno(r, "blk: '%s': qcow2 metadata not written at close (leaked clusters)",
			    b->path);
	for (unsigned int i = 0; i < QCOW_L2_CACHE; i++)
		free(q->l2[i].t);
	blk_close(q->backing);
	b->backing = NULL;
	free(q->l1);
	free(q->rt);
	free(q->zero);
	free(q);
	b->priv = NULL;
}

const struct blk_ops qcow2_ops = {
    qcow2_preadv, qcow2_pwritev, qcow2_flush, qcow2_discard, qcow2_write_zeroes, qcow2_close,
};
