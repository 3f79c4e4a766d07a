// SPDX-License-Identifier: MIT
/*
 * virtio_balloon.c - virtio memory balloon: statistics and free page
 * reporting (virtio 1.2 §5.5); the contract is in virtio_balloon.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "vmm/util/iov.h"
#include "vmm/virtio/virtio_balloon.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_worker.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"

#define BALLOON_QUEUE_SIZE 128
#define BALLOON_PFNS_MAX   4096 /* PFNs looked at per inflate/deflate buffer */
#define BALLOON_STATS_MAX  64	/* statistics entries looked at per buffer */
#define BALLOON_NQ	   5
#define BALLOON_NQ_NO_REP  3

enum balloon_role { ROLE_NONE = 0, ROLE_INFLATE, ROLE_DEFLATE, ROLE_STATS, ROLE_REPORT };

/* Device config (§5.5.4), little-endian like the host */
struct balloon_config {
	uint32_t num_pages;
	uint32_t actual;
	uint32_t free_page_hint_cmd_id;
	uint32_t poison_val;
};

struct virtio_balloon {
	struct virtio_pci vp;
	struct virtio_worker worker;
	const struct guest_mem *mem;
	bool reporting; /* offered */
	uint64_t period_ns;
	/* config: written by vCPUs (serialized by the transport); the worker
	 * reads poison_val atomically */
	struct balloon_config cfg;
	/* set by activate() before the worker runs the queues */
	enum balloon_role role[BALLOON_NQ];
	bool poison; /* PAGE_POISON negotiated */
	/* the statistics buffer held until the next period (worker only) */
	bool stats_held;
	uint16_t stats_head;
	/* a restored snapshot's held buffer, taken over at activate() */
	bool restored_held;
	uint16_t restored_head;
	unsigned int stats_q;
	uint64_t stats_due_ns;
	struct virtio_balloon_counters n; /* atomics */
	struct iovec in[BALLOON_QUEUE_SIZE], out[BALLOON_QUEUE_SIZE];
};

