/* SPDX-License-Identifier: MIT */
/*
 * console_out.c - the console's output ring, drained by the event loop
 * (console_out.h). The producer (a vCPU, or the EFI port's console op on
 * any thread) appends under the lock and kicks an eventfd when the ring
 * was empty; the loop copies a chunk out under the lock and writes it
 * unlocked. A non-blocking console fd is its own open file description
 * when it can be (stdout reopened through /proc/self/fd), so the shared
 * one, which the shell and vmlet's stderr may use, keeps its flags;
 * only a socket, which cannot be reopened, gets O_NONBLOCK set (and
 * restored at teardown).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/dev/console_out.h"
#include "vmm/util/event.h"
#include "vmm/util/log.h"

#define CONSOLE_OUT_CHUNK 16384u

struct console_out {
	struct vm *vm;
	struct event_loop *loop;
	pthread_mutex_t lock;
	int fd;	     /* the console, -1 = none */
	int kick_fd; /* eventfd: bytes were queued */
	int rot_fd;  /* PATH.1 of a capped console file, else -1 */
	bool close_fd, kick_watched, fd_watched, waiting, restore_fl;
	int saved_fl;
	uint8_t ring[CONSOLE_OUT_RING];
	size_t head, len;	   /* under lock */
	bool stalled, announce;	   /* under lock: dropping; warning not yet logged */
	uint64_t stall_dropped;	   /* under lock: dropped in this stall */
	uint64_t written, dropped; /* atomic */
	uint64_t file_size, max_bytes;
	const char *path;
};

