/* SPDX-License-Identifier: MIT */
/*
 * virtio_pci_snap.c - the virtio transport in a snapshot (virtio_pci.h):
 * status, feature selects and the accepted features, the selected queue,
 * vectors, the config generation, the ISR, per queue its size, vector,
 * enable bit and ring addresses, and for a started device each enabled
 * queue's private indices (next avail slot, used index, the last one
 * signalled) and the device's own items. A started device is saved with
 * its workers held (freeze): every chain a worker popped was completed,
 * so the indices and guest memory agree.
 */
#include <errno.h>
#include <string.h>

#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/log.h"
#include "vmm/virtio/virtio_pci_int.h"

enum { VP_SNAP_REGS = 1, VP_SNAP_QUEUE, VP_SNAP_RING, VP_SNAP_DEVICE };

#define VP_REGS	 9 /* u64 values in VP_SNAP_REGS */
#define VP_QREGS 6 /* ... in VP_SNAP_QUEUE */
#define VP_RING	 4 /* ... in VP_SNAP_RING */

static bool vp_started(struct virtio_pci *vp)
{
	return virtio_pci_status(vp) & VIRTIO_CONFIG_S_DRIVER_OK;
}

int virtio_pci_freeze(struct virtio_pci *vp)
{
	if (!vp_started(vp) || !vp->active)
		return 0;
	if (!vp->ops->freeze)
		return error_errno(-ENOTSUP,
				   "snapshot: %s: its driver is running and the device cannot "
				   "hold its queues for a snapshot yet (docs/snapshot.md)",
				   vp->name);
	vp->ops->freeze(vp->dev);
	vp->frozen = true;
	return 0;
}

void virtio_pci_thaw(struct virtio_pci *vp)
{
	if (!vp->frozen)
		return;
	vp->frozen = false;
	if (vp->ops->thaw)
		vp->ops->thaw(vp->dev);
}

static void save_rings(struct virtio_pci *vp, struct snap_buf *b)
{
	uint64_t r[VP_RING];

	for (unsigned int i = 0; i < vp->nq; i++) {
		const struct virtq *q = &vp->q[i].vq;

		if (!vp->q[i].enabled)
			continue;
		r[0] = q->last_avail;
		r[1] = q->used_idx;
		r[2] = q->signalled_used;
		r[3] = q->signalled_valid;
		snap_buf_item(b, VP_SNAP_RING, r, sizeof(r));
	}
}

static void save_regs(struct virtio_pci *vp, struct snap_buf *b)
{
	uint64_t r[VP_REGS], q[VP_QREGS];

	pthread_mutex_lock(&vp->isr_lock);
	r[6] = vp->isr;
	pthread_mutex_unlock(&vp->isr_lock);
	r[0] = virtio_pci_status(vp);
	r[1] = vp->dfselect;
	r[2] = vp->gfselect;
	r[3] = vp->queue_select;
	r[4] = vp->config_vector;
	r[5] = vp->config_gen;
	r[7] = vp->driver_features;
	r[8] = vp->nq;
	snap_buf_item(b, VP_SNAP_REGS, r, sizeof(r));
	for (unsigned int i = 0; i < vp->nq; i++) {
		const struct virtio_pci_queue *p = &vp->q[i];

		q[0] = p->size;
		q[1] = p->vector;
		q[2] = p->enabled;
		q[3] = p->desc;
		q[4] = p->driver;
		q[5] = p->device;
		snap_buf_item(b, VP_SNAP_QUEUE, q, sizeof(q));
	}
}

int virtio_pci_save(struct virtio_pci *vp, struct snap_buf *b)
{
	size_t mark;
	int ret = 0;

	pthread_mutex_lock(&vp->lock);
	if (vp_started(vp) && (!vp->active || !vp->frozen)) {
		ret = error_errno(-ENOTSUP, "snapshot: %s: %s", vp->name,
				  vp->active ? "its workers were not held"
					     : "it needs a reset (a broken queue)");
		goto out;
	}
	save_regs(vp, b);
	if (vp_started(vp))
		save_rings(vp, b);
	mark = snap_buf_open(b, VP_SNAP_DEVICE);
	if (vp->ops->save)
		ret = vp->ops->save(vp->dev, b);
	snap_buf_close(b, mark);
	if (!ret)
		ret = b->err;
out:
	pthread_mutex_unlock(&vp->lock);
	return ret;
}

static bool vp_vector_ok(const struct virtio_pci *vp, uint64_t v)
{
	return v == VIRTIO_MSI_NO_VECTOR || v < vp->pci.msix_n;
}

