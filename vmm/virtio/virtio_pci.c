// SPDX-License-Identifier: MIT
/*
 * virtio_pci.c - modern virtio PCI transport (virtio 1.2 §4.1): the PCI
 * function, its capabilities, BAR 0 dispatch and the PCI_CFG window. The
 * common configuration is in virtio_pci_common.c, interrupts and
 * doorbells in virtio_pci_notify.c (virtio_pci_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vmm/virtio/virtio_pci_int.h"
#include "vmm/vm/irq.h"
#include "vmm/util/log.h"

#define TRANSPORT_FEATURES                                                                         \
	((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_EVENT_IDX) |                        \
	 (1ull << VIRTIO_RING_F_INDIRECT_DESC))

void virtio_pci_config_copy(const void *cfg, size_t size, uint32_t off, void *data, uint32_t len)
{
	memset(data, 0, len);
	if (off < size)
		memcpy(data, (const uint8_t *)cfg + off, len < size - off ? len : size - off);
}

/* ---- BAR 0 ---------------------------------------------------------------- */

static void vp_bar_access(struct virtio_pci *vp, uint64_t off, void *data, uint32_t len, bool write)
{
	if (off + len <= VIRTIO_PCI_COMMON_OFF + VIRTIO_PCI_COMMON_LEN) {
		pthread_mutex_lock(&vp->lock);
		virtio_pci_common_access(vp, (uint32_t)off, data, len, write);
		pthread_mutex_unlock(&vp->lock);
	} else if (off == VIRTIO_PCI_ISR_OFF && len == 1) {
		if (write)
			return;
		/* §4.1.4.5: reading ISR clears it and deasserts INTx */
		pthread_mutex_lock(&vp->isr_lock);
		*(uint8_t *)data = vp->isr;
		vp->isr = 0;
		pci_intx_set(&vp->pci, false);
		pthread_mutex_unlock(&vp->isr_lock);
	} else if (off >= VIRTIO_PCI_DEVICE_OFF && off - VIRTIO_PCI_DEVICE_OFF < vp->config_len &&
		   off - VIRTIO_PCI_DEVICE_OFF + len <= vp->config_len) {
		uint32_t o = (uint32_t)(off - VIRTIO_PCI_DEVICE_OFF);

		pthread_mutex_lock(&vp->lock);
		if (write && vp->ops->config_write)
			vp->ops->config_write(vp->dev, o, data, len);
		else if (!write && vp->ops->config_read)
			vp->ops->config_read(vp->dev, o, data, len);
		else if (!write)
			memset(data, 0, len);
		pthread_mutex_unlock(&vp->lock);
	} else if (off >= VIRTIO_PCI_NOTIFY_OFF &&
		   off < VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT * vp->nq) {
		if (write)
			virtio_pci_kick(vp, (uint32_t)(off - VIRTIO_PCI_NOTIFY_OFF) /
						VIRTIO_PCI_NOTIFY_MULT);
		else
			memset(data, 0, len);
	} else if (!write) {
		memset(data, 0, len);
	}
}

static void vp_bar_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	vp_bar_access(opaque, off, data, len, false);
}

static void vp_bar_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	vp_bar_access(opaque, off, (void *)(uintptr_t)data, len, true);
}

const struct io_ops virtio_pci_bar_ops = {vp_bar_read, vp_bar_write};

/* ---- VIRTIO_PCI_CAP_PCI_CFG: BAR access through config space (§4.1.4.9) -- */

static uint8_t vp_pcicap_off(struct virtio_pci *vp)
{
	return vp->pci.last_cap; /* added last, see virtio_pci_init() */
}

static bool vp_pcicap_window(struct virtio_pci *vp, uint32_t off, uint32_t len, uint32_t *bar_off,
			     uint32_t *blen)
{
	uint8_t c = vp_pcicap_off(vp);
	uint8_t *cfg = vp->pci.cfg;

	if (off + len <= c + 16u || off >= c + 20u)
		return false;
	memcpy(bar_off, cfg + c + 8, 4);
	memcpy(blen, cfg + c + 12, 4);
	return cfg[c + 4] == 0 && (*blen == 1 || *blen == 2 || *blen == 4) &&
	       *bar_off < VIRTIO_PCI_BAR_SIZE && !(*bar_off & (*blen - 1));
}

