// SPDX-License-Identifier: MIT
/*
 * virtio_pci_notify.c - notifications of the virtio PCI transport, both
 * ways (virtio 1.2 §4.1.4.4, §4.1.4.5, §4.1.5.1.3): interrupts through
 * irqfd-routed MSI-X vectors (or KVM_SIGNAL_MSI, or INTx + ISR), guest
 * doorbells through ioeventfd, and the drain loop every device runs.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vmm/virtio/virtio_pci_int.h"
#include "vmm/vm/irq.h"
#include "vmm/util/log.h"

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
void virtio_pci_msix_update(void *opaque, unsigned int vec, bool fire)
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

void virtio_pci_doorbells(struct virtio_pci *vp, bool on)
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

void virtio_pci_bar_map(void *opaque, int bar, uint64_t gpa, bool mapped)
{
	struct virtio_pci *vp = opaque;

	if (bar != 0)
		return;
	pthread_mutex_lock(&vp->lock);
	if (vp->bar_mapped)
		virtio_pci_doorbells(vp, false);
	vp->bar_gpa = gpa;
	vp->bar_mapped = mapped;
	if (mapped)
		virtio_pci_doorbells(vp, true);
	pthread_mutex_unlock(&vp->lock);
}

void virtio_pci_kick(struct virtio_pci *vp, unsigned int i)
{
	uint64_t one = 1;

	if (i >= vp->nq)
		return;
	if (vp->ops->notify) {
		if (virtio_pci_status(vp) & VIRTIO_CONFIG_S_DRIVER_OK)
			vp->ops->notify(vp->dev, i);
		return;
	}
	if (write(vp->q[i].kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn_once("%s: kick eventfd write failed", vp->name);
}

/* ---- the consumer loop ----------------------------------------------------- */

int virtio_pci_drain(struct virtio_pci *vp, unsigned int i, struct virtq_elem *e,
		     void (*serve)(void *opaque, struct virtq *q, struct virtq_elem *e, bool good),
		     void *opaque)
{
	struct virtq *q = virtio_pci_queue(vp, i);
	unsigned int done;
	int r;

	if (!q)
		return 0;
	do {
		virtq_disable_notify(q);
		done = 0;
		while ((r = virtq_pop(q, e)) > 0) {
			serve(opaque, q, e, r == VIRTQ_POP_OK);
			done++;
		}
		if (done && virtq_should_notify(q))
			virtio_pci_queue_interrupt(vp, i);
		if (r < 0) {
			virtio_pci_needs_reset(vp);
			return r;
		}
	} while (virtq_enable_notify(q));
	return 0;
}