static bool vp_regs_ok(const struct virtio_pci *vp, const uint64_t *r)
{
	bool started = r[0] & VIRTIO_CONFIG_S_DRIVER_OK;

	if (r[0] > 0xff || (r[0] & VIRTIO_CONFIG_S_NEEDS_RESET))
		return false;
	if ((r[0] & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    ((r[7] & ~vp->device_features) || !(r[7] >> VIRTIO_F_VERSION_1 & 1)))
		return false;
	if (started && !(r[0] & VIRTIO_CONFIG_S_FEATURES_OK))
		return false;
	return r[1] <= UINT32_MAX && r[2] <= UINT32_MAX && r[3] <= 0xffff &&
	       vp_vector_ok(vp, r[4]) && r[5] <= 0xff && r[6] <= 3 && r[8] == vp->nq;
}

/* A started device's rings: valid as at DRIVER_OK, then the indices. */
static int load_rings(struct virtio_pci *vp, struct snap_cur *c)
{
	bool ev = vp->driver_features >> VIRTIO_RING_F_EVENT_IDX & 1;
	bool ind = vp->driver_features >> VIRTIO_RING_F_INDIRECT_DESC & 1;
	uint64_t r[VP_RING];

	for (unsigned int i = 0; i < vp->nq; i++) {
		struct virtio_pci_queue *p = &vp->q[i];

		if (!p->enabled)
			continue;
		if (snap_cur_want(c, VP_SNAP_RING, r, sizeof(r)) || r[0] > 0xffff ||
		    r[1] > 0xffff || r[2] > 0xffff || r[3] > 1)
			return -EBADMSG;
		if (virtq_init(&p->vq, vp->mem, p->size, p->desc, p->driver, p->device, ev, ind))
			return error_errno(-EBADMSG, "snapshot: %s: queue %u: invalid ring",
					   vp->name, i);
		p->vq.last_avail = (uint16_t)r[0];
		p->vq.used_idx = (uint16_t)r[1];
		p->vq.signalled_used = (uint16_t)r[2];
		p->vq.signalled_valid = r[3];
	}
	return 0;
}

static int load_queues(struct virtio_pci *vp, struct snap_cur *c,
		       uint64_t q[VIRTIO_PCI_MAX_QUEUES][VP_QREGS])
{
	for (unsigned int i = 0; i < vp->nq; i++) {
		if (snap_cur_want(c, VP_SNAP_QUEUE, q[i], sizeof(q[i])))
			return -EBADMSG;
		if (q[i][0] > 0xffff || !vp_vector_ok(vp, q[i][1]) || q[i][2] > 1)
			return error_errno(-EBADMSG, "snapshot: %s: queue %u does not fit",
					   vp->name, i);
	}
	return 0;
}

static void set_regs(struct virtio_pci *vp, const uint64_t *r,
		     uint64_t q[VIRTIO_PCI_MAX_QUEUES][VP_QREGS])
{
	__atomic_store_n(&vp->status, (uint8_t)r[0], __ATOMIC_RELEASE);
	vp->dfselect = (uint32_t)r[1];
	vp->gfselect = (uint32_t)r[2];
	vp->queue_select = (uint16_t)r[3];
	__atomic_store_n(&vp->config_vector, (uint16_t)r[4], __ATOMIC_RELAXED);
	vp->config_gen = (uint8_t)r[5];
	vp->driver_features = r[7];
	for (unsigned int i = 0; i < vp->nq; i++) {
		struct virtio_pci_queue *p = &vp->q[i];

		p->size = (uint16_t)q[i][0];
		__atomic_store_n(&p->vector, (uint16_t)q[i][1], __ATOMIC_RELAXED);
		p->enabled = q[i][2];
		p->desc = q[i][3];
		p->driver = q[i][4];
		p->device = q[i][5];
	}
	pthread_mutex_lock(&vp->isr_lock);
	vp->isr = (uint8_t)r[6];
	pthread_mutex_unlock(&vp->isr_lock);
}

int virtio_pci_load(struct virtio_pci *vp, struct snap_cur *c)
{
	uint64_t r[VP_REGS], q[VIRTIO_PCI_MAX_QUEUES][VP_QREGS];
	struct snap_cur dev;
	int ret;

	if (snap_cur_want(c, VP_SNAP_REGS, r, sizeof(r)))
		return -EBADMSG;
	if (!vp_regs_ok(vp, r))
		return error_errno(-EBADMSG, "snapshot: %s: saved registers do not fit the device",
				   vp->name);
	ret = load_queues(vp, c, q);
	if (ret)
		return ret;
	pthread_mutex_lock(&vp->lock);
	set_regs(vp, r, q);
	if (vp_started(vp))
		ret = load_rings(vp, c);
	if (!ret && snap_cur_want_any(c, VP_SNAP_DEVICE, &dev))
		ret = -EBADMSG;
	if (!ret && vp->ops->load)
		ret = vp->ops->load(vp->dev, &dev);
	else if (!ret && dev.left)
		ret = -EBADMSG;
	if (ret) { /* nothing half-set stays: the device as after a reset */
		error_errno(ret, "restore: %s: its saved state is refused", vp->name);
		virtio_pci_reset_locked(vp);
	}
	pthread_mutex_unlock(&vp->lock);
	return ret;
}

int virtio_pci_start(struct virtio_pci *vp)
{
	int ret = 0;

	pthread_mutex_lock(&vp->lock);
	if (vp_started(vp) && !vp->active) {
		ret = vp->ops->activate ? vp->ops->activate(vp->dev, vp, vp->driver_features) : 0;
		if (ret)
			error_errno(ret, "snapshot: %s: cannot start the device again", vp->name);
		else
			vp->active = true;
	}
	pthread_mutex_unlock(&vp->lock);
	return ret;
}
