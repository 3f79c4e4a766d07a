// SPDX-License-Identifier: MIT
/*
 * disk.c - BlockIo and DiskIo over a struct blkdev (read-only), one handle
 * per disk and one per GPT partition (device path: the disk's + a
 * hard-drive node) or, on a CD (2048-byte blocks), one per El Torito EFI
 * boot image (the disk's + a CD-ROM node); FAT partitions and images (or
 * a whole unpartitioned FAT disk) also get SimpleFileSystem.
 */
#include "firmware/efi/eltorito.h"
#include "firmware/efi/fw.h"
#include "firmware/efi/gpt.h"

struct disk {
	struct efi_block_io bio; /* first: the protocol interfaces point here */
	struct efi_disk_io dio;
	struct efi_block_io_media media;
	const struct blkdev *dev;
	efi_handle handle;
};

#define DISK_OF_DIO(p) ((struct disk *)((uint8_t *)(p) - __builtin_offsetof(struct disk, dio)))

static efi_status EFIAPI bio_reset(struct efi_block_io *self, bool ext)
{
	(void)self, (void)ext;
	return EFI_SUCCESS;
}

static efi_status blk_status(int ret)
{
	return ret == 0		   ? EFI_SUCCESS
	       : ret == -FW_ERANGE ? EFI_INVALID_PARAMETER
				   : EFI_DEVICE_ERROR;
}

static efi_status EFIAPI bio_read(struct efi_block_io *self, uint32_t media_id, uint64_t lba,
				  uint64_t size, void *buf)
{
	struct disk *d = (struct disk *)self;

	if (media_id != d->media.media_id)
		return EFI_MEDIA_CHANGED;
	if (!buf || size % d->media.block_size)
		return size % d->media.block_size ? EFI_BAD_BUFFER_SIZE : EFI_INVALID_PARAMETER;
	return blk_status(blk_read(d->dev, lba, size / d->media.block_size, buf));
}

static efi_status EFIAPI bio_write(struct efi_block_io *self, uint32_t media_id, uint64_t lba,
				   uint64_t size, const void *buf)
{
	(void)self, (void)media_id, (void)lba, (void)size, (void)buf;
	return EFI_WRITE_PROTECTED;
}

static efi_status EFIAPI bio_flush(struct efi_block_io *self)
{
	(void)self;
	return EFI_SUCCESS;
}

static efi_status EFIAPI dio_read(struct efi_disk_io *self, uint32_t media_id, uint64_t off,
				  uint64_t size, void *buf)
{
	struct disk *d = DISK_OF_DIO(self);

	if (media_id != d->media.media_id)
		return EFI_MEDIA_CHANGED;
	if (!buf && size)
		return EFI_INVALID_PARAMETER;
	return blk_status(blk_read_bytes(d->dev, off, size, buf));
}

static efi_status EFIAPI dio_write(struct efi_disk_io *self, uint32_t media_id, uint64_t off,
				   uint64_t size, const void *buf)
{
	(void)self, (void)media_id, (void)off, (void)size, (void)buf;
	return EFI_WRITE_PROTECTED;
}

static struct disk *disk_new(const struct blkdev *dev, const struct efi_device_path *dp,
			     bool partition)
{
	struct disk *d = efi_alloc(sizeof(*d));
	struct efi_device_path *copy = efi_dp_dup(dp);

	if (!d || !copy)
		goto fail;
	d->dev = dev;
	d->media = (struct efi_block_io_media){
	    .media_id = 1,
	    .present = true,
	    .logical_partition = partition,
	    .read_only = true,
	    .block_size = dev->block_size,
	    .io_align = 1,
	    .last_block = dev->n_blocks ? dev->n_blocks - 1 : 0,
	    .logical_blocks_per_physical = 1,
	    .optimal_transfer_granularity = 1,
	};
	d->bio = (struct efi_block_io){
	    EFI_BLOCK_IO_REVISION3, &d->media, bio_reset, bio_read, bio_write, bio_flush};
	d->dio = (struct efi_disk_io){0x10000, dio_read, dio_write};
	if (proto_install(&d->handle, &efi_device_path_guid, copy) ||
	    proto_install(&d->handle, &efi_block_io_guid, &d->bio) ||
	    proto_install(&d->handle, &efi_disk_io_guid, &d->dio))
		goto fail;
	return d;
fail:
	efi_log("disk: out of memory or handles");
	return NULL;
}

