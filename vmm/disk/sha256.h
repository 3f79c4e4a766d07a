/* SPDX-License-Identifier: MIT */
/*
 * sha256.h - SHA-256 (FIPS 180-4) for names derived from untrusted input
 * (the image store's cache keys): a name an image author cannot make
 * collide with another image's.
 */
#ifndef VMLET_DISK_SHA256_H
#define VMLET_DISK_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* The digest as 64 lowercase hex digits and a NUL; s is spent. */
void sha256_hex(struct sha256 *s, char out[65]);

#endif /* VMLET_DISK_SHA256_H */