static void vp_cfg_write(void *opaque, uint32_t off, uint32_t len)
{
	struct virtio_pci *vp = opaque;
	uint32_t bar_off, blen;

	if (vp_pcicap_window(vp, off, len, &bar_off, &blen))
		vp_bar_access(vp, bar_off, vp->pci.cfg + vp_pcicap_off(vp) + 16, blen, true);
}

static void vp_cfg_read(void *opaque, uint32_t off, uint32_t len)
{
	struct virtio_pci *vp = opaque;
	uint32_t bar_off, blen;

	if (vp_pcicap_window(vp, off, len, &bar_off, &blen))
		vp_bar_access(vp, bar_off, vp->pci.cfg + vp_pcicap_off(vp) + 16, blen, false);
}

static const struct pci_dev_cb vp_pci_cb = {
    .msix_update = virtio_pci_msix_update,
    .bar_map = virtio_pci_bar_map,
    .cfg_write = vp_cfg_write,
    .cfg_read = vp_cfg_read,
};

struct virtio_pci *virtio_pci_of(struct pci_dev *d)
{
	return d->cb == &vp_pci_cb ? d->opaque : NULL;
}

/* ---- setup ----------------------------------------------------------------- */

static int vp_add_cap(struct virtio_pci *vp, uint8_t type, uint32_t off, uint32_t len,
		      uint8_t extra_len, uint32_t extra)
{
	uint8_t cap[20] = {PCI_CAP_ID_VNDR, 0, (uint8_t)(16 + extra_len), type, 0};

	memcpy(cap + 8, &off, 4);
	memcpy(cap + 12, &len, 4);
	memcpy(cap + 16, &extra, 4);
	return pci_cap_add(&vp->pci, cap, (uint8_t)(16 + extra_len),
			   type == VIRTIO_PCI_CAP_PCI_CFG);
}

static int vp_caps(struct virtio_pci *vp)
{
	int r, c;

	if ((r = vp_add_cap(vp, VIRTIO_PCI_CAP_COMMON_CFG, VIRTIO_PCI_COMMON_OFF,
			    VIRTIO_PCI_COMMON_LEN, 0, 0)) < 0 ||
	    (r = vp_add_cap(vp, VIRTIO_PCI_CAP_NOTIFY_CFG, VIRTIO_PCI_NOTIFY_OFF,
			    VIRTIO_PCI_NOTIFY_MULT * vp->nq, 4, VIRTIO_PCI_NOTIFY_MULT)) < 0 ||
	    (r = vp_add_cap(vp, VIRTIO_PCI_CAP_ISR_CFG, VIRTIO_PCI_ISR_OFF, 1, 0, 0)) < 0 ||
	    (vp->config_len && (r = vp_add_cap(vp, VIRTIO_PCI_CAP_DEVICE_CFG, VIRTIO_PCI_DEVICE_OFF,
					       vp->config_len, 0, 0)) < 0) ||
	    (r = pci_msix_init(&vp->pci, (uint16_t)vp->nvec, 0, VIRTIO_PCI_MSIX_TABLE,
			       VIRTIO_PCI_MSIX_PBA)) < 0 ||
	    (r = vp_add_cap(vp, VIRTIO_PCI_CAP_PCI_CFG, 0, 0, 4, 0)) < 0)
		return r;
	/* in the PCI_CFG capability only bar, offset, length and data are
	 * the driver's to write */
	c = r;
	memset(vp->pci.wmask + c + 2, 0, 2);
	memset(vp->pci.wmask + c + 5, 0, 3);
	return 0;
}

static void vp_close_fds(struct virtio_pci *vp)
{
	for (unsigned int i = 0; i < VIRTIO_PCI_MAX_QUEUES; i++) {
		if (vp->q[i].kick_fd >= 0)
			close(vp->q[i].kick_fd);
		vp->q[i].kick_fd = -1;
	}
	for (unsigned int v = 0; v < PCI_MSIX_MAX; v++) {
		if (vp->irq_fd[v] >= 0)
			close(vp->irq_fd[v]);
		vp->irq_fd[v] = -1;
	}
}

