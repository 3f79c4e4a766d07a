/* SPDX-License-Identifier: MIT */
/*
 * pci.h - a PCI host bridge with one bus (bus 0) of single-function
 * devices: configuration space through ECAM (ARCH_PCI_ECAM_GPA, PCIe base
 * spec §7.2.2) and through configuration mechanism #1 (ports 0xcf8/0xcfc),
 * 32-bit memory BARs placed by vmlet in the ARCH_PCI_MMIO32 window (the
 * guest may move them within it or to ARCH_PCI_MMIO32_HI, where a BIOS
 * puts them), capability lists and MSI-X (PCI local bus 3.0
 * §6.8.2) with per-vector and function masking and a pending-bit array.
 *
 * BAR decoding: the host claims the whole MMIO32 windows on the mmio bus
 * once and decodes BARs itself. Registering BAR windows with bus_register()
 * from inside an ECAM write (a bus callback) would take the bus lock the
 * caller already holds; decoding here keeps every lock order one-way:
 *   bus (read) -> host->lock -> dev->msix_lock, never the reverse, and no
 *   bus_register/unregister after pci_host_init().
 *
 * Devices embed a struct pci_dev, describe it with pci_dev_init(),
 * pci_bar_add(), pci_cap_add() and pci_msix_init(), then pci_dev_add() it.
 * Their callbacks run on vCPU threads.
 */
#ifndef VMLET_PCI_H
#define VMLET_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/pci_regs.h> /* configuration header offsets and bits */

#include "vmm/vm/bus.h"

struct vm;
struct guest_mem;
struct device_env;

#define PCI_SLOTS    32
#define PCI_CFG_SIZE 256 /* conventional space; ECAM 256..4095 reads all ones */
#define PCI_NUM_BARS 6
#define PCI_MSIX_MAX 64

struct pci_dev_cb {
	/* The guest rewrote MSI-X entry vec, changed its mask, or changed
	 * the function enable/mask (vec = all vectors, one call each).
	 * fire: the vector had a pending message and is now unmasked: the
	 * device sends it. Called without any PCI lock held. */
	void (*msix_update)(void *opaque, unsigned int vec, bool fire);
	/* BAR bar now decodes at gpa (mapped) or stopped decoding. */
	void (*bar_map)(void *opaque, int bar, uint64_t gpa, bool mapped);
	/* The guest wrote [off, off+len) of config space inside a capability
	 * added with pci_cap_add(..., writable). Called under host->lock. */
	void (*cfg_write)(void *opaque, uint32_t off, uint32_t len);
	/* The guest reads [off, off+len) of config space: the device may
	 * refresh cfg bytes of its own capabilities first. Called under
	 * host->lock. Optional. */
	void (*cfg_read)(void *opaque, uint32_t off, uint32_t len);
};

struct pci_bar {
	uint64_t size; /* 0 = unused; else a power of two >= 4096 */
	uint32_t addr; /* current base as programmed */
	bool mapped;
	const struct io_ops *ops;
	void *opaque;
};

struct pci_msix_entry {
	uint32_t addr_lo, addr_hi, data, ctrl;
};

struct pci_host;

struct pci_dev {
	struct pci_host *host;
	int slot; /* -1 until pci_dev_add() */
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t wmask[PCI_CFG_SIZE]; /* bits the guest may write */
	uint8_t cap_end;	     /* next free config offset */
	uint8_t last_cap;	     /* offset of the last capability */
	struct pci_bar bar[PCI_NUM_BARS];
	const struct pci_dev_cb *cb;
	void *opaque;
	/* MSI-X */
	uint16_t msix_n;
	uint8_t msix_cap;
	int msix_bar;
	uint32_t msix_table, msix_pba; /* offsets inside msix_bar */
	struct pci_msix_entry msix[PCI_MSIX_MAX];
	uint64_t msix_pending; /* bit per vector */
	pthread_mutex_t msix_lock;
	uint32_t intx_gsi;
	bool intx_level;
};

struct pci_host {
	/* From the device_env of pci_host_init(), for the functions on this
	 * bus: the VM handle (irq_*(), device_*(); NULL in tests: no INTx)
	 * and the guest memory they DMA to. */
	struct vm *vm;
	const struct guest_mem *mem;
	struct bus *pio, *mmio;
	struct pci_dev bridge; /* 00:00.0 */
	struct pci_dev *dev[PCI_SLOTS];
	uint32_t cf8;	       /* mechanism #1 address latch */
	uint64_t mmio_next;    /* allocation cursor in MMIO32 */
	pthread_rwlock_t lock; /* config writes: write; decoding: read */
	bool registered;
	uint64_t ecam2_gpa, ecam2_size; /* pci_host_add_ecam() */
};

