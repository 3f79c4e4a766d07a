// SPDX-License-Identifier: MIT
/*
 * tar.c - a streaming reader of untrusted tar archives (tar.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/tar.h"

#define TAR_SIZE_MAX (1ull << 62)
#define TAR_META_MAX 64 /* metadata headers before one entry */
#define TAR_SKIP_BUF 65536
#define GNU_EXTENDED 482 /* old GNU sparse: "more sparse blocks follow" */
#define GNU_EXT_MORE 504 /* the same flag in an extension block */

/* The fields of a ustar header that are read. */
struct tar_hdr {
	char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8];
	char typeflag, linkname[100], magic[6], version[2], uname[32], gname[32];
	char devmajor[8], devminor[8], prefix[155], pad[12];
};
_Static_assert(sizeof(struct tar_hdr) == TAR_BLOCK, "ustar header");

/* What metadata headers said about the next entry. */
struct tar_meta {
	char *name, *link; /* GNU 'L' / 'K' */
	char *pax_path, *pax_link;
	uint64_t pax_size;
	bool has_pax_size, sparse;
};

static int tar_fail(struct tar *t, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int tar_fail(struct tar *t, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	return err;
}

static void meta_release(struct tar_meta *m)
{
	free(m->name);
	free(m->link);
	free(m->pax_path);
	free(m->pax_link);
	memset(m, 0, sizeof(*m));
}

static void entry_release(struct tar_entry *e)
{
	free(e->name);
	free(e->link);
	memset(e, 0, sizeof(*e));
}

void tar_init(struct tar *t, const struct tar_src *src)
{
	memset(t, 0, sizeof(*t));
	t->src = *src;
}

void tar_release(struct tar *t)
{
	entry_release(&t->e);
}

/* Exactly n bytes, or fewer only when the input ends: the count, -errno. */
static ssize_t tar_fill(struct tar *t, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = t->src.read(t->src.ctx, (char *)buf + got, n - got);

		if (r < 0)
			return tar_fail(t, (int)r, "read: %s", strerror((int)-r));
		if (r == 0)
			break;
		got += (size_t)r;
	}
	t->pos += got;
	return (ssize_t)got;
}

/* Move n bytes on; -EIO when the input ends first. */
static int tar_skip(struct tar *t, uint64_t n)
{
	char *buf;
	int r = 0;

	if (!n)
		return 0;
	if (t->src.skip) {
		r = t->src.skip(t->src.ctx, n);
		if (!r)
			t->pos += n;
		return r ? tar_fail(t, -EIO, "truncated at byte %llu", (unsigned long long)t->pos)
			 : 0;
	}
	if (!(buf = malloc(TAR_SKIP_BUF)))
		return -ENOMEM;
	while (!r && n) {
		size_t c = n < TAR_SKIP_BUF ? (size_t)n : TAR_SKIP_BUF;
		ssize_t got = tar_fill(t, buf, c);

		if (got < 0)
			r = (int)got;
		else if ((size_t)got < c)
			r = tar_fail(t, -EIO, "truncated at byte %llu", (unsigned long long)t->pos);
		n -= c;
	}
	free(buf);
	return r;
}