int virtio_pci_init(struct virtio_pci *vp, struct pci_host *host, const char *name,
		    const struct virtio_dev_ops *ops, void *dev, unsigned int nq,
		    uint16_t queue_max_size, uint32_t config_len)
{
	int r;

	memset(vp, 0, sizeof(*vp));
	for (unsigned int v = 0; v < PCI_MSIX_MAX; v++)
		vp->irq_fd[v] = -1;
	for (unsigned int i = 0; i < VIRTIO_PCI_MAX_QUEUES; i++)
		vp->q[i].kick_fd = -1;
	if (!nq || nq > VIRTIO_PCI_MAX_QUEUES || nq + 1 > PCI_MSIX_MAX || !queue_max_size ||
	    queue_max_size > VIRTQ_MAX_SIZE || (queue_max_size & (queue_max_size - 1)) ||
	    config_len > VIRTIO_PCI_DEVICE_LEN)
		return -EINVAL;
	vp->ops = ops;
	vp->dev = dev;
	vp->vm = host->vm;
	vp->mem = host->mem;
	vp->nq = nq;
	vp->config_len = config_len;
	snprintf(vp->name, sizeof(vp->name), "%s", name);
	vp->device_features = (ops->features ? ops->features(dev) : 0) | TRANSPORT_FEATURES;
	pthread_mutex_init(&vp->lock, NULL);
	pthread_mutex_init(&vp->isr_lock, NULL);
	vp->nvec = nq + 1;
	for (unsigned int i = 0; i < nq; i++) {
		vp->q[i].max_size = vp->q[i].size = queue_max_size;
		vp->q[i].vector = VIRTIO_MSI_NO_VECTOR;
		vp->q[i].kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (vp->q[i].kick_fd < 0) {
			r = -errno;
			goto out_fds;
		}
	}
	for (unsigned int v = 0; v < vp->nvec; v++) {
		vp->irq_fd[v] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (vp->irq_fd[v] < 0) {
			r = -errno;
			goto out_fds;
		}
	}
	vp->config_vector = VIRTIO_MSI_NO_VECTOR;
	/* §4.1.2: 0x1040 + type, revision 1, subsystem vendor/device free */
	pci_dev_init(&vp->pci, VIRTIO_PCI_VENDOR,
		     (uint16_t)(VIRTIO_PCI_DEVICE_BASE + ops->device_id), ops->class_code, 1,
		     VIRTIO_PCI_VENDOR, 0x1100, &vp_pci_cb, vp);
	r = pci_bar_add(&vp->pci, 0, VIRTIO_PCI_BAR_SIZE, &virtio_pci_bar_ops, vp);
	if (!r)
		r = vp_caps(vp);
	if (!r)
		r = pci_dev_add(host, &vp->pci);
	if (!r)
		return 0;
out_fds:
	vp_close_fds(vp);
	return r;
}

void virtio_pci_release(struct virtio_pci *vp)
{
	if (!vp->ops)
		return;
	if (vp->pci.host)
		pci_dev_remove(vp->pci.host, &vp->pci);
	pthread_mutex_lock(&vp->lock);
	virtio_pci_reset_locked(vp);
	if (vp->bar_mapped)
		virtio_pci_doorbells(vp, false);
	pthread_mutex_unlock(&vp->lock);
	for (unsigned int v = 0; v < vp->nvec; v++) {
		if (vp->routed[v]) {
			irq_irqfd_deassign(vp->vm, vp->irq_fd[v], vp->gsi[v]);
			irq_msi_free(vp->vm, vp->gsi[v]);
			vp->routed[v] = false;
		}
	}
	vp_close_fds(vp);
	pthread_mutex_destroy(&vp->lock);
	pthread_mutex_destroy(&vp->isr_lock);
	vp->ops = NULL;
}

struct virtq *virtio_pci_queue(struct virtio_pci *vp, unsigned int i)
{
	return i < vp->nq && vp->q[i].enabled && vp->q[i].vq.size ? &vp->q[i].vq : NULL;
}

int virtio_pci_kick_fd(struct virtio_pci *vp, unsigned int i)
{
	return i < vp->nq ? vp->q[i].kick_fd : -1;
}