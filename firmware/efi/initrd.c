// SPDX-License-Identifier: MIT
/*
 * initrd.c - an initrd handed over as a PVH module (`--initrd` on an EFI
 * VM, or QEMU's -initrd) served the way Linux's EFI stub looks for one
 * (5.8+): EFI_LOAD_FILE2_PROTOCOL on a handle whose device path is
 * VenMedia(LINUX_EFI_INITRD_MEDIA_GUID). A module is taken for an initrd
 * by its content: a cpio archive ("070701"/"070702") or one compressed
 * with gzip, zstd, xz, lz4, bzip2 or lzma (Linux's formats); anything else
 * stays a RAM disk (main.c).
 */
#include "firmware/efi/fw.h"

static const uint8_t *rd;
static uint64_t rd_size;

bool efi_initrd_is(const void *mod, uint64_t size)
{
	static const struct {
		uint8_t n, m[6];
	} magic[] = {
	    {6, {'0', '7', '0', '7', '0', '1'}},
	    {6, {'0', '7', '0', '7', '0', '2'}},
	    {2, {0x1f, 0x8b}},
	    {4, {0x28, 0xb5, 0x2f, 0xfd}},
	    {6, {0xfd, '7', 'z', 'X', 'Z', 0}},
	    {4, {0x02, 0x21, 0x4c, 0x18}},
	    {3, {'B', 'Z', 'h'}},
	    {3, {0x5d, 0, 0}},
	};

	for (unsigned int i = 0; i < FW_ARRAY_SIZE(magic); i++)
		if (size >= 512 && !memcmp(mod, magic[i].m, magic[i].n))
			return true;
	return false;
}

static efi_status EFIAPI load_file(struct efi_load_file2 *self, struct efi_device_path *path,
				   bool boot_policy, uint64_t *size, void *buf)
{
	(void)self;
	if (!size || !path || boot_policy)
		return boot_policy ? EFI_UNSUPPORTED : EFI_INVALID_PARAMETER;
	if (!buf || *size < rd_size) {
		*size = rd_size;
		return EFI_BUFFER_TOO_SMALL;
	}
	memcpy(buf, rd, rd_size);
	*size = rd_size;
	return EFI_SUCCESS;
}

void efi_initrd_install(const void *mod, uint64_t size)
{
	static struct efi_load_file2 lf2 = {load_file};
	static struct {
		struct dp_vendor v;
		struct efi_device_path end;
	} __attribute__((packed)) dp;
	efi_handle h = NULL;

	if (rd)
		return; /* the first one */
	rd = mod;
	rd_size = size;
	dp_set(&dp.v.h, DP_MEDIA, DP_MEDIA_VENDOR, sizeof(dp.v));
	dp.v.guid = efi_linux_initrd_media_guid;
	dp_set(&dp.end, DP_END_TYPE, DP_END_ALL, 4);
	if (proto_install(&h, &efi_device_path_guid, &dp) ||
	    proto_install(&h, &efi_load_file2_guid, &lf2))
		efi_log("initrd: cannot install LoadFile2");
	else
		efi_log("initrd: %llu KiB through LoadFile2", (unsigned long long)(size >> 10));
}
