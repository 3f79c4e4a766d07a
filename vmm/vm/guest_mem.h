/* SPDX-License-Identifier: MIT */
/*
 * guest_mem.h - guest RAM and the one checked accessor for guest addresses.
 *
 * Every guest-supplied address (descriptor, buffer, boot structure) goes
 * through guest_mem_ptr(), which returns NULL unless [gpa, gpa+len) lies
 * entirely inside one RAM region; the arithmetic is overflow-checked.
 * A gpa_t is never dereferenced directly.
 */
#ifndef VMLET_GUEST_MEM_H
#define VMLET_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h" /* gpa_t */

#define GUEST_MEM_MAX_REGIONS 4

struct guest_mem_region {
	gpa_t gpa;
	uint64_t size;
	uint8_t *host;
};

struct guest_mem {
	struct guest_mem_region r[GUEST_MEM_MAX_REGIONS];
	unsigned int n;
	uint64_t total;	    /* RAM bytes */
	uint64_t page_size; /* backing page size */
	int tracking;	    /* guest_mem_track(): mark what devices reach */
	/* per region one bit per 4 KiB page: reached by a device
	 * (guest_mem_ptr) while tracking is on (live migration,
	 * vmm/snapshot/migrate.h) */
	uint64_t *dev_dirty[GUEST_MEM_MAX_REGIONS];
	/* SMRAM hidden from the guest outside SMM (guest_mem_set_smram) */
	uint64_t smram_lo, smram_hi; /* the TSEG in force; empty: lo >= hi */
	int aseg_hidden;	     /* [0xa0000, 0xc0000) */
};

/* Host pointer for [gpa, gpa+len) or NULL when any byte is outside RAM
 * or in SMRAM hidden outside SMM (guest_mem_set_smram).
 * While tracking is on, the pages of [gpa, gpa+len) are marked in their
 * region's dev_dirty bitmap in m (the device model writes guest RAM from
 * userspace, which KVM's dirty log does not see). Any thread. */
void *guest_mem_ptr(const struct guest_mem *m, gpa_t gpa, uint64_t len);

/*
 * The SMRAM the chipset hides from the guest outside SMM (vmm/vm/smm.c,
 * at every change of q35's SMRAM/ESMRAMC): the TSEG [tseg_lo, tseg_hi)
 * (empty when tseg_lo >= tseg_hi) and, when aseg_hidden, the A segment
 * [0xa0000, 0xc0000). guest_mem_ptr() refuses any range that touches
 * them, as q35 refuses DMA there: a guest kernel that points a device's
 * DMA at SMRAM would otherwise rewrite SMM's code and, through it, the
 * flash only SMM may write. Any thread.
 */
void guest_mem_set_smram(struct guest_mem *m, uint64_t tseg_lo, uint64_t tseg_hi, bool aseg_hidden);

/*
 * Device write tracking for live migration. guest_mem_track(m, true)
 * clears every dev_dirty bitmap and starts marking; false stops it.
 * guest_mem_mark_host() marks [p, p+len) of guest RAM given by host
 * address (a buffer a device translated before tracking started and
 * writes now); addresses outside RAM are ignored. The bitmaps exist from
 * guest_mem_init() on (1 bit per 4 KiB); marking is atomic.
 */
void guest_mem_track(struct guest_mem *m, bool on);
/* Bytes of a bitmap with one bit per 4 KiB page of size bytes. */
static inline uint64_t guest_mem_bitmap_bytes(uint64_t size)
{
	return ((size + 4095) / 4096 + 63) / 64 * 8;
}
void guest_mem_mark_host(const struct guest_mem *m, const void *p, uint64_t len);

/*
 * Map mem_bytes of anonymous guest RAM laid out by arch_ram_regions()
 * (THP via madvise; hugepage_size 2 MiB / 1 GiB uses MAP_HUGETLB and fails
 * with a clear error when the host has none reserved). Does not register
 * KVM slots: see vm.c.
 */
int guest_mem_init(struct guest_mem *m, uint64_t mem_bytes, uint64_t hugepage_size);
/* The same with RAM below 4 GiB ending at low_max (arch_ram_regions_below:
 * the q35 layout of OVMF VMs). */
int guest_mem_init_below(struct guest_mem *m, uint64_t mem_bytes, uint64_t hugepage_size,
			 uint64_t low_max);
void guest_mem_release(struct guest_mem *m);

#endif /* VMLET_GUEST_MEM_H */
