// SPDX-License-Identifier: MIT
/*
 * pci.c - ECAM configuration access and bus-0 enumeration (pci.h).
 */
#include "firmware/lib/pci.h"

uint64_t fw_pci_ecam_from_mcfg(const void *mcfg)
{
	const uint8_t *p = mcfg;
	uint32_t len;

	if (!p)
		return 0;
	memcpy(&len, p + 4, 4);
	/* header 36 + 8 reserved, then 16-byte allocations (PCI FW 3.2 §4.1.2) */
	for (uint32_t off = 44; off + 16 <= len && off < 4096; off += 16) {
		uint64_t base;
		uint16_t seg;

		memcpy(&base, p + off, 8);
		memcpy(&seg, p + off + 8, 2);
		if (seg == 0 && p[off + 10] == 0)
			return base;
	}
	return 0;
}

uint8_t fw_pci_read8(const struct fw_pci_fn *f, uint32_t off)
{
	return f->cfg[off];
}

uint16_t fw_pci_read16(const struct fw_pci_fn *f, uint32_t off)
{
	return *(volatile uint16_t *)(f->cfg + off);
}

uint32_t fw_pci_read32(const struct fw_pci_fn *f, uint32_t off)
{
	return *(volatile uint32_t *)(f->cfg + off);
}

void fw_pci_write16(const struct fw_pci_fn *f, uint32_t off, uint16_t v)
{
	*(volatile uint16_t *)(f->cfg + off) = v;
}

void fw_pci_write32(const struct fw_pci_fn *f, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(f->cfg + off) = v;
}

int fw_pci_scan(uint64_t ecam, struct fw_pci_fn *out, int cap)
{
	return fw_pci_scan_slots(ecam, 0xffffffffu, out, cap);
}

int fw_pci_scan_slots(uint64_t ecam, uint32_t slots, struct fw_pci_fn *out, int cap)
{
	int n = 0;

	if (!ecam)
		return 0;
	for (uint8_t dev = 0; dev < 32; dev++) {
		if (!(slots & (1u << dev)))
			continue;
		for (uint8_t fn = 0; fn < 8 && n < cap; fn++) {
			struct fw_pci_fn f = {.dev = dev, .fn = fn};

			f.cfg = (volatile uint8_t *)(uintptr_t)(ecam + ((uint64_t)dev << 15) +
								((uint64_t)fn << 12));
			f.vendor = fw_pci_read16(&f, 0);
			if (f.vendor == 0xffff) {
				if (!fn)
					break;
				continue;
			}
			f.device = fw_pci_read16(&f, 2);
			f.class_code = fw_pci_read32(&f, 8) >> 8;
			out[n++] = f;
			/* header type bit 7: more functions */
			if (!fn && !(fw_pci_read8(&f, 0x0e) & 0x80))
				break;
		}
	}
	return n;
}

uint64_t fw_pci_bar(const struct fw_pci_fn *f, int bar, uint64_t *next)
{
	uint32_t off = 0x10 + 4 * (uint32_t)bar, lo = fw_pci_read32(f, off), hi = 0, size;
	bool is64 = (lo & 6) == 4;
	uint16_t cmd = fw_pci_read16(f, 4);
	uint64_t base;

	if (lo & 1)
		return 0;
	if (is64)
		hi = fw_pci_read32(f, off + 4);
	base = ((uint64_t)hi << 32) | (lo & ~0xfu);
	if (base || !next)
		return base;
	/* unprogrammed: size it and take the next aligned address */
	fw_pci_write16(f, 4, cmd & (uint16_t)~2u);
	fw_pci_write32(f, off, 0xffffffffu);
	size = ~(fw_pci_read32(f, off) & ~0xfu) + 1;
	if (!size || size > (1u << 30))
		return 0;
	base = (*next + size - 1) & ~((uint64_t)size - 1);
	*next = base + size;
	fw_pci_write32(f, off, (uint32_t)base | (lo & 0xf));
	if (is64)
		fw_pci_write32(f, off + 4, (uint32_t)(base >> 32));
	fw_pci_write16(f, 4, cmd);
	return base;
}
