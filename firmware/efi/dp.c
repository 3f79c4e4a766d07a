// SPDX-License-Identifier: MIT
/* dp.c - building device paths in pool memory. */
#include "firmware/efi/fw.h"

#define DP_MAX 4096

struct efi_device_path *efi_dp_append(const struct efi_device_path *a,
				      const struct efi_device_path *node)
{
	size_t la = a ? dp_size(a, DP_MAX) : 4, ln = dp_len(node);
	uint8_t *p;

	if (!la || ln < 4 || ln > DP_MAX)
		return NULL;
	p = efi_alloc(la - 4 + ln + 4);
	if (!p)
		return NULL;
	if (a)
		memcpy(p, a, la - 4);
	memcpy(p + la - 4, node, ln);
	dp_set((struct efi_device_path *)(p + la - 4 + ln), DP_END_TYPE, DP_END_ALL, 4);
	return (struct efi_device_path *)p;
}

struct efi_device_path *efi_dp_file(const char16 *path)
{
	size_t n = efi_strlen16(path);
	struct dp_file *f;

	if (n > 1000)
		return NULL;
	f = efi_alloc(sizeof(*f) + (n + 1) * 2 + 4);
	if (!f)
		return NULL;
	dp_set(&f->h, DP_MEDIA, DP_MEDIA_FILE, (uint16_t)(sizeof(*f) + (n + 1) * 2));
	memcpy(f->name, path, (n + 1) * 2);
	dp_set((struct efi_device_path *)((uint8_t *)f + dp_len(&f->h)), DP_END_TYPE, DP_END_ALL,
	       4);
	return &f->h;
}

struct efi_device_path *efi_dp_dup(const struct efi_device_path *a)
{
	size_t n = dp_size(a, DP_MAX);
	void *p = n ? efi_alloc(n) : NULL;

	if (p)
		memcpy(p, a, n);
	return p;
}
