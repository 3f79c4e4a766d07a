/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers shared by the EFI firmware's parsers: error codes,
 * little-endian loads from untrusted byte buffers, checked arithmetic.
 * Freestanding: compiles for the guest and, unchanged, for host unit tests
 * (tests/unit/efi_*_test.c include the .c files).
 */
#ifndef FW_EFI_UTIL_H
#define FW_EFI_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Errors are negative errno values (the numbers Linux uses). */
#define FW_ENOENT  2
#define FW_EIO	   5
#define FW_ENOMEM  12
#define FW_EINVAL  22
#define FW_ENOSPC  28
#define FW_ERANGE  34
#define FW_ENOTSUP 95
#define FW_EBADMSG 74 /* corrupt on-disk or in-file structure */

/* Provided by firmware/lib on the guest and by libc on the host. */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

static inline uint16_t le16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t le32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t le64(const void *p)
{
	const uint8_t *b = p;

	return (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32;
}

static inline void put_le64(void *p, uint64_t v)
{
	uint8_t *b = p;

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

/* True when [off, off+len) lies within [0, size) (no overflow). */
static inline bool in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* CRC-32 (IEEE 802.3, reflected, as UEFI uses it). Chain with crc = previous
 * result; start with 0. */
uint32_t efi_crc32(uint32_t crc, const void *buf, size_t len);

#endif /* FW_EFI_UTIL_H */