/* A child handle for blocks [first, first + n) of parent, its path dp +
 * node, with SimpleFileSystem when it holds a FAT volume. */
static void disk_add_child(struct disk *parent, uint64_t first, uint64_t n,
			   const struct efi_device_path *dp, const struct efi_device_path *node,
			   const char *what, uint32_t num)
{
	struct disk *child;
	struct blkdev *win;
	struct efi_device_path *pdp = efi_dp_append(dp, node);

	win = pdp ? efi_alloc(sizeof(*win)) : NULL;
	if (!win || blk_init_part(win, parent->dev, first, n)) {
		efi_free(win);
		efi_free(pdp);
		return;
	}
	child = disk_new(win, pdp, true); /* win lives as long as the child */
	efi_free(pdp);
	if (!child)
		return;
	if (efi_fs_install(child->handle, win) == EFI_SUCCESS)
		efi_log("disk: %s %u: FAT file system", what, num);
}

static void disk_add_partition(struct disk *parent, const struct gpt_part *p,
			       const struct efi_device_path *dp)
{
	struct dp_hd hd;

	memset(&hd, 0, sizeof(hd));
	dp_set(&hd.h, DP_MEDIA, DP_MEDIA_HD, sizeof(hd));
	hd.partition_number = p->number;
	hd.start = p->first_lba;
	hd.size = p->last_lba - p->first_lba + 1;
	memcpy(hd.signature, p->part_guid, 16);
	hd.mbr_type = 2;
	hd.signature_type = 2;
	disk_add_child(parent, hd.start, hd.size, dp, &hd.h, "partition", p->number);
}

/* The EFI boot images of a CD; false when it has none. */
static bool disk_add_eltorito(struct disk *d, const struct efi_device_path *dp)
{
	struct eltorito *et = efi_alloc(sizeof(*et));
	struct dp_cdrom cd;
	int ret = et ? eltorito_read(d->dev, et) : -FW_ENOMEM;

	if (ret) {
		if (ret != -FW_ENOENT)
			efi_log("disk: El Torito catalog refused (%d)", ret);
		efi_free(et);
		return false;
	}
	for (unsigned int i = 0; i < et->n; i++) {
		memset(&cd, 0, sizeof(cd));
		dp_set(&cd.h, DP_MEDIA, DP_MEDIA_CDROM, sizeof(cd));
		cd.boot_entry = et->img[i].entry;
		cd.start = et->img[i].start;
		cd.size = et->img[i].count;
		efi_log("disk: El Torito EFI image %u at block %llu, %llu blocks", cd.boot_entry,
			(unsigned long long)cd.start, (unsigned long long)cd.size);
		disk_add_child(d, cd.start, cd.size, dp, &cd.h, "El Torito image", cd.boot_entry);
	}
	efi_free(et);
	return true;
}

efi_status efi_disk_add(const struct blkdev *dev, const struct efi_device_path *dp, efi_handle *out)
{
	struct disk *d = disk_new(dev, dp, false);
	struct gpt *g;

	if (!d)
		return EFI_OUT_OF_RESOURCES;
	if (out)
		*out = d->handle;
	if (dev->block_size == ELTORITO_BLOCK && disk_add_eltorito(d, dp))
		return EFI_SUCCESS;
	g = efi_alloc(sizeof(*g));
	if (g && gpt_read(dev, g) == 0) {
		efi_log("disk: GPT with %u partitions%s", g->n_parts,
			g->from_backup ? " (backup header)" : "");
		for (unsigned int i = 0; i < g->n_parts; i++)
			disk_add_partition(d, &g->parts[i], dp);
	} else {
		efi_fs_install(d->handle, dev); /* a whole-disk FAT volume */
	}
	efi_free(g);
	return EFI_SUCCESS;
}
