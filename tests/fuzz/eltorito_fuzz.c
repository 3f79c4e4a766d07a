/* SPDX-License-Identifier: MIT */
/*
 * eltorito_fuzz.c - libFuzzer target for the EFI firmware's El Torito
 * reader (firmware/efi/eltorito.c) and, on each image it keeps, the FAT
 * reader (fat.c) looking up \EFI\BOOT\BOOTX64.EFI, as disk.c and the boot
 * manager do with a CD: the disc is untrusted (an ISO a user attaches).
 *
 * Input: le32 the medium's size in 2048-byte blocks (at least 18), then up
 * to three blocks: block 17 (the Boot Record Volume Descriptor), the block
 * its catalog pointer names, and the block every other read returns (the
 * FAT boot sector, the FAT, directories, file data), each zero-padded.
 * Any crash, sanitizer report or hang is a bug; so is a read outside the
 * medium, an image outside it, or more images than ELTORITO_MAX.
 *
 * FUZZ_ARGS: -max_len=6148
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "firmware/efi/blk.c"
#include "firmware/efi/eltorito.c"
#include "firmware/efi/fat.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct medium {
	uint8_t blk[3][ELTORITO_BLOCK]; /* block 17, the catalog, the rest */
	uint32_t catalog;
};

static int medium_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	const struct medium *m = dev->ctx;
	uint8_t *out = buf;

	if (lba >= dev->n_blocks || count > dev->n_blocks - lba)
		abort(); /* blk_read must have refused it */
	for (uint64_t i = 0; i < count; i++, lba++) {
		const uint8_t *b = lba == ELTORITO_BRVD_LBA ? m->blk[0]
				   : lba == m->catalog	    ? m->blk[1]
							    : m->blk[2];

		memcpy(out + i * ELTORITO_BLOCK, b, ELTORITO_BLOCK);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t path[] = u"\\EFI\\BOOT\\BOOTX64.EFI";
	static struct medium m;
	static struct fat_fs fs;
	struct blkdev dev, win;
	struct eltorito et;
	struct fat_node node;

	if (size < 4)
		return 0;
	memset(&m, 0, sizeof(m));
	memcpy(m.blk, data + 4, size - 4 < sizeof(m.blk) ? size - 4 : sizeof(m.blk));
	m.catalog = le32(m.blk[0] + 0x47);
	dev = (struct blkdev){.read = medium_read,
			      .ctx = &m,
			      .block_size = ELTORITO_BLOCK,
			      .n_blocks = le32(data) < 18 ? 18 : le32(data)};
	if (eltorito_read(&dev, &et) != 0)
		return 0;
	if (et.n == 0 || et.n > ELTORITO_MAX)
		abort();
	for (unsigned int i = 0; i < et.n; i++) {
		const struct eltorito_image *img = &et.img[i];

		if (!img->start || !img->count || img->start >= dev.n_blocks ||
		    img->count > dev.n_blocks - img->start)
			abort();
		if (!blk_init_part(&win, &dev, img->start, img->count) && !fat_mount(&fs, &win))
			(void)fat_lookup(&fs, NULL, path, &node);
	}
	return 0;
}
