/* SPDX-License-Identifier: MIT */
/*
 * virtio_pci_snap.c - the virtio transport's registers in a snapshot
 * (virtio_pci.h): status, feature selects and the accepted features, the
 * selected queue, vectors, the config generation, the ISR, and per queue
 * its size, vector, enable bit and ring addresses. Only a device the
 * driver has not started (no DRIVER_OK) is captured: then no worker runs
 * and no ring index exists yet.
 */
#include <errno.h>
#include <string.h>

#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/virtio/virtio_pci_int.h"

enum { VP_SNAP_REGS = 1, VP_SNAP_QUEUE };

#define VP_REGS	 9 /* u64 values in VP_SNAP_REGS */
#define VP_QREGS 6 /* ... in VP_SNAP_QUEUE */

int virtio_pci_save(struct virtio_pci *vp, struct snap_buf *b)
{
	uint64_t r[VP_REGS], q[VP_QREGS];
	int ret = 0;

	pthread_mutex_lock(&vp->lock);
	if (virtio_pci_status(vp) & VIRTIO_CONFIG_S_DRIVER_OK) {
		ret = error_errno(-ENOTSUP,
				  "snapshot: %s: its driver is running (DRIVER_OK): saving an "
				  "active virtio device is not implemented (docs/snapshot.md)",
				  vp->name);
		goto out;
	}
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
	if (r[0] > 0xff || (r[0] & (VIRTIO_CONFIG_S_DRIVER_OK | VIRTIO_CONFIG_S_NEEDS_RESET)))
		return false;
	if ((r[0] & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    ((r[7] & ~vp->device_features) || !(r[7] >> VIRTIO_F_VERSION_1 & 1)))
		return false;
	return r[1] <= UINT32_MAX && r[2] <= UINT32_MAX && r[3] <= 0xffff &&
	       vp_vector_ok(vp, r[4]) && r[5] <= 0xff && r[6] <= 3 && r[8] == vp->nq;
}

int virtio_pci_load(struct virtio_pci *vp, struct snap_cur *c)
{
	uint64_t r[VP_REGS], q[VIRTIO_PCI_MAX_QUEUES][VP_QREGS];

	if (snap_cur_want(c, VP_SNAP_REGS, r, sizeof(r)))
		return -EBADMSG;
	if (!vp_regs_ok(vp, r))
		return error_errno(-EBADMSG, "snapshot: %s: saved registers do not fit the device",
				   vp->name);
	for (unsigned int i = 0; i < vp->nq; i++) {
		if (snap_cur_want(c, VP_SNAP_QUEUE, q[i], sizeof(q[i])))
			return -EBADMSG;
		if (q[i][0] > 0xffff || !vp_vector_ok(vp, q[i][1]) || q[i][2] > 1)
			return error_errno(-EBADMSG, "snapshot: %s: queue %u does not fit",
					   vp->name, i);
	}
	pthread_mutex_lock(&vp->lock);
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
	pthread_mutex_unlock(&vp->lock);
	return 0;
}
