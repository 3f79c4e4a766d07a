// SPDX-License-Identifier: MIT
/*
 * pci.c - a PCI function (pci.h): its header and capabilities, BAR
 * placement, config space, MSI-X and INTx. The host bridge's windows and
 * how it decodes them are pci_host.c.
 */
#include <errno.h>
#include <string.h>

#include "arch/x86_64/layout.h"
#include "vmm/dev/pci.h"
#include "vmm/vm/device.h"
#include "vmm/vm/irq.h"

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void wr16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void wr32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

uint32_t pci_intx_gsi(int slot)
{
	/* IOAPIC pins 16..23, level-triggered active-high, swizzled by slot */
	return 16u + (uint32_t)slot % 8u;
}

void pci_dev_init(struct pci_dev *d, uint16_t vendor, uint16_t device, uint32_t class_code,
		  uint8_t revision, uint16_t subsys_vendor, uint16_t subsys_id,
		  const struct pci_dev_cb *cb, void *opaque)
{
	memset(d, 0, sizeof(*d));
	d->slot = -1;
	d->msix_bar = -1;
	d->cb = cb;
	d->opaque = opaque;
	pthread_mutex_init(&d->msix_lock, NULL);
	wr16(d->cfg + PCI_VENDOR_ID, vendor);
	wr16(d->cfg + PCI_DEVICE_ID, device);
	d->cfg[PCI_REVISION_ID] = revision;
	d->cfg[PCI_CLASS_PROG] = class_code & 0xff;
	d->cfg[PCI_CLASS_PROG + 1] = (class_code >> 8) & 0xff;
	d->cfg[PCI_CLASS_PROG + 2] = (class_code >> 16) & 0xff;
	wr16(d->cfg + PCI_SUBSYSTEM_VENDOR_ID, subsys_vendor);
	wr16(d->cfg + PCI_SUBSYSTEM_ID, subsys_id);
	d->cfg[PCI_INTERRUPT_PIN] = 1; /* INTA# */
	wr16(d->wmask + PCI_COMMAND,
	     PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE);
	d->wmask[0x0c] = 0xff; /* cache line size */
	d->wmask[PCI_INTERRUPT_LINE] = 0xff;
	d->cap_end = 0x40;
}

int pci_bar_add(struct pci_dev *d, int bar, uint64_t size, const struct io_ops *ops, void *opaque)
{
	if (bar < 0 || bar >= PCI_NUM_BARS || size < 4096 || (size & (size - 1)) ||
	    size > ARCH_PCI_MMIO32_SIZE / 2 || d->bar[bar].size)
		return -EINVAL;
	d->bar[bar].size = size;
	d->bar[bar].ops = ops;
	d->bar[bar].opaque = opaque;
	return 0;
}

