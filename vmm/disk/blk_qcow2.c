// SPDX-License-Identifier: MIT
/*
 * blk_qcow2.c - qcow2 images, versions 2 and 3 (the layout is QEMU's
 * docs/interop/qcow2.txt): reads, writes with cluster allocation at the
 * end of the file and 16-bit refcounts kept exact (qemu-img check stays
 * clean), zero clusters, backing files (any format blk_open() knows,
 * "raw" when the backing-format extension says so).
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
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/disk/blk_format.h"
#include "vmm/log.h"

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

struct qcow2_header {
	uint32_t magic, version;
	uint64_t backing_file_offset;
	uint32_t backing_file_size, cluster_bits;
	uint64_t size;
	uint32_t crypt_method, l1_size;
	uint64_t l1_table_offset, refcount_table_offset;
	uint32_t refcount_table_clusters, nb_snapshots;
	uint64_t snapshots_offset;
	/* version 3 */
	uint64_t incompatible_features, compatible_features, autoclear_features;
	uint32_t refcount_order, header_length;
} __attribute__((packed));
_Static_assert(sizeof(struct qcow2_header) == 104, "qcow2 header layout");

struct qcow2_l2 {
	uint64_t offset; /* host offset of the table, 0 = slot empty */
	uint64_t *t;
	unsigned int age;
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
	struct blk *backing;
	struct qcow2_l2 l2[QCOW_L2_CACHE];
	unsigned int clock;
	uint8_t *zero; /* one zero cluster */
};

/* The qcow2 images of the chain this thread is opening whose backing file
 * is being opened, outermost first: a backing file among them is a loop. */
static __thread struct {
	dev_t dev;
	ino_t ino;
} qcow2_chain[QCOW_MAX_BACKING];
static __thread unsigned int qcow2_chain_n;

static int qcow2_refuse(struct blk *b, const char *feature)
{
	return error_errno(-ENOTSUP, "blk: '%s': qcow2 %s is not supported", b->path, feature);
}

/* A cluster-aligned host offset of a cluster inside the file. */
static bool qcow2_off_ok(const struct qcow2 *q, uint64_t off)
{
	return off && !(off & (q->cluster_size - 1)) && off < q->file_end;
}

/* ---- L2 tables ------------------------------------------------------------ */

static int qcow2_l2_get(struct blk *b, uint64_t off, uint64_t **t)
{
	struct qcow2 *q = b->priv;
	struct qcow2_l2 *slot = &q->l2[0];
	int r;

	for (unsigned int i = 0; i < QCOW_L2_CACHE; i++) {
		if (q->l2[i].offset == off) {
			q->l2[i].age = ++q->clock;
			*t = q->l2[i].t;
			return 0;
		}
		if (q->l2[i].age < slot->age)
			slot = &q->l2[i];
	}
	slot->offset = 0;
	r = blk_fd_pread(b, b->fd, slot->t, q->cluster_size, off);
	if (r)
		return r;
	slot->offset = off;
	slot->age = ++q->clock;
	*t = slot->t;
	return 0;
}

