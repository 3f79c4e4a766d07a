/* SPDX-License-Identifier: MIT */
/*
 * gpt.h - GUID partition table reader (UEFI spec 2.10, chapter 5.3). Both the
 * header and the entry array are CRC-checked; a bad primary falls back to
 * the backup at the end of the disk. Everything read is untrusted.
 */
#ifndef FW_EFI_GPT_H
#define FW_EFI_GPT_H

#include "firmware/efi/blk.h"

#define GPT_MAX_PARTS 16 /* used entries kept; the rest are ignored */

struct gpt_part {
	uint32_t number;	      /* 1-based index in the entry array */
	uint64_t first_lba, last_lba; /* inclusive */
	uint64_t attributes;
	uint8_t type_guid[16], part_guid[16]; /* on-disk (mixed-endian) bytes */
	uint16_t name[37];		      /* UTF-16, NUL-terminated */
};

struct gpt {
	uint8_t disk_guid[16];
	uint64_t first_usable, last_usable;
	bool from_backup; /* the primary header or array was bad */
	unsigned int n_parts;
	struct gpt_part parts[GPT_MAX_PARTS];
};

/* EFI System Partition: C12A7328-F81F-11D2-BA4B-00A0C93EC93B (disk bytes). */
extern const uint8_t gpt_type_esp[16];

/* Read and verify the GPT of dev. 0, -FW_ENOENT when there is no valid GPT
 * (neither primary nor backup), or the device's read error. */
int gpt_read(const struct blkdev *dev, struct gpt *out);

/* The first used partition of the given type, or NULL. */
const struct gpt_part *gpt_find_type(const struct gpt *g, const uint8_t type[16]);

#endif /* FW_EFI_GPT_H */
