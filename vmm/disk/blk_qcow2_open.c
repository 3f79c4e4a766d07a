// SPDX-License-Identifier: MIT
/*
 * blk_qcow2_open.c - opening a qcow2 image (blk_qcow2_init, see
 * blk_qcow2.c for what is refused): the header, the L1 and refcount
 * tables, a scan refusing compressed clusters, the backing file (a chain
 * that loops or is longer than QCOW_MAX_BACKING is refused).
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

#include "vmm/disk/blk_qcow2.h"
#include "vmm/util/log.h"

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

/* The qcow2 images of the chain this thread is opening whose backing file
 * is being opened, outermost first: a backing file among them is a loop. */
static __thread struct {
	dev_t dev;
	ino_t ino;
} qcow2_chain[QCOW_MAX_BACKING];
static __thread unsigned int qcow2_chain_n;

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

/*
 * The backing file, as blk.h's blk_where says: none at all for an image
 * opened with no_backing (a containerDisk: KubeVirt's virt-handler
 * refuses one with a backing file); else a plain name, opened beneath the
 * image's own directory, a regular file and not a symlink. Checked before
 * anything is opened.
 */
static int qcow2_open_backing(struct blk *b, const char *name, const char *fmt)
{
	struct qcow2 *q = b->priv;
	char path[PATH_MAX], dir[PATH_MAX];
	struct blk_where w = {.no_backing = false};
	struct stat st;
	int r;

	if (!name[0])
		return 0;
	if (b->no_backing)
		return error_errno(-EPERM,
				   "blk: '%s': a qcow2 image with a backing file ('%s') is refused "
				   "here (a containerDisk must stand alone, as in KubeVirt)",
				   b->path, name);
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return error_errno(-EPERM,
				   "blk: '%s': backing file '%s' refused: it must be a file in "
				   "the image's own directory, named without '/'",
				   b->path, name);
	snprintf(dir, sizeof(dir), "%s", b->path);
	w.file.root = dirname(dir); /* dir, or "." */
	snprintf(path, sizeof(path), "%s/%s", w.file.root, name);
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
	r = blk_open_at(&q->backing, path, &w, true, b->cache, fmt[0] ? fmt : NULL);
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
	q->l2_deferred = b->cache != BLK_CACHE_WRITETHROUGH;
	if (!b->read_only && !q->writable_meta) {
		qcow2_close(b);
		return qcow2_refuse(b, h.nb_snapshots
					   ? "writing to an image with internal snapshots"
					   : "writing with refcount width other than 16");
	}
	return 0;
}
