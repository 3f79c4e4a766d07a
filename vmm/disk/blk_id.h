/* SPDX-License-Identifier: MIT */
/*
 * blk_id.h - a disk's identity in a snapshot (docs/snapshot.md): its
 * virtual size, its image file's size and mtime, and an FNV-1a hash of the
 * file's first and last MiB. A snapshot saves it per disk; a restore onto
 * another disk, or onto the same one written since, is refused. Shared by
 * every disk device (virtio-blk, AHCI).
 */
#ifndef VMLET_DISK_BLK_ID_H
#define VMLET_DISK_BLK_ID_H

#include <stdint.h>

struct blk;

/* Saved as these 40 bytes (little endian, no padding). */
struct blk_id {
	uint64_t size, file_size;
	int64_t mtime_s, mtime_ns;
	uint64_t hash;
};

/* be's identity now: 0, -EIO (no backend, fstat failed, the first or last
 * MiB unreadable; an O_DIRECT descriptor is read aligned) or -ENOMEM. */
int blk_id_read(const struct blk *be, struct blk_id *id);
/* Does be still have identity saved? 0, or -EINVAL with the reason
 * logged ("restore: disk 'NAME' is not the disk of the snapshot..."), or
 * blk_id_read()'s error (logged). */
int blk_id_check(const struct blk *be, const char *name, const struct blk_id *saved);

#endif /* VMLET_DISK_BLK_ID_H */