static uint64_t balloon_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void count(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

/* Release [p, p+len) of guest RAM (inside it: the caller checked). */
static bool balloon_release(struct virtio_balloon *b, void *p, uint64_t len)
{
	/* explicit hugepages go back only whole, and a VM with them gets
	 * no reporting from KubeVirt anyway: leave them */
	if (b->mem->page_size != 4096)
		return false;
	if (b->poison && __atomic_load_n(&b->cfg.poison_val, __ATOMIC_RELAXED))
		return false;
	return madvise(p, len, MADV_DONTNEED) == 0;
}

/* One inflate or deflate buffer: le32 PFNs. */
static void balloon_pfns(struct virtio_balloon *b, struct virtq_elem *e, bool inflate)
{
	uint64_t n = e->out_bytes / 4, i;
	uint32_t pfn;
	void *p;

	if (n > BALLOON_PFNS_MAX) {
		count(&b->n.refused, n - BALLOON_PFNS_MAX);
		n = BALLOON_PFNS_MAX;
	}
	for (i = 0; i < n; i++) {
		iov_to_buf(e->out, e->n_out, i * 4, &pfn, 4);
		/* PFNs are 4 KiB frames whatever the guest's page size */
		p = guest_mem_ptr(b->mem, (gpa_t)pfn << VIRTIO_BALLOON_PFN_SHIFT,
				  1u << VIRTIO_BALLOON_PFN_SHIFT);
		if (!p) {
			count(&b->n.refused, 1);
			continue;
		}
		if (inflate)
			balloon_release(b, p, 1u << VIRTIO_BALLOON_PFN_SHIFT);
		count(inflate ? &b->n.inflated_pages : &b->n.deflated_pages, 1);
	}
}

/* One reporting buffer: device-writable whole pages of free guest RAM. */
static void balloon_report(struct virtio_balloon *b, struct virtq_elem *e)
{
	uint64_t released = 0;
	unsigned int i;

	/* (RAM regions start page-aligned in both guest and host, so the host
	 * address's alignment is the guest address's) */
	for (i = 0; i < e->n_in; i++)
		if ((uintptr_t)e->in[i].iov_base % 4096 || e->in[i].iov_len % 4096)
			break;
	if (e->n_out || i < e->n_in) {
		count(&b->n.refused, 1);
		log_warn_once("virtio-balloon: a page report that is not whole pages was refused");
		return;
	}
	for (i = 0; i < e->n_in; i++)
		if (balloon_release(b, e->in[i].iov_base, e->in[i].iov_len))
			released += e->in[i].iov_len;
	count(&b->n.reports, 1);
	count(&b->n.reported_bytes, released);
}

struct balloon_serve {
	struct virtio_balloon *b;
	enum balloon_role role;
};

static void balloon_serve(void *opaque, struct virtq *q, struct virtq_elem *e, bool good)
{
	struct balloon_serve *sv = opaque;

	if (!good)
		count(&sv->b->n.refused, 1);
	else if (sv->role == ROLE_REPORT)
		balloon_report(sv->b, e);
	else
		balloon_pfns(sv->b, e, sv->role == ROLE_INFLATE);
	virtq_push(q, e->head, 0);
}

/* Keep the newest statistics (packed le16 tag, le64 value entries). */
static void balloon_parse_stats(struct virtio_balloon *b, struct virtq_elem *e)
{
	uint64_t n = e->out_bytes / 10, i, val;
	uint8_t ent[10];
	uint16_t tag;

	if (n > BALLOON_STATS_MAX)
		n = BALLOON_STATS_MAX;
	for (i = 0; i < n; i++) {
		iov_to_buf(e->out, e->n_out, i * 10, ent, sizeof(ent));
		memcpy(&tag, ent, 2);
		memcpy(&val, ent + 2, 8);
		if (tag >= VIRTIO_BALLOON_STATS_KEPT)
			continue;
		__atomic_store_n(&b->n.stat[tag], val, __ATOMIC_RELAXED);
		__atomic_fetch_or(&b->n.stats_valid, 1ull << tag, __ATOMIC_RELAXED);
	}
	count(&b->n.stats_updates, 1);
}

/* Hand the held statistics buffer back: the driver refills and resends it. */
static void balloon_stats_return(struct virtio_balloon *b)
{
	struct virtq *q = virtio_pci_queue(&b->vp, b->stats_q);

	if (!b->stats_held || !q)
		return;
	b->stats_held = false;
	if (virtq_push(q, b->stats_head, 0) == 0 && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&b->vp, b->stats_q);
}

static void balloon_stats_drain(struct virtio_balloon *b, unsigned int qi)
{
	struct virtq *q = virtio_pci_queue(&b->vp, qi);
	struct virtq_elem e = {.out = b->out,
			       .in = b->in,
			       .cap_out = BALLOON_QUEUE_SIZE,
			       .cap_in = BALLOON_QUEUE_SIZE};
	int r;

	if (!q)
		return;
	for (;;) {
		r = virtq_pop(q, &e);
		if (r == VIRTQ_POP_EMPTY && virtq_enable_notify(q))
			continue;
		if (r <= 0)
			break;
		/* one buffer at a time: an older one goes back first */
		balloon_stats_return(b);
		if (r != VIRTQ_POP_OK) {
			count(&b->n.refused, 1);
			if (!virtq_push(q, e.head, 0) && virtq_should_notify(q))
				virtio_pci_queue_interrupt(&b->vp, qi);
			continue;
		}
		balloon_parse_stats(b, &e);
		b->stats_held = true;
		b->stats_head = e.head;
		b->stats_due_ns = balloon_now_ns() + b->period_ns;
	}
	if (r < 0)
		virtio_pci_needs_reset(&b->vp);
}

static void balloon_drain(void *opaque, unsigned int qi)
{
	struct virtio_balloon *b = opaque;
	struct virtq_elem e = {.out = b->out,
			       .in = b->in,
			       .cap_out = BALLOON_QUEUE_SIZE,
			       .cap_in = BALLOON_QUEUE_SIZE};
	struct balloon_serve sv = {b, qi < BALLOON_NQ ? b->role[qi] : ROLE_NONE};

	if (sv.role == ROLE_STATS) {
		balloon_stats_drain(b, qi);
		return;
	}
	if (sv.role == ROLE_NONE)
		return; /* free_page_vq or an unused index: never negotiated */
	/* a report can never be more than all of guest RAM; none of it is
	 * copied */
	if (sv.role == ROLE_REPORT)
		e.max_bytes = b->mem->total;
	virtio_pci_drain(&b->vp, qi, &e, balloon_serve, &sv);
}

static int balloon_timeout(void *opaque)
{
	struct virtio_balloon *b = opaque;
	uint64_t now;

	if (!b->stats_held)
		return -1;
	now = balloon_now_ns();
	if (now >= b->stats_due_ns)
		return 0;
	return (int)((b->stats_due_ns - now) / 1000000ull) + 1;
}

static void balloon_tick(void *opaque)
{
	struct virtio_balloon *b = opaque;

	if (b->stats_held && balloon_now_ns() >= b->stats_due_ns)
		balloon_stats_return(b);
}

static uint64_t balloon_features(void *dev)
{
	struct virtio_balloon *b = dev;

	return 1ull << VIRTIO_BALLOON_F_STATS_VQ | 1ull << VIRTIO_BALLOON_F_PAGE_POISON |
	       (b->reporting ? 1ull << VIRTIO_BALLOON_F_REPORTING : 0);
}

static void balloon_config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	struct virtio_balloon *b = dev;
	struct balloon_config c = b->cfg;

	c.poison_val = __atomic_load_n(&b->cfg.poison_val, __ATOMIC_RELAXED);
	virtio_pci_config_copy(&c, sizeof(c), off, data, len);
}

