// SPDX-License-Identifier: MIT
/*
 * virtio_blk.c - virtio block device (virtio 1.2 §5.2).
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* feature bits VIRTIO_BLK_F_*, request types VIRTIO_BLK_T_*, status
 * VIRTIO_BLK_S_*, the config layout (virtio 1.2 §5.2) */
#include <linux/virtio_blk.h>

#include "vmm/disk/blk.h"
#include "vmm/disk/blk_id.h"
#include "vmm/vm/device.h"
#include "vmm/util/iov.h"
#include "vmm/virtio/virtio_blk.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_worker.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"

#define BLK_QUEUE_SIZE		256
#define BLK_SEG_MAX		(BLK_QUEUE_SIZE - 2)
#define BLK_SIZE_MAX		(128u << 10)
#define BLK_SEGS		(BLK_SEG_MAX + 2)
#define BLK_MAX_DISCARD_SECTORS (1u << 30 >> 9) /* 1 GiB per request */

/* the config the guest sees: through write_zeroes_may_unmap (60 bytes;
 * no secure erase or zoned fields) */
#define BLK_CONFIG_LEN offsetof(struct virtio_blk_config, max_secure_erase_sectors)
_Static_assert(BLK_CONFIG_LEN == 60, "virtio_blk_config through write_zeroes_may_unmap");

struct virtio_blk_req_hdr {
	uint32_t type, reserved;
	uint64_t sector;
} __attribute__((packed));

struct virtio_blk_range {
	uint64_t sector;
	uint32_t num_sectors, flags;
} __attribute__((packed));

/* The host error of the request being served (blk_io_status()). */
struct blk_fault {
	int err; /* -errno, 0 = none */
	const char *what;
	uint64_t sector;
};

struct virtio_blk {
	struct virtio_pci vp;
	struct vm *vm;
	struct blk *be;
	enum virtio_blk_error_policy policy;
	struct blk_fault fault; /* worker-only */
	char name[64];
	char serial[VIRTIO_BLK_ID_BYTES];
	struct virtio_blk_config cfg;
	unsigned int nq;
	struct virtio_worker worker;
	bool flushed;		   /* virtio_blk_quiesce() ran */
	struct device_counters st; /* metrics; updated atomically */
	/* worker-only scratch */
	struct iovec out[BLK_SEGS], in[BLK_SEGS], data[BLK_SEGS];
};

static bool blk_range_ok(struct virtio_blk *b, uint64_t sector, uint64_t bytes)
{
	uint64_t cap = b->cfg.capacity;

	return sector <= cap && bytes / 512 <= cap - sector && !(bytes % 512);
}

/* A host error is noted for the error policy (blk_complete()). */
static uint8_t blk_io_status(struct virtio_blk *b, int r, const char *what, uint64_t sector)
{
	if (!r)
		return VIRTIO_BLK_S_OK;
	b->fault = (struct blk_fault){r, what, sector};
	return VIRTIO_BLK_S_IOERR;
}

static uint8_t blk_ranges(struct virtio_blk *b, struct virtq_elem *e, bool zeroes)
{
	struct virtio_blk_range rg;
	uint64_t n = (e->out_bytes - sizeof(struct virtio_blk_req_hdr)) / sizeof(rg);
	int r;

	if (n != 1 || (e->out_bytes - sizeof(struct virtio_blk_req_hdr)) % sizeof(rg))
		return VIRTIO_BLK_S_UNSUPP;
	iov_to_buf(e->out, e->n_out, sizeof(struct virtio_blk_req_hdr), &rg, sizeof(rg));
	if ((rg.flags & ~1u) || (!zeroes && rg.flags) || rg.num_sectors > BLK_MAX_DISCARD_SECTORS)
		return VIRTIO_BLK_S_UNSUPP;
	if (!blk_range_ok(b, rg.sector, (uint64_t)rg.num_sectors * 512))
		return VIRTIO_BLK_S_IOERR;
	if (zeroes)
		r = blk_write_zeroes(b->be, rg.sector * 512, (uint64_t)rg.num_sectors * 512,
				     rg.flags & 1);
	else
		r = blk_discard(b->be, rg.sector * 512, (uint64_t)rg.num_sectors * 512);
	return blk_io_status(b, r, zeroes ? "write zeroes" : "discard", rg.sector);
}

