// SPDX-License-Identifier: MIT
/*
 * virtio_pci_common.c - the common configuration structure of the virtio
 * PCI transport (virtio 1.2 §4.1.4.3): feature negotiation, the queue
 * registers and the device status state machine (§2.1, §3.1).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vmm/virtio/virtio_pci_int.h"
#include "vmm/util/log.h"

/* ---- status machine ------------------------------------------------------- */

/* Called with vp->lock held. */
void virtio_pci_reset_locked(struct virtio_pci *vp)
{
	if (vp->active && vp->ops->reset)
		vp->ops->reset(vp->dev);
	vp->active = false;
	__atomic_store_n(&vp->status, 0, __ATOMIC_RELEASE);
	vp->driver_features = 0;
	vp->dfselect = vp->gfselect = 0;
	vp->queue_select = 0;
	__atomic_store_n(&vp->config_vector, VIRTIO_MSI_NO_VECTOR, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < vp->nq; i++) {
		struct virtio_pci_queue *q = &vp->q[i];
		uint64_t drain;

		q->size = q->max_size;
		__atomic_store_n(&q->vector, VIRTIO_MSI_NO_VECTOR, __ATOMIC_RELAXED);
		q->enabled = false;
		q->desc = q->driver = q->device = 0;
		virtq_reset(&q->vq);
		while (read(q->kick_fd, &drain, sizeof(drain)) > 0)
			;
	}
	pthread_mutex_lock(&vp->isr_lock);
	vp->isr = 0;
	pci_intx_set(&vp->pci, false);
	pthread_mutex_unlock(&vp->isr_lock);
}

static bool vp_features_ok(struct virtio_pci *vp)
{
	uint64_t f = vp->driver_features;

	if (f & ~vp->device_features) {
		log_warn("%s: driver accepted unoffered features 0x%llx", vp->name,
			 (unsigned long long)(f & ~vp->device_features));
		return false;
	}
	if (!(f & (1ull << VIRTIO_F_VERSION_1))) {
		log_warn("%s: driver did not accept VIRTIO_F_VERSION_1", vp->name);
		return false;
	}
	return true;
}

static int vp_activate(struct virtio_pci *vp)
{
	bool ev = vp->driver_features >> VIRTIO_RING_F_EVENT_IDX & 1;
	bool ind = vp->driver_features >> VIRTIO_RING_F_INDIRECT_DESC & 1;

	for (unsigned int i = 0; i < vp->nq; i++) {
		struct virtio_pci_queue *q = &vp->q[i];

		if (!q->enabled)
			continue;
		if (virtq_init(&q->vq, vp->mem, q->size, q->desc, q->driver, q->device, ev, ind)) {
			log_warn("%s: queue %u has an invalid size or ring address", vp->name, i);
			return -EINVAL;
		}
	}
	return vp->ops->activate ? vp->ops->activate(vp->dev, vp, vp->driver_features) : 0;
}

static void vp_write_status(struct virtio_pci *vp, uint8_t v)
{
	uint8_t old = virtio_pci_status(vp);

	if (!v) {
		virtio_pci_reset_locked(vp);
		return;
	}
	if ((v & VIRTIO_CONFIG_S_FEATURES_OK) && !(old & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    !vp_features_ok(vp))
		v &= (uint8_t)~VIRTIO_CONFIG_S_FEATURES_OK;
	/* NEEDS_RESET is the device's; the driver cannot clear it */
	v = (uint8_t)((v & ~VIRTIO_CONFIG_S_NEEDS_RESET) | (old & VIRTIO_CONFIG_S_NEEDS_RESET));
	__atomic_store_n(&vp->status, v, __ATOMIC_RELEASE);
	if ((v & VIRTIO_CONFIG_S_DRIVER_OK) && !(old & VIRTIO_CONFIG_S_DRIVER_OK) &&
	    (v & VIRTIO_CONFIG_S_FEATURES_OK) && !vp->active) {
		if (vp_activate(vp))
			virtio_pci_needs_reset(vp);
		else
			vp->active = true;
	}
}

/* ---- common configuration ------------------------------------------------- */

static uint32_t vp_common_read(struct virtio_pci *vp, uint32_t off)
{
	struct virtio_pci_queue *q = vp->queue_select < vp->nq ? &vp->q[vp->queue_select] : NULL;

	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		return vp->dfselect;
	case VIRTIO_PCI_COMMON_DF:
		return vp->dfselect < 2 ? (uint32_t)(vp->device_features >> (32 * vp->dfselect))
					: 0;
	case VIRTIO_PCI_COMMON_GFSELECT:
		return vp->gfselect;
	case VIRTIO_PCI_COMMON_GF:
		return vp->gfselect < 2 ? (uint32_t)(vp->driver_features >> (32 * vp->gfselect))
					: 0;
	case VIRTIO_PCI_COMMON_MSIX:
		return vp->config_vector;
	case VIRTIO_PCI_COMMON_NUMQ:
		return vp->nq;
	case VIRTIO_PCI_COMMON_STATUS:
		return virtio_pci_status(vp);
	case VIRTIO_PCI_COMMON_CFGGENERATION:
		return vp->config_gen;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		return vp->queue_select;
	case VIRTIO_PCI_COMMON_Q_SIZE:
		return q ? q->size : 0;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		return q ? q->vector : VIRTIO_MSI_NO_VECTOR;
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		return q ? q->enabled : 0;
	case VIRTIO_PCI_COMMON_Q_NOFF:
		return q ? vp->queue_select : 0;
	case VIRTIO_PCI_COMMON_Q_DESCLO:
		return q ? (uint32_t)q->desc : 0;
	case VIRTIO_PCI_COMMON_Q_DESCHI:
		return q ? (uint32_t)(q->desc >> 32) : 0;
	case VIRTIO_PCI_COMMON_Q_AVAILLO:
		return q ? (uint32_t)q->driver : 0;
	case VIRTIO_PCI_COMMON_Q_AVAILHI:
		return q ? (uint32_t)(q->driver >> 32) : 0;
	case VIRTIO_PCI_COMMON_Q_USEDLO:
		return q ? (uint32_t)q->device : 0;
	case VIRTIO_PCI_COMMON_Q_USEDHI:
		return q ? (uint32_t)(q->device >> 32) : 0;
	}
	return 0;
}

