/* SPDX-License-Identifier: MIT */
/*
 * memmap.c - where guest RAM lives and the e820 map that describes it.
 *
 * RAM fills gpa 0 up to the 32-bit MMIO hole (ARCH_MMIO_HOLE_START); the
 * remainder continues at 4 GiB. The e820 map (ACPI 6.5 §15 "System Address
 * Map Interfaces", types 1 RAM / 2 reserved / 3 ACPI) additionally reserves
 * the EBDA and BIOS area (which holds our ACPI tables and the FACS, so it is
 * reserved rather than reclaimable) and the ECAM/IOAPIC/LAPIC windows
 * (Linux only trusts an MCFG region that e820 reserves).
 */
#include <errno.h>
#include <stdbool.h>

#include "arch/arch.h"

#define PAGE_MASK_4K 0xfffull
#define MIN_MEM	     (2ull << 20)

static int usable_mem(uint64_t mem_bytes, uint64_t *mem)
{
	*mem = mem_bytes & ~PAGE_MASK_4K;
	if (*mem < MIN_MEM)
		return -EINVAL;
	/* Keep the top of high RAM well inside the 52-bit physical space. */
	if (*mem > (1ull << 46))
		return -EINVAL;
	return 0;
}

int arch_ram_regions(uint64_t mem_bytes, struct arch_ram_region out[2], size_t *n)
{
	return arch_ram_regions_below(mem_bytes, ARCH_MMIO_HOLE_START, out, n);
}

int arch_ram_regions_below(uint64_t mem_bytes, uint64_t low_max, struct arch_ram_region out[2],
			   size_t *n)
{
	uint64_t mem, low;
	int r;

	r = usable_mem(mem_bytes, &mem);
	if (r)
		return r;
	if (low_max > ARCH_MMIO_HOLE_START || low_max < MIN_MEM || (low_max & PAGE_MASK_4K))
		return -EINVAL;
	low = mem < low_max ? mem : low_max;
	out[0].gpa = 0;
	out[0].size = low;
	*n = 1;
	if (mem > low) {
		out[1].gpa = ARCH_HIGH_RAM_START;
		out[1].size = mem - low;
		*n = 2;
	}
	return 0;
}

static int e820_add(struct arch_e820_entry *out, size_t cap, size_t *n, uint64_t addr,
		    uint64_t size, uint32_t type)
{
	if (*n >= cap)
		return -ENOSPC;
	out[*n].addr = addr;
	out[*n].size = size;
	out[*n].type = type;
	(*n)++;
	return 0;
}

/* vmlet's map (firmware false) or the one a BIOS starts from: they differ
 * below 1 MiB (the BIOS reserves its own areas there) and in the windows
 * reserved in the hole. */
static int e820_map(uint64_t mem_bytes, bool firmware, struct arch_e820_entry *out, size_t cap,
		    size_t *n)
{
	struct arch_ram_region rr[2] = {{0, 0}, {0, 0}};
	size_t nr, k = 0;
	int r;

	r = arch_ram_regions(mem_bytes, rr, &nr);
	if (r)
		return r;
	if (firmware) {
		r = e820_add(out, cap, &k, 0, rr[0].size, ARCH_E820_RAM);
	} else {
		/* Conventional memory below the EBDA, then EBDA + VGA + BIOS area. */
		r = e820_add(out, cap, &k, 0, ARCH_EBDA_GPA, ARCH_E820_RAM);
		if (!r)
			r = e820_add(out, cap, &k, ARCH_EBDA_GPA,
				     ARCH_HIGH_LOAD_GPA - ARCH_EBDA_GPA, ARCH_E820_RESERVED);
		if (!r)
			r = e820_add(out, cap, &k, ARCH_HIGH_LOAD_GPA,
				     rr[0].size - ARCH_HIGH_LOAD_GPA, ARCH_E820_RAM);
	}
	if (!r)
		r = e820_add(out, cap, &k, ARCH_PCI_ECAM_GPA, ARCH_PCI_ECAM_SIZE,
			     ARCH_E820_RESERVED);
	if (!r && firmware)
		r = e820_add(out, cap, &k, ARCH_IDENTITY_MAP_GPA,
			     ARCH_TSS_GPA + 0x3000 - ARCH_IDENTITY_MAP_GPA, ARCH_E820_RESERVED);
	if (!r && !firmware)
		r = e820_add(out, cap, &k, ARCH_IOAPIC_GPA, 0x1000, ARCH_E820_RESERVED);
	if (!r && !firmware)
		r = e820_add(out, cap, &k, ARCH_LAPIC_GPA, 0x1000, ARCH_E820_RESERVED);
	if (!r && nr == 2)
		r = e820_add(out, cap, &k, rr[1].gpa, rr[1].size, ARCH_E820_RAM);
	if (r)
		return r;
	*n = k;
	return 0;
}

int arch_e820_build(uint64_t mem_bytes, struct arch_e820_entry *out, size_t cap, size_t *n)
{
	return e820_map(mem_bytes, false, out, cap, n);
}

int arch_e820_firmware(uint64_t mem_bytes, struct arch_e820_entry *out, size_t cap, size_t *n)
{
	return e820_map(mem_bytes, true, out, cap, n);
}

uint64_t arch_q35_low_max(uint64_t mem_bytes)
{
	/* QEMU's q35 rule: all RAM below the ECAM window when it fits, else
	 * 2 GiB below 4 GiB and the rest above */
	return mem_bytes <= ARCH_Q35_ECAM_GPA ? ARCH_Q35_ECAM_GPA : ARCH_Q35_LOW_SPLIT;
}

static void cmos_put16(uint8_t *cmos, unsigned int reg, uint64_t v)
{
	if (v > 0xffff)
		v = 0xffff;
	cmos[reg] = (uint8_t)v;
	cmos[reg + 1] = (uint8_t)(v >> 8);
}

void arch_cmos_memory(uint64_t low_bytes, uint64_t high_bytes, uint8_t cmos[128])
{
	uint64_t above1m = low_bytes > (1ull << 20) ? (low_bytes - (1ull << 20)) >> 10 : 0;
	uint64_t above16m = low_bytes > (16ull << 20) ? (low_bytes - (16ull << 20)) >> 16 : 0;
	uint64_t above4g = high_bytes >> 16;

	cmos_put16(cmos, 0x15, 640);	  /* base memory, KiB */
	cmos_put16(cmos, 0x17, above1m);  /* extended memory, KiB (max 0xffff) */
	cmos_put16(cmos, 0x30, above1m);  /* the same, as POST counted it */
	cmos_put16(cmos, 0x34, above16m); /* 64 KiB blocks above 16 MiB */
	if (above4g > 0xffffff)
		above4g = 0xffffff;
	cmos[0x5b] = (uint8_t)above4g; /* 64 KiB blocks above 4 GiB, 24 bit */
	cmos[0x5c] = (uint8_t)(above4g >> 8);
	cmos[0x5d] = (uint8_t)(above4g >> 16);
}
