// SPDX-License-Identifier: MIT
/*
 * efi_eltorito_test - the EFI firmware's El Torito reader
 * (firmware/efi/eltorito.c) compiled for the host, on ISOs made here by
 * Debian's xorriso with EFI FAT images from mkfs.vfat and mtools;
 * xorriso's own report (-report_el_torito) is the oracle of where the
 * image is and how long, and the FAT reader (fat.c) must then find
 * \EFI\BOOT\BOOTX64.EFI in what eltorito_read found. Then hostile discs:
 * a catalog or image beyond the medium, a bad validation checksum,
 * section counts and sizes that lie, more EFI entries than are kept, a
 * sector count of 0/1 with a sane and an insane FAT boot sector, and
 * random damage: never a read outside the medium, never a crash or a
 * loop, every image inside the medium.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/test.h"
#include "tests/unit/efi_test_sh.h"

#include "firmware/efi/blk.c"
#include "firmware/efi/eltorito.c"
#include "firmware/efi/fat.c"

static char tmpdir[64];

static bool have_tools(void)
{
	return !system("command -v xorriso mkfs.vfat mcopy mmd >/dev/null 2>&1");
}

/* An ISO in memory as a 2048-byte block device; reads are checked to
 * stay inside it (blk_read does, this asserts it once more). */
struct iso {
	uint8_t *buf;
	size_t len;
	struct blkdev dev;
	unsigned int reads;
};

static int iso_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	struct iso *m = dev->ctx;

	CHECK(lba < dev->n_blocks && count <= dev->n_blocks - lba);
	m->reads++;
	memcpy(buf, m->buf + lba * ELTORITO_BLOCK, count * ELTORITO_BLOCK);
	return 0;
}

static int iso_load(struct iso *m, const char *path)
{
	m->buf = (uint8_t *)test_read_file(path, &m->len);
	if (!m->buf)
		return -1;
	m->dev = (struct blkdev){.read = iso_read,
				 .ctx = m,
				 .block_size = ELTORITO_BLOCK,
				 .n_blocks = m->len / ELTORITO_BLOCK};
	m->reads = 0;
	return 0;
}

/* mkiso NAME XORRISO_BOOT_ARGS: tree/efi.img (a 4 MiB FAT with
 * BOOTX64.EFI) and tree/bios.img (4 KiB) in an ISO; its path. */
static const char *mkiso(const char *name, const char *boot)
{
	static char iso[160];

	snprintf(iso, sizeof(iso), "%s/%s.iso", tmpdir, name);
	if (sh("cd %s && rm -rf tree && mkdir tree && truncate -s 4M tree/efi.img && "
	       "mkfs.vfat -n ELTORITO tree/efi.img >/dev/null && "
	       "MTOOLS_SKIP_CHECK=1 mmd -i tree/efi.img ::/EFI ::/EFI/BOOT && "
	       "echo bootx64 >app && MTOOLS_SKIP_CHECK=1 mcopy -i tree/efi.img app "
	       "::/EFI/BOOT/BOOTX64.EFI && head -c 4096 /dev/zero >tree/bios.img && "
	       "xorriso -as mkisofs -quiet -o %s -R %s tree >/dev/null 2>&1",
	       tmpdir, iso, boot))
		return NULL;
	return iso;
}

/* xorriso's report: the EFI image's load size (512-byte units) and LBA. */
static int xorriso_efi(const char *iso, unsigned int *ldsiz, unsigned int *lba)
{
	char cmd[256], line[256];
	FILE *p;
	int found = -1;

	snprintf(cmd, sizeof(cmd), "xorriso -indev %s -report_el_torito plain 2>/dev/null", iso);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned int n, ld, l;
		char emul[16];

		if (sscanf(line, "El Torito boot img : %u UEFI y %15s 0x%*x 0x%*x %u %u", &n, emul,
			   &ld, &l) == 4)
			*ldsiz = ld, *lba = l, found = 0;
	}
	pclose(p);
	return found;
}

/* The FAT volume of image i holds \EFI\BOOT\BOOTX64.EFI. */
static bool has_bootx64(struct iso *m, const struct eltorito_image *img)
{
	static const uint16_t path[] = u"\\EFI\\BOOT\\BOOTX64.EFI";
	static struct fat_fs fs;
	struct blkdev win;
	struct fat_node n;

	return !blk_init_part(&win, &m->dev, img->start, img->count) && !fat_mount(&fs, &win) &&
	       !fat_lookup(&fs, NULL, path, &n) && n.size == 8;
}

/* The catalog's block in an ISO (from the descriptor at block 17). */
static uint8_t *catalog(struct iso *m)
{
	return m->buf + (size_t)le32(m->buf + 17 * 2048 + 0x47) * 2048;
}

