/* SPDX-License-Identifier: MIT */
/*
 * virtio_pci_int.h - what the three parts of the virtio PCI transport
 * share (not for devices: they use virtio_pci.h):
 *   virtio_pci.c         setup, capabilities, BAR 0 dispatch, the PCI_CFG
 *                        window;
 *   virtio_pci_common.c  the common configuration structure: feature
 *                        negotiation, queue registers, the status machine;
 *   virtio_pci_notify.c  notifications both ways: MSI-X / INTx interrupts,
 *                        doorbells (ioeventfd or forwarded kicks), and the
 *                        consumer loop devices run on a kicked queue.
 */
#ifndef VMLET_VIRTIO_PCI_INT_H
#define VMLET_VIRTIO_PCI_INT_H

#include "vmm/virtio/virtio_pci.h"

static inline uint8_t virtio_pci_status(struct virtio_pci *vp)
{
	return __atomic_load_n(&vp->status, __ATOMIC_ACQUIRE);
}

/* virtio_pci_common.c, with vp->lock held: a common-configuration access
 * of len bytes at off (checked here), and the device reset. */
void virtio_pci_common_access(struct virtio_pci *vp, uint32_t off, void *data, uint32_t len,
			      bool write);
void virtio_pci_reset_locked(struct virtio_pci *vp);

/* virtio_pci_notify.c: pci_dev_cb hooks (MSI-X entry changed, BAR moved),
 * doorbells on/off at the current BAR address (vp->lock held), and a
 * notify-region write that reached us. */
void virtio_pci_msix_update(void *opaque, unsigned int vec, bool fire);
void virtio_pci_bar_map(void *opaque, int bar, uint64_t gpa, bool mapped);
void virtio_pci_doorbells(struct virtio_pci *vp, bool on);
void virtio_pci_kick(struct virtio_pci *vp, unsigned int i);

#endif /* VMLET_VIRTIO_PCI_INT_H */