/* The driver writes actual and poison_val; the rest is read-only. */
static void balloon_config_write(void *dev, uint32_t off, const void *data, uint32_t len)
{
	struct virtio_balloon *b = dev;
	uint8_t img[sizeof(struct balloon_config)];
	struct balloon_config c;

	if (off >= sizeof(img) || len > sizeof(img) - off)
		return;
	memcpy(img, &b->cfg, sizeof(img));
	memcpy(img + off, data, len);
	memcpy(&c, img, sizeof(c));
	b->cfg.actual = c.actual;
	__atomic_store_n(&b->cfg.poison_val, c.poison_val, __ATOMIC_RELAXED);
}

static int balloon_activate(void *dev, struct virtio_pci *vp, uint64_t features)
{
	struct virtio_balloon *b = dev;
	bool stats = features & 1ull << VIRTIO_BALLOON_F_STATS_VQ;
	bool rep = b->reporting && features & 1ull << VIRTIO_BALLOON_F_REPORTING;

	(void)vp;
	memset(b->role, 0, sizeof(b->role));
	b->role[0] = ROLE_INFLATE;
	b->role[1] = ROLE_DEFLATE;
	b->role[2] = stats ? ROLE_STATS : rep ? ROLE_REPORT : ROLE_NONE;
	if (rep) {
		if (stats)
			b->role[3] = ROLE_REPORT;
		b->role[4] = ROLE_REPORT;
	}
	b->stats_q = 2;
	b->poison = features & 1ull << VIRTIO_BALLOON_F_PAGE_POISON;
	b->stats_held = b->restored_held && stats;
	b->stats_head = b->restored_head;
	b->stats_due_ns = balloon_now_ns() + b->period_ns;
	b->restored_held = false;
	virtio_worker_activate(&b->worker);
	return 0;
}

static void balloon_reset(void *dev)
{
	struct virtio_balloon *b = dev;

	virtio_worker_pause(&b->worker);
	b->stats_held = false;
	b->cfg.actual = 0;
	__atomic_store_n(&b->cfg.poison_val, 0, __ATOMIC_RELAXED);
}

/* Snapshot: the config (target and actual size, poison value) and the
 * statistics buffer the device holds until its next period. */
enum { BALLOON_SNAP_CFG = 1, BALLOON_SNAP_STATS };

static void balloon_freeze(void *dev)
{
	virtio_worker_pause(&((struct virtio_balloon *)dev)->worker);
}

static void balloon_thaw(void *dev)
{
	virtio_worker_activate(&((struct virtio_balloon *)dev)->worker);
}

static int balloon_save(void *dev, struct snap_buf *out)
{
	struct virtio_balloon *b = dev;
	uint32_t held[2] = {b->stats_held, b->stats_head};

	snap_buf_item(out, BALLOON_SNAP_CFG, &b->cfg, sizeof(b->cfg));
	snap_buf_item(out, BALLOON_SNAP_STATS, held, sizeof(held));
	return out->err;
}

