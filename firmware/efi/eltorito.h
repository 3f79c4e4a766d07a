/* SPDX-License-Identifier: MIT */
/*
 * eltorito.h - the EFI boot images of an El Torito CD (El Torito Bootable
 * CD-ROM Format Specification 1.0; UEFI 2.10 §13.3.2): the Boot Record
 * Volume Descriptor at block 17 points at the boot catalog, whose
 * validation entry, initial/default entry and sections list the images;
 * those for platform 0xEF (EFI) are FAT volumes the firmware boots from.
 *
 * The disc is untrusted: one catalog block is read (64 entries; section
 * counts that run past it stop there), an image must start inside the
 * medium and is cut at its end, and its size comes from the entry's
 * sector count (512-byte units) or, when that says 0 or 1 sector as
 * distributions' ISOs do, from the FAT boot sector's total sector count
 * (the rest of the medium when that is not a sane BPB).
 */
#ifndef FW_EFI_ELTORITO_H
#define FW_EFI_ELTORITO_H

#include "firmware/efi/blk.h"

#define ELTORITO_BLOCK	      2048u
#define ELTORITO_BRVD_LBA     17u
#define ELTORITO_PLATFORM_EFI 0xefu
#define ELTORITO_MAX	      8u /* EFI images kept from one catalog */

struct eltorito_image {
	uint32_t entry;	       /* boot entry number: 0 the default, then catalog order */
	uint64_t start, count; /* in ELTORITO_BLOCK blocks of the medium, inside it */
};

struct eltorito {
	unsigned int n;
	struct eltorito_image img[ELTORITO_MAX];
};

/* The EFI boot images of the CD dev (block_size ELTORITO_BLOCK): 0 with
 * out->n >= 1, -FW_ENOENT when the disc has no El Torito catalog or no
 * EFI image, -FW_EBADMSG for a malformed descriptor or catalog, or a read
 * error. */
int eltorito_read(const struct blkdev *dev, struct eltorito *out);

#endif /* FW_EFI_ELTORITO_H */
