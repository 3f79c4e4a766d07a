// SPDX-License-Identifier: MIT
/* proto.c - handles, protocol interfaces and device-path lookup. */
#include "firmware/efi/proto.h"

#define HANDLE_MAGIC 0x646e6168u /* "hand" */
#define DP_MAX	     4096

const efi_guid efi_device_path_guid =
    EFI_GUID(0x09576e91, 0x6d3f, 0x11d2, 0x8e, 0x39, 0x00, 0xa0, 0xc9, 0x69, 0x72, 0x3b);

struct handle {
	uint32_t magic;
	unsigned int n;
	struct {
		efi_guid guid;
		void *iface;
	} p[PROTO_PER_HANDLE];
};

static struct handle handles[PROTO_MAX_HANDLES];
static struct {
	efi_guid guid;
	efi_event ev;
	void (*signal)(efi_event);
} notify[PROTO_MAX_NOTIFY];

void proto_reset(void)
{
	memset(handles, 0, sizeof(handles));
	memset(notify, 0, sizeof(notify));
}

bool proto_handle_valid(efi_handle h)
{
	uintptr_t a = (uintptr_t)h, b = (uintptr_t)handles;

	return a >= b && a < b + sizeof(handles) && (a - b) % sizeof(handles[0]) == 0 &&
	       ((struct handle *)h)->magic == HANDLE_MAGIC;
}

static int find(const struct handle *h, const efi_guid *g)
{
	for (unsigned int i = 0; i < h->n; i++)
		if (guid_eq(&h->p[i].guid, g))
			return (int)i;
	return -1;
}

efi_status proto_install(efi_handle *hp, const efi_guid *g, void *iface)
{
	struct handle *h;

	if (!hp || !g)
		return EFI_INVALID_PARAMETER;
	if (*hp) {
		if (!proto_handle_valid(*hp))
			return EFI_INVALID_PARAMETER;
		h = *hp;
		if (find(h, g) >= 0)
			return EFI_INVALID_PARAMETER;
	} else {
		h = NULL;
		for (unsigned int i = 0; i < PROTO_MAX_HANDLES && !h; i++)
			if (handles[i].magic != HANDLE_MAGIC)
				h = &handles[i];
		if (!h)
			return EFI_OUT_OF_RESOURCES;
		h->n = 0;
	}
	if (h->n >= PROTO_PER_HANDLE)
		return EFI_OUT_OF_RESOURCES;
	h->magic = HANDLE_MAGIC;
	h->p[h->n].guid = *g;
	h->p[h->n].iface = iface;
	h->n++;
	*hp = h;
	for (unsigned int i = 0; i < PROTO_MAX_NOTIFY; i++)
		if (notify[i].signal && guid_eq(&notify[i].guid, g))
			notify[i].signal(notify[i].ev);
	return EFI_SUCCESS;
}

efi_status proto_uninstall(efi_handle hv, const efi_guid *g, void *iface)
{
	struct handle *h = hv;
	int i;

	if (!g || !proto_handle_valid(hv))
		return EFI_INVALID_PARAMETER;
	i = find(h, g);
	if (i < 0 || h->p[i].iface != iface)
		return EFI_NOT_FOUND;
	h->p[i] = h->p[--h->n];
	if (!h->n)
		h->magic = 0; /* the last protocol gone: the handle goes too */
	return EFI_SUCCESS;
}

efi_status proto_reinstall(efi_handle hv, const efi_guid *g, void *old_if, void *new_if)
{
	struct handle *h = hv;
	int i;

	if (!g || !proto_handle_valid(hv))
		return EFI_INVALID_PARAMETER;
	i = find(h, g);
	if (i < 0 || h->p[i].iface != old_if)
		return EFI_NOT_FOUND;
	h->p[i].iface = new_if;
	return EFI_SUCCESS;
}

efi_status proto_get(efi_handle hv, const efi_guid *g, void **iface)
{
	struct handle *h = hv;
	int i;

	if (!g || !iface || !proto_handle_valid(hv))
		return EFI_INVALID_PARAMETER;
	i = find(h, g);
	if (i < 0) {
		*iface = NULL;
		return EFI_UNSUPPORTED;
	}
	*iface = h->p[i].iface;
	return EFI_SUCCESS;
}