void console_out_write(struct console_out *o, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	size_t room, tail, k, drop = 0;
	bool kick;

	if (!o || !n || (o->fd < 0 && !device_console_attached(o->vm)))
		return;
	pthread_mutex_lock(&o->lock);
	kick = !o->len;
	room = sizeof(o->ring) - o->len;
	if (n > room) {
		drop = n - room;
		n = room;
		o->stall_dropped += drop;
		if (!o->stalled) {
			o->stalled = o->announce = true;
			kick = true; /* the loop logs the warning */
		}
	}
	while (n) {
		tail = (o->head + o->len) % sizeof(o->ring);
		k = n < sizeof(o->ring) - tail ? n : sizeof(o->ring) - tail;
		memcpy(o->ring + tail, p, k);
		o->len += k;
		p += k;
		n -= k;
	}
	pthread_mutex_unlock(&o->lock);
	if (drop)
		__atomic_add_fetch(&o->dropped, drop, __ATOMIC_RELAXED);
	/* (an eventfd write fails only at its counter's limit: a kick is pending) */
	if (kick && write(o->kick_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0)
		return;
}

/* The capped file reached max_bytes: PATH.1 gets its content, PATH
 * starts again empty (both fds stay open: nothing is opened here). */
static void out_rotate(struct console_out *o)
{
	char buf[CONSOLE_OUT_CHUNK];
	off_t off = 0;
	ssize_t r;

	if (ftruncate(o->rot_fd, 0) < 0)
		goto fail;
	while ((r = pread(o->fd, buf, sizeof(buf), off)) > 0) {
		if (write(o->rot_fd, buf, (size_t)r) != r)
			goto fail;
		off += r;
	}
	if (r < 0 || ftruncate(o->fd, 0) < 0)
		goto fail;
	o->file_size = 0;
	log_info("console: %s reached %llu bytes: moved to %s.1", o->path,
		 (unsigned long long)o->max_bytes, o->path);
	return;
fail:
	log_warn("console: cannot rotate %s (%s): it is no longer capped", o->path,
		 strerror(errno));
	o->max_bytes = 0;
}

/* Write one chunk of the ring: bytes written, 0 when the ring is empty,
 * -EAGAIN when the console takes no more now, other -errno on failure. */
static ssize_t out_chunk(struct console_out *o)
{
	uint8_t buf[CONSOLE_OUT_CHUNK];
	size_t n, k;
	ssize_t w;

	pthread_mutex_lock(&o->lock);
	n = o->len < sizeof(buf) ? o->len : sizeof(buf);
	k = n < sizeof(o->ring) - o->head ? n : sizeof(o->ring) - o->head;
	memcpy(buf, o->ring + o->head, k);
	memcpy(buf + k, o->ring, n - k);
	pthread_mutex_unlock(&o->lock);
	if (!n)
		return 0;
	if (o->max_bytes && o->file_size + n > o->max_bytes && o->file_size)
		out_rotate(o);
	w = o->fd >= 0 ? write(o->fd, buf, n) : (ssize_t)n;
	if (w < 0 && errno == EINTR)
		w = 0;
	if (w < 0)
		return -errno;
	/* a control client takes what it can (non-blocking socket) */
	device_console_tee(o->vm, buf, (size_t)w);
	o->file_size += (uint64_t)w;
	__atomic_add_fetch(&o->written, (uint64_t)w, __ATOMIC_RELAXED);
	pthread_mutex_lock(&o->lock);
	o->head = (o->head + (size_t)w) % sizeof(o->ring);
	o->len -= (size_t)w;
	pthread_mutex_unlock(&o->lock);
	return w ? w : 1;
}

/* Lock not held: log a stall's start, or its end once the ring emptied. */
static void out_report(struct console_out *o, bool empty)
{
	uint64_t lost = 0;
	bool announce, ended = false;

	pthread_mutex_lock(&o->lock);
	announce = o->announce;
	o->announce = false;
	if (empty && o->stalled && !o->len) {
		o->stalled = false;
		ended = true;
		lost = o->stall_dropped;
		o->stall_dropped = 0;
	}
	pthread_mutex_unlock(&o->lock);
	if (announce)
		log_warn("console: the reader does not keep up (%u bytes waiting): guest output "
			 "is dropped until it does (counted in vmlet_console_dropped_bytes_total)",
			 CONSOLE_OUT_RING);
	if (ended)
		log_info("console: the reader caught up; %llu bytes were dropped",
			 (unsigned long long)lost);
}

static void out_drain(struct console_out *o)
{
	ssize_t r;

	while ((r = out_chunk(o)) > 0)
		;
	if (r == -EAGAIN && o->fd_watched) {
		if (!o->waiting && !event_mod(o->loop, o->fd, EPOLLOUT))
			o->waiting = true;
	} else if (o->waiting) {
		event_mod(o->loop, o->fd, 0);
		o->waiting = false;
	}
	if (r < 0 && r != -EAGAIN) {
		/* a console that fails stays failed (EPIPE: the reader left) */
		log_warn_once("console: write failed: %s; output is dropped", strerror((int)-r));
		pthread_mutex_lock(&o->lock);
		__atomic_add_fetch(&o->dropped, o->len, __ATOMIC_RELAXED);
		o->head = o->len = 0;
		pthread_mutex_unlock(&o->lock);
	}
	out_report(o, r == 0 || (r < 0 && r != -EAGAIN));
}

static void out_kicked(void *opaque, uint32_t events)
{
	struct console_out *o = opaque;
	uint64_t v;

	(void)events;
	if (read(o->kick_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_debug("console: kick read: %s", strerror(errno));
	if (!o->waiting) /* else the console's EPOLLOUT drains */
		out_drain(o);
	else
		out_report(o, false);
}

static void out_writable(void *opaque, uint32_t events)
{
	(void)events;
	out_drain(opaque);
}

/* stdout without blocking: a new open file description of the same pipe
 * or terminal; a regular file or block device as is (writes do not wait
 * for a reader); a socket (no reopening) with O_NONBLOCK set. */
static int out_open_stdout(struct console_out *o)
{
	struct stat st;
	int fd;

	if (fstat(STDOUT_FILENO, &st) < 0)
		return error_errno(-errno, "console: stdout");
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	fd = S_ISSOCK(st.st_mode)
		 ? -1
		 : open("/proc/self/fd/1", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		o->fd = fd;
		o->close_fd = true;
		return 0;
	}
	o->saved_fl = fcntl(STDOUT_FILENO, F_GETFL);
	if (o->saved_fl < 0 || fcntl(STDOUT_FILENO, F_SETFL, o->saved_fl | O_NONBLOCK) < 0)
		return error_errno(-errno, "console: cannot make stdout non-blocking");
	o->restore_fl = true;
	o->fd = STDOUT_FILENO;
	return 0;
}

static int out_open_file(struct console_out *o, const struct vm_console *c)
{
	struct stat st;
	char *rot;
	int fl;

	o->fd = open(c->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (o->fd < 0)
		return error_errno(-errno, "console: cannot open console file '%s'", c->path);
	o->close_fd = true;
	/* a FIFO or terminal given as the file must not block the loop either */
	fl = fcntl(o->fd, F_GETFL);
	if (fl < 0 || fcntl(o->fd, F_SETFL, fl | O_NONBLOCK) < 0 || fstat(o->fd, &st) < 0)
		return error_errno(-errno, "console: '%s'", c->path);
	if (!S_ISREG(st.st_mode) || c->max_bytes == VM_CONSOLE_NO_CAP)
		return 0;
	o->path = c->path;
	o->max_bytes = c->max_bytes ? c->max_bytes : VM_CONSOLE_MAX_DEFAULT;
	o->file_size = (uint64_t)st.st_size;
	rot = malloc(strlen(c->path) + 3);
	if (!rot)
		return -ENOMEM;
	strcpy(rot, c->path);
	strcat(rot, ".1");
	o->rot_fd = open(rot, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	free(rot);
	if (o->rot_fd < 0)
		return error_errno(-errno, "console: cannot open '%s.1' for rotation", c->path);
	return 0;
}

int console_out_create(const struct device_env *env, struct console_out **out)
{
	const struct vm_console *c = env->console;
	struct event_loop *loop = env->loop;
	struct console_out *o = calloc(1, sizeof(*o));
	int ret = 0;

	if (!o)
		return -ENOMEM;
	o->vm = env->vm;
	o->loop = loop;
	o->fd = o->rot_fd = -1;
	pthread_mutex_init(&o->lock, NULL);
	o->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (o->kick_fd < 0)
		ret = error_errno(-errno, "console: eventfd");
	if (!ret && c->kind == VM_CONSOLE_STDIO)
		ret = out_open_stdout(o);
	else if (!ret && c->kind == VM_CONSOLE_FILE)
		ret = out_open_file(o, c);
	if (!ret)
		ret = event_add(loop, o->kick_fd, EPOLLIN, out_kicked, o);
	o->kick_watched = !ret;
	/* watched for EPOLLOUT while it is full (epoll refuses regular files,
	 * which never are) */
	if (!ret && o->fd >= 0 && !event_add(loop, o->fd, 0, out_writable, o))
		o->fd_watched = true;
	if (ret) {
		console_out_destroy(o);
		return ret;
	}
	*out = o;
	return 0;
}

uint64_t console_out_written(const struct console_out *o)
{
	return o ? __atomic_load_n(&o->written, __ATOMIC_RELAXED) : 0;
}

uint64_t console_out_dropped(const struct console_out *o)
{
	return o ? __atomic_load_n(&o->dropped, __ATOMIC_RELAXED) : 0;
}

void console_out_destroy(struct console_out *o)
{
	if (!o)
		return;
	if (o->kick_watched) {
		event_del(o->loop, o->kick_fd);
		out_drain(o); /* what the console takes now; the rest is lost */
		__atomic_add_fetch(&o->dropped, o->len, __ATOMIC_RELAXED);
	}
	if (o->kick_fd >= 0)
		close(o->kick_fd);
	if (o->fd_watched)
		event_del(o->loop, o->fd);
	if (o->restore_fl)
		fcntl(STDOUT_FILENO, F_SETFL, o->saved_fl);
	if (o->close_fd)
		close(o->fd);
	if (o->rot_fd >= 0)
		close(o->rot_fd);
	pthread_mutex_destroy(&o->lock);
	free(o);
}