static void fix_checksum(uint8_t *cat)
{
	uint16_t sum = 0;

	cat[28] = cat[29] = 0;
	for (int i = 0; i < 32; i += 2)
		sum = (uint16_t)(sum + le16(cat + i));
	cat[28] = (uint8_t)(-sum), cat[29] = (uint8_t)((uint16_t)(-sum) >> 8);
}

/* EFI as the default entry (xorriso -e alone: the validation entry's
 * platform is EFI), and EFI in a section after a BIOS default entry (as
 * grub-mkrescue and distributions lay it out). */
static void test_xorriso_isos(void)
{
	static const char *boots[] = {"-e efi.img -no-emul-boot",
				      "-b bios.img -no-emul-boot -boot-load-size 4 "
				      "-eltorito-alt-boot -e efi.img -no-emul-boot"};
	struct eltorito et;
	struct iso m;

	if (!have_tools())
		SKIP("xorriso/mkfs.vfat/mtools not installed");
	for (int k = 0; k < 2; k++) {
		const char *iso = mkiso(k ? "both" : "efi", boots[k]);
		unsigned int ldsiz = 0, lba = 0;

		CHECK(iso && xorriso_efi(iso, &ldsiz, &lba) == 0);
		if (!iso || iso_load(&m, iso))
			continue;
		CHECK(eltorito_read(&m.dev, &et) == 0);
		CHECK_EQ_U64(et.n, 1);
		CHECK_EQ_U64(et.img[0].entry, (uint64_t)k); /* default 0, first section 1 */
		CHECK_EQ_U64(et.img[0].start, lba);
		CHECK_EQ_U64(et.img[0].count, ((uint64_t)ldsiz * 512 + 2047) / 2048);
		CHECK_EQ_U64(et.img[0].count, 2048); /* 4 MiB */
		CHECK(has_bootx64(&m, &et.img[0]));
		free(m.buf);
	}
}

/* Sector count 0 or 1 (distributions' ISOs): the size is the FAT's; a
 * boot sector that is no BPB gives the rest of the medium. */
static void test_size_from_bpb(void)
{
	struct eltorito et;
	struct iso m;
	const char *iso;

	if (!have_tools())
		SKIP("xorriso/mkfs.vfat/mtools not installed");
	iso = mkiso("bpb", "-e efi.img -no-emul-boot");
	if (!iso || iso_load(&m, iso)) {
		CHECK(!"the ISO");
		return;
	}
	uint8_t *def = catalog(&m) + 32;
	uint64_t start = le32(def + 8);

	for (int c = 0; c < 2; c++) {
		def[6] = (uint8_t)c, def[7] = 0;
		CHECK(eltorito_read(&m.dev, &et) == 0 && et.n == 1);
		CHECK_EQ_U64(et.img[0].count, 2048);
		CHECK(has_bootx64(&m, &et.img[0]));
	}
	m.buf[start * 2048 + 11] = 3; /* bytes per sector 3: no BPB */
	CHECK(eltorito_read(&m.dev, &et) == 0 && et.n == 1);
	CHECK_EQ_U64(et.img[0].count, m.dev.n_blocks - start);
	m.buf[start * 2048 + 11] = 0, m.buf[start * 2048 + 12] = 2; /* 512 again */
	put_le32(m.buf + start * 2048 + 32, 0xffffffffu);	    /* total (32-bit) */
	m.buf[start * 2048 + 19] = m.buf[start * 2048 + 20] = 0;    /* ... in use */
	CHECK(eltorito_read(&m.dev, &et) == 0 && et.n == 1);
	CHECK_EQ_U64(et.img[0].count, m.dev.n_blocks - start); /* cut at the end */
	free(m.buf);
}

