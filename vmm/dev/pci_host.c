// SPDX-License-Identifier: MIT
/*
 * pci_host.c - the PCI host bridge (pci.h): it claims ECAM, ports
 * 0xcf8..0xcff and the MMIO32 windows on the VM's buses once, and decodes
 * each access there into a function's config space (pci.c) or one of its
 * BARs (the device's io_ops, or the MSI-X table and PBA).
 */
#include <errno.h>
#include <string.h>

#include "arch/x86_64/layout.h"
#include "vmm/dev/pci.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"

#define PCI_CF8_PORT 0xcf8

/* ---- bus handlers --------------------------------------------------------- */

static void pci_ecam_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct pci_host *h = opaque;

	/* bus 0 only: bits 27:20 bus, 19:15 device, 14:12 function */
	if (off >> 15 >= PCI_SLOTS || (off >> 12 & 7) || (off & (len - 1))) {
		memset(data, 0xff, len);
		return;
	}
	pci_cfg_read(h, (int)(off >> 15), off & 0xfff, data, len);
}

static void pci_ecam_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct pci_host *h = opaque;

	if (off >> 15 >= PCI_SLOTS || (off >> 12 & 7) || (off & (len - 1)) ||
	    (off & 0xfff) >= PCI_CFG_SIZE)
		return;
	pci_cfg_write(h, (int)(off >> 15), off & 0xfff, data, len);
}

/* Mechanism #1: 0xcf8 latches bit 31 enable, bus 23:16, dev 15:11,
 * fn 10:8, register 7:2; 0xcfc..0xcff move the data. */
static bool pci_cf8_decode(struct pci_host *h, uint64_t off, uint32_t len, int *slot, uint32_t *reg)
{
	uint32_t a = __atomic_load_n(&h->cf8, __ATOMIC_RELAXED);

	if (!(a & 0x80000000u) || (a >> 16 & 0xff) || (a >> 8 & 7) || ((off - 4) & (len - 1)))
		return false;
	*slot = (int)(a >> 11 & 0x1f);
	*reg = (a & 0xfc) + (uint32_t)(off - 4);
	return true;
}

static void pci_pio_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct pci_host *h = opaque;
	uint32_t reg;
	int slot;

	if (off < 4) {
		uint32_t a = __atomic_load_n(&h->cf8, __ATOMIC_RELAXED);

		if (off == 0 && len == 4)
			memcpy(data, &a, 4);
		else
			memset(data, 0xff, len);
		return;
	}
	if (!pci_cf8_decode(h, off, len, &slot, &reg)) {
		memset(data, 0xff, len);
		return;
	}
	pci_cfg_read(h, slot, reg, data, len);
}

static void pci_pio_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct pci_host *h = opaque;
	uint32_t reg;
	int slot;

	if (off < 4) {
		uint32_t a;

		if (off == 0 && len == 4) {
			memcpy(&a, data, 4);
			__atomic_store_n(&h->cf8, a, __ATOMIC_RELAXED);
		}
		return;
	}
	if (pci_cf8_decode(h, off, len, &slot, &reg))
		pci_cfg_write(h, slot, reg, data, len);
}

/* Find the BAR decoding gpa; returns it with the read lock held. */
static struct pci_bar *pci_bar_find(struct pci_host *h, uint64_t gpa, struct pci_dev **dp, int *bi)
{
	pthread_rwlock_rdlock(&h->lock);
	for (int s = 0; s < PCI_SLOTS; s++) {
		struct pci_dev *d = h->dev[s];

		for (int i = 0; d && i < PCI_NUM_BARS; i++) {
			struct pci_bar *b = &d->bar[i];

			if (b->mapped && gpa >= b->addr && gpa - b->addr < b->size) {
				*dp = d;
				*bi = i;
				return b;
			}
		}
	}
	pthread_rwlock_unlock(&h->lock);
	return NULL;
}

static void pci_mmio_access(struct pci_host *h, uint64_t gpa, void *data, uint32_t len, bool write)
{
	uint64_t off;
	struct pci_dev *d;
	struct pci_bar *b;
	int i;

	b = pci_bar_find(h, gpa, &d, &i);
	if (!b) {
		if (!write)
			memset(data, 0xff, len);
		return;
	}
	off = gpa - b->addr;
	if (off + len > b->size) {
		if (!write)
			memset(data, 0xff, len);
	} else if (i == d->msix_bar && pci_msix_access(d, off, data, len, write)) {
		/* handled */
	} else if (write) {
		if (b->ops && b->ops->write)
			b->ops->write(b->opaque, off, data, len);
	} else if (b->ops && b->ops->read) {
		b->ops->read(b->opaque, off, data, len);
	} else {
		memset(data, 0xff, len);
	}
	pthread_rwlock_unlock(&h->lock);
}

