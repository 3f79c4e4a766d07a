/* SPDX-License-Identifier: MIT */
/*
 * event.c - epoll loop for the main thread (see event.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "vmm/util/event.h"

struct event_handler {
	int fd;
	event_fn fn;
	void *opaque;
	struct event_handler *next;
};

struct event_timer {
	struct event_loop *loop;
	int fd;
	event_fn fn;
	void *opaque;
};

static void event_wake_cb(void *opaque, uint32_t events)
{
	struct event_loop *l = opaque;
	uint64_t v;

	(void)events;
	if (read(l->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	l->stop = 1;
}

int event_loop_init(struct event_loop *l)
{
	int ret;

	memset(l, 0, sizeof(*l));
	l->wake_fd = -1;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		return -errno;
	l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->wake_fd < 0) {
		ret = -errno;
		goto out_close;
	}
	ret = event_add(l, l->wake_fd, EPOLLIN, event_wake_cb, l);
	if (ret)
		goto out_close;
	return 0;
out_close:
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	close(l->epfd);
	l->epfd = l->wake_fd = -1;
	return ret;
}

static void free_list(struct event_handler *h)
{
	while (h) {
		struct event_handler *next = h->next;

		free(h);
		h = next;
	}
}

void event_loop_release(struct event_loop *l)
{
	if (l->epfd < 0)
		return;
	free_list(l->handlers);
	free_list(l->dead);
	close(l->wake_fd);
	close(l->epfd);
	memset(l, 0, sizeof(*l));
	l->epfd = l->wake_fd = -1;
}

int event_add(struct event_loop *l, int fd, uint32_t events, event_fn fn, void *opaque)
{
	struct epoll_event ev = {.events = events};
	struct event_handler *h;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	*h = (struct event_handler){.fd = fd, .fn = fn, .opaque = opaque};
	ev.data.ptr = h;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int ret = -errno;

		free(h);
		return ret;
	}
	h->next = l->handlers;
	l->handlers = h;
	return 0;
}

static struct event_handler *event_find(struct event_loop *l, int fd, struct event_handler ***link)
{
	struct event_handler **pp;

	for (pp = &l->handlers; *pp; pp = &(*pp)->next)
		if ((*pp)->fd == fd) {
			if (link)
				*link = pp;
			return *pp;
		}
	return NULL;
}

int event_mod(struct event_loop *l, int fd, uint32_t events)
{
	struct event_handler *h = event_find(l, fd, NULL);
	struct epoll_event ev = {.events = events};

	if (!h)
		return -ENOENT;
	ev.data.ptr = h;
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) ? -errno : 0;
}

int event_del(struct event_loop *l, int fd)
{
	struct event_handler **link, *h = event_find(l, fd, &link);

	if (!h)
		return -ENOENT;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	*link = h->next;
	/* An event for h may still sit in the current batch: keep it until
	 * the batch is done, with fn cleared so it is not called. */
	h->fn = NULL;
	h->next = l->dead;
	l->dead = h;
	return 0;
}

int event_loop_run(struct event_loop *l)
{
	struct epoll_event evs[16];
	int n, i;

	l->stop = 0;
	while (!l->stop) {
		n = epoll_wait(l->epfd, evs, 16, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < n; i++) {
			struct event_handler *h = evs[i].data.ptr;

			if (h->fn)
				h->fn(h->opaque, evs[i].events);
		}
		free_list(l->dead);
		l->dead = NULL;
	}
	return 0;
}

void event_loop_stop(struct event_loop *l)
{
	l->stop = 1;
}

void event_loop_wake(struct event_loop *l)
{
	uint64_t one = 1;
	ssize_t r = write(l->wake_fd, &one, sizeof(one));

	(void)r; /* EAGAIN: a wake-up is already pending */
}

static void event_timer_cb(void *opaque, uint32_t events)
{
	struct event_timer *t = opaque;
	uint64_t expirations;

	if (read(t->fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	t->fn(t->opaque, events);
}

int event_timer_create(struct event_loop *l, event_fn fn, void *opaque, struct event_timer **out)
{
	struct event_timer *t;
	int ret;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct event_timer){.loop = l, .fn = fn, .opaque = opaque};
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (t->fd < 0) {
		ret = -errno;
		free(t);
		return ret;
	}
	ret = event_add(l, t->fd, EPOLLIN, event_timer_cb, t);
	if (ret) {
		close(t->fd);
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int event_timer_arm(struct event_timer *t, uint64_t ms)
{
	struct itimerspec its = {0};

	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (ms % 1000) * 1000000;
	return timerfd_settime(t->fd, 0, &its, NULL) ? -errno : 0;
}

void event_timer_destroy(struct event_timer *t)
{
	if (!t)
		return;
	event_del(t->loop, t->fd);
	close(t->fd);
	free(t);
}
