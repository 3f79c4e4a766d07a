/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the UEFI handle and protocol database: handles carry (GUID,
 * interface) pairs; lookups by handle, by protocol, by device path. Handles
 * are slots of a static table, so a handle from an application is checked
 * by address before use. Pure C: host-testable.
 */
#ifndef FW_EFI_PROTO_H
#define FW_EFI_PROTO_H

#include "firmware/efi/efi.h"

#define PROTO_MAX_HANDLES 96
#define PROTO_PER_HANDLE  12
#define PROTO_MAX_NOTIFY  16

extern const efi_guid efi_device_path_guid;

/* Forget everything (tests; the firmware starts zeroed). */
void proto_reset(void);

bool proto_handle_valid(efi_handle h);

/* InstallProtocolInterface: *h NULL creates a handle. EFI_INVALID_PARAMETER
 * when the protocol is already on the handle. */
efi_status proto_install(efi_handle *h, const efi_guid *g, void *iface);
efi_status proto_uninstall(efi_handle h, const efi_guid *g, void *iface);
efi_status proto_reinstall(efi_handle h, const efi_guid *g, void *old_if, void *new_if);
/* HandleProtocol. */
efi_status proto_get(efi_handle h, const efi_guid *g, void **iface);
/* LocateHandle (AllHandles or ByProtocol). */
efi_status proto_locate_handles(uint32_t search, const efi_guid *g, uint64_t *size,
				efi_handle *buf);
/* LocateProtocol: the first handle's interface. */
efi_status proto_locate(const efi_guid *g, void **iface);
/* The protocols of h: up to PROTO_PER_HANDLE GUID pointers into the table. */
unsigned int proto_list(efi_handle h, const efi_guid **out);
/* LocateDevicePath: the handle with protocol g whose device path is the
 * longest prefix of *dp; *dp advances past the matched nodes. */
efi_status proto_locate_device_path(const efi_guid *g, const struct efi_device_path **dp,
				    efi_handle *dev);
/* RegisterProtocolNotify: signal(ev) on each later install of g. */
efi_status proto_register_notify(const efi_guid *g, efi_event ev, void (*signal)(efi_event));

/* ---- device paths (dp) ---------------------------------------------------- */
#define DP_END_TYPE 0x7f
#define DP_END_ALL  0xff

static inline uint16_t dp_len(const struct efi_device_path *n)
{
	return (uint16_t)(n->length[0] | n->length[1] << 8);
}

static inline const struct efi_device_path *dp_next(const struct efi_device_path *n)
{
	return (const struct efi_device_path *)((const uint8_t *)n + dp_len(n));
}

static inline bool dp_is_end(const struct efi_device_path *n)
{
	return n->type == DP_END_TYPE;
}

/* Bytes of the whole path including the end node, or 0 when it is
 * malformed (a node shorter than 4 bytes, or longer than max in total). */
size_t dp_size(const struct efi_device_path *dp, size_t max);

#endif /* FW_EFI_PROTO_H */
