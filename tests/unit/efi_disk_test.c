// SPDX-License-Identifier: MIT
/*
 * efi_disk_test - the path the EFI firmware takes to a boot file
 * (firmware/efi/blk.c, gpt.c, fat.c compiled for the host,
 * efi_disk_env.h): a GPT disk made with sgdisk whose ESP holds a FAT
 * volume made with mkfs.vfat and mtools, through a partition window, and
 * through the read cache (blk_init_cached), which is also tested on its
 * own against a device that counts and fails requests. The GPT and FAT
 * readers alone are efi_gpt_test.c and efi_fat_test.c.
 */
#include "tests/unit/efi_disk_env.h"

/* GPT disk whose ESP holds a FAT32 volume: the path the firmware takes. */
static void test_esp_on_gpt(void)
{
	char img[128], fat[128];
	struct memdisk m;
	struct gpt g;
	struct blkdev part;
	struct fat_fs *fs = malloc(sizeof(*fs));
	struct fat_node n;

	if (!have_tools())
		SKIP("sgdisk/mkfs.vfat/mtools not installed");
	snprintf(img, sizeof(img), "%s/disk.img", tmpdir);
	snprintf(fat, sizeof(fat), "%s/esp.img", tmpdir);
	CHECK(make_fat(fat, 32, 40, "-s 1") == 0);
	CHECK(sh("truncate -s 48M %s && sgdisk -n 1:0:+1M -t 1:8300 -n 2:0:+40M -t 2:ef00 %s "
		 ">/dev/null && dd if=%s of=%s bs=512 seek=4096 conv=notrunc status=none",
		 img, img, fat, img) == 0);
	CHECK(memdisk_load(&m, img, 512) == 0);
	CHECK(gpt_read(&m.dev, &g) == 0);
	const struct gpt_part *esp = gpt_find_type(&g, gpt_type_esp);

	CHECK(esp && esp->number == 2 && esp->first_lba == 4096);
	if (esp) {
		CHECK(blk_init_part(&part, &m.dev, esp->first_lba,
				    esp->last_lba - esp->first_lba + 1) == 0);
		CHECK(fat_mount(fs, &part) == 0);
		CHECK(lookup(fs, NULL, "\\EFI\\BOOT\\BOOTX64.EFI", &n) == 0);
		check_contents(fs, &n, files[3].data, files[3].size, 4096);
		/* a window past the end of the disk is refused */
		CHECK(blk_init_part(&part, &m.dev, m.dev.n_blocks - 1, 2) == -FW_ERANGE);
	}
	free(m.buf);
	free(fs);
}

/* The read cache (blk_init_cached): a raw device that counts its requests
 * and can fail them. */
struct counted {
	struct blkdev mem, dev;
	unsigned int requests;
	uint64_t fail_lba; /* a request touching it fails; UINT64_MAX: none */
};

static int counted_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	struct counted *c = dev->ctx;

	c->requests++;
	if (c->fail_lba >= lba && c->fail_lba < lba + count)
		return -FW_EIO;
	return blk_read(&c->mem, lba, count, buf);
}

static unsigned int allocs_left;

static void *test_alloc(size_t n)
{
	if (!allocs_left)
		return NULL;
	allocs_left--;
	return malloc(n);
}

static void cache_free(struct blk_cache *c)
{
	for (unsigned int i = 0; i < BLK_CACHE_WINS; i++)
		free(c->win[i].buf);
}