/* Serve one request; *written = data bytes put in the guest's buffers. */
static uint8_t blk_request(struct virtio_blk *b, struct virtq_elem *e, uint64_t *written)
{
	struct virtio_blk_req_hdr h;
	uint64_t len;
	int n, r;

	iov_to_buf(e->out, e->n_out, 0, &h, sizeof(h));
	switch (h.type) {
	case VIRTIO_BLK_T_IN:
		len = e->in_bytes - 1;
		if (!blk_range_ok(b, h.sector, len))
			return VIRTIO_BLK_S_IOERR;
		n = iov_slice(e->in, (int)e->n_in, 0, len, b->data);
		r = blk_preadv(b->be, b->data, n, h.sector * 512);
		if (!r)
			*written = len;
		return blk_io_status(b, r, "read", h.sector);
	case VIRTIO_BLK_T_OUT:
		len = e->out_bytes - sizeof(h);
		if (b->be->read_only || !blk_range_ok(b, h.sector, len))
			return VIRTIO_BLK_S_IOERR;
		n = iov_slice(e->out, (int)e->n_out, sizeof(h), len, b->data);
		r = blk_pwritev(b->be, b->data, n, h.sector * 512);
		return blk_io_status(b, r, "write", h.sector);
	case VIRTIO_BLK_T_FLUSH:
		return blk_io_status(b, blk_flush(b->be), "flush", 0);
	case VIRTIO_BLK_T_GET_ID:
		len = e->in_bytes - 1 < VIRTIO_BLK_ID_BYTES ? e->in_bytes - 1 : VIRTIO_BLK_ID_BYTES;
		*written = iov_from_buf(e->in, e->n_in, 0, b->serial, len);
		return VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		if (b->be->read_only)
			return VIRTIO_BLK_S_IOERR;
		return blk_ranges(b, e, h.type == VIRTIO_BLK_T_WRITE_ZEROES);
	}
	return VIRTIO_BLK_S_UNSUPP;
}

#define BLK_STAT_ADD(b, field, v) __atomic_add_fetch(&(b)->st.field, (v), __ATOMIC_RELAXED)

static void blk_count(struct virtio_blk *b, const struct virtq_elem *e, uint8_t status,
		      uint64_t read)
{
	struct virtio_blk_req_hdr h;

	BLK_STAT_ADD(b, requests, 1);
	if (status != VIRTIO_BLK_S_OK) {
		BLK_STAT_ADD(b, errors, 1);
		return;
	}
	iov_to_buf(e->out, e->n_out, 0, &h, sizeof(h));
	if (h.type == VIRTIO_BLK_T_IN)
		BLK_STAT_ADD(b, read_bytes, read);
	else if (h.type == VIRTIO_BLK_T_OUT)
		BLK_STAT_ADD(b, write_bytes, e->out_bytes - sizeof(h));
}

static void blk_read_counters(void *opaque, struct device_counters *c)
{
	struct virtio_blk *b = opaque;

	c->requests = __atomic_load_n(&b->st.requests, __ATOMIC_RELAXED);
	c->errors = __atomic_load_n(&b->st.errors, __ATOMIC_RELAXED);
	c->read_bytes = __atomic_load_n(&b->st.read_bytes, __ATOMIC_RELAXED);
	c->write_bytes = __atomic_load_n(&b->st.write_bytes, __ATOMIC_RELAXED);
	c->io_pauses = __atomic_load_n(&b->st.io_pauses, __ATOMIC_RELAXED);
}

/* errorPolicy stop: pause the VM and wait for its resume. true: try the
 * request again; false: drop it (the VM ends or the device resets). */
static bool blk_hold(struct virtio_blk *b)
{
	char msg[200];
	unsigned int gen;
	int r;

	snprintf(msg, sizeof(msg), "disk '%s': %s at sector %llu failed: %s (errno %d)", b->name,
		 b->fault.what, (unsigned long long)b->fault.sector, strerror(-b->fault.err),
		 -b->fault.err);
	error("virtio-blk: %s: pausing the VM (errorPolicy %s); the request is retried on "
	      "resume",
	      msg, b->policy == VIRTIO_BLK_ERROR_STOP ? "stop" : "enospace");
	BLK_STAT_ADD(b, io_pauses, 1);
	gen = device_pause_vm(b->vm, "PausedIOError", msg);
	while ((r = device_wait_resume(b->vm, gen, 200)) == -ETIMEDOUT)
		if (virtio_worker_wants_idle(&b->worker))
			return false;
	return !r;
}