/* Host entry (L2 value, big-endian decoded) for guest offset, 0 = none. */
static int qcow2_lookup(struct blk *b, uint64_t gofs, uint64_t *entry)
{
	struct qcow2 *q = b->priv;
	uint64_t l1i = gofs >> (q->cluster_bits * 2 - 3), l2i, l2off, *t;
	int r;

	*entry = 0;
	if (l1i >= q->l1_size)
		return 0;
	l2off = be64toh(q->l1[l1i]) & QCOW_OFFSET_MASK;
	if (!l2off)
		return 0;
	if (!qcow2_off_ok(q, l2off))
		return error_errno(-EIO, "blk: '%s': qcow2 l1 entry %llu is corrupt", b->path,
				   (unsigned long long)l1i);
	r = qcow2_l2_get(b, l2off, &t);
	if (r)
		return r;
	l2i = (gofs >> q->cluster_bits) & (q->l2_entries - 1);
	*entry = be64toh(t[l2i]);
	return 0;
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
	uint64_t len = blk_iov_len(iov, n), have;
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
	k = blk_iov_slice(iov, n, 0, have, part);
	r = blk_preadv(q->backing, part, k, off);
	k = blk_iov_slice(iov, n, have, len - have, part);
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
	uint64_t len = blk_iov_len(iov, n), done = 0;
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
		int k = blk_iov_slice(iov, n, done, c, part);

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

/* ---- allocation -------------------------------------------------------------- */

/*
 * Set the refcount of host cluster at off to 1 (it was 0). A missing
 * refcount block is made at the end of the file, complete (off's count
 * and its own, when it covers itself) before the refcount table points at
 * it: vmlet killed between any two writes leaves at worst clusters counted
 * that nothing points at (leaks), never a pointer to a cluster whose
 * count is 0 (every allocation below keeps that order).
 */
static int qcow2_ref_set(struct blk *b, uint64_t off)
{
	struct qcow2 *q = b->priv;
	uint64_t per_block = q->cluster_size / 2, ci = off >> q->cluster_bits;
	uint64_t rti = ci / per_block, blk_off, nb, be;
	uint16_t one = htobe16(1), *blk;
	int r;

	if (rti >= q->rt_entries)
		return error_errno(-ENOSPC, "blk: '%s': qcow2 refcount table is full", b->path);
	blk_off = be64toh(q->rt[rti]) & QCOW_OFFSET_MASK;
	if (blk_off) {
		if (!qcow2_off_ok(q, blk_off))
			return error_errno(-EIO, "blk: '%s': qcow2 refcount table is corrupt",
					   b->path);
		return blk_fd_pwrite(b, b->fd, &one, 2, blk_off + 2 * (ci % per_block));
	}
	nb = q->file_end;
	q->file_end += q->cluster_size;
	if (posix_memalign((void **)&blk, 4096, q->cluster_size))
		return -ENOMEM;
	memset(blk, 0, q->cluster_size);
	blk[ci % per_block] = one;
	if ((nb >> q->cluster_bits) / per_block == rti)
		blk[(nb >> q->cluster_bits) % per_block] = one;
	r = blk_fd_pwrite(b, b->fd, blk, q->cluster_size, nb);
	free(blk);
	/* a block outside its own range is counted by the next one */
	if (!r && (nb >> q->cluster_bits) / per_block != rti)
		r = qcow2_ref_set(b, nb);
	if (r)
		return r;
	be = htobe64(nb);
	r = blk_fd_pwrite(b, b->fd, &be, 8, q->rt_offset + 8 * rti);
	if (!r)
		q->rt[rti] = be;
	return r;
}

/* A new host cluster at the end of the file, refcount 1. */
static int qcow2_alloc(struct blk *b, uint64_t *off)
{
	struct qcow2 *q = b->priv;

	*off = q->file_end;
	q->file_end += q->cluster_size;
	return qcow2_ref_set(b, *off);
}

/* The L2 table for gofs, allocating it when missing. */
static int qcow2_l2_for_write(struct blk *b, uint64_t gofs, uint64_t *l2off)
{
	struct qcow2 *q = b->priv;
	uint64_t l1i = gofs >> (q->cluster_bits * 2 - 3), e;
	int r;

	if (l1i >= q->l1_size)
		return -EIO;
	e = be64toh(q->l1[l1i]);
	*l2off = e & QCOW_OFFSET_MASK;
	if (*l2off) {
		if (!qcow2_off_ok(q, *l2off) || !(e & QCOW_OFLAG_COPIED))
			return error_errno(-EIO, "blk: '%s': qcow2 l2 table is shared or corrupt",
					   b->path);
		return 0;
	}
	r = qcow2_alloc(b, l2off);
	if (!r)
		r = blk_fd_pwrite(b, b->fd, q->zero, q->cluster_size, *l2off);
	if (r)
		return r;
	e = htobe64(*l2off | QCOW_OFLAG_COPIED);
	r = blk_fd_pwrite(b, b->fd, &e, 8, q->l1_offset + 8 * l1i);
	if (!r)
		q->l1[l1i] = e;
	return r;
}

/* One piece inside a single cluster. */
static int qcow2_write_piece(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	struct qcow2 *q = b->priv;
	uint64_t in = off & (q->cluster_size - 1), cstart = off - in, e, l2off, host, *t;
	uint64_t len = blk_iov_len(iov, n);
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
	/* data first, then the L2 entry pointing at it */
	if (!r)
		r = qcow2_l2_get(b, l2off, &t);
	if (r)
		return r;
	e = htobe64(host | QCOW_OFLAG_COPIED);
	uint64_t l2i = (off >> q->cluster_bits) & (q->l2_entries - 1);
	r = blk_fd_pwrite(b, b->fd, &e, 8, l2off + 8 * l2i);
	if (!r)
		t[l2i] = e;
	return r;
}

static int qcow2_pwritev(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	struct qcow2 *q = b->priv;

	if (!q->writable_meta)
		return -EROFS;
	return qcow2_each(b, iov, n, off, qcow2_write_piece);
}

static int qcow2_flush(struct blk *b)
{
	return fdatasync(b->fd) ? -errno : 0;
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

static void qcow2_close(struct blk *b)
{
	struct qcow2 *q = b->priv;

	if (!q)
		return;
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

static const struct blk_ops qcow2_ops = {
    qcow2_preadv, qcow2_pwritev, qcow2_flush, qcow2_discard, qcow2_write_zeroes, qcow2_close,
};

/* ---- open ---------------------------------------------------------------------- */

static int qcow2_check_header(struct blk *b, struct qcow2_header *h)
{
	uint64_t inc;

	h->version = be32toh(h->version);
	h->cluster_bits = be32toh(h->cluster_bits);
	h->size = be64toh(h->size);
	h->crypt_method = be32toh(h->crypt_method);
	h->l1_size = be32toh(h->l1_size);
	h->l1_table_offset = be64toh(h->l1_table_offset);
	h->refcount_table_offset = be64toh(h->refcount_table_offset);
	h->refcount_table_clusters = be32toh(h->refcount_table_clusters);
	h->nb_snapshots = be32toh(h->nb_snapshots);
	h->backing_file_offset = be64toh(h->backing_file_offset);
	h->backing_file_size = be32toh(h->backing_file_size);
	if (h->version == 2) {
		h->incompatible_features = 0;
		h->refcount_order = 4;
		h->header_length = 72;
	} else if (h->version == 3) {
		h->incompatible_features = be64toh(h->incompatible_features);
		h->refcount_order = be32toh(h->refcount_order);
		h->header_length = be32toh(h->header_length);
	} else {
		return error_errno(-ENOTSUP, "blk: '%s': qcow2 version %u is not supported",
				   b->path, h->version);
	}
	inc = h->incompatible_features;
	if (h->crypt_method)
		return qcow2_refuse(b, "encryption");
	if (inc & QCOW_INCOMPAT_DATA_FILE)
		return qcow2_refuse(b, "external data file");
	if (inc & QCOW_INCOMPAT_COMPRESSION)
		return qcow2_refuse(b, "compression type other than zlib");
	if (inc & QCOW_INCOMPAT_EXTL2)
		return qcow2_refuse(b, "extended l2 entries");
	if (inc & QCOW_INCOMPAT_CORRUPT)
		return qcow2_refuse(b, "image marked corrupt");
	if (inc & QCOW_INCOMPAT_DIRTY)
		return qcow2_refuse(b, "image marked dirty (run qemu-img check -r all)");
	if (inc)
		return qcow2_refuse(b, "incompatible feature bits");
	if (h->cluster_bits < 9 || h->cluster_bits > 21 || h->header_length < 72 ||
	    h->header_length > (1u << h->cluster_bits))
		return error_errno(-EINVAL, "blk: '%s': qcow2 header is corrupt", b->path);
	return 0;
}

/* Backing file name and format (header + extensions). */
static int qcow2_backing_info(struct blk *b, const struct qcow2_header *h, char *name,
			      size_t name_cap, char *fmt, size_t fmt_cap)
{
	uint64_t off = h->header_length, end = 1ull << h->cluster_bits;
	uint32_t ext[2];
	int r;

	name[0] = fmt[0] = 0;
	if (!h->backing_file_offset)
		return 0;
	if (h->backing_file_size >= name_cap || h->backing_file_offset > end)
		return error_errno(-EINVAL, "blk: '%s': qcow2 backing file name is corrupt",
				   b->path);
	r = blk_fd_pread(b, b->fd, name, h->backing_file_size, h->backing_file_offset);
	if (r)
		return r;
	name[h->backing_file_size] = 0;
	/* extensions: (type, length, data padded to 8) until type 0 */
	for (int i = 0; i < 64 && off + 8 <= end; i++) {
		if ((r = blk_fd_pread(b, b->fd, ext, 8, off)))
			return r;
		ext[0] = be32toh(ext[0]);
		ext[1] = be32toh(ext[1]);
		if (!ext[0])
			break;
		if (ext[0] == QCOW_EXT_BACKING_FORMAT && ext[1] < fmt_cap) {
			if ((r = blk_fd_pread(b, b->fd, fmt, ext[1], off + 8)))
				return r;
			fmt[ext[1]] = 0;
		}
		off += 8 + (((uint64_t)ext[1] + 7) & ~7ull);
	}
	return 0;
}

static int qcow2_open_backing(struct blk *b, const char *name, const char *fmt)
{
	struct qcow2 *q = b->priv;
	char path[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int r;

	if (!name[0])
		return 0;
	if (name[0] == '/') {
		snprintf(path, sizeof(path), "%s", name);
	} else {
		snprintf(dir, sizeof(dir), "%s", b->path);
		snprintf(path, sizeof(path), "%s/%s", dirname(dir), name);
	}
	if (fmt[0] && strcmp(fmt, "raw") && strcmp(fmt, "qcow2"))
		return error_errno(-ENOTSUP, "blk: '%s': backing file format '%s' is not supported",
				   b->path, fmt);
	if (qcow2_chain_n == QCOW_MAX_BACKING)
		return error_errno(-ELOOP, "blk: '%s': more than %u backing files in the chain",
				   b->path, QCOW_MAX_BACKING);
	if (fstat(b->fd, &st))
		return -errno;
	qcow2_chain[qcow2_chain_n].dev = st.st_dev;
	qcow2_chain[qcow2_chain_n++].ino = st.st_ino;
	r = blk_open_format(&q->backing, path, true, b->cache, fmt[0] ? fmt : NULL);
	qcow2_chain_n--;
	if (r)
		return error_errno(r, "blk: '%s': cannot open its backing file '%s'", b->path,
				   path);
	b->backing = q->backing;
	return 0;
}

static int qcow2_load_tables(struct blk *b, const struct qcow2_header *h)
{
	struct qcow2 *q = b->priv;
	uint64_t need =
	    (h->size + q->cluster_size * q->l2_entries - 1) / (q->cluster_size * q->l2_entries);
	uint64_t rt_bytes = (uint64_t)h->refcount_table_clusters << q->cluster_bits;
	int r;

	if (h->l1_size < need || (uint64_t)h->l1_size * 8 > QCOW_MAX_L1_BYTES ||
	    (h->l1_size && (!qcow2_off_ok(q, h->l1_table_offset) ||
			    8ull * h->l1_size > q->file_end - h->l1_table_offset)) ||
	    rt_bytes > QCOW_MAX_L1_BYTES || !qcow2_off_ok(q, h->refcount_table_offset) ||
	    rt_bytes > q->file_end - h->refcount_table_offset)
		return error_errno(-EINVAL, "blk: '%s': qcow2 tables are corrupt", b->path);
	q->l1_size = h->l1_size;
	q->l1_offset = h->l1_table_offset;
	q->l1 = calloc(h->l1_size ? h->l1_size : 1, 8);
	q->rt = calloc(rt_bytes / 8 ? rt_bytes / 8 : 1, 8);
	if (!q->l1 || !q->rt)
		return -ENOMEM;
	q->rt_offset = h->refcount_table_offset;
	q->rt_entries = rt_bytes / 8;
	r = blk_fd_pread(b, b->fd, q->l1, 8ull * h->l1_size, q->l1_offset);
	if (!r)
		r = blk_fd_pread(b, b->fd, q->rt, rt_bytes, q->rt_offset);
	return r;
}

/* Refuse compressed clusters up front rather than failing guest reads. */
static int qcow2_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Each L2 table once, however many L1 entries point at it: the scan is
 * then bounded by the file's size, not by l1_size * l2_entries. */
static int qcow2_scan_compressed(struct blk *b)
{
	struct qcow2 *q = b->priv;
	uint64_t *off, *t;
	uint32_t n = 0;
	int r = 0;

	off = malloc((q->l1_size ? q->l1_size : 1) * sizeof(*off));
	if (!off)
		return -ENOMEM;
	for (uint32_t i = 0; i < q->l1_size; i++) {
		uint64_t l2off = be64toh(q->l1[i]) & QCOW_OFFSET_MASK;

		if (l2off && !qcow2_off_ok(q, l2off)) {
			r = error_errno(-EINVAL, "blk: '%s': qcow2 l1 table is corrupt", b->path);
			goto out;
		}
		if (l2off)
			off[n++] = l2off;
	}
	qsort(off, n, sizeof(*off), qcow2_cmp_u64);
	for (uint32_t i = 0; i < n; i++) {
		if (i && off[i] == off[i - 1])
			continue;
		if ((r = qcow2_l2_get(b, off[i], &t)))
			goto out;
		for (uint64_t j = 0; j < q->l2_entries; j++)
			if (be64toh(t[j]) & QCOW_OFLAG_COMPRESSED) {
				r = qcow2_refuse(b, "compressed cluster");
				goto out;
			}
	}
out:
	free(off);
	return r;
}

int blk_qcow2_init(struct blk *b)
{
	struct qcow2_header h = {0};
	struct qcow2 *q;
	char name[1024], fmt[32];
	struct stat st;
	int r;

	if (fstat(b->fd, &st))
		return -errno;
	for (unsigned int i = 0; i < qcow2_chain_n; i++)
		if (qcow2_chain[i].dev == st.st_dev && qcow2_chain[i].ino == st.st_ino)
			return error_errno(-ELOOP, "blk: '%s': qcow2 backing file loop", b->path);
	r = blk_fd_pread(b, b->fd, &h, sizeof(h), 0);
	if (!r)
		r = qcow2_check_header(b, &h);
	if (r)
		return r;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	b->priv = q;
	b->ops = &qcow2_ops;
	b->format = "qcow2";
	b->size = h.size;
	q->cluster_bits = h.cluster_bits;
	q->cluster_size = 1ull << h.cluster_bits;
	q->l2_entries = q->cluster_size / 8;
	q->file_end = ((uint64_t)st.st_size + q->cluster_size - 1) & ~(q->cluster_size - 1);
	q->zero = calloc(1, q->cluster_size);
	for (unsigned int i = 0; q->zero && i < QCOW_L2_CACHE; i++)
		if (posix_memalign((void **)&q->l2[i].t, 4096, q->cluster_size))
			q->l2[i].t = NULL;
	for (unsigned int i = 0; i < QCOW_L2_CACHE; i++)
		if (!q->zero || !q->l2[i].t)
			r = -ENOMEM;
	if (!r)
		r = qcow2_load_tables(b, &h);
	if (!r)
		r = qcow2_scan_compressed(b);
	if (!r)
		r = qcow2_backing_info(b, &h, name, sizeof(name), fmt, sizeof(fmt));
	if (!r)
		r = qcow2_open_backing(b, name, fmt);
	if (r) {
		qcow2_close(b);
		return r;
	}
	q->writable_meta = !b->read_only && !h.nb_snapshots && h.refcount_order == 4;
	if (!b->read_only && !q->writable_meta) {
		qcow2_close(b);
		return qcow2_refuse(b, h.nb_snapshots
					   ? "writing to an image with internal snapshots"
					   : "writing with refcount width other than 16");
	}
	return 0;
}