efi_status proto_locate_handles(uint32_t search, const efi_guid *g, uint64_t *size, efi_handle *buf)
{
	uint64_t n = 0;

	if (!size || (search == ByProtocol && !g) || (search != AllHandles && search != ByProtocol))
		return search == ByRegisterNotify ? EFI_UNSUPPORTED : EFI_INVALID_PARAMETER;
	for (unsigned int i = 0; i < PROTO_MAX_HANDLES; i++) {
		if (handles[i].magic != HANDLE_MAGIC ||
		    (search == ByProtocol && find(&handles[i], g) < 0))
			continue;
		if ((n + 1) * sizeof(efi_handle) <= *size && buf)
			buf[n] = &handles[i];
		n++;
	}
	if (!n)
		return EFI_NOT_FOUND;
	if (n * sizeof(efi_handle) > *size) {
		*size = n * sizeof(efi_handle);
		return EFI_BUFFER_TOO_SMALL;
	}
	if (!buf)
		return EFI_INVALID_PARAMETER;
	*size = n * sizeof(efi_handle);
	return EFI_SUCCESS;
}

efi_status proto_locate(const efi_guid *g, void **iface)
{
	if (!g || !iface)
		return EFI_INVALID_PARAMETER;
	for (unsigned int i = 0; i < PROTO_MAX_HANDLES; i++) {
		int k = handles[i].magic == HANDLE_MAGIC ? find(&handles[i], g) : -1;

		if (k >= 0) {
			*iface = handles[i].p[k].iface;
			return EFI_SUCCESS;
		}
	}
	*iface = NULL;
	return EFI_NOT_FOUND;
}

unsigned int proto_list(efi_handle hv, const efi_guid **out)
{
	struct handle *h = hv;

	if (!proto_handle_valid(hv))
		return 0;
	for (unsigned int i = 0; i < h->n; i++)
		out[i] = &h->p[i].guid;
	return h->n;
}

size_t dp_size(const struct efi_device_path *dp, size_t max)
{
	size_t total = 0;

	for (;;) {
		if (max - total < 4)
			return 0;
		uint16_t len = dp_len(dp);

		if (len < 4 || len > max - total)
			return 0;
		total += len;
		if (dp_is_end(dp) && dp->subtype == DP_END_ALL)
			return total;
		dp = dp_next(dp);
	}
}

/* Nodes of prefix (up to its end) that match the start of path; -1 when
 * prefix is not a prefix of path. */
static long dp_match(const struct efi_device_path *prefix, const struct efi_device_path *path,
		     const struct efi_device_path **rest)
{
	long n = 0;

	while (!dp_is_end(prefix)) {
		if (dp_is_end(path) || dp_len(prefix) != dp_len(path) ||
		    memcmp(prefix, path, dp_len(prefix)))
			return -1;
		prefix = dp_next(prefix);
		path = dp_next(path);
		n++;
	}
	*rest = path;
	return n;
}

efi_status proto_locate_device_path(const efi_guid *g, const struct efi_device_path **dp,
				    efi_handle *dev)
{
	const struct efi_device_path *best_rest = NULL, *rest;
	struct handle *best = NULL;
	long best_n = -1;

	if (!g || !dp || !*dp || !dev || !dp_size(*dp, DP_MAX))
		return EFI_INVALID_PARAMETER;
	for (unsigned int i = 0; i < PROTO_MAX_HANDLES; i++) {
		struct handle *h = &handles[i];
		int k = h->magic == HANDLE_MAGIC ? find(h, g) : -1;
		int d = k >= 0 ? find(h, &efi_device_path_guid) : -1;

		if (d < 0 || !h->p[d].iface || !dp_size(h->p[d].iface, DP_MAX))
			continue;
		long n = dp_match(h->p[d].iface, *dp, &rest);

		if (n > best_n) {
			best_n = n;
			best = h;
			best_rest = rest;
		}
	}
	if (!best)
		return EFI_NOT_FOUND;
	*dev = best;
	*dp = best_rest;
	return EFI_SUCCESS;
}

efi_status proto_register_notify(const efi_guid *g, efi_event ev, void (*signal)(efi_event))
{
	if (!g || !ev)
		return EFI_INVALID_PARAMETER;
	for (unsigned int i = 0; i < PROTO_MAX_NOTIFY; i++)
		if (!notify[i].signal) {
			notify[i].guid = *g;
			notify[i].ev = ev;
			notify[i].signal = signal;
			return EFI_SUCCESS;
		}
	return EFI_OUT_OF_RESOURCES;
}