static int balloon_load(void *dev, struct snap_cur *c)
{
	struct virtio_balloon *b = dev;
	struct balloon_config cfg;
	uint32_t held[2];

	if (snap_cur_want(c, BALLOON_SNAP_CFG, &cfg, sizeof(cfg)) ||
	    snap_cur_want(c, BALLOON_SNAP_STATS, held, sizeof(held)) || held[0] > 1 ||
	    held[1] >= BALLOON_QUEUE_SIZE)
		return -EBADMSG;
	b->cfg.actual = cfg.actual;
	b->cfg.num_pages = cfg.num_pages;
	__atomic_store_n(&b->cfg.poison_val, cfg.poison_val, __ATOMIC_RELAXED);
	b->restored_held = held[0];
	b->restored_head = (uint16_t)held[1];
	return 0;
}

static const struct virtio_dev_ops virtio_balloon_ops = {
    .device_id = VIRTIO_ID_BALLOON,
    .class_code = 0xff0000, /* other (QEMU's virtio-balloon-pci: PCI_CLASS_OTHERS) */
    .features = balloon_features,
    .config_read = balloon_config_read,
    .config_write = balloon_config_write,
    .activate = balloon_activate,
    .reset = balloon_reset,
    .freeze = balloon_freeze,
    .thaw = balloon_thaw,
    .save = balloon_save,
    .load = balloon_load,
};

static void balloon_read_counters(void *opaque, struct device_counters *c)
{
	struct virtio_balloon_counters n;

	virtio_balloon_read(opaque, &n);
	c->requests = n.reports;
	c->write_bytes = n.reported_bytes;
	c->balloon_stats_updates = n.stats_updates;
	c->balloon_stats_valid = n.stats_valid;
	memcpy(c->balloon_stat, n.stat, sizeof(c->balloon_stat));
}

int virtio_balloon_create(struct virtio_balloon **out, struct pci_host *host,
			  const struct virtio_balloon_params *p)
{
	struct virtio_balloon *b;
	int ret;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->mem = host->mem;
	b->reporting = p && p->reporting;
	b->period_ns = (uint64_t)(p && p->stats_period_ms ? p->stats_period_ms
							  : VIRTIO_BALLOON_STATS_PERIOD_MS) *
		       1000000ull;
	ret = virtio_pci_init(&b->vp, host, "virtio-balloon", &virtio_balloon_ops, b,
			      b->reporting ? BALLOON_NQ : BALLOON_NQ_NO_REP, BALLOON_QUEUE_SIZE,
			      sizeof(struct balloon_config));
	if (ret)
		goto out_free;
	b->worker = (struct virtio_worker){.vp = &b->vp,
					   .nq = b->reporting ? BALLOON_NQ : BALLOON_NQ_NO_REP,
					   .drain = balloon_drain,
					   .timeout_ms = balloon_timeout,
					   .tick = balloon_tick,
					   .opaque = b};
	ret = virtio_worker_start(&b->worker, THREAD_BLK_IO, "vmlet-balloon");
	if (ret) {
		virtio_pci_release(&b->vp);
		goto out_free;
	}
	ret = device_add_counters(host->vm, "balloon", "balloon", balloon_read_counters, b);
	if (ret) {
		virtio_balloon_destroy(b);
		return error_errno(ret, "virtio-balloon: cannot register its counters");
	}
	*out = b;
	return 0;
out_free:
	free(b);
	return error_errno(ret, "virtio-balloon: cannot create the device");
}

void virtio_balloon_destroy(struct virtio_balloon *b)
{
	if (!b)
		return;
	virtio_pci_release(&b->vp);
	virtio_worker_stop(&b->worker);
	free(b);
}

struct virtio_pci *virtio_balloon_pci(struct virtio_balloon *b)
{
	return &b->vp;
}

void virtio_balloon_read(struct virtio_balloon *b, struct virtio_balloon_counters *c)
{
	const uint64_t *src = (const uint64_t *)(const void *)&b->n;
	uint64_t *dst = (uint64_t *)(void *)c;

	for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
