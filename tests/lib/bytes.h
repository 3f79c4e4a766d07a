/* SPDX-License-Identifier: MIT */
/*
 * bytes.h - unaligned little-endian reads and writes of the fields of
 * built tables and images (ACPI, boot_params, ELF notes, page tables) in
 * unit tests. x86_64 only, like the builders they check.
 */
#ifndef VMLET_TEST_BYTES_H
#define VMLET_TEST_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#endif /* VMLET_TEST_BYTES_H */