/* A numeric field: octal (spaces or NULs around it) or base-256. */
static int tar_num(const char *f, size_t len, uint64_t max, uint64_t *out)
{
	const unsigned char *p = (const unsigned char *)f;
	uint64_t v = 0;
	size_t i = 0;

	if (p[0] & 0x80) {
		if (p[0] != 0x80) /* negative, or beyond 64 bits */
			return -EINVAL;
		for (i = 1; i < len; i++) {
			if (v >> 56)
				return -EINVAL;
			v = v << 8 | p[i];
		}
	} else {
		while (i < len && p[i] == ' ')
			i++;
		for (; i < len && p[i] >= '0' && p[i] <= '7'; i++) {
			if (v >> 61)
				return -EINVAL;
			v = v * 8 + (p[i] - '0');
		}
		for (; i < len; i++)
			if (p[i] != ' ' && p[i])
				return -EINVAL;
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The stored checksum matches the unsigned (or, as old tars wrote it,
 * signed) sum of the header with the checksum field as spaces. */
static bool tar_checksum_ok(const uint8_t *b)
{
	const struct tar_hdr *h = (const void *)b;
	uint64_t want;
	long us = 0, ss = 0;

	if (tar_num(h->chksum, sizeof(h->chksum), 0777777, &want))
		return false;
	for (size_t i = 0; i < TAR_BLOCK; i++) {
		bool in = i >= offsetof(struct tar_hdr, chksum) &&
			  i < offsetof(struct tar_hdr, chksum) + sizeof(h->chksum);

		us += in ? ' ' : b[i];
		ss += in ? ' ' : (signed char)b[i];
	}
	return (long)want == us || (long)want == ss;
}

/* Normalise name in place; -EINVAL when it is absolute or has "..". */
int tar_name_norm(char *name)
{
	char *r = name, *w = name;

	if (*name == '/')
		return -EINVAL;
	while (*r) {
		size_t l = strcspn(r, "/");

		if (l == 2 && r[0] == '.' && r[1] == '.')
			return -EINVAL;
		if (l && !(l == 1 && r[0] == '.')) {
			if (w != name)
				*w++ = '/';
			memmove(w, r, l);
			w += l;
		}
		r += l;
		r += *r == '/';
	}
	*w = 0;
	return 0;
}

/* A metadata record's data (GNU long name, pax records), NUL-terminated. */
static int tar_meta_data(struct tar *t, uint64_t size, uint64_t max, char **out)
{
	char *p;
	ssize_t got;

	if (size > max)
		return tar_fail(t, -EINVAL, "metadata record of %llu bytes",
				(unsigned long long)size);
	if (!(p = malloc(size + 1)))
		return -ENOMEM;
	got = tar_fill(t, p, size);
	if (got >= 0 && (uint64_t)got < size)
		got = tar_fail(t, -EIO, "truncated in a metadata record");
	if (got < 0) {
		free(p);
		return (int)got;
	}
	p[size] = 0;
	free(*out);
	*out = p;
	return tar_skip(t, -size % TAR_BLOCK);
}

static int pax_str(struct tar *t, char **dst, const char *v, size_t l)
{
	if (memchr(v, 0, l) || l > TAR_NAME_MAX)
		return tar_fail(t, -EINVAL, "pax name with a NUL or too long");
	free(*dst);
	*dst = strndup(v, l);
	return *dst ? 0 : -ENOMEM;
}

/* One pax record "LEN KEY=VALUE\n" at p (n bytes left): its length. */
static int pax_record(struct tar *t, struct tar_meta *m, const char *p, size_t n, size_t *used)
{
	size_t len = 0, i = 0, klen;
	const char *key, *eq;
	int r = 0;

	for (; i < n && i < 8 && p[i] >= '0' && p[i] <= '9'; i++)
		len = len * 10 + (size_t)(p[i] - '0');
	if (!i || i >= n || p[i] != ' ' || len <= i + 1 || len > n || p[len - 1] != '\n')
		return tar_fail(t, -EINVAL, "malformed pax record");
	key = p + i + 1;
	eq = memchr(key, '=', len - i - 2);
	if (!eq)
		return tar_fail(t, -EINVAL, "malformed pax record");
	klen = (size_t)(eq - key);
	const char *v = eq + 1;
	size_t vlen = (size_t)(p + len - 1 - v);

	if (klen == 4 && !memcmp(key, "path", 4)) {
		r = pax_str(t, &m->pax_path, v, vlen);
	} else if (klen == 8 && !memcmp(key, "linkpath", 8)) {
		r = pax_str(t, &m->pax_link, v, vlen);
	} else if (klen == 4 && !memcmp(key, "size", 4)) {
		uint64_t s = 0;

		if (!vlen || vlen > 19 || strspn(v, "0123456789") < vlen)
			return tar_fail(t, -EINVAL, "malformed pax size");
		for (size_t k = 0; k < vlen; k++)
			s = s * 10 + (uint64_t)(v[k] - '0');
		if (s > TAR_SIZE_MAX)
			return tar_fail(t, -EINVAL, "pax size out of range");
		m->pax_size = s;
		m->has_pax_size = true;
	} else if (klen > 11 && !memcmp(key, "GNU.sparse.", 11)) {
		m->sparse = true;
	}
	*used = len;
	return r;
}

static int tar_pax(struct tar *t, struct tar_meta *m, uint64_t size)
{
	char *p = NULL;
	size_t off = 0, used = 0;
	int r = tar_meta_data(t, size, TAR_PAX_MAX, &p);

	while (!r && off < size && (r = pax_record(t, m, p + off, size - off, &used)) == 0)
		off += used;
	free(p);
	return r;
}

/* Old GNU sparse: extension blocks follow the header while flagged. */
static int tar_gnu_sparse(struct tar *t, const uint8_t *hdr)
{
	uint8_t b[TAR_BLOCK];
	bool more = hdr[GNU_EXTENDED];

	for (unsigned int n = 0; more; n++) {
		if (n > 4096 || tar_fill(t, b, sizeof(b)) != sizeof(b))
			return tar_fail(t, -EIO, "truncated GNU sparse map");
		more = b[GNU_EXT_MORE];
	}
	return 0;
}

static enum tar_type tar_type_of(char f)
{
	switch (f) {
	case '0':
	case '\0':
	case '7':
		return TAR_REG;
	case '1':
		return TAR_HARDLINK;
	case '2':
		return TAR_SYMLINK;
	case '3':
		return TAR_CHR;
	case '4':
		return TAR_BLK;
	case '5':
	case 'D':
		return TAR_DIR;
	case '6':
		return TAR_FIFO;
	default:
		return TAR_OTHER;
	}
}

/* The entry of header h and the metadata before it, into t->e. */
static int tar_entry_set(struct tar *t, const struct tar_hdr *h, struct tar_meta *m, uint64_t size)
{
	struct tar_entry *e = &t->e;
	bool posix = !memcmp(h->magic, "ustar\0", 6);
	char **name = m->pax_path ? &m->pax_path : m->name ? &m->name : NULL;
	char **link = m->pax_link ? &m->pax_link : m->link ? &m->link : NULL;

	e->type = m->sparse ? TAR_OTHER : tar_type_of(h->typeflag);
	if (name) {
		e->name = *name;
		*name = NULL;
	} else if (posix && h->prefix[0]) {
		if (asprintf(&e->name, "%.*s/%.*s", (int)strnlen(h->prefix, sizeof(h->prefix)),
			     h->prefix, (int)strnlen(h->name, sizeof(h->name)), h->name) < 0)
			e->name = NULL;
	} else {
		e->name = strndup(h->name, sizeof(h->name));
	}
	if (!e->name)
		return -ENOMEM;
	if (tar_name_norm(e->name))
		return tar_fail(t, -EINVAL, "entry '%.100s' leaves the archive's root", e->name);
	if (e->type == TAR_HARDLINK || e->type == TAR_SYMLINK) {
		if (link) {
			e->link = *link;
			*link = NULL;
		} else {
			e->link = strndup(h->linkname, sizeof(h->linkname));
		}
		if (!e->link)
			return -ENOMEM;
		if (e->type == TAR_HARDLINK && (tar_name_norm(e->link) || !*e->link))
			return tar_fail(t, -EINVAL,
					"hard link '%.100s' to '%.100s' leaves the root", e->name,
					e->link);
	}
	/* link, device, directory and FIFO headers carry no data (as Go's
	 * archive/tar and Python's tarfile read them) */
	e->size = e->type == TAR_REG || e->type == TAR_OTHER ? size : 0;
	e->offset = t->pos;
	t->left = e->size;
	t->pad = -e->size % TAR_BLOCK;
	return 1;
}

/* The next header block: 1 read, 0 clean end of the input. */
static int tar_header(struct tar *t, uint8_t *b, bool meta)
{
	ssize_t got = tar_fill(t, b, TAR_BLOCK);
	static const uint8_t zero[TAR_BLOCK];

	if (got < 0)
		return (int)got;
	if (got == 0 && !meta)
		return 0;
	if (got < TAR_BLOCK)
		return tar_fail(t, -EIO, "truncated header at byte %llu",
				(unsigned long long)t->pos);
	if (!memcmp(b, zero, TAR_BLOCK))
		return meta ? tar_fail(t, -EINVAL, "metadata header with no entry") : 0;
	if (!tar_checksum_ok(b))
		return tar_fail(t, -EINVAL, "bad header checksum at byte %llu",
				(unsigned long long)(t->pos - TAR_BLOCK));
	return 1;
}

int tar_next(struct tar *t)
{
	union {
		uint8_t b[TAR_BLOCK];
		struct tar_hdr h;
	} u;
	struct tar_meta m = {0};
	uint64_t size;
	int r;

	entry_release(&t->e);
	if (t->end)
		return 0;
	if ((r = tar_skip(t, t->left + t->pad))) {
		t->end = true; /* where the next header is is unknown */
		return r;
	}
	t->left = t->pad = 0;
	for (unsigned int n = 0;; n++) {
		if (n > TAR_META_MAX) {
			r = tar_fail(t, -EINVAL, "too many metadata headers");
			break;
		}
		if ((r = tar_header(t, u.b, n > 0)) <= 0) {
			t->end = !r;
			break;
		}
		r = 0;
		if (tar_num(u.h.size, sizeof(u.h.size), TAR_SIZE_MAX, &size)) {
			r = tar_fail(t, -EINVAL, "bad size field");
			break;
		}
		if (u.h.typeflag == 'L' || u.h.typeflag == 'K')
			r = tar_meta_data(t, size, TAR_NAME_MAX,
					  u.h.typeflag == 'L' ? &m.name : &m.link);
		else if (u.h.typeflag == 'x')
			r = tar_pax(t, &m, size);
		else if (u.h.typeflag == 'g')
			r = tar_skip(t, size + (-size % TAR_BLOCK));
		else if (u.h.typeflag == 'S' && (r = tar_gnu_sparse(t, u.b)) == 0)
			m.sparse = true;
		if (r)
			break;
		if (u.h.typeflag == 'L' || u.h.typeflag == 'K' || u.h.typeflag == 'x' ||
		    u.h.typeflag == 'g')
			continue;
		r = tar_entry_set(t, &u.h, &m, m.has_pax_size ? m.pax_size : size);
		break;
	}
	meta_release(&m);
	if (r < 0) {
		entry_release(&t->e);
		t->end = true;
	}
	return r;
}

ssize_t tar_read(struct tar *t, void *buf, size_t n)
{
	ssize_t got;

	if (n > t->left)
		n = (size_t)t->left;
	if (!n)
		return 0;
	got = tar_fill(t, buf, n);
	if (got < 0)
		return got;
	if (!got)
		return tar_fail(t, -EIO, "truncated in the data of '%.100s'", t->e.name);
	t->left -= (uint64_t)got;
	return got;
}

static ssize_t fd_read(void *ctx, void *buf, size_t n)
{
	struct tar_fd_src *s = ctx;
	ssize_t r;

	if (n > s->len - s->pos)
		n = (size_t)(s->len - s->pos);
	if (!n)
		return 0;
	do
		r = pread(s->fd, buf, n, (off_t)(s->off + s->pos));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	s->pos += (uint64_t)r;
	return r;
}

static int fd_skip(void *ctx, uint64_t n)
{
	struct tar_fd_src *s = ctx;

	if (n > s->len - s->pos) {
		s->pos = s->len;
		return -EIO;
	}
	s->pos += n;
	return 0;
}

void tar_src_fd(struct tar_src *src, struct tar_fd_src *ctx, int fd, uint64_t off, uint64_t len)
{
	*ctx = (struct tar_fd_src){.fd = fd, .off = off, .len = len};
	*src = (struct tar_src){.read = fd_read, .skip = fd_skip, .ctx = ctx};
}

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
	struct tar_mem_src *s = ctx;

	if (n > s->len - s->pos)
		n = s->len - s->pos;
	if (n)
		memcpy(buf, s->p + s->pos, n);
	s->pos += n;
	return (ssize_t)n;
}

static int mem_skip(void *ctx, uint64_t n)
{
	struct tar_mem_src *s = ctx;

	if (n > s->len - s->pos) {
		s->pos = s->len;
		return -EIO;
	}
	s->pos += (size_t)n;
	return 0;
}

void tar_src_mem(struct tar_src *src, struct tar_mem_src *ctx, const void *p, size_t len)
{
	*ctx = (struct tar_mem_src){.p = p, .len = len};
	*src = (struct tar_src){.read = mem_read, .skip = mem_skip, .ctx = ctx};
}
