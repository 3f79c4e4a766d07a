/* SPDX-License-Identifier: MIT */
/*
 * fuzz_input.h - pieces of the fuzzers' input formats they share.
 */
#ifndef VMLET_FUZZ_INPUT_H
#define VMLET_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The guest writes its RAM: at d[*i], le16 offset, a length byte, then that
 * many bytes (fewer when the input ends), ignored unless it fits in
 * ram_size. *i moves past it (to n when the input ends first). */
static inline void fuzz_ram_write(uint8_t *ram, size_t ram_size, const uint8_t *d, size_t n,
				  size_t *i)
{
	size_t off, l;

	if (*i + 3 > n) {
		*i = n;
		return;
	}
	off = d[*i] | (size_t)d[*i + 1] << 8;
	l = d[*i + 2];
	*i += 3;
	l = l < n - *i ? l : n - *i;
	if (off + l <= ram_size)
		memcpy(ram + off, d + *i, l);
	*i += l;
}

#endif /* VMLET_FUZZ_INPUT_H */
