// SPDX-License-Identifier: MIT
/*
 * image_stream.c - an image layer as a tar stream, decompressed by an
 * unprivileged child with a fixed argv (image_stream.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/disk/image_stream.h"
#include "vmm/util/log.h"

#define FEED_BUF 65536

extern char **environ;

static int stream_feed(struct image_stream *s)
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
static int stream_reap(struct image_stream *s)
{
	int st;

	while (waitpid(s->pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	s->pid = 0;
	s->failed = !WIFEXITED(st) || WEXITSTATUS(st);
	s->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return s->failed ? -EIO : 0;
}

static ssize_t stream_read(void *ctx, void *buf, size_t n)
{
	struct image_stream *s = ctx;

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

/* The tool's file on $PATH, malloc'ed; NULL when there is none. */
static char *tool_path(const char *tool)
{
	const char *path = getenv("PATH");
	char *p;

	for (const char *d = path && *path ? path : "/usr/bin:/bin"; *d;) {
		size_t l = strcspn(d, ":");
		struct stat st;

		if (l && asprintf(&p, "%.*s/%s", (int)l, d, tool) >= 0) {
			if (!stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK))
				return p;
			free(p);
		}
		d += l + (d[l] == ':');
	}
	return NULL;
}

/*
 * The decompressor's side of the fork: stdin and stdout are the socket
 * and the pipe, nothing else is open (O_CLOEXEC); as root it gives up
 * root (uid and gid 65534, no groups) and may gain nothing by exec: a
 * flaw in the decompressor that an image reaches leaves it no privilege.
 * Only async-signal-safe calls: exit 126 when a step fails, 127 when the
 * exec does.
 */
static void decompressor_child(const char *path, char *const argv[], int in, int out)
{
	const long nobody = 65534;

	if (dup2(in, 0) < 0 || dup2(out, 1) < 0)
		_exit(126);
	if (geteuid() == 0 &&
	    (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, nobody, nobody, nobody) ||
	     syscall(SYS_setresuid, nobody, nobody, nobody)))
		_exit(126);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(126);
	execve(path, argv, environ);
	_exit(127);
}

static int stream_spawn(struct image_stream *s, const char *what)
{
	char *argv[] = {(char *)s->tool, s->tool[0] == 'g' ? "-dc" : "-dcq", NULL};
	char *path = tool_path(s->tool);
	int sv[2] = {-1, -1}, pp[2] = {-1, -1}, r = 0;

	if (!path)
		r = error_errno(-ENOENT, "%s: a layer is %s-compressed, and %s is not installed",
				what, s->tool, s->tool);
	else if (!(s->buf = malloc(FEED_BUF)) ||
		 socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe2(pp, O_CLOEXEC))
		r = s->buf ? -errno : -ENOMEM;
	else if ((s->pid = fork()) < 0)
		r = -errno;
	else if (!s->pid)
		decompressor_child(path, argv, sv[1], pp[1]);
	if (r) {
		s->pid = 0;
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
	free(path);
	return r;
}

void image_stream_close(struct image_stream *s)
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

int image_stream_open(struct image_stream *s, const struct image_layer *l, const char *what)
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
		image_stream_close(s);
	return r;
}

/* A layer ended in error: say why. */
int image_stream_error(struct image_stream *s, int r, unsigned int layer, const char *what)
{
	if (s->failed)
		return error_errno(-EIO, "%s: layer %u: %s %s", what, layer + 1, s->tool,
				   s->status == 126   ? "could not be started as uid 65534"
				   : s->status == 127 ? "could not be run"
						      : "could not decompress it");
	return error_errno(r, "%s: layer %u: %s", what, layer + 1,
			   s->tar.msg[0] ? s->tar.msg : "unreadable");
}
