/* SPDX-License-Identifier: MIT */
/*
 * iov.c - iovec arithmetic and copies (iov.h).
 */
#include <stdbool.h>
#include <string.h>

#include "vmm/util/iov.h"

uint64_t iov_size(const struct iovec *iov, int n)
{
	uint64_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

int iov_slice(const struct iovec *src, int n, uint64_t skip, uint64_t len, struct iovec *dst)
{
	int k = 0;

	for (int i = 0; i < n && len; i++) {
		uint64_t l = src[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		dst[k].iov_base = (uint8_t *)src[i].iov_base + skip;
		dst[k].iov_len = l - skip < len ? l - skip : len;
		len -= dst[k].iov_len;
		skip = 0;
		k++;
	}
	return k;
}

/* Copy between buf and the bytes [skip, skip+len) of an iovec list. */
static size_t iov_copy(const struct iovec *iov, unsigned int n, size_t skip, uint8_t *buf,
		       size_t len, bool to_iov)
{
	size_t done = 0;

	for (unsigned int i = 0; i < n && done < len; i++) {
		size_t l = iov[i].iov_len, c;
		uint8_t *p;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		p = (uint8_t *)iov[i].iov_base + skip;
		c = l - skip < len - done ? l - skip : len - done;
		memcpy(to_iov ? p : buf + done, to_iov ? buf + done : p, c);
		done += c;
		skip = 0;
	}
	return done;
}

size_t iov_to_buf(const struct iovec *iov, unsigned int n, size_t skip, void *buf, size_t len)
{
	return iov_copy(iov, n, skip, buf, len, false);
}

size_t iov_from_buf(const struct iovec *iov, unsigned int n, size_t skip, const void *buf,
		    size_t len)
{
	return iov_copy(iov, n, skip, (uint8_t *)(uintptr_t)buf, len, true);
}
