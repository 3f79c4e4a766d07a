/* SPDX-License-Identifier: MIT */
/*
 * util.h - little helpers shared by the arch/x86_64 builders: bounds-checked
 * access to the host view of low guest RAM and little-endian stores.
 */
#ifndef VMLET_ARCH_X86_64_UTIL_H
#define VMLET_ARCH_X86_64_UTIL_H

#include <stdint.h>
#include <string.h>

/* Host pointer for [gpa, gpa+len) of low RAM, or NULL when it does not fit. */
static inline uint8_t *arch_low_ptr(uint8_t *low_mem, uint64_t low_size, uint64_t gpa, uint64_t len)
{
	if (!low_mem || gpa > low_size || len > low_size - gpa)
		return NULL;
	return low_mem + gpa;
}

static inline void arch_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void arch_put_le32(uint8_t *p, uint32_t v)
{
	arch_put_le16(p, (uint16_t)v);
	arch_put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void arch_put_le64(uint8_t *p, uint64_t v)
{
	arch_put_le32(p, (uint32_t)v);
	arch_put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t arch_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t arch_get_le32(const uint8_t *p)
{
	return (uint32_t)arch_get_le16(p) | (uint32_t)arch_get_le16(p + 2) << 16;
}

static inline uint64_t arch_get_le64(const uint8_t *p)
{
	return (uint64_t)arch_get_le32(p) | (uint64_t)arch_get_le32(p + 4) << 32;
}

#endif /* VMLET_ARCH_X86_64_UTIL_H */
