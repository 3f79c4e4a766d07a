// SPDX-License-Identifier: MIT
/*
 * virtio_pci.c - modern virtio PCI transport (virtio 1.2 §4.1).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vmm/dev/virtio_pci.h"
#include "vmm/irq.h"
#include "vmm/log.h"

/* common configuration structure offsets (§4.1.4.3) */
enum {
	VPCI_DFSELECT = 0x00,
	VPCI_DF = 0x04,
	VPCI_GFSELECT = 0x08,
	VPCI_GF = 0x0c,
	VPCI_MSIX_CONFIG = 0x10,
	VPCI_NUM_QUEUES = 0x12,
	VPCI_STATUS = 0x14,
	VPCI_CFG_GEN = 0x15,
	VPCI_Q_SELECT = 0x16,
	VPCI_Q_SIZE = 0x18,
	VPCI_Q_VECTOR = 0x1a,
	VPCI_Q_ENABLE = 0x1c,
	VPCI_Q_NOFF = 0x1e,
	VPCI_Q_DESCLO = 0x20,
	VPCI_Q_DESCHI = 0x24,
	VPCI_Q_AVAILLO = 0x28,
	VPCI_Q_AVAILHI = 0x2c,
	VPCI_Q_USEDLO = 0x30,
	VPCI_Q_USEDHI = 0x34,
};

/* capability cfg_type values (§4.1.4) */
enum { VCAP_COMMON = 1, VCAP_NOTIFY = 2, VCAP_ISR = 3, VCAP_DEVICE = 4, VCAP_PCI = 5 };

#define TRANSPORT_FEATURES                                                                         \
	((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_EVENT_IDX) |                             \
	 (1ull << VIRTIO_F_INDIRECT_DESC))

static uint8_t vp_status(struct virtio_pci *vp)
{
	return __atomic_load_n(&vp->status, __ATOMIC_ACQUIRE);
}

/* ---- interrupts ------------------------------------------------------------ */

static void vp_signal_vector(struct virtio_pci *vp, unsigned int vec)
{
	uint64_t one = 1, addr;
	uint32_t data;

	if (__atomic_load_n(&vp->routed[vec], __ATOMIC_ACQUIRE)) {
		if (write(vp->irq_fd[vec], &one, sizeof(one)) < 0)
			log_warn_once("%s: irqfd write failed", vp->name);
		return;
	}
	pci_msix_get(&vp->pci, vec, &addr, &data);
	if (addr && irq_msi_signal(vp->vm, addr, data) < 0)
		log_warn_once("%s: msi delivery failed", vp->name);
}

static void vp_raise(struct virtio_pci *vp, uint16_t vec, uint8_t isr_bit)
{
	if (pci_msix_enabled(&vp->pci)) {
		if (vec < vp->pci.msix_n && pci_msix_request(&vp->pci, vec))
			vp_signal_vector(vp, vec);
		return;
	}
	pthread_mutex_lock(&vp->isr_lock);
	vp->isr |= isr_bit;
	pci_intx_set(&vp->pci, true);
	pthread_mutex_unlock(&vp->isr_lock);
}

void virtio_pci_queue_interrupt(struct virtio_pci *vp, unsigned int i)
{
	if (i < vp->nq)
		vp_raise(vp, __atomic_load_n(&vp->q[i].vector, __ATOMIC_RELAXED), 1);
}

void virtio_pci_config_interrupt(struct virtio_pci *vp)
{
	vp_raise(vp, __atomic_load_n(&vp->config_vector, __ATOMIC_RELAXED), 2);
}

void virtio_pci_needs_reset(struct virtio_pci *vp)
{
	uint8_t old = __atomic_fetch_or(&vp->status, VIRTIO_CONFIG_S_NEEDS_RESET, __ATOMIC_ACQ_REL);

	if (!(old & VIRTIO_CONFIG_S_NEEDS_RESET)) {
		log_warn("%s: device needs reset (driver broke a queue)", vp->name);
		if (old & VIRTIO_CONFIG_S_DRIVER_OK)
			virtio_pci_config_interrupt(vp);
	}
}