/*
 * Claim ECAM, 0xcf8..0xcff and the MMIO32 window on env's buses and create
 * the host bridge at 00:00.0. The host keeps env->vm (may be NULL: no INTx
 * delivery) and env->mem for the functions added to it, which reach the
 * VM only through them: their create functions take the host, no VM.
 */
int pci_host_init(struct pci_host *h, const struct device_env *env);
/* Unclaim the windows. Devices are owned and destroyed by their creators. */
void pci_host_release(struct pci_host *h);

/* Fill d's header: type 0, INTA, capability list empty. */
void pci_dev_init(struct pci_dev *d, uint16_t vendor, uint16_t device, uint32_t class_code,
		  uint8_t revision, uint16_t subsys_vendor, uint16_t subsys_id,
		  const struct pci_dev_cb *cb, void *opaque);
/* A 32-bit memory BAR of size bytes (power of two, >= 4 KiB); placed by
 * pci_dev_add() and decoded while COMMAND.MEMORY is set. */
int pci_bar_add(struct pci_dev *d, int bar, uint64_t size, const struct io_ops *ops, void *opaque);
/*
 * Append a capability: body is len bytes starting with the ID byte (the
 * next pointer, body[1], is filled in). writable: the guest may write
 * bytes 2.. of it (then cb->cfg_write sees the writes). Returns the
 * capability's config offset, or -ENOSPC.
 */
int pci_cap_add(struct pci_dev *d, const void *body, uint8_t len, bool writable);
/* MSI-X with n vectors, table and PBA at the given offsets of bar (which
 * must already be added). Every entry starts masked. */
int pci_msix_init(struct pci_dev *d, uint16_t n, int bar, uint32_t table_off, uint32_t pba_off);
/* Put d in the first free slot and allocate its BARs. 0, -ENOSPC. */
int pci_dev_add(struct pci_host *h, struct pci_dev *d);
/* The same in slot want (-1: the first free one); -ENOSPC when taken. */
int pci_dev_add_at(struct pci_host *h, struct pci_dev *d, int want);
/* A second ECAM window decoding the same bus 0 (other buses read as
 * absent), e.g. where a q35 firmware programs its PCIEXBAR. Once. */
int pci_host_add_ecam(struct pci_host *h, uint64_t gpa, uint64_t size);
void pci_dev_remove(struct pci_host *h, struct pci_dev *d);

/* MSI-X state as the guest programmed it. */
bool pci_msix_enabled(struct pci_dev *d);
void pci_msix_get(struct pci_dev *d, unsigned int vec, uint64_t *addr, uint32_t *data);
/*
 * A device wants to send vector vec: returns true when it may send it now;
 * false when the vector is masked (the pending bit is set and
 * cb->msix_update(.., fire=true) comes at unmask) or out of range.
 */
bool pci_msix_request(struct pci_dev *d, unsigned int vec);
/* An access at off of d's MSI-X BAR (the host's BAR decoding, pci_host.c):
 * true when it was the table's or the PBA's and is done. */
bool pci_msix_access(struct pci_dev *d, uint64_t off, void *data, uint32_t len, bool write);
/* Drive the function's INTA# line (level-triggered, GSI from the slot). */
void pci_intx_set(struct pci_dev *d, bool level);
/* The GSI the DSDT routes slot's INTA# to (for arch_acpi_config). */
uint32_t pci_intx_gsi(int slot);

/* Config space access as the guest sees it (also used by tests). */
void pci_cfg_read(struct pci_host *h, int slot, uint32_t off, void *data, uint32_t len);
/* Snapshot (pci_snap.c): the host's latch and each function's config
 * space and MSI-X state; the caller adds what a function's device keeps.
 * pci_dev_load() checks the bytes against the function as created (its
 * writable bits, its vector count): -EBADMSG otherwise. */
struct snap_buf;
struct snap_cur;
void pci_host_save(struct pci_host *h, struct snap_buf *b);
int pci_host_load(struct pci_host *h, struct snap_cur *c);
void pci_dev_save(struct pci_dev *d, struct snap_buf *b);
int pci_dev_load(struct pci_host *h, struct pci_dev *d, struct snap_cur *c);
void pci_dev_resync(struct pci_host *h, struct pci_dev *d);
void pci_cfg_write(struct pci_host *h, int slot, uint32_t off, const void *data, uint32_t len);

#endif /* VMLET_PCI_H */
