/* SPDX-License-Identifier: MIT */
/*
 * iov.h - arithmetic and copies over an iovec list, one place for every
 * room that moves data in segments: the virtio devices (guest buffers of
 * a chain), the disk formats (vectored I/O) and the network backends.
 *
 * Pure functions of their arguments: no allocation, no syscall. Offsets
 * and lengths past the end of the list are not an error: a copy or slice
 * stops at the end and says how much it covered.
 */
#ifndef VMLET_IOV_H
#define VMLET_IOV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Total bytes of the n segments of iov. */
uint64_t iov_size(const struct iovec *iov, int n);

/* dst = the bytes [skip, skip+len) of src's n segments (dst has room for
 * n entries; empty segments are left out). Returns the number of entries
 * used. */
int iov_slice(const struct iovec *src, int n, uint64_t skip, uint64_t len, struct iovec *dst);

/* Copy the bytes [skip, skip+len) of iov's n segments to buf
 * (iov_to_buf) or from buf into them (iov_from_buf). Returns the bytes
 * copied: short when the list ends first. */
size_t iov_to_buf(const struct iovec *iov, unsigned int n, size_t skip, void *buf, size_t len);
size_t iov_from_buf(const struct iovec *iov, unsigned int n, size_t skip, const void *buf,
		    size_t len);

#endif /* VMLET_IOV_H */
