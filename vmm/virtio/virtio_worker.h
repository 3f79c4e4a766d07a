/* SPDX-License-Identifier: MIT */
/*
 * virtio_worker.h - the I/O thread of a virtio device.
 *
 * The thread is started when the device is created (before the sandbox,
 * so no vCPU thread ever has to create or join threads) and lives until
 * the device is destroyed. It sleeps on the queues' kick eventfds and a
 * control eventfd. virtio_worker_activate() (from ops->activate, on a
 * vCPU thread) lets it serve the queues; virtio_worker_pause() (from
 * ops->reset) returns only once it no longer touches them.
 *
 * A device that sleeps on more than its kicks (virtio-net: its backends'
 * fds too) gives turn instead of drain: the thread then calls turn until
 * it returns < 0, and turn polls virtio_worker_ctl_fd() with its own fds
 * and calls virtio_worker_update() when that fd is readable.
 */
#ifndef VMLET_VIRTIO_WORKER_H
#define VMLET_VIRTIO_WORKER_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>

#include "vmm/util/thread.h"

struct virtio_pci;

#define VIRTIO_WORKER_MAX_FDS 16 /* poll_fds() entries */

struct virtio_worker {
	struct virtio_pci *vp;
	unsigned int nq;
	/* serve queue q (kicked, or once at activation) */
	void (*drain)(void *opaque, unsigned int q);
	/* or: one turn of the device's own loop (< 0: the thread ends) */
	int (*turn)(void *opaque);
	/* optional: on the worker's thread, under lock, as it turns active
	 * (before anything is served) */
	void (*on_activate)(void *opaque);
	/* optional: poll timeout in ms while active (-1 none) and what to do
	 * when it expires (rate limiters) */
	int (*timeout_ms)(void *opaque);
	void (*tick)(void *opaque);
	/* optional: host fds the device waits on too while active (sockets):
	 * poll_fds() fills at most max entries before each wait and returns
	 * how many; poll_events() gets them back with revents after it */
	unsigned int (*poll_fds)(void *opaque, struct pollfd *pfd, unsigned int max);
	void (*poll_events)(void *opaque, const struct pollfd *pfd, unsigned int n);
	void *opaque;
	/* private */
	pthread_t thread;
	bool started;
	int ctl_fd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool want_active, active, quit;
};

/* Fill vp, nq, drain or turn (and optional fields) first. */
int virtio_worker_start(struct virtio_worker *w, enum thread_role role, const char *name);
void virtio_worker_activate(struct virtio_worker *w);
void virtio_worker_pause(struct virtio_worker *w);
/* For turn: the fd that becomes readable on a control request, and, from
 * the worker's thread once it did, apply the request: false when the
 * thread must end; *activated when it just turned active (w->active is
 * the state taken, written only by the worker's thread). */
int virtio_worker_ctl_fd(const struct virtio_worker *w);
bool virtio_worker_update(struct virtio_worker *w, bool *activated);
/* From the worker's own thread: true once it was asked to pause or quit
 * (a handler waiting for something else should give up). */
bool virtio_worker_wants_idle(struct virtio_worker *w);
/* Quit and join; safe on a worker that never started. */
void virtio_worker_stop(struct virtio_worker *w);

#endif /* VMLET_VIRTIO_WORKER_H */