static void pci_mmio_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	pci_mmio_access(opaque, ARCH_PCI_MMIO32_START + off, data, len, false);
}

static void pci_mmio_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	pci_mmio_access(opaque, ARCH_PCI_MMIO32_START + off, (void *)(uintptr_t)data, len, true);
}

static void pci_mmio_hi_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	pci_mmio_access(opaque, ARCH_PCI_MMIO32_HI_START + off, data, len, false);
}

static void pci_mmio_hi_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	pci_mmio_access(opaque, ARCH_PCI_MMIO32_HI_START + off, (void *)(uintptr_t)data, len, true);
}

static const struct io_ops pci_ecam_ops = {pci_ecam_read, pci_ecam_write};
static const struct io_ops pci_pio_ops = {pci_pio_read, pci_pio_write};
static const struct io_ops pci_mmio_ops = {pci_mmio_read, pci_mmio_write};
static const struct io_ops pci_mmio_hi_ops = {pci_mmio_hi_read, pci_mmio_hi_write};

int pci_host_init(struct pci_host *h, const struct device_env *env)
{
	struct bus *mmio = env->mmio, *pio = env->pio;
	int r;

	memset(h, 0, sizeof(*h));
	h->vm = env->vm;
	h->mem = env->mem;
	h->pio = pio;
	h->mmio = mmio;
	h->mmio_next = ARCH_PCI_MMIO32_START;
	pthread_rwlock_init(&h->lock, NULL);
	/* 00:00.0: a plain host bridge (Red Hat's PCIe host bridge IDs) */
	pci_dev_init(&h->bridge, 0x1b36, 0x0008, 0x060000, 0, 0x1af4, 0x1100, NULL, NULL);
	h->bridge.cfg[PCI_INTERRUPT_PIN] = 0;
	h->bridge.slot = 0;
	h->bridge.host = h;
	h->dev[0] = &h->bridge;
	r = bus_register(mmio, ARCH_PCI_ECAM_GPA, ARCH_PCI_ECAM_SIZE, &pci_ecam_ops, h);
	if (r)
		return error_errno(r, "pci: cannot claim ecam window");
	r = bus_register(pio, PCI_CF8_PORT, 8, &pci_pio_ops, h);
	if (r) {
		bus_unregister(mmio, ARCH_PCI_ECAM_GPA);
		return error_errno(r, "pci: cannot claim ports 0xcf8-0xcff");
	}
	r = bus_register(mmio, ARCH_PCI_MMIO32_START, ARCH_PCI_MMIO32_SIZE, &pci_mmio_ops, h);
	if (!r) {
		r = bus_register(mmio, ARCH_PCI_MMIO32_HI_START, ARCH_PCI_MMIO32_HI_SIZE,
				 &pci_mmio_hi_ops, h);
		if (r)
			bus_unregister(mmio, ARCH_PCI_MMIO32_START);
	}
	if (r) {
		bus_unregister(pio, PCI_CF8_PORT);
		bus_unregister(mmio, ARCH_PCI_ECAM_GPA);
		return error_errno(r, "pci: cannot claim the mmio32 windows");
	}
	h->registered = true;
	/* The address latch: a config access then exits once (its data port
	 * access), not twice; without the capability both exit, as before. */
	if (h->vm && device_coalesce_pio(h->vm, PCI_CF8_PORT, 4) < 0)
		log_debug("pci: port 0xcf8 writes exit (no coalesced port I/O)");
	return 0;
}

int pci_host_add_ecam(struct pci_host *h, uint64_t gpa, uint64_t size)
{
	int r;

	if (h->ecam2_size)
		return -EBUSY;
	r = bus_register(h->mmio, gpa, size, &pci_ecam_ops, h);
	if (r)
		return error_errno(r, "pci: cannot claim the ecam window at 0x%llx",
				   (unsigned long long)gpa);
	h->ecam2_gpa = gpa;
	h->ecam2_size = size;
	return 0;
}

void pci_host_release(struct pci_host *h)
{
	if (h->ecam2_size) {
		bus_unregister(h->mmio, h->ecam2_gpa);
		h->ecam2_size = 0;
	}
	if (h->registered) {
		bus_unregister(h->mmio, ARCH_PCI_MMIO32_HI_START);
		bus_unregister(h->mmio, ARCH_PCI_MMIO32_START);
		bus_unregister(h->pio, PCI_CF8_PORT);
		bus_unregister(h->mmio, ARCH_PCI_ECAM_GPA);
		h->registered = false;
	}
	pthread_mutex_destroy(&h->bridge.msix_lock);
	pthread_rwlock_destroy(&h->lock);
}