/* What the error policy makes of a failed request: true to try it again. */
static bool blk_fault_retry(struct virtio_blk *b, uint8_t *status, uint64_t *written,
			    const struct virtq_elem *e)
{
	int err = -b->fault.err;
	bool stop = b->policy == VIRTIO_BLK_ERROR_STOP ||
		    (b->policy == VIRTIO_BLK_ERROR_ENOSPACE && err == ENOSPC);

	if (b->policy == VIRTIO_BLK_ERROR_IGNORE) {
		log_warn_once("virtio-blk: disk '%s': %s at sector %llu failed: %s (ignored: "
			      "errorPolicy ignore)",
			      b->name, b->fault.what, (unsigned long long)b->fault.sector,
			      strerror(err));
		*status = VIRTIO_BLK_S_OK;
		*written = e->in_bytes - 1; /* a read's buffers count as filled */
		return false;
	}
	if (stop)
		return true;
	log_warn_once("virtio-blk: disk '%s': %s at sector %llu failed: %s", b->name, b->fault.what,
		      (unsigned long long)b->fault.sector, strerror(err));
	return false;
}

/* Complete one popped chain (good or bad). A request a stopped VM holds
 * is not completed at all when the VM ends meanwhile. */
static void blk_complete(void *opaque, struct virtq *q, struct virtq_elem *e, bool good)
{
	struct virtio_blk *b = opaque;
	uint64_t written;
	uint8_t status;

	/* §5.2.6: header readable, status byte writable, data between */
	if (!good || e->out_bytes < sizeof(struct virtio_blk_req_hdr) || e->in_bytes < 1) {
		log_warn_once("virtio-blk: disk '%s': malformed request", b->name);
		virtq_push(q, e->head, 0);
		return;
	}
	for (;;) {
		written = 0;
		b->fault.err = 0;
		status = blk_request(b, e, &written);
		if (!b->fault.err || !blk_fault_retry(b, &status, &written, e))
			break;
		if (!blk_hold(b))
			return;
	}
	blk_count(b, e, status, written);
	iov_from_buf(e->in, e->n_in, e->in_bytes - 1, &status, 1);
	virtq_push(q, e->head, (uint32_t)(written + 1));
}

static void blk_drain(void *opaque, unsigned int qi)
{
	struct virtio_blk *b = opaque;
	struct virtq_elem e = {.out = b->out, .in = b->in, .cap_out = BLK_SEGS, .cap_in = BLK_SEGS};

	virtio_pci_drain(&b->vp, qi, &e, blk_complete, b);
}

/* ---- virtio device ops -------------------------------------------------------- */

static uint64_t blk_features(void *dev)
{
	struct virtio_blk *b = dev;
	uint64_t f = 1ull << VIRTIO_BLK_F_SIZE_MAX | 1ull << VIRTIO_BLK_F_SEG_MAX |
		     1ull << VIRTIO_BLK_F_BLK_SIZE | 1ull << VIRTIO_BLK_F_FLUSH |
		     1ull << VIRTIO_BLK_F_TOPOLOGY;

	if (b->be->read_only)
		f |= 1ull << VIRTIO_BLK_F_RO;
	else
		f |= 1ull << VIRTIO_BLK_F_DISCARD | 1ull << VIRTIO_BLK_F_WRITE_ZEROES;
	if (b->nq > 1)
		f |= 1ull << VIRTIO_BLK_F_MQ;
	return f;
}

static void blk_config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	struct virtio_blk *b = dev;

	virtio_pci_config_copy(&b->cfg, BLK_CONFIG_LEN, off, data, len);
}

static void blk_reset(void *dev)
{
	struct virtio_blk *b = dev;

	virtio_worker_pause(&b->worker);
}

static int blk_activate(void *dev, struct virtio_pci *vp, uint64_t features)
{
	struct virtio_blk *b = dev;

	(void)vp;
	(void)features;
	virtio_worker_activate(&b->worker);
	return 0;
}

/*
 * Snapshot. freeze: the worker finishes the request it serves and holds,
 * then what the guest wrote is flushed. The disk's identity is saved:
 * its virtual size, its image file's size and mtime, and a hash of the
 * image's first and last MiB; a restore onto another disk (or the same
 * one written since) is refused.
 */
enum { BLK_SNAP_ID = 1 };

static void blk_freeze(void *dev)
{
	struct virtio_blk *b = dev;

	virtio_worker_pause(&b->worker);
	if (b->be && !b->be->read_only && blk_flush(b->be))
		log_warn("%s: flush for the snapshot failed", b->name);
}

static void blk_thaw(void *dev)
{
	virtio_worker_activate(&((struct virtio_blk *)dev)->worker);
}

static int blk_save(void *dev, struct snap_buf *out)
{
	struct virtio_blk *b = dev;
	struct blk_id id;
	int r = blk_id_read(b->be, &id);

	if (r)
		return error_errno(r, "snapshot: %s: cannot read the disk's identity", b->name);
	snap_buf_item(out, BLK_SNAP_ID, &id, sizeof(id));
	return out->err;
}

static int blk_load(void *dev, struct snap_cur *c)
{
	struct virtio_blk *b = dev;
	struct blk_id saved;

	if (snap_cur_want(c, BLK_SNAP_ID, &saved, sizeof(saved)))
		return -EBADMSG;
	return blk_id_check(b->be, b->name, &saved);
}

