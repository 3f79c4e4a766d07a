// SPDX-License-Identifier: MIT
/*
 * virtio_rng.c - virtio entropy device (virtio 1.2 §5.4).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/iov.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_rng.h"
#include "vmm/virtio/virtio_worker.h"
#include "vmm/util/log.h"

#define RNG_QUEUE_SIZE 64
#define RNG_CHUNK      4096 /* most bytes one request gets */

struct virtio_rng {
	struct virtio_pci vp;
	struct virtio_worker worker;
	int fd;
	/* token bucket, worker-only */
	uint64_t rate, burst, tokens, last_ns;
	bool starved;
	struct iovec in[RNG_QUEUE_SIZE], out[RNG_QUEUE_SIZE];
	uint8_t buf[RNG_CHUNK];
};

static uint64_t rng_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void rng_refill(struct virtio_rng *r)
{
	uint64_t now = rng_now_ns(), dt = now - r->last_ns, add;

	if (dt > 10000000000ull) /* a full bucket anyway; keeps dt*rate small */
		dt = 10000000000ull;
	add = dt * r->rate / 1000000000ull;
	if (!add)
		return; /* keep last_ns so fractions accumulate */
	r->tokens = r->tokens + add > r->burst ? r->burst : r->tokens + add;
	r->last_ns = now;
}

/* Fill one request; returns bytes written into the guest buffer. */
static uint32_t rng_fill(struct virtio_rng *r, struct virtq_elem *e)
{
	uint64_t want = e->in_bytes;
	ssize_t got;

	if (want > r->tokens)
		want = r->tokens;
	if (want > RNG_CHUNK)
		want = RNG_CHUNK;
	do
		got = read(r->fd, r->buf, want);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		log_warn_once("virtio-rng: reading the host entropy source failed");
		return 0;
	}
	r->tokens -= (uint64_t)got;
	return (uint32_t)iov_from_buf(e->in, e->n_in, 0, r->buf, (size_t)got);
}

static void rng_drain(void *opaque, unsigned int qi)
{
	struct virtio_rng *r = opaque;
	struct virtq *q = virtio_pci_queue(&r->vp, qi);
	struct virtq_elem e = {
	    .out = r->out, .in = r->in, .cap_out = RNG_QUEUE_SIZE, .cap_in = RNG_QUEUE_SIZE};
	unsigned int done = 0;
	int ret = 0;

	if (!q)
		return;
	rng_refill(r);
	r->starved = false;
	for (;;) {
		/* a request is taken only when it can be served now */
		if (!r->tokens) {
			r->starved = virtq_enable_notify(q);
			break;
		}
		ret = virtq_pop(q, &e);
		if (ret <= 0) {
			if (!ret && virtq_enable_notify(q))
				continue;
			break;
		}
		virtq_push(q, e.head, ret == VIRTQ_POP_OK ? rng_fill(r, &e) : 0);
		done++;
	}
	if (done && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&r->vp, qi);
	if (ret < 0)
		virtio_pci_needs_reset(&r->vp);
}

/* While starved, come back when about 1/100 s of tokens accumulated. */
static int rng_timeout(void *opaque)
{
	struct virtio_rng *r = opaque;

	return r->starved ? 10 : -1;
}

static void rng_tick(void *opaque)
{
	rng_drain(opaque, 0);
}

static int rng_activate(void *dev, struct virtio_pci *vp, uint64_t features)
{
	struct virtio_rng *r = dev;

	(void)vp;
	(void)features;
	virtio_worker_activate(&r->worker);
	return 0;
}

static void rng_reset(void *dev)
{
	struct virtio_rng *r = dev;

	virtio_worker_pause(&r->worker);
	r->starved = false;
}

/* Snapshot: the worker held and let go; no state of its own (the rate
 * limiter starts afresh). */
static void rng_freeze(void *dev)
{
	virtio_worker_pause(&((struct virtio_rng *)dev)->worker);
}

static void rng_thaw(void *dev)
{
	virtio_worker_activate(&((struct virtio_rng *)dev)->worker);
}

static const struct virtio_dev_ops virtio_rng_ops = {
    .device_id = VIRTIO_ID_RNG,
    .class_code = 0x00ff00, /* unclassified */
    .activate = rng_activate,
    .reset = rng_reset,
    .freeze = rng_freeze,
    .thaw = rng_thaw,
};

int virtio_rng_create(struct virtio_rng **out, struct pci_host *host, uint32_t rate, uint32_t burst)
{
	struct virtio_rng *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->rate = rate ? rate : VIRTIO_RNG_RATE_DEFAULT;
	r->burst = burst ? burst : VIRTIO_RNG_BURST_DEFAULT;
	r->tokens = r->burst;
	r->last_ns = rng_now_ns();
	r->fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		ret = error_errno(-errno, "virtio-rng: cannot open /dev/urandom");
		free(r);
		return ret;
	}
	ret = virtio_pci_init(&r->vp, host, "virtio-rng", &virtio_rng_ops, r, 1, RNG_QUEUE_SIZE, 0);
	if (ret)
		goto out_close;
	r->worker = (struct virtio_worker){.vp = &r->vp,
					   .nq = 1,
					   .drain = rng_drain,
					   .timeout_ms = rng_timeout,
					   .tick = rng_tick,
					   .opaque = r};
	/* the I/O role: read(2), write(2) and poll(2) are all it does */
	ret = virtio_worker_start(&r->worker, THREAD_BLK_IO, "vmlet-rng");
	if (ret) {
		virtio_pci_release(&r->vp);
		goto out_close;
	}
	*out = r;
	return 0;
out_close:
	close(r->fd);
	free(r);
	return error_errno(ret, "virtio-rng: cannot create the device");
}

void virtio_rng_destroy(struct virtio_rng *r)
{
	if (!r)
		return;
	virtio_pci_release(&r->vp);
	virtio_worker_stop(&r->worker);
	close(r->fd);
	free(r);
}

struct virtio_pci *virtio_rng_pci(struct virtio_rng *r)
{
	return &r->vp;
}
