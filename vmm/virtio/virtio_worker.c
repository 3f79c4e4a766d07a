// SPDX-License-Identifier: MIT
/*
 * virtio_worker.c - a virtio device's I/O thread (virtio_worker.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_worker.h"
#include "vmm/util/log.h"

static void worker_ctl(struct virtio_worker *w)
{
	uint64_t v;

	if (read(w->ctl_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn_once("virtio: worker control read failed");
}

static void worker_signal(struct virtio_worker *w)
{
	uint64_t one = 1;

	if (write(w->ctl_fd, &one, sizeof(one)) < 0)
		log_warn("virtio: cannot signal a device thread");
}

int virtio_worker_ctl_fd(const struct virtio_worker *w)
{
	return w->ctl_fd;
}

bool virtio_worker_update(struct virtio_worker *w, bool *activated)
{
	bool run;

	worker_ctl(w);
	pthread_mutex_lock(&w->lock);
	run = !w->quit;
	*activated = run && w->want_active && !w->active;
	w->active = run && w->want_active;
	if (*activated && w->on_activate)
		w->on_activate(w->opaque);
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return run;
}

/* The loop of a worker with drain: poll the kicks and the control fd. */
static void worker_loop(struct virtio_worker *w)
{
	struct pollfd pfd[VIRTIO_PCI_MAX_QUEUES + 1 + VIRTIO_WORKER_MAX_FDS];
	bool active = false, activated;
	unsigned int nx;
	uint64_t v;
	int n;

	for (unsigned int i = 0; i < w->nq; i++)
		pfd[i] = (struct pollfd){virtio_pci_kick_fd(w->vp, i), POLLIN, 0};
	pfd[w->nq] = (struct pollfd){w->ctl_fd, POLLIN, 0};
	for (;;) {
		int tmo = active && w->timeout_ms ? w->timeout_ms(w->opaque) : -1;

		nx = active && w->poll_fds
			 ? w->poll_fds(w->opaque, &pfd[w->nq + 1], VIRTIO_WORKER_MAX_FDS)
			 : 0;
		n = poll(pfd, w->nq + 1 + nx, tmo);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			error_errno(-errno, "virtio: device thread poll");
			break;
		}
		if (pfd[w->nq].revents) {
			if (!virtio_worker_update(w, &activated))
				break;
			active = w->active;
			/* buffers may have been queued before DRIVER_OK */
			for (unsigned int i = 0; activated && i < w->nq; i++)
				w->drain(w->opaque, i);
		}
		for (unsigned int i = 0; i < w->nq; i++) {
			if (!pfd[i].revents)
				continue;
			if (read(pfd[i].fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				continue;
			if (active)
				w->drain(w->opaque, i);
		}
		/* only while still active: a pause may have come in above */
		if (nx && active && w->poll_events)
			w->poll_events(w->opaque, &pfd[w->nq + 1], nx);
		if (!n && active && w->tick)
			w->tick(w->opaque);
	}
}

static void *worker_main(void *arg)
{
	struct virtio_worker *w = arg;

	if (w->turn)
		while (w->turn(w->opaque) >= 0)
			;
	else
		worker_loop(w);
	/* nobody may wait for an exited thread to go idle */
	pthread_mutex_lock(&w->lock);
	w->active = false;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int virtio_worker_start(struct virtio_worker *w, enum thread_role role, const char *name)
{
	int r;

	w->ctl_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->ctl_fd < 0)
		return -errno;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->want_active = w->active = w->quit = false;
	r = thread_start(&w->thread, role, name, worker_main, w);
	if (r) {
		close(w->ctl_fd);
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		return r;
	}
	w->started = true;
	return 0;
}

void virtio_worker_activate(struct virtio_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->want_active = true;
	pthread_mutex_unlock(&w->lock);
	worker_signal(w);
}

void virtio_worker_pause(struct virtio_worker *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	w->want_active = false;
	worker_signal(w);
	while (w->active && !w->quit)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

bool virtio_worker_wants_idle(struct virtio_worker *w)
{
	bool idle;

	pthread_mutex_lock(&w->lock);
	idle = !w->want_active || w->quit;
	pthread_mutex_unlock(&w->lock);
	return idle;
}

void virtio_worker_stop(struct virtio_worker *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	w->quit = true;
	pthread_mutex_unlock(&w->lock);
	worker_signal(w);
	pthread_join(w->thread, NULL);
	close(w->ctl_fd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	w->started = false;
}