static const struct virtio_dev_ops virtio_blk_ops = {
    .device_id = VIRTIO_ID_BLOCK,
    .class_code = 0x010000, /* mass storage (SCSI), as QEMU reports it */
    .features = blk_features,
    .config_read = blk_config_read,
    .activate = blk_activate,
    .reset = blk_reset,
    .freeze = blk_freeze,
    .thaw = blk_thaw,
    .save = blk_save,
    .load = blk_load,
};

static void blk_fill_config(struct virtio_blk *b, const struct virtio_blk_params *p)
{
	uint32_t lbs = p->logical_block_size ? p->logical_block_size : 512;
	uint32_t pbs = p->physical_block_size ? p->physical_block_size : lbs;
	uint8_t exp = 0;

	while (exp < 15 && (lbs << (exp + 1)) <= pbs)
		exp++;
	b->cfg.capacity = b->be->size / 512;
	b->cfg.size_max = BLK_SIZE_MAX;
	b->cfg.seg_max = BLK_SEG_MAX;
	b->cfg.blk_size = lbs;
	b->cfg.physical_block_exp = exp;
	b->cfg.min_io_size = 1;
	b->cfg.num_queues = (uint16_t)b->nq;
	b->cfg.max_discard_sectors = BLK_MAX_DISCARD_SECTORS;
	b->cfg.max_discard_seg = 1;
	b->cfg.discard_sector_alignment = lbs / 512;
	b->cfg.max_write_zeroes_sectors = BLK_MAX_DISCARD_SECTORS;
	b->cfg.max_write_zeroes_seg = 1;
	b->cfg.write_zeroes_may_unmap = 1;
}

int virtio_blk_create(struct virtio_blk **out, struct pci_host *host, struct blk *be,
		      const struct virtio_blk_params *p)
{
	struct virtio_blk *b;
	char vname[32];
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->be = be;
	b->vm = host->vm;
	b->policy = p->error_policy;
	b->nq = p->num_queues ? p->num_queues : 1;
	if (b->nq > VIRTIO_PCI_MAX_QUEUES - 1)
		b->nq = VIRTIO_PCI_MAX_QUEUES - 1;
	snprintf(b->name, sizeof(b->name), "%s", p->name ? p->name : "disk");
	if (p->serial)
		/* §5.2.6: 20 bytes, NUL-padded, not terminated when full */
		memcpy(b->serial, p->serial, strnlen(p->serial, sizeof(b->serial)));
	blk_fill_config(b, p);
	snprintf(vname, sizeof(vname), "virtio-blk %.20s", b->name);
	r = virtio_pci_init(&b->vp, host, vname, &virtio_blk_ops, b, b->nq, BLK_QUEUE_SIZE,
			    BLK_CONFIG_LEN);
	if (r) {
		free(b);
		return error_errno(r, "virtio-blk: disk '%s': cannot create the device", p->name);
	}
	device_add_counters(host->vm, "blk", b->name, blk_read_counters, b);
	b->worker =
	    (struct virtio_worker){.vp = &b->vp, .nq = b->nq, .drain = blk_drain, .opaque = b};
	r = virtio_worker_start(&b->worker, THREAD_BLK_IO, "vmlet-blk");
	if (r) {
		virtio_pci_release(&b->vp);
		free(b);
		return error_errno(r, "virtio-blk: disk '%s': cannot start the i/o thread",
				   p->name);
	}
	*out = b;
	return 0;
}

int virtio_blk_quiesce(struct virtio_blk *b)
{
	int r;

	if (!b || b->flushed)
		return 0;
	/* the worker finishes the request it is serving, then quits: no
	 * write can come after the flush */
	virtio_worker_stop(&b->worker);
	b->flushed = true;
	/* whatever the guest wrote reaches the disk before vmlet exits,
	 * however the guest ended (power-off, crash, hard stop) */
	r = b->be && !b->be->read_only ? blk_flush(b->be) : 0;
	if (r)
		log_warn("virtio-blk: disk '%s': flush at exit failed: %s", b->name, strerror(-r));
	else if (b->be && !b->be->read_only)
		log_debug("virtio-blk: disk '%s': flushed", b->name);
	return r;
}

void virtio_blk_destroy(struct virtio_blk *b)
{
	if (!b)
		return;
	virtio_blk_quiesce(b);
	virtio_pci_release(&b->vp); /* resets; the worker has quit */
	blk_close(b->be);
	free(b);
}

struct virtio_pci *virtio_blk_pci(struct virtio_blk *b)
{
	return &b->vp;
}
