// SPDX-License-Identifier: MIT
/*
 * efi_fat_test - the EFI firmware's FAT reader (firmware/efi/fat.c)
 * compiled for the host (efi_disk_env.h), on FAT12, FAT16 (also with
 * 4 KiB sectors) and FAT32 volumes made here with Debian's mkfs.vfat and
 * mtools; the files copied in are the oracle: contents, long and short
 * names, UEFI-style paths, directory listing. Randomly damaged volumes
 * never make the reader crash or loop.
 */
#include "tests/unit/efi_disk_env.h"

static void check_volume(struct fat_fs *fs, int bits)
{
	struct fat_node n, dir;

	CHECK_EQ_U64(fs->type, bits);
	CHECK(!memcmp(fs->label, "VMLETESP   ", 11));
	for (size_t i = 0; i < N_FILES; i++) {
		char path[128];
		int ret;

		snprintf(path, sizeof(path), "%s", files[i].fat_path);
		ret = lookup(fs, NULL, path, &n);
		CHECK(ret == 0);
		if (ret) {
			printf("  lookup %s: %d\n", path, ret);
			continue;
		}
		CHECK(!fat_is_dir(&n));
		CHECK_EQ_U64(n.size, files[i].size);
		check_contents(fs, &n, files[i].data, files[i].size, 65536);
		check_contents(fs, &n, files[i].data, files[i].size, 777);
	}
	/* UEFI-style paths: backslashes, any case, dot components, relative */
	CHECK(lookup(fs, NULL, "\\efi\\boot\\bootx64.efi", &n) == 0 && n.size == 30001);
	CHECK(u16eq(n.name, "BOOTX64.EFI"));
	CHECK(lookup(fs, NULL, "\\EFI\\.\\BOOT\\..\\BOOT\\\\BootX64.Efi", &n) == 0 &&
	      n.size == 30001);
	CHECK(lookup(fs, NULL, "\\..\\EFI\\BOOT\\BOOTX64.EFI", &n) == 0);
	CHECK(lookup(fs, NULL, "\\a long file name with SPACES.TXT", &n) == 0 && n.size == 513);
	CHECK(u16eq(n.name, "A Long File Name With Spaces.txt"));
	CHECK(lookup(fs, NULL, "\\ALONGF~1.TXT", &n) == 0 && n.size == 513);
	CHECK(lookup(fs, NULL, "\\README.TXT", &n) == 0 && n.size == 0);
	CHECK(u16eq(n.name, "readme.txt"));
	CHECK(lookup(fs, NULL, "\\deep\\er", &dir) == 0 && fat_is_dir(&dir));
	CHECK(lookup(fs, &dir, "still\\x.y", &n) == 0 && n.size == 4096);
	CHECK(lookup(fs, &dir, "..\\..\\a.bin", &n) == 0 && n.size == 5000);
	CHECK(lookup(fs, &dir, "\\c.bin", &n) == 0 && n.size == 3000);
	CHECK(lookup(fs, NULL, "\\", &n) == 0 && fat_is_dir(&n));
	CHECK(lookup(fs, NULL, "\\b.bin", &n) == -FW_ENOENT);
	CHECK(lookup(fs, NULL, "\\EFI\\BOOT\\BOOTX64.EF", &n) == -FW_ENOENT);
	CHECK(lookup(fs, NULL, "\\a.bin\\x", &n) == -FW_ENOENT);
	CHECK(lookup(fs, NULL, "\\nothere\\a.bin", &n) == -FW_ENOENT);

	/* directory listing: ".", "..", then every file of /many once */
	uint64_t pos = 0;
	int seen[N_MANY] = {0}, dots = 0, others = 0, ret;

	CHECK(lookup(fs, NULL, "\\many", &dir) == 0);
	while ((ret = fat_dir_next(fs, &dir, &pos, &n)) == 0) {
		int k;

		if (u16eq(n.name, ".") || u16eq(n.name, ".."))
			dots++;
		else if (n.name[0] == 'f' &&
			 sscanf((char[16]){(char)n.name[5], (char)n.name[6], 0}, "%d", &k) == 1 &&
			 k >= 0 && k < N_MANY && n.size == (k < 10 ? 2u : 3u))
			seen[k]++;
		else
			others++;
	}
	CHECK(ret == -FW_ENOENT);
	CHECK_EQ_U64(dots, 2);
	CHECK_EQ_U64(others, 0);
	for (int k = 0; k < N_MANY; k++)
		if (seen[k] != 1) {
			CHECK_EQ_U64(seen[k], 1);
			break;
		}
}