static void test_read_cache(void)
{
	size_t len = 3 * 1024 * 1024 + 5 * 512; /* the last window is short */
	uint8_t *disk = malloc(len), *a = malloc(256 * 1024), *b = malloc(256 * 1024);
	struct counted c = {.fail_lba = UINT64_MAX};
	struct blk_cache cache;
	unsigned int seed = 7, before;

	fill_pattern(disk, len, 3);
	blk_init_mem(&c.mem, disk, len, 512);
	c.dev = (struct blkdev){counted_read, &c, 512, c.mem.n_blocks, 0};
	allocs_left = BLK_CACHE_WINS;
	struct blkdev cached;

	blk_init_cached(&cached, &cache, &c.dev, test_alloc);
	CHECK_EQ_U64(cached.n_blocks, c.mem.n_blocks);
	/* every sector of one window, one at a time: a single request */
	for (uint64_t lba = 128; lba < 256; lba++) {
		CHECK(blk_read(&cached, lba, 1, a) == 0);
		CHECK(!memcmp(a, disk + lba * 512, 512));
	}
	CHECK_EQ_U64(c.requests, 1);
	/* random reads, also across windows and up to the short last one,
	 * are what the disk holds */
	for (int i = 0; i < 2000; i++) {
		seed = seed * 1103515245u + 12345u;
		uint64_t n = 1 + (seed >> 8) % (i % 10 == 0 ? 400 : 24);

		seed = seed * 1103515245u + 12345u;
		uint64_t lba = (seed >> 4) % (c.mem.n_blocks - n + 1);

		CHECK(blk_read(&cached, lba, n, a) == 0);
		CHECK(!memcmp(a, disk + lba * 512, n * 512));
	}
	CHECK(blk_read(&cached, c.mem.n_blocks - 1, 2, a) == -FW_ERANGE);
	/* a whole aligned window or more goes straight to the device */
	before = c.requests;
	CHECK(blk_read(&cached, 1024, 256, a) == 0 && !memcmp(a, disk + 1024 * 512, 256 * 512));
	CHECK_EQ_U64(c.requests, before + 2);
	/* a window that cannot be read: the sectors asked for are read
	 * straight (a bad one fails), and the window is not kept */
	cache_free(&cache);
	allocs_left = BLK_CACHE_WINS;
	blk_init_cached(&cached, &cache, &c.dev, test_alloc);
	c.fail_lba = 300;
	CHECK(blk_read(&cached, 260, 1, a) == 0 && !memcmp(a, disk + 260 * 512, 512));
	CHECK(blk_read(&cached, 299, 2, a) == -FW_EIO);
	c.fail_lba = UINT64_MAX;
	before = c.requests;
	CHECK(blk_read(&cached, 300, 1, a) == 0 && !memcmp(a, disk + 300 * 512, 512));
	CHECK(blk_read(&cached, 301, 1, a) == 0 && !memcmp(a, disk + 301 * 512, 512));
	CHECK_EQ_U64(c.requests, before + 1);
	/* no memory for windows: reads still right, straight from the device */
	cache_free(&cache);
	allocs_left = 0;
	blk_init_cached(&cached, &cache, &c.dev, test_alloc);
	before = c.requests;
	CHECK(blk_read(&cached, 5, 3, b) == 0 && !memcmp(b, disk + 5 * 512, 3 * 512));
	CHECK_EQ_U64(c.requests, before + 1);
	cache_free(&cache);
	free(disk);
	free(a);
	free(b);
}

/* An ESP on GPT through the read cache: the same files, a few requests. */
static void test_esp_cached(void)
{
	char img[128], fat[128];
	struct counted c = {.fail_lba = UINT64_MAX};
	struct memdisk m;
	struct blk_cache cache;
	struct blkdev cached, part;
	struct gpt g;
	struct fat_fs *fs = malloc(sizeof(*fs));
	struct fat_node n;

	if (!have_tools())
		SKIP("sgdisk/mkfs.vfat/mtools not installed");
	snprintf(img, sizeof(img), "%s/cached.img", tmpdir);
	snprintf(fat, sizeof(fat), "%s/cached-esp.img", tmpdir);
	CHECK(make_fat(fat, 16, 16, "") == 0);
	CHECK(sh("truncate -s 20M %s && sgdisk -n 1:2048:+16M -t 1:ef00 %s >/dev/null && "
		 "dd if=%s of=%s bs=512 seek=2048 conv=notrunc status=none",
		 img, img, fat, img) == 0);
	CHECK(memdisk_load(&m, img, 512) == 0);
	c.mem = m.dev;
	c.dev = (struct blkdev){counted_read, &c, 512, m.dev.n_blocks, 0};
	allocs_left = BLK_CACHE_WINS;
	blk_init_cached(&cached, &cache, &c.dev, test_alloc);
	CHECK(gpt_read(&cached, &g) == 0 && g.n_parts == 1);
	CHECK(blk_init_part(&part, &cached, g.parts[0].first_lba,
			    g.parts[0].last_lba - g.parts[0].first_lba + 1) == 0);
	CHECK(fat_mount(fs, &part) == 0);
	CHECK(lookup(fs, NULL, "\\EFI\\BOOT\\BOOTX64.EFI", &n) == 0);
	check_contents(fs, &n, files[3].data, files[3].size, 4096);
	CHECK(c.requests <= 8);
	printf("  GPT, FAT and a %u-byte file in %u requests\n", (unsigned int)files[3].size,
	       c.requests);
	cache_free(&cache);
	free(m.buf);
	free(fs);
}

int main(void)
{
	if (efi_disk_setup("efi_disk_test"))
		return 1;
	TEST_RUN(test_esp_on_gpt);
	TEST_RUN(test_read_cache);
	TEST_RUN(test_esp_cached);
	efi_disk_teardown();
	return test_summary();
}
