// SPDX-License-Identifier: MIT
/*
 * image_layer.c - one file out of a container image's layers
 * (image_layer.h): whiteouts, the /disk listing, links, and the copy into
 * a fresh file; the layers are read through image_stream.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/image_layer.h"
#include "vmm/disk/image_stream.h"
#include "vmm/disk/tar.h"
#include "vmm/util/log.h"

#define COPY_BUF     (1u << 20)
#define HOLE_BLOCK   4096
#define DISK_DIR     "disk"
#define MAX_CHILDREN 4096 /* entries of disk/ in all layers */

static bool all_zero(const uint8_t *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/* The current entry's data into out, runs of zero blocks left as holes. */
static int copy_data(struct tar *t, int out)
{
	uint8_t *buf = malloc(COPY_BUF);
	uint64_t off = 0, size = t->e.size;
	int r = buf && !ftruncate(out, 0) ? 0 : buf ? -errno : -ENOMEM;

	while (!r && off < size) {
		size_t n = 0, i = 0;
		ssize_t got = 0;

		while (n < COPY_BUF && (got = tar_read(t, buf + n, COPY_BUF - n)) > 0)
			n += (size_t)got;
		if (got < 0 || !n) {
			r = got < 0 ? (int)got : -EIO;
			break;
		}
		while (!r && i < n) {
			size_t b = n - i < HOLE_BLOCK ? n - i : HOLE_BLOCK, j = i;

			if (all_zero(buf + i, b)) {
				i += b;
				continue;
			}
			while (j < n && !all_zero(buf + j, n - j < HOLE_BLOCK ? n - j : HOLE_BLOCK))
				j += n - j < HOLE_BLOCK ? n - j : HOLE_BLOCK;
			for (size_t w = i; !r && w < j;) {
				ssize_t k = pwrite(out, buf + w, j - w, (off_t)(off + w));

				r = k < 0 ? -errno : !k ? -EIO : 0;
				w += k > 0 ? (size_t)k : 0;
			}
			i = j;
		}
		off += n;
	}
	if (!r && ftruncate(out, (off_t)size))
		r = -errno;
	free(buf);
	return r;
}

/* Whether directory a lies above path b ("" is the root). */
static bool path_above(const char *a, const char *b)
{
	size_t l = strlen(a);

	return !l ? *b != 0 : !strncmp(a, b, l) && b[l] == '/';
}

/* Whether entry name is a whiteout that hides path p in lower layers. */
static bool whiteout_hides(const char *name, const char *p)
{
	const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
	size_t dl = slash ? (size_t)(slash - name) : 0;
	char *target;
	bool hides;

	if (strncmp(base, ".wh.", 4))
		return false;
	if (!strcmp(base, ".wh..wh..opq")) /* everything under its directory */
		return !dl ? *p != 0 : !strncmp(name, p, dl) && p[dl] == '/';
	if (asprintf(&target, "%.*s%s%s", (int)dl, name, dl ? "/" : "", base + 4) < 0)
		return true; /* cannot tell: treat as hidden */
	hides = !strcmp(target, p) || path_above(target, p);
	free(target);
	return hides;
}

/* What one layer says about path p. */
struct hit {
	bool found, copied, hidden;
	enum tar_type type;
	char *link;    /* the hard link's target when type is TAR_HARDLINK */
	char *symlink; /* a symbolic link on the way to p */
};

static void hit_release(struct hit *h)
{
	free(h->link);
	free(h->symlink);
	memset(h, 0, sizeof(*h));
}

/* Read a whole layer for p; the last regular entry at p is copied into
 * out (when out >= 0). 0 or the tar error. */
static int layer_scan(struct image_stream *s, const char *p, int out, struct hit *h)
{
	int r;

	while ((r = tar_next(&s->tar)) == 1) {
		const struct tar_entry *e = &s->tar.e;

		if (!strcmp(e->name, p)) {
			h->found = true;
			h->copied = false;
			h->type = e->type;
			free(h->link);
			h->link = e->link && e->type == TAR_HARDLINK ? strdup(e->link) : NULL;
			if (e->type == TAR_HARDLINK && !h->link)
				return -ENOMEM;
			if (e->type == TAR_REG && out >= 0) {
				if ((r = copy_data(&s->tar, out)))
					return r;
				h->copied = true;
			}
		} else if (path_above(e->name, p)) {
			if (e->type == TAR_SYMLINK && !h->symlink &&
			    !(h->symlink = strdup(e->name)))
				return -ENOMEM;
			if (e->type != TAR_DIR && e->type != TAR_SYMLINK)
				h->hidden = true; /* a file where a directory was */
		} else if (whiteout_hides(e->name, p)) {
			h->hidden = true;
		}
	}
	return r;
}

/* Scan layer i for p (into out); 0 or -errno, the error printed. */
static int scan_one(const struct image_layer *l, unsigned int i, const char *p, int out,
		    struct hit *h, const char *what)
{
	struct image_stream s;
	int r = image_stream_open(&s, &l[i], what);

	if (r)
		return r;
	r = layer_scan(&s, p, out, h);
	if (r)
		r = image_stream_error(&s, r, i, what);
	image_stream_close(&s);
	return r;
}

static const char *type_name(enum tar_type t)
{
	static const char *const names[] = {
	    [TAR_REG] = "a regular file",
	    [TAR_HARDLINK] = "a hard link",
	    [TAR_SYMLINK] = "a symbolic link",
	    [TAR_CHR] = "a character device",
	    [TAR_BLK] = "a block device",
	    [TAR_DIR] = "a directory",
	    [TAR_FIFO] = "a FIFO",
	    [TAR_OTHER] = "a sparse or special entry",
	};

	return names[t];
}

/* The entry found at p in layer i: copied, or a hard link followed. */
static int take_hit(const struct image_layer *l, unsigned int i, const char *p, struct hit *h,
		    int out, const char *what)
{
	struct hit t = {0};
	int r;

	if (h->type == TAR_REG)
		return h->copied ? 0 : -EIO;
	if (h->type != TAR_HARDLINK) {
		error("%s: '/%s' is %s, not a regular file: refused", what, p, type_name(h->type));
		return h->type == TAR_SYMLINK ? -ELOOP : -EINVAL;
	}
	r = scan_one(l, i, h->link, out, &t, what);
	if (!r && (!t.found || t.type != TAR_REG || t.symlink)) {
		error("%s: '/%s' is a hard link to '/%s', %s in its layer: refused", what, p,
		      h->link, t.found ? type_name(t.type) : "not a file");
		r = -EINVAL;
	}
	hit_release(&t);
	return r;
}

/* containerDisk.path: the topmost layer with p, unless hidden. */
static int extract_path(const struct image_layer *l, unsigned int n, const char *p, int out,
			const char *what)
{
	int r = -ENOENT;

	for (unsigned int i = n; i-- > 0 && r == -ENOENT;) {
		struct hit h = {0};

		if ((r = scan_one(l, i, p, out, &h, what))) {
			hit_release(&h);
			return r;
		}
		if (h.symlink) {
			error("%s: '/%s' is a symbolic link on the way to '/%s': refused", what,
			      h.symlink, p);
			r = -ELOOP;
		} else if (h.found) {
			r = take_hit(l, i, p, &h, out, what);
		} else {
			r = h.hidden ? -ENODATA : -ENOENT;
		}
		hit_release(&h);
	}
	if (r == -ENOENT || r == -ENODATA) {
		error("%s: no regular file at containerDisk.path '/%s'", what, p);
		r = -ENOENT;
	}
	return r;
}

/* The entries of disk/ as the layers down to the current one show them. */
struct child {
	char *name;
	unsigned int layer;
	enum tar_type type;
	bool deleted;
};

struct listing {
	struct child c[MAX_CHILDREN];
	unsigned int n;
	/* the first regular file met is copied into out on the way (and
	 * again if its layer has it again): one pass when it is the disk */
	int out;
	const struct child *copied;
	bool copy_ok;
};

static struct child *child_find(struct listing *ls, const char *name, size_t len)
{
	for (unsigned int i = 0; i < ls->n; i++)
		if (strlen(ls->c[i].name) == len && !strncmp(ls->c[i].name, name, len))
			return &ls->c[i];
	return NULL;
}

/* Record name for layer: 1 when it now stands for this layer's entry,
 * 0 when a higher layer decided it (or it is a whiteout), -errno. */
static int child_add(struct listing *ls, const char *name, size_t len, unsigned int layer,
		     enum tar_type type, bool whiteout, const struct child **rec)
{
	struct child *c = child_find(ls, name, len);

	if (c) {
		/* decided by a higher layer; else the entry of this layer
		 * wins over a whiteout of it in the same layer */
		if (c->layer != layer || whiteout)
			return 0;
		c->deleted = false;
		c->type = type;
		*rec = c;
		return 1;
	}
	if (ls->n == MAX_CHILDREN)
		return -E2BIG;
	c = &ls->c[ls->n];
	*c = (struct child){.layer = layer, .type = type, .deleted = whiteout};
	if (!(c->name = strndup(name, len)))
		return -ENOMEM;
	ls->n++;
	*rec = c;
	return !whiteout;
}

/* One entry of layer i for the listing of disk/; *hide when it hides
 * disk/ of the lower layers. */
static int list_entry(struct listing *ls, struct tar *t, unsigned int i, bool *hide, char **symlink)
{
	const struct tar_entry *e = &t->e;
	const struct child *c = NULL;
	const char *rest;
	size_t cl;
	int r;

	if (!strcmp(e->name, DISK_DIR)) {
		if (e->type == TAR_SYMLINK && !*symlink && !(*symlink = strdup(e->name)))
			return -ENOMEM;
		*hide |= e->type != TAR_DIR;
		return 0;
	}
	if (strncmp(e->name, DISK_DIR "/", sizeof(DISK_DIR))) {
		*hide |= whiteout_hides(e->name, DISK_DIR);
		return 0;
	}
	rest = e->name + sizeof(DISK_DIR);
	cl = strcspn(rest, "/");
	if (!strcmp(rest, ".wh..wh..opq")) {
		*hide = true;
		return 0;
	}
	if (!strncmp(rest, ".wh.", 4)) { /* deletes in lower layers only */
		r = rest[cl] || cl == 4 ? 0
					: child_add(ls, rest + 4, cl - 4, i, TAR_OTHER, true, &c);
		return r < 0 ? r : 0;
	}
	r = child_add(ls, rest, cl, i, rest[cl] ? TAR_DIR : e->type, false, &c);
	if (r == 1 && e->type == TAR_REG && !rest[cl] && rest[0] != '.' &&
	    (!ls->copied || ls->copied == c)) {
		ls->copied = c;
		ls->copy_ok = false;
		if ((r = copy_data(t, ls->out)))
			return r;
		ls->copy_ok = true;
	}
	return r < 0 ? r : 0;
}

static void listing_release(struct listing *ls)
{
	for (unsigned int i = 0; i < ls->n; i++)
		free(ls->c[i].name);
	free(ls);
}

static int list_layers(const struct image_layer *l, unsigned int n, struct listing *ls,
		       const char *what)
{
	int r = 0;

	for (unsigned int i = n; i-- > 0;) {
		struct image_stream s;
		char *symlink = NULL;
		bool hide = false;

		if ((r = image_stream_open(&s, &l[i], what)))
			return r;
		while ((r = tar_next(&s.tar)) == 1)
			if ((r = list_entry(ls, &s.tar, i, &hide, &symlink)))
				break;
		if (r == -E2BIG)
			r = error_errno(r, "%s: more than %u entries in /disk", what, MAX_CHILDREN);
		else if (r)
			r = image_stream_error(&s, r, i, what);
		image_stream_close(&s);
		if (!r && symlink) {
			error("%s: '/%s' is a symbolic link: refused", what, symlink);
			r = -ELOOP;
		}
		free(symlink);
		if (r || hide)
			break;
	}
	return r;
}

/* KubeVirt's default: the only file in /disk. */
static int extract_default(const struct image_layer *l, unsigned int n, int out, const char *what)
{
	struct listing *ls = calloc(1, sizeof(*ls));
	struct child *only = NULL;
	unsigned int found = 0;
	char *p = NULL;
	int r = -ENOMEM;

	if (ls) {
		ls->out = out;
		r = list_layers(l, n, ls, what);
	}

	for (unsigned int i = 0; !r && ls && i < ls->n; i++)
		if (!ls->c[i].deleted && ls->c[i].name[0] != '.' && !found++)
			only = &ls->c[i];
	if (!r && found != 1) {
		error("%s: %s (KubeVirt takes containerDisk.path, else the only file in /disk)",
		      what, found ? "more than one file in /disk" : "no disk file in /disk");
		r = -ENOENT;
	}
	if (!r && asprintf(&p, DISK_DIR "/%s", only->name) < 0)
		r = -ENOMEM;
	if (!r && only->type != TAR_REG && only->type != TAR_HARDLINK) {
		error("%s: '/%s' is %s, not a regular file: refused", what, p,
		      type_name(only->type));
		r = only->type == TAR_SYMLINK ? -ELOOP : -EINVAL;
	}
	if (!r && !(ls->copied == only && only->type == TAR_REG && ls->copy_ok)) {
		struct hit h = {0}; /* not the file copied on the way: read its layer again */

		r = scan_one(l, only->layer, p, out, &h, what);
		if (!r && !h.found)
			r = -EIO;
		if (!r)
			r = take_hit(l, only->layer, p, &h, out, what);
		hit_release(&h);
	}
	free(p);
	if (ls)
		listing_release(ls);
	return r;
}

int image_layer_extract(const struct image_layer *l, unsigned int n, const char *path, int out,
			const char *what)
{
	return path ? extract_path(l, n, path, out, what) : extract_default(l, n, out, what);
}