/* MSI-X entry rewritten or unmasked (vCPU thread, no PCI lock held). */
static void vp_msix_update(void *opaque, unsigned int vec, bool fire)
{
	struct virtio_pci *vp = opaque;
	uint64_t addr;
	uint32_t data;
	int r;

	if (vec >= vp->nvec)
		return;
	pci_msix_get(&vp->pci, vec, &addr, &data);
	/* Only ioctls here: this runs on a sandboxed vCPU thread, so the
	 * eventfds were made at init. */
	pthread_mutex_lock(&vp->lock);
	if (vp->routed[vec]) {
		if (addr)
			irq_msi_update(vp->vm, vp->gsi[vec], addr, data);
	} else if (addr) {
		r = irq_msi_alloc(vp->vm, addr, data, &vp->gsi[vec]);
		if (!r) {
			r = irq_irqfd_assign(vp->vm, vp->irq_fd[vec], vp->gsi[vec]);
			if (r)
				irq_msi_free(vp->vm, vp->gsi[vec]);
		}
		if (r) /* fall back to KVM_SIGNAL_MSI per interrupt */
			log_warn_once("%s: no irqfd for msi-x vector (%s)", vp->name, strerror(-r));
		else
			__atomic_store_n(&vp->routed[vec], true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&vp->lock);
	if (fire)
		vp_signal_vector(vp, vec);
}

/* ---- doorbells ------------------------------------------------------------- */

static void vp_doorbells(struct virtio_pci *vp, bool on)
{
	for (unsigned int i = 0; i < vp->nq; i++) {
		struct virtio_pci_queue *q = &vp->q[i];
		uint64_t a = vp->bar_gpa + VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT * i;

		if (on && !q->ioeventfd && !vp->ops->notify && vp->vm)
			q->ioeventfd = !irq_ioeventfd_assign(vp->vm, q->kick_fd, a, 2, false, -1);
		else if (!on && q->ioeventfd)
			q->ioeventfd =
			    irq_ioeventfd_deassign(vp->vm, q->kick_fd, a, 2, false, -1) != 0;
	}
}

static void vp_bar_map(void *opaque, int bar, uint64_t gpa, bool mapped)
{
	struct virtio_pci *vp = opaque;

	if (bar != 0)
		return;
	pthread_mutex_lock(&vp->lock);
	if (vp->bar_mapped)
		vp_doorbells(vp, false);
	vp->bar_gpa = gpa;
	vp->bar_mapped = mapped;
	if (mapped)
		vp_doorbells(vp, true);
	pthread_mutex_unlock(&vp->lock);
}

static void vp_kick(struct virtio_pci *vp, unsigned int i)
{
	uint64_t one = 1;

	if (i >= vp->nq)
		return;
	if (vp->ops->notify) {
		if (vp_status(vp) & VIRTIO_CONFIG_S_DRIVER_OK)
			vp->ops->notify(vp->dev, i);
		return;
	}
	if (write(vp->q[i].kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn_once("%s: kick eventfd write failed", vp->name);
}

/* ---- status machine ------------------------------------------------------- */

/* Called with vp->lock held. */
static void vp_reset(struct virtio_pci *vp)
{
	if (vp->active && vp->ops->reset)
		vp->ops->reset(vp->dev);
	vp->active = false;
	__atomic_store_n(&vp->status, 0, __ATOMIC_RELEASE);
	vp->driver_features = 0;
	vp->dfselect = vp->gfselect = 0;
	vp->queue_select = 0;
	__atomic_store_n(&vp->config_vector, VIRTIO_NO_VECTOR, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < vp->nq; i++) {
		struct virtio_pci_queue *q = &vp->q[i];
		uint64_t drain;

		q->size = q->max_size;
		__atomic_store_n(&q->vector, VIRTIO_NO_VECTOR, __ATOMIC_RELAXED);
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
	bool ev = vp->driver_features >> VIRTIO_F_EVENT_IDX & 1;
	bool ind = vp->driver_features >> VIRTIO_F_INDIRECT_DESC & 1;

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
	uint8_t old = vp_status(vp);

	if (!v) {
		vp_reset(vp);
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
	case VPCI_DFSELECT:
		return vp->dfselect;
	case VPCI_DF:
		return vp->dfselect < 2 ? (uint32_t)(vp->device_features >> (32 * vp->dfselect))
					: 0;
	case VPCI_GFSELECT:
		return vp->gfselect;
	case VPCI_GF:
		return vp->gfselect < 2 ? (uint32_t)(vp->driver_features >> (32 * vp->gfselect))
					: 0;
	case VPCI_MSIX_CONFIG:
		return vp->config_vector;
	case VPCI_NUM_QUEUES:
		return vp->nq;
	case VPCI_STATUS:
		return vp_status(vp);
	case VPCI_CFG_GEN:
		return vp->config_gen;
	case VPCI_Q_SELECT:
		return vp->queue_select;
	case VPCI_Q_SIZE:
		return q ? q->size : 0;
	case VPCI_Q_VECTOR:
		return q ? q->vector : VIRTIO_NO_VECTOR;
	case VPCI_Q_ENABLE:
		return q ? q->enabled : 0;
	case VPCI_Q_NOFF:
		return q ? vp->queue_select : 0;
	case VPCI_Q_DESCLO:
		return q ? (uint32_t)q->desc : 0;
	case VPCI_Q_DESCHI:
		return q ? (uint32_t)(q->desc >> 32) : 0;
	case VPCI_Q_AVAILLO:
		return q ? (uint32_t)q->driver : 0;
	case VPCI_Q_AVAILHI:
		return q ? (uint32_t)(q->driver >> 32) : 0;
	case VPCI_Q_USEDLO:
		return q ? (uint32_t)q->device : 0;
	case VPCI_Q_USEDHI:
		return q ? (uint32_t)(q->device >> 32) : 0;
	}
	return 0;
}

static uint16_t vp_vector(struct virtio_pci *vp, uint32_t v)
{
	/* §4.1.5.1.2: a vector the device cannot use reads back NO_VECTOR */
	return v < vp->pci.msix_n ? (uint16_t)v : VIRTIO_NO_VECTOR;
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
	if (off == VPCI_Q_VECTOR) {
		__atomic_store_n(&q->vector, vp_vector(vp, v), __ATOMIC_RELAXED);
		return;
	}
	/* §4.1.4.3.2: the rest is frozen once the queue is enabled */
	if (q->enabled || (vp_status(vp) & VIRTIO_CONFIG_S_DRIVER_OK))
		return;
	switch (off) {
	case VPCI_Q_SIZE:
		/* kept as written; checked (power of two, <= max) at DRIVER_OK */
		q->size = v > q->max_size ? q->max_size : (uint16_t)v;
		break;
	case VPCI_Q_ENABLE:
		q->enabled = v == 1;
		break;
	case VPCI_Q_DESCLO:
	case VPCI_Q_DESCHI:
		vp_set_half(&q->desc, off & 4, v);
		break;
	case VPCI_Q_AVAILLO:
	case VPCI_Q_AVAILHI:
		vp_set_half(&q->driver, off & 4, v);
		break;
	case VPCI_Q_USEDLO:
	case VPCI_Q_USEDHI:
		vp_set_half(&q->device, off & 4, v);
		break;
	}
}

static void vp_common_write(struct virtio_pci *vp, uint32_t off, uint32_t v)
{
	switch (off) {
	case VPCI_DFSELECT:
		vp->dfselect = v;
		break;
	case VPCI_GFSELECT:
		vp->gfselect = v;
		break;
	case VPCI_GF:
		if (vp->gfselect < 2 && !(vp_status(vp) & VIRTIO_CONFIG_S_FEATURES_OK))
			vp_set_half(&vp->driver_features, vp->gfselect, v);
		break;
	case VPCI_MSIX_CONFIG:
		__atomic_store_n(&vp->config_vector, vp_vector(vp, v), __ATOMIC_RELAXED);
		break;
	case VPCI_STATUS:
		vp_write_status(vp, (uint8_t)v);
		break;
	case VPCI_Q_SELECT:
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
	case VPCI_STATUS:
	case VPCI_CFG_GEN:
		return 1;
	case VPCI_MSIX_CONFIG:
	case VPCI_NUM_QUEUES:
	case VPCI_Q_SELECT:
	case VPCI_Q_SIZE:
	case VPCI_Q_VECTOR:
	case VPCI_Q_ENABLE:
	case VPCI_Q_NOFF:
		return 2;
	}
	return off < VIRTIO_PCI_COMMON_LEN && !(off & 3) ? 4 : 0;
}

/* §4.1.3.1: the driver accesses each register with its natural width (a
 * 64-bit queue address may also be written as one 8-byte access). Other
 * accesses read as zero and are ignored. */
static void vp_common(struct virtio_pci *vp, uint32_t off, void *data, uint32_t len, bool write)
{
	uint32_t v = 0;

	if (len == 8 && off >= VPCI_Q_DESCLO && !(off & 7)) {
		vp_common(vp, off, data, 4, write);
		vp_common(vp, off + 4, (uint8_t *)data + 4, 4, write);
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
		vp_common(vp, (uint32_t)off, data, len, write);
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
			vp_kick(vp,
				(uint32_t)(off - VIRTIO_PCI_NOTIFY_OFF) / VIRTIO_PCI_NOTIFY_MULT);
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
    .msix_update = vp_msix_update,
    .bar_map = vp_bar_map,
    .cfg_write = vp_cfg_write,
    .cfg_read = vp_cfg_read,
};

/* ---- setup ----------------------------------------------------------------- */

static int vp_add_cap(struct virtio_pci *vp, uint8_t type, uint32_t off, uint32_t len,
		      uint8_t extra_len, uint32_t extra)
{
	uint8_t cap[20] = {PCI_CAP_ID_VNDR, 0, (uint8_t)(16 + extra_len), type, 0};

	memcpy(cap + 8, &off, 4);
	memcpy(cap + 12, &len, 4);
	memcpy(cap + 16, &extra, 4);
	return pci_cap_add(&vp->pci, cap, (uint8_t)(16 + extra_len), type == VCAP_PCI);
}

static int vp_caps(struct virtio_pci *vp)
{
	int r, c;

	if ((r = vp_add_cap(vp, VCAP_COMMON, VIRTIO_PCI_COMMON_OFF, VIRTIO_PCI_COMMON_LEN, 0, 0)) <
		0 ||
	    (r = vp_add_cap(vp, VCAP_NOTIFY, VIRTIO_PCI_NOTIFY_OFF, VIRTIO_PCI_NOTIFY_MULT * vp->nq,
			    4, VIRTIO_PCI_NOTIFY_MULT)) < 0 ||
	    (r = vp_add_cap(vp, VCAP_ISR, VIRTIO_PCI_ISR_OFF, 1, 0, 0)) < 0 ||
	    (vp->config_len &&
	     (r = vp_add_cap(vp, VCAP_DEVICE, VIRTIO_PCI_DEVICE_OFF, vp->config_len, 0, 0)) < 0) ||
	    (r = pci_msix_init(&vp->pci, (uint16_t)vp->nvec, 0, VIRTIO_PCI_MSIX_TABLE,
			       VIRTIO_PCI_MSIX_PBA)) < 0 ||
	    (r = vp_add_cap(vp, VCAP_PCI, 0, 0, 4, 0)) < 0)
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

int virtio_pci_init(struct virtio_pci *vp, struct pci_host *host, struct vm *vm,
		    const struct guest_mem *mem, const char *name, const struct virtio_dev_ops *ops,
		    void *dev, unsigned int nq, uint16_t queue_max_size, uint32_t config_len)
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
	vp->vm = vm;
	vp->mem = mem;
	vp->nq = nq;
	vp->config_len = config_len;
	snprintf(vp->name, sizeof(vp->name), "%s", name);
	vp->device_features = (ops->features ? ops->features(dev) : 0) | TRANSPORT_FEATURES;
	pthread_mutex_init(&vp->lock, NULL);
	pthread_mutex_init(&vp->isr_lock, NULL);
	vp->nvec = nq + 1;
	for (unsigned int i = 0; i < nq; i++) {
		vp->q[i].max_size = vp->q[i].size = queue_max_size;
		vp->q[i].vector = VIRTIO_NO_VECTOR;
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
	vp->config_vector = VIRTIO_NO_VECTOR;
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
	vp_reset(vp);
	if (vp->bar_mapped)
		vp_doorbells(vp, false);
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