int pci_cap_add(struct pci_dev *d, const void *body, uint8_t len, bool writable)
{
	uint8_t off = (uint8_t)((d->cap_end + 3) & ~3);

	if (len < 2 || off + len > PCI_CFG_SIZE || off < 0x40)
		return -ENOSPC;
	memcpy(d->cfg + off, body, len);
	d->cfg[off + 1] = 0;
	if (writable)
		memset(d->wmask + off + 2, 0xff, len - 2u);
	if (d->last_cap)
		d->cfg[d->last_cap + 1] = off;
	else
		d->cfg[PCI_CAPABILITY_LIST] = off;
	d->cfg[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
	d->last_cap = off;
	d->cap_end = (uint8_t)(off + len);
	return off;
}

int pci_msix_init(struct pci_dev *d, uint16_t n, int bar, uint32_t table_off, uint32_t pba_off)
{
	uint8_t cap[12] = {PCI_CAP_ID_MSIX, 0};
	int off;

	if (!n || n > PCI_MSIX_MAX || bar < 0 || bar >= PCI_NUM_BARS || !d->bar[bar].size ||
	    (table_off & 7) || (pba_off & 7) || table_off + 16u * n > d->bar[bar].size ||
	    pba_off + 8u > d->bar[bar].size)
		return -EINVAL;
	wr16(cap + 2, (uint16_t)(n - 1));
	wr32(cap + 4, table_off | (uint32_t)bar);
	wr32(cap + 8, pba_off | (uint32_t)bar);
	off = pci_cap_add(d, cap, sizeof(cap), false);
	if (off < 0)
		return off;
	d->msix_cap = (uint8_t)off;
	d->wmask[off + 3] = (PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL) >> 8;
	d->msix_n = n;
	d->msix_bar = bar;
	d->msix_table = table_off;
	d->msix_pba = pba_off;
	for (unsigned int i = 0; i < n; i++)
		d->msix[i].ctrl = 1;
	return 0;
}

/* ---- BAR placement and decoding --------------------------------------- */

static uint64_t bar_addr(const struct pci_dev *d, int i)
{
	return rd32(d->cfg + PCI_BASE_ADDRESS_0 + 4 * i) & ~0xfu;
}

/* Recompute which BARs decode; called under the write lock. */
static void pci_bars_update(struct pci_dev *d)
{
	bool mem = d->cfg[PCI_COMMAND] & PCI_COMMAND_MEMORY;

	for (int i = 0; i < PCI_NUM_BARS; i++) {
		struct pci_bar *b = &d->bar[i];
		uint64_t a = bar_addr(d, i);
		/* decode only inside the windows we claimed on the mmio bus */
		bool want = mem && b->size &&
			    ((a >= ARCH_PCI_MMIO32_START &&
			      a + b->size <= ARCH_PCI_MMIO32_START + ARCH_PCI_MMIO32_SIZE) ||
			     (a >= ARCH_PCI_MMIO32_HI_START &&
			      a + b->size <= ARCH_PCI_MMIO32_HI_START + ARCH_PCI_MMIO32_HI_SIZE));

		if (b->mapped && (!want || a != b->addr)) {
			b->mapped = false;
			if (d->cb && d->cb->bar_map)
				d->cb->bar_map(d->opaque, i, b->addr, false);
		}
		if (want && !b->mapped) {
			b->addr = (uint32_t)a;
			b->mapped = true;
			if (d->cb && d->cb->bar_map)
				d->cb->bar_map(d->opaque, i, a, true);
		}
	}
}

int pci_dev_add(struct pci_host *h, struct pci_dev *d)
{
	return pci_dev_add_at(h, d, -1);
}

int pci_dev_add_at(struct pci_host *h, struct pci_dev *d, int want)
{
	int slot = -1;

	pthread_rwlock_wrlock(&h->lock);
	for (int s = 0; s < PCI_SLOTS; s++) {
		if (!h->dev[s] && (want < 0 || s == want)) {
			slot = s;
			break;
		}
	}
	if (slot < 0) {
		pthread_rwlock_unlock(&h->lock);
		return -ENOSPC;
	}
	for (int i = 0; i < PCI_NUM_BARS; i++) {
		uint64_t size = d->bar[i].size, a;

		if (!size)
			continue;
		a = (h->mmio_next + size - 1) & ~(size - 1);
		if (a + size > ARCH_PCI_MMIO32_START + ARCH_PCI_MMIO32_SIZE) {
			pthread_rwlock_unlock(&h->lock);
			return -ENOSPC;
		}
		wr32(d->cfg + PCI_BASE_ADDRESS_0 + 4 * i, (uint32_t)a);
		h->mmio_next = a + size;
	}
	d->host = h;
	d->slot = slot;
	d->intx_gsi = pci_intx_gsi(slot);
	d->cfg[PCI_INTERRUPT_LINE] = (uint8_t)d->intx_gsi;
	h->dev[slot] = d;
	pthread_rwlock_unlock(&h->lock);
	return 0;
}

void pci_dev_remove(struct pci_host *h, struct pci_dev *d)
{
	pthread_rwlock_wrlock(&h->lock);
	if (d->slot >= 0 && d->slot < PCI_SLOTS && h->dev[d->slot] == d)
		h->dev[d->slot] = NULL;
	d->slot = -1;
	pthread_rwlock_unlock(&h->lock);
	pthread_mutex_destroy(&d->msix_lock);
}

/* ---- config space ------------------------------------------------------ */

void pci_cfg_read(struct pci_host *h, int slot, uint32_t off, void *data, uint32_t len)
{
	struct pci_dev *d;

	memset(data, 0xff, len);
	/* Every function here is a conventional one (no PCI Express
	 * capability): it has no extended space, and ECAM reads above 255
	 * return all ones, as QEMU's do. Were they 0, Linux would size the
	 * host bridge's space as 4096 bytes and probe it for extended
	 * capabilities, one ECAM exit each. */
	if (slot < 0 || slot >= PCI_SLOTS || off + len > PCI_CFG_SIZE)
		return;
	/* write lock: cb->cfg_read may refresh cfg bytes */
	pthread_rwlock_wrlock(&h->lock);
	d = h->dev[slot];
	if (d) {
		if (off >= 0x40 && d->cb && d->cb->cfg_read)
			d->cb->cfg_read(d->opaque, off, len);
		memcpy(data, d->cfg + off, len);
	}
	pthread_rwlock_unlock(&h->lock);
}

/* Apply a write to one BAR dword: bits below the size read as zero. */
static void pci_bar_write(struct pci_dev *d, int i, uint32_t v)
{
	uint32_t mask = d->bar[i].size ? ~(uint32_t)(d->bar[i].size - 1) : 0;

	wr32(d->cfg + PCI_BASE_ADDRESS_0 + 4 * i, v & mask); /* 32-bit memory BAR */
}

/* MSI-X control changed: tell the device about every vector. */
static void pci_msix_ctrl_changed(struct pci_dev *d, uint16_t old)
{
	uint16_t now;
	uint64_t fire;

	memcpy(&now, d->cfg + d->msix_cap + 2, 2);
	if (now == old || !d->cb || !d->cb->msix_update)
		return;
	pthread_mutex_lock(&d->msix_lock);
	fire = 0;
	if ((now & PCI_MSIX_FLAGS_ENABLE) && !(now & PCI_MSIX_FLAGS_MASKALL)) {
		for (unsigned int v = 0; v < d->msix_n; v++)
			if (!(d->msix[v].ctrl & 1) && (d->msix_pending >> v & 1))
				fire |= 1ull << v;
		d->msix_pending &= ~fire;
	}
	pthread_mutex_unlock(&d->msix_lock);
	for (unsigned int v = 0; v < d->msix_n; v++)
		d->cb->msix_update(d->opaque, v, fire >> v & 1);
}

void pci_cfg_write(struct pci_host *h, int slot, uint32_t off, const void *data, uint32_t len)
{
	const uint8_t *src = data;
	struct pci_dev *d;
	uint16_t msix_old = 0;
	bool cap_written = false;

	if (slot < 0 || slot >= PCI_SLOTS || off + len > PCI_CFG_SIZE)
		return;
	pthread_rwlock_wrlock(&h->lock);
	d = h->dev[slot];
	if (!d)
		goto out;
	if (d->msix_cap)
		memcpy(&msix_old, d->cfg + d->msix_cap + 2, 2);
	for (uint32_t i = 0; i < len; i++) {
		uint32_t o = off + i;

		if (o >= PCI_BASE_ADDRESS_0 && o < PCI_BASE_ADDRESS_0 + 4 * PCI_NUM_BARS) {
			int bar = (int)(o - PCI_BASE_ADDRESS_0) / 4;
			uint8_t dw[4];

			memcpy(dw, d->cfg + PCI_BASE_ADDRESS_0 + 4 * bar, 4);
			dw[o & 3] = src[i];
			pci_bar_write(d, bar, rd32(dw));
			continue;
		}
		d->cfg[o] = (uint8_t)((d->cfg[o] & ~d->wmask[o]) | (src[i] & d->wmask[o]));
		if (o >= 0x40 && d->wmask[o] && o != d->msix_cap + 3u)
			cap_written = true;
	}
	if ((off < PCI_BASE_ADDRESS_0 + 4 * PCI_NUM_BARS && off + len > PCI_BASE_ADDRESS_0) ||
	    (off <= PCI_COMMAND && off + len > PCI_COMMAND))
		pci_bars_update(d);
	if (cap_written && d->cb && d->cb->cfg_write)
		d->cb->cfg_write(d->opaque, off, len);
	if (d->cfg[PCI_COMMAND + 1] & (PCI_COMMAND_INTX_DISABLE >> 8))
		pci_intx_set(d, false);
out:
	pthread_rwlock_unlock(&h->lock);
	if (d && d->msix_cap)
		pci_msix_ctrl_changed(d, msix_old);
}

/* After a snapshot's load wrote cfg and the MSI-X table (pci_snap.c):
 * decode the BARs as cfg says and tell the device about every vector. */
void pci_dev_resync(struct pci_host *h, struct pci_dev *d)
{
	pthread_rwlock_wrlock(&h->lock);
	pci_bars_update(d);
	pthread_rwlock_unlock(&h->lock);
	if (d->msix_cap)
		pci_msix_ctrl_changed(d, 0xffff);
}

/* ---- MSI-X -------------------------------------------------------------- */

bool pci_msix_enabled(struct pci_dev *d)
{
	uint16_t ctl;

	if (!d->msix_cap)
		return false;
	memcpy(&ctl, d->cfg + d->msix_cap + 2, 2);
	return ctl & PCI_MSIX_FLAGS_ENABLE;
}

void pci_msix_get(struct pci_dev *d, unsigned int vec, uint64_t *addr, uint32_t *data)
{
	*addr = 0;
	*data = 0;
	if (vec >= d->msix_n)
		return;
	pthread_mutex_lock(&d->msix_lock);
	*addr = (uint64_t)d->msix[vec].addr_hi << 32 | d->msix[vec].addr_lo;
	*data = d->msix[vec].data;
	pthread_mutex_unlock(&d->msix_lock);
}

bool pci_msix_request(struct pci_dev *d, unsigned int vec)
{
	uint16_t ctl;
	bool ok;

	if (vec >= d->msix_n)
		return false;
	pthread_mutex_lock(&d->msix_lock);
	memcpy(&ctl, d->cfg + d->msix_cap + 2, 2);
	ok = (ctl & PCI_MSIX_FLAGS_ENABLE) && !(ctl & PCI_MSIX_FLAGS_MASKALL) &&
	     !(d->msix[vec].ctrl & 1);
	if (!ok)
		d->msix_pending |= 1ull << vec;
	pthread_mutex_unlock(&d->msix_lock);
	return ok;
}

/* Table and PBA accesses (dword or qword, naturally aligned). */
bool pci_msix_access(struct pci_dev *d, uint64_t off, void *data, uint32_t len, bool write)
{
	uint64_t tsize = 16ull * d->msix_n;
	unsigned int vec;
	bool fire = false, changed = false;

	if (off >= d->msix_pba && off < d->msix_pba + 8) {
		if (!write) {
			pthread_mutex_lock(&d->msix_lock);
			uint64_t p = d->msix_pending >> (8 * (off - d->msix_pba));
			pthread_mutex_unlock(&d->msix_lock);
			memcpy(data, &p, len); /* PBA is read-only */
		}
		return true;
	}
	if (off < d->msix_table || off - d->msix_table >= tsize)
		return false;
	off -= d->msix_table;
	vec = (unsigned int)(off / 16);
	if ((len != 4 && len != 8) || (off & (len - 1)) || (off % 16) + len > 16) {
		if (!write)
			memset(data, 0xff, len);
		return true; /* unsupported access size: ignored */
	}
	pthread_mutex_lock(&d->msix_lock);
	uint8_t *e = (uint8_t *)&d->msix[vec] + off % 16;
	if (!write) {
		memcpy(data, e, len);
	} else {
		uint32_t oldctrl = d->msix[vec].ctrl;

		memcpy(e, data, len);
		d->msix[vec].ctrl &= 1;
		changed = true;
		if ((oldctrl & 1) && !(d->msix[vec].ctrl & 1) && (d->msix_pending >> vec & 1)) {
			uint16_t ctl;

			memcpy(&ctl, d->cfg + d->msix_cap + 2, 2);
			if ((ctl & PCI_MSIX_FLAGS_ENABLE) && !(ctl & PCI_MSIX_FLAGS_MASKALL)) {
				d->msix_pending &= ~(1ull << vec);
				fire = true;
			}
		}
	}
	pthread_mutex_unlock(&d->msix_lock);
	if (changed && d->cb && d->cb->msix_update)
		d->cb->msix_update(d->opaque, vec, fire);
	return true;
}

void pci_intx_set(struct pci_dev *d, bool level)
{
	if (level && (d->cfg[PCI_COMMAND + 1] & (PCI_COMMAND_INTX_DISABLE >> 8)))
		level = false;
	if (level == d->intx_level)
		return;
	d->intx_level = level;
	if (level)
		d->cfg[PCI_STATUS] |= PCI_STATUS_INTERRUPT;
	else
		d->cfg[PCI_STATUS] &= (uint8_t)~PCI_STATUS_INTERRUPT;
	if (d->host && d->host->vm)
		irq_line(d->host->vm, d->intx_gsi, level);
}
