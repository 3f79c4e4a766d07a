/* SPDX-License-Identifier: MIT */
/*
 * event.h - the main thread's event loop: one epoll set dispatching file
 * descriptors (signalfd, console input, timers, eventfds) to callbacks.
 *
 * Everything here is called from the loop's own thread (THREAD_MAIN), except
 * event_loop_wake(), which any thread may call to make event_loop_run()
 * return. Callbacks run one at a time; a callback may add or delete any
 * handler, including its own.
 */
#ifndef VMLET_EVENT_H
#define VMLET_EVENT_H

#include <stdint.h>

typedef void (*event_fn)(void *opaque, uint32_t events);

struct event_handler;

struct event_loop {
	int epfd;
	int wake_fd; /* eventfd behind event_loop_wake() */
	int stop;
	struct event_handler *handlers; /* live handlers */
	struct event_handler *dead;	/* deleted during dispatch, freed after */
};

int event_loop_init(struct event_loop *l);
/* Closes the epoll set and frees handlers; the fds stay open (owners close). */
void event_loop_release(struct event_loop *l);

/* Watch fd for events (EPOLLIN...); fn(opaque, revents) on readiness. */
int event_add(struct event_loop *l, int fd, uint32_t events, event_fn fn, void *opaque);
/* Change the watched events of fd (0 = keep it registered, watch nothing). */
int event_mod(struct event_loop *l, int fd, uint32_t events);
int event_del(struct event_loop *l, int fd);

/* Dispatch until event_loop_stop() or event_loop_wake(); returns 0 or -errno. */
int event_loop_run(struct event_loop *l);
void event_loop_stop(struct event_loop *l);
/* Thread-safe, async-signal-safe: make event_loop_run() return soon. */
void event_loop_wake(struct event_loop *l);

/* One-shot timers on timerfd. */
struct event_timer;
int event_timer_create(struct event_loop *l, event_fn fn, void *opaque, struct event_timer **out);
/* Arm to fire once after ms milliseconds (0 disarms). */
int event_timer_arm(struct event_timer *t, uint64_t ms);
void event_timer_destroy(struct event_timer *t);

#endif /* VMLET_EVENT_H */
