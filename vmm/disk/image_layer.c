// SPDX-License-Identifier: MIT
/*
 * image_layer.c - one file out of a container image's layers
 * (image_layer.h): layer streams (decompressed by a child with a fixed
 * argv), whiteouts, and the copy into a fresh file.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/disk/image_layer.h"
#include "vmm/disk/tar.h"
#include "vmm/log.h"

#define FEED_BUF     65536
#define COPY_BUF     (1u << 20)
#define HOLE_BLOCK   4096
#define DISK_DIR     "disk"
#define MAX_CHILDREN 4096 /* entries of disk/ in all layers */

extern char **environ;

/* A layer as a tar stream: read directly, or through a decompressor
 * whose stdin (a socket) this process feeds from the layer's bytes. */
struct layer_stream {
	struct tar tar;
	struct tar_fd_src raw;
	const struct image_layer *l;
	const char *tool; /* the decompressor, NULL when the layer is a tar */
	pid_t pid;
	int in, out;
	uint64_t fed;
	char *buf;
	size_t buf_len, buf_pos;
	bool failed; /* the decompressor exited with an error */
};

static int stream_feed(struct layer_stream *s)
{
	ssize_t w;

	if (s->buf_pos == s->buf_len) {
		size_t c = s->l->len - s->fed < FEED_BUF ? (size_t)(s->l->len - s->fed) : FEED_BUF;
		ssize_t r;

		if (!c) {
			close(s->in); /* the decompressor sees the end */
			s->in = -1;
			return 0;
		}
		do
			r = pread(s->l->fd, s->buf, c, (off_t)(s->l->off + s->fed));
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		s->fed += (uint64_t)r;
		s->buf_len = (size_t)r;
		s->buf_pos = 0;
	}
	w = send(s->in, s->buf + s->buf_pos, s->buf_len - s->buf_pos, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w >= 0) {
		s->buf_pos += (size_t)w;
	} else if (errno == EPIPE || errno == ECONNRESET) {
		close(s->in); /* it stopped reading: its exit status tells */
		s->in = -1;
	} else if (errno != EAGAIN && errno != EINTR) {
		return -errno;
	}
	return 0;
}

/* The decompressor's output ended: 0 when it exited 0. */
static int stream_reap(struct layer_stream *s)
{
	int st;

	while (waitpid(s->pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	s->pid = 0;
	s->failed = !WIFEXITED(st) || WEXITSTATUS(st);
	return s->failed ? -EIO : 0;
}

static ssize_t stream_read(void *ctx, void *buf, size_t n)
{
	struct layer_stream *s = ctx;

	for (;;) {
		struct pollfd p[2] = {{.fd = s->out, .events = POLLIN},
				      {.fd = s->in, .events = POLLOUT}};
		ssize_t r;

		if (poll(p, s->in >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (s->in >= 0 && p[1].revents && (r = stream_feed(s)))
			return r;
		if (!p[0].revents)
			continue;
		r = read(s->out, buf, n);
		if (r > 0)
			return r;
		if (!r)
			return stream_reap(s);
		if (errno != EINTR && errno != EAGAIN)
			return -errno;
	}
}

static int stream_spawn(struct layer_stream *s, const char *what)
{
	char *argv[] = {(char *)s->tool, s->tool[0] == 'g' ? "-dc" : "-dcq", NULL};
	posix_spawn_file_actions_t fa;
	int sv[2] = {-1, -1}, pp[2] = {-1, -1}, r;

	if (!(s->buf = malloc(FEED_BUF)) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe2(pp, O_CLOEXEC)) {
		r = s->buf ? -errno : -ENOMEM;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	posix_spawn_file_actions_adddup2(&fa, pp[1], 1);
	r = -posix_spawnp(&s->pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r) {
		s->pid = 0;
		error_errno(r, "%s: a layer is %s-compressed, and %s cannot be run", what, s->tool,
			    s->tool);
		goto out;
	}
	s->in = sv[0];
	s->out = pp[0];
	sv[0] = pp[0] = -1;
out:
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (pp[i] >= 0)
			close(pp[i]);
	}
	return r;
}

static void stream_close(struct layer_stream *s)
{
	tar_release(&s->tar);
	if (s->in >= 0)
		close(s->in);
	if (s->out >= 0)
		close(s->out);
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(s->buf);
	memset(s, 0, sizeof(*s));
	s->in = s->out = -1;
}

static int stream_open(struct layer_stream *s, const struct image_layer *l, const char *what)
{
	static const uint8_t gz[] = {0x1f, 0x8b}, zst[] = {0x28, 0xb5, 0x2f, 0xfd};
	struct tar_src src;
	uint8_t m[4] = {0};
	int r = 0;

	memset(s, 0, sizeof(*s));
	s->in = s->out = -1;
	s->l = l;
	if (pread(l->fd, m, l->len < sizeof(m) ? (size_t)l->len : sizeof(m), (off_t)l->off) < 0)
		return -errno;
	if (l->len >= sizeof(gz) && !memcmp(m, gz, sizeof(gz)))
		s->tool = "gzip";
	else if (l->len >= sizeof(zst) && !memcmp(m, zst, sizeof(zst)))
		s->tool = "zstd";
	if (!s->tool) {
		tar_src_fd(&src, &s->raw, l->fd, l->off, l->len);
	} else {
		src = (struct tar_src){.read = stream_read, .ctx = s};
		r = stream_spawn(s, what);
	}
	tar_init(&s->tar, &src);
	if (r)
		stream_close(s);
	return r;
}

/* A layer ended in error: say why. */
static int stream_error(struct layer_stream *s, int r, unsigned int layer, const char *what)
{
	if (s->failed)
		return error_errno(-EIO, "%s: layer %u: %s could not decompress it", what,
				   layer + 1, s->tool);
	return error_errno(r, "%s: layer %u: %s", what, layer + 1,
			   s->tar.msg[0] ? s->tar.msg : "unreadable");
}

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
static int layer_scan(struct layer_stream *s, const char *p, int out, struct hit *h)
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
	struct layer_stream s;
	int r = stream_open(&s, &l[i], what);

	if (r)
		return r;
	r = layer_scan(&s, p, out, h);
	if (r)
		r = stream_error(&s, r, i, what);
	stream_close(&s);
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
		struct layer_stream s;
		char *symlink = NULL;
		bool hide = false;

		if ((r = stream_open(&s, &l[i], what)))
			return r;
		while ((r = tar_next(&s.tar)) == 1)
			if ((r = list_entry(ls, &s.tar, i, &hide, &symlink)))
				break;
		if (r == -E2BIG)
			r = error_errno(r, "%s: more than %u entries in /disk", what, MAX_CHILDREN);
		else if (r)
			r = stream_error(&s, r, i, what);
		stream_close(&s);
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