/* Lies in the descriptor and the catalog. */
static void test_hostile_catalog(void)
{
	struct eltorito et;
	struct iso m;
	const char *iso;

	if (!have_tools())
		SKIP("xorriso/mkfs.vfat/mtools not installed");
	iso = mkiso("hostile", "-b bios.img -no-emul-boot -boot-load-size 4 "
			       "-eltorito-alt-boot -e efi.img -no-emul-boot");
	if (!iso || iso_load(&m, iso)) {
		CHECK(!"the ISO");
		return;
	}
	uint8_t *brvd = m.buf + 17 * 2048, *cat = catalog(&m), save[2048];
	uint32_t cat_lba = le32(brvd + 0x47);
	const uint64_t n = m.dev.n_blocks;

	memcpy(save, cat, sizeof(save));
	/* no descriptor: no El Torito */
	brvd[7] = 'X';
	CHECK(eltorito_read(&m.dev, &et) == -FW_ENOENT);
	brvd[7] = 'E';
	/* the catalog beyond the medium: refused, never read */
	put_le32(brvd + 0x47, (uint32_t)n);
	CHECK(eltorito_read(&m.dev, &et) == -FW_EBADMSG);
	put_le32(brvd + 0x47, 0xffffffffu);
	CHECK(eltorito_read(&m.dev, &et) == -FW_EBADMSG);
	put_le32(brvd + 0x47, cat_lba);
	/* a validation entry that does not sum to zero, or lacks its key */
	cat[4] ^= 1;
	CHECK(eltorito_read(&m.dev, &et) == -FW_EBADMSG);
	cat[4] ^= 1, cat[30] = 0;
	CHECK(eltorito_read(&m.dev, &et) == -FW_EBADMSG);
	memcpy(cat, save, sizeof(save));
	CHECK(eltorito_read(&m.dev, &et) == 0 && et.n == 1 && et.img[0].entry == 1);
	/* the EFI image beyond the medium, at block 0, or past it by its size */
	uint8_t *efi = cat + 96;

	CHECK_EQ_U64(cat[64], 0x91);
	CHECK_EQ_U64(cat[65], 0xef);
	put_le32(efi + 8, (uint32_t)n);
	CHECK(eltorito_read(&m.dev, &et) == -FW_ENOENT);
	put_le32(efi + 8, 0);
	CHECK(eltorito_read(&m.dev, &et) == -FW_ENOENT);
	put_le32(efi + 8, (uint32_t)(n - 3));
	efi[6] = efi[7] = 0xff; /* 32 MiB from 6 KiB before the end */
	CHECK(eltorito_read(&m.dev, &et) == 0 && et.n == 1);
	CHECK_EQ_U64(et.img[0].start + et.img[0].count, n);
	memcpy(cat, save, sizeof(save));
	/* a section that claims 65535 entries: only the block's are read */
	cat[66] = cat[67] = 0xff;
	CHECK(eltorito_read(&m.dev, &et) == 0 && et.n == 1);
	/* 62 EFI entries (and extension entries between): ELTORITO_MAX kept */
	for (int i = 3; i < 64; i++)
		memcpy(cat + 32 * i, i % 5 ? efi : (const uint8_t[32]){0x44}, 32);
	CHECK(eltorito_read(&m.dev, &et) == 0);
	CHECK_EQ_U64(et.n, ELTORITO_MAX);
	CHECK_EQ_U64(et.img[0].entry, 1);
	CHECK_EQ_U64(et.img[1].entry, 2);
	/* a BIOS-only section: nothing for EFI */
	memcpy(cat, save, sizeof(save));
	cat[65] = 0;
	CHECK(eltorito_read(&m.dev, &et) == -FW_ENOENT);
	/* a medium too small for block 17 */
	m.dev.n_blocks = 17;
	CHECK(eltorito_read(&m.dev, &et) == -FW_ENOENT);
	free(m.buf);
}

/* Random damage to the descriptor, the catalog and the boot sector. */
static void test_random_damage(void)
{
	struct eltorito et;
	struct iso m;
	const char *iso;
	unsigned int seed = 12345;

	if (!have_tools())
		SKIP("xorriso/mkfs.vfat/mtools not installed");
	iso = mkiso("damage", "-b bios.img -no-emul-boot -boot-load-size 4 "
			      "-eltorito-alt-boot -e efi.img -no-emul-boot");
	if (!iso || iso_load(&m, iso)) {
		CHECK(!"the ISO");
		return;
	}
	uint8_t *orig = malloc(m.len);
	uint32_t cat = le32(m.buf + 17 * 2048 + 0x47);
	uint32_t spots[3] = {17, cat, le32(catalog(&m) + 96 + 8)};

	if (!orig)
		return;
	memcpy(orig, m.buf, m.len);
	for (int round = 0; round < 3000; round++) {
		memcpy(m.buf, orig, m.len);
		for (int k = 0; k < 1 + round % 16; k++) {
			seed = seed * 1103515245u + 12345u;
			uint32_t blk = spots[(seed >> 8) % 3], off = (seed >> 12) % 2048;

			seed = seed * 1103515245u + 12345u;
			m.buf[(size_t)blk * 2048 + (round % 4 ? off % 192 : off)] =
			    (uint8_t)(seed >> 16);
		}
		if (round % 7 == 0)
			fix_checksum(m.buf + (size_t)cat * 2048);
		int ret = eltorito_read(&m.dev, &et);

		CHECK(ret == 0 || ret == -FW_ENOENT || ret == -FW_EBADMSG);
		CHECK(et.n <= ELTORITO_MAX && (ret != 0 || et.n > 0));
		for (unsigned int i = 0; i < et.n; i++)
			CHECK(et.img[i].start > 0 && et.img[i].count > 0 &&
			      et.img[i].start + et.img[i].count <= m.dev.n_blocks);
	}
	free(orig);
	free(m.buf);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/efi_eltorito_test.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	TEST_RUN(test_xorriso_isos);
	TEST_RUN(test_size_from_bpb);
	TEST_RUN(test_hostile_catalog);
	TEST_RUN(test_random_damage);
	sh("rm -rf %s", tmpdir);
	return test_summary();
}