static void test_fat_variant(int bits, unsigned int mb, const char *opts, uint32_t bs)
{
	char img[128];
	struct memdisk m;
	struct fat_fs *fs = malloc(sizeof(*fs));

	if (!have_tools())
		SKIP("mkfs.vfat/mtools not installed");
	snprintf(img, sizeof(img), "%s/fat%d.img", tmpdir, bits);
	CHECK(make_fat(img, bits, mb, opts) == 0);
	CHECK(memdisk_load(&m, img, bs) == 0);
	int ret = fat_mount(fs, &m.dev);

	CHECK(ret == 0);
	if (!ret)
		check_volume(fs, bits);
	free(m.buf);
	free(fs);
}

static void test_fat12(void)
{
	test_fat_variant(12, 2, "", 512);
}

static void test_fat16(void)
{
	test_fat_variant(16, 20, "-s 4", 512);
}

static void test_fat16_4k_sectors(void)
{
	test_fat_variant(16, 64, "-S 4096 -s 1", 4096);
}

static void test_fat32(void)
{
	test_fat_variant(32, 40, "-s 1", 512);
}

/* Walk everything reachable, reading every file; bounded work. */
static void walk(struct fat_fs *fs, struct fat_node *dir, int depth, uint8_t *buf)
{
	struct fat_node n;
	uint64_t pos = 0;

	while (fat_dir_next(fs, dir, &pos, &n) == 0) {
		if (n.name[0] == '.' && (n.name[1] == 0 || (n.name[1] == '.' && !n.name[2])))
			continue;
		if (fat_is_dir(&n)) {
			if (depth < 3)
				walk(fs, &n, depth + 1, buf);
			continue;
		}
		uint64_t off = 0;
		int64_t r;

		while ((r = fat_read(fs, &n, off, buf, 1 << 16)) > 0)
			off += (uint64_t)r;
	}
}

/* Damaged volumes: random bytes in the boot sector, FATs and directories
 * must only ever produce errors (ASan checks the reads in the san build). */
static void test_fat_damaged(void)
{
	char img[128];
	struct memdisk m;
	struct fat_fs *fs = malloc(sizeof(*fs));
	uint8_t *buf = malloc(1 << 16);
	unsigned int seed = 12345, mounted = 0;

	if (!have_tools())
		SKIP("mkfs.vfat/mtools not installed");
	snprintf(img, sizeof(img), "%s/fuzz.img", tmpdir);
	CHECK(make_fat(img, 12, 1, "") == 0);
	CHECK(memdisk_load(&m, img, 512) == 0);
	uint8_t *orig = malloc(m.len);

	memcpy(orig, m.buf, m.len);
	for (int iter = 0; iter < 400; iter++) {
		memcpy(m.buf, orig, m.len);
		int flips = 1 + iter % 16;

		for (int k = 0; k < flips; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % (iter % 4 == 0 ? 64 : 24 * 1024);

			seed = seed * 1103515245u + 12345u;
			m.buf[at] = (uint8_t)(seed >> 16);
		}
		if (fat_mount(fs, &m.dev) == 0) {
			struct fat_node root;

			mounted++;
			fat_root(fs, &root);
			walk(fs, &root, 0, buf);
		}
	}
	CHECK(mounted > 100); /* most damage is past the BPB: still mountable */
	free(orig);
	free(m.buf);
	free(buf);
	free(fs);
}

int main(void)
{
	if (efi_disk_setup("efi_fat_test"))
		return 1;
	TEST_RUN(test_fat12);
	TEST_RUN(test_fat16);
	TEST_RUN(test_fat16_4k_sectors);
	TEST_RUN(test_fat32);
	TEST_RUN(test_fat_damaged);
	efi_disk_teardown();
	return test_summary();
}
