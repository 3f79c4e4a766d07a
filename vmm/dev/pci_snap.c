/* SPDX-License-Identifier: MIT */
/*
 * pci_snap.c - the PCI host's and functions' state in a snapshot
 * (pci.h, docs/snapshot.md): the config-address latch, and per function
 * its 256 bytes of config space, its MSI-X table and pending bits and its
 * INTx level. A load accepts only what the guest could have written into
 * the function as this vmlet creates it: read-only bytes must be equal,
 * BARs aligned to their size, as many vectors as the function has.
 */
#include <errno.h>
#include <string.h>

#include "vmm/dev/pci.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"

enum { PCI_SNAP_CF8 = 1, PCI_SNAP_CFG, PCI_SNAP_MSIX, PCI_SNAP_PENDING, PCI_SNAP_INTX };

void pci_host_save(struct pci_host *h, struct snap_buf *b)
{
	pthread_rwlock_rdlock(&h->lock);
	snap_buf_item(b, PCI_SNAP_CF8, &h->cf8, sizeof(h->cf8));
	pthread_rwlock_unlock(&h->lock);
}

int pci_host_load(struct pci_host *h, struct snap_cur *c)
{
	uint32_t cf8;

	if (snap_cur_want(c, PCI_SNAP_CF8, &cf8, sizeof(cf8)))
		return -EBADMSG;
	pthread_rwlock_wrlock(&h->lock);
	h->cf8 = cf8;
	pthread_rwlock_unlock(&h->lock);
	return 0;
}

void pci_dev_save(struct pci_dev *d, struct snap_buf *b)
{
	uint8_t intx;

	pthread_rwlock_rdlock(&d->host->lock);
	snap_buf_item(b, PCI_SNAP_CFG, d->cfg, sizeof(d->cfg));
	intx = d->intx_level;
	pthread_rwlock_unlock(&d->host->lock);
	pthread_mutex_lock(&d->msix_lock);
	snap_buf_item(b, PCI_SNAP_MSIX, d->msix, 16u * d->msix_n);
	snap_buf_item(b, PCI_SNAP_PENDING, &d->msix_pending, sizeof(d->msix_pending));
	pthread_mutex_unlock(&d->msix_lock);
	snap_buf_item(b, PCI_SNAP_INTX, &intx, sizeof(intx));
}

/* Is cfg something the guest could have made of d's config space? */
static bool cfg_plausible(const struct pci_dev *d, const uint8_t *cfg)
{
	for (unsigned int o = 0; o < PCI_CFG_SIZE; o++) {
		uint8_t ro = (uint8_t)~d->wmask[o];

		if (o >= PCI_BASE_ADDRESS_0 && o < PCI_BASE_ADDRESS_0 + 4 * PCI_NUM_BARS)
			continue;
		if (o == PCI_STATUS)
			ro &= (uint8_t)~PCI_STATUS_INTERRUPT;
		if ((cfg[o] ^ d->cfg[o]) & ro)
			return false;
	}
	for (int i = 0; i < PCI_NUM_BARS; i++) {
		uint32_t v, mask = d->bar[i].size ? ~(uint32_t)(d->bar[i].size - 1) : 0;

		memcpy(&v, cfg + PCI_BASE_ADDRESS_0 + 4 * i, 4);
		if (v & ~mask)
			return false;
	}
	return true;
}

int pci_dev_load(struct pci_host *h, struct pci_dev *d, struct snap_cur *c)
{
	struct pci_msix_entry msix[PCI_MSIX_MAX];
	uint8_t cfg[PCI_CFG_SIZE], intx;
	uint64_t pending;

	if (snap_cur_want(c, PCI_SNAP_CFG, cfg, sizeof(cfg)) ||
	    snap_cur_want(c, PCI_SNAP_MSIX, msix, 16u * d->msix_n) ||
	    snap_cur_want(c, PCI_SNAP_PENDING, &pending, sizeof(pending)) ||
	    snap_cur_want(c, PCI_SNAP_INTX, &intx, sizeof(intx)) || intx > 1)
		return -EBADMSG;
	if (!cfg_plausible(d, cfg) || (d->msix_n < 64 && pending >> d->msix_n))
		return error_errno(-EBADMSG, "pci: slot %d: saved state does not fit the function",
				   d->slot);
	for (unsigned int v = 0; v < d->msix_n; v++)
		msix[v].ctrl &= 1;
	pthread_rwlock_wrlock(&h->lock);
	memcpy(d->cfg, cfg, sizeof(cfg));
	d->intx_level = intx;
	pthread_rwlock_unlock(&h->lock);
	pthread_mutex_lock(&d->msix_lock);
	memcpy(d->msix, msix, 16u * d->msix_n);
	d->msix_pending = pending;
	pthread_mutex_unlock(&d->msix_lock);
	return 0;
}