static uint16_t vp_vector(struct virtio_pci *vp, uint32_t v)
{
	/* §4.1.5.1.2: a vector the device cannot use reads back NO_VECTOR */
	return v < vp->pci.msix_n ? (uint16_t)v : VIRTIO_MSI_NO_VECTOR;
}

static void vp_set_half(uint64_t *r, bool hi, uint32_t v)
{
	*r = hi ? (*r & 0xffffffffull) | (uint64_t)v << 32 : (*r & ~0xffffffffull) | v;
}

static void vp_queue_write(struct virtio_pci *vp, uint32_t off, uint32_t v)
{
	struct virtio_pci_queue *q;

	if (vp->queue_select >= vp->nq)
		return;
	q = &vp->q[vp->queue_select];
	if (off == VIRTIO_PCI_COMMON_Q_MSIX) {
		__atomic_store_n(&q->vector, vp_vector(vp, v), __ATOMIC_RELAXED);
		return;
	}
	/* §4.1.4.3.2: the rest is frozen once the queue is enabled */
	if (q->enabled || (virtio_pci_status(vp) & VIRTIO_CONFIG_S_DRIVER_OK))
		return;
	switch (off) {
	case VIRTIO_PCI_COMMON_Q_SIZE:
		/* kept as written; checked (power of two, <= max) at DRIVER_OK */
		q->size = v > q->max_size ? q->max_size : (uint16_t)v;
		break;
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		q->enabled = v == 1;
		break;
	case VIRTIO_PCI_COMMON_Q_DESCLO:
	case VIRTIO_PCI_COMMON_Q_DESCHI:
		vp_set_half(&q->desc, off & 4, v);
		break;
	case VIRTIO_PCI_COMMON_Q_AVAILLO:
	case VIRTIO_PCI_COMMON_Q_AVAILHI:
		vp_set_half(&q->driver, off & 4, v);
		break;
	case VIRTIO_PCI_COMMON_Q_USEDLO:
	case VIRTIO_PCI_COMMON_Q_USEDHI:
		vp_set_half(&q->device, off & 4, v);
		break;
	}
}

static void vp_common_write(struct virtio_pci *vp, uint32_t off, uint32_t v)
{
	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		vp->dfselect = v;
		break;
	case VIRTIO_PCI_COMMON_GFSELECT:
		vp->gfselect = v;
		break;
	case VIRTIO_PCI_COMMON_GF:
		if (vp->gfselect < 2 && !(virtio_pci_status(vp) & VIRTIO_CONFIG_S_FEATURES_OK))
			vp_set_half(&vp->driver_features, vp->gfselect, v);
		break;
	case VIRTIO_PCI_COMMON_MSIX:
		__atomic_store_n(&vp->config_vector, vp_vector(vp, v), __ATOMIC_RELAXED);
		break;
	case VIRTIO_PCI_COMMON_STATUS:
		vp_write_status(vp, (uint8_t)v);
		break;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		vp->queue_select = (uint16_t)v;
		break;
	default:
		vp_queue_write(vp, off, v);
		break;
	}
}

static uint32_t vp_reg_width(uint32_t off)
{
	switch (off) {
	case VIRTIO_PCI_COMMON_STATUS:
	case VIRTIO_PCI_COMMON_CFGGENERATION:
		return 1;
	case VIRTIO_PCI_COMMON_MSIX:
	case VIRTIO_PCI_COMMON_NUMQ:
	case VIRTIO_PCI_COMMON_Q_SELECT:
	case VIRTIO_PCI_COMMON_Q_SIZE:
	case VIRTIO_PCI_COMMON_Q_MSIX:
	case VIRTIO_PCI_COMMON_Q_ENABLE:
	case VIRTIO_PCI_COMMON_Q_NOFF:
		return 2;
	}
	return off < VIRTIO_PCI_COMMON_LEN && !(off & 3) ? 4 : 0;
}

/* §4.1.3.1: the driver accesses each register with its natural width (a
 * 64-bit queue address may also be written as one 8-byte access). Other
 * accesses read as zero and are ignored. */
void virtio_pci_common_access(struct virtio_pci *vp, uint32_t off, void *data, uint32_t len,
			      bool write)
{
	uint32_t v = 0;

	if (len == 8 && off >= VIRTIO_PCI_COMMON_Q_DESCLO && !(off & 7)) {
		virtio_pci_common_access(vp, off, data, 4, write);
		virtio_pci_common_access(vp, off + 4, (uint8_t *)data + 4, 4, write);
		return;
	}
	if (vp_reg_width(off) != len) {
		if (!write)
			memset(data, 0, len);
		log_warn_once("%s: common config access of %u bytes at 0x%x ignored", vp->name, len,
			      off);
		return;
	}
	if (write) {
		memcpy(&v, data, len);
		vp_common_write(vp, off, v);
	} else {
		v = vp_common_read(vp, off);
		memcpy(data, &v, len);
	}
}
