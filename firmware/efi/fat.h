/* SPDX-License-Identifier: MIT */
/*
 * fat.h - read-only FAT12/16/32 (Microsoft FAT specification 1.03) with long
 * file names, over a struct blkdev (normally a GPT partition window). The
 * volume is untrusted: every field is range-checked, cluster chains are
 * bounded, directories are capped at the spec's 65536 entries.
 *
 * Names and paths are UCS-2 (as UEFI's SimpleFileSystem passes them).
 * Lookups are case-insensitive (ASCII and Latin-1 letters) and match either
 * the long name or the 8.3 name; '\' and '/' both separate components.
 */
#ifndef FW_EFI_FAT_H
#define FW_EFI_FAT_H

#include "firmware/efi/blk.h"

#define FAT_NAME_MAX 255
#define FAT_ATTR_RO  0x01
#define FAT_ATTR_HID 0x02
#define FAT_ATTR_SYS 0x04
#define FAT_ATTR_VOL 0x08
#define FAT_ATTR_DIR 0x10
#define FAT_ATTR_ARC 0x20

struct fat_fs {
	const struct blkdev *dev;
	int type; /* 12, 16 or 32 */
	uint32_t sector_size, cluster_size, sec_per_clus;
	uint32_t fat_sector; /* first sector of the FAT in use */
	uint32_t fat_sectors;
	uint32_t root_sector, root_entries; /* FAT12/16 fixed root directory */
	uint32_t root_cluster;		    /* FAT32 */
	uint32_t data_sector;		    /* first sector of cluster 2 */
	uint32_t n_clusters;		    /* valid clusters: 2 .. n_clusters + 1 */
	uint8_t label[11];
	uint32_t serial;
	/* one-sector caches: FAT entries, and small data/directory reads */
	uint64_t fat_cache_sec, data_cache_sec; /* UINT64_MAX = empty */
	uint8_t fat_cache[BLK_MAX_BLOCK] __attribute__((aligned(16)));
	uint8_t data_cache[BLK_MAX_BLOCK] __attribute__((aligned(16)));
};

struct fat_node {
	uint32_t first_cluster; /* 0: empty file, or the FAT12/16 root */
	uint32_t size;		/* bytes (directories: the cap) */
	uint8_t attr;
	bool fixed_root;			    /* FAT12/16 root directory region */
	uint16_t cdate, ctime, adate, wdate, wtime; /* FAT date/time words */
	uint16_t name[FAT_NAME_MAX + 1];	    /* display name (long if present) */
	uint16_t short_name[13];		    /* 8.3 form, "NAME.EXT" */
	/* read cursor: cluster number of the cur_index-th cluster */
	uint32_t cur_index, cur_cluster;
};

/* Mount the volume on dev. 0, -FW_EBADMSG (not a FAT volume we accept) or a
 * read error. dev must outlive fs. */
int fat_mount(struct fat_fs *fs, const struct blkdev *dev);

void fat_root(const struct fat_fs *fs, struct fat_node *out);

static inline bool fat_is_dir(const struct fat_node *n)
{
	return n->attr & FAT_ATTR_DIR;
}

/* Read up to len bytes at pos; returns the number read (short at end of
 * file, 0 at or beyond it) or -errno. Directories read as raw entries. */
int64_t fat_read(struct fat_fs *fs, struct fat_node *node, uint64_t pos, void *buf, uint64_t len);

/* Next directory entry at or after byte *pos of dir (skipping deleted
 * entries and volume labels; "." and ".." included). Advances *pos past it.
 * 0, -FW_ENOENT at the end, or -errno. */
int fat_dir_next(struct fat_fs *fs, struct fat_node *dir, uint64_t *pos, struct fat_node *out);

/* Look path up starting from dir (NULL or an absolute path: the root). "."
 * and ".." components are handled. 0, -FW_ENOENT, or -errno. */
int fat_lookup(struct fat_fs *fs, const struct fat_node *dir, const uint16_t *path,
	       struct fat_node *out);

#endif /* FW_EFI_FAT_H */
