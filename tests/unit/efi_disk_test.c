// SPDX-License-Identifier: MIT
/*
 * efi_disk_test - the EFI firmware's GPT and FAT readers (firmware/efi/gpt.c,
 * fat.c) compiled for the host, on disk images made here with Debian's
 * sgdisk, mkfs.vfat and mtools; sgdisk's own report and the files copied in
 * are the oracle. Also: corrupted headers fall back to the backup GPT, and
 * randomly damaged FAT volumes never make the reader crash or loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "tests/unit/efi_test_sh.h"

#include "firmware/efi/blk.c"
#include "firmware/efi/crc32.c"
#include "firmware/efi/fat.c"
#include "firmware/efi/gpt.c"

static char tmpdir[64];

static bool have_tools(void)
{
	return !system("command -v sgdisk mkfs.vfat mcopy mmd >/dev/null 2>&1");
}

/* A whole file in memory as a block device. */
struct memdisk {
	uint8_t *buf;
	size_t len;
	struct blkdev dev;
};

static int memdisk_load(struct memdisk *m, const char *path, uint32_t bs)
{
	m->buf = (uint8_t *)test_read_file(path, &m->len);
	if (!m->buf)
		return -1;
	blk_init_mem(&m->dev, m->buf, m->len, bs);
	return 0;
}

static void u16s(uint16_t *out, const char *s)
{
	while ((*out++ = (uint8_t)*s++))
		;
}

static bool u16eq(const uint16_t *a, const char *s)
{
	while (*a && *s && *a == (uint8_t)*s)
		a++, s++;
	return *a == 0 && *s == 0;
}

static void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static int write_file(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	size_t w = fwrite(buf, 1, n, f);

	fclose(f);
	return w == n ? 0 : -1;
}

/* ---- GPT ------------------------------------------------------------------ */

/* sgdisk -i N: "First sector: 2048 (at 1024.0 KiB)" and the unique GUID. */
static int sgdisk_info(const char *img, int n, uint64_t *first, uint64_t *last, char *guid)
{
	char cmd[512], line[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sgdisk -i %d %s", n, img);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long v;

		if (sscanf(line, "First sector: %llu", &v) == 1)
			*first = v;
		if (sscanf(line, "Last sector: %llu", &v) == 1)
			*last = v;
		sscanf(line, "Partition unique GUID: %36s", guid);
	}
	return pclose(p);
}

/* GUID text (as sgdisk prints it) -> on-disk mixed-endian bytes. */
static void guid_bytes(const char *s, uint8_t *out)
{
	unsigned int v[16];

	sscanf(s, "%2x%2x%2x%2x-%2x%2x-%2x%2x-%2x%2x-%2x%2x%2x%2x%2x%2x", &v[3], &v[2], &v[1],
	       &v[0], &v[5], &v[4], &v[7], &v[6], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13],
	       &v[14], &v[15]);
	for (int i = 0; i < 16; i++)
		out[i] = (uint8_t)v[i];
}

static void test_gpt_sgdisk(void)
{
	char img[128], guid[40] = "";
	struct memdisk m;
	struct gpt g;
	uint64_t first = 0, last = 0;
	uint8_t want_guid[16];

	if (!have_tools())
		SKIP("sgdisk/mkfs.vfat/mtools not installed");
	snprintf(img, sizeof(img), "%s/gpt.img", tmpdir);
	CHECK(sh("truncate -s 8M %s && sgdisk -n 1:2048:+3M -t 1:ef00 -c 1:ESP "
		 "-n 2:0:+1M -t 2:8300 -n 3:0:0 -t 3:8200 %s >/dev/null",
		 img, img) == 0);
	CHECK(sgdisk_info(img, 1, &first, &last, guid) == 0);
	guid_bytes(guid, want_guid);
	CHECK(memdisk_load(&m, img, 512) == 0);

	CHECK(gpt_read(&m.dev, &g) == 0);
	CHECK_EQ_U64(g.n_parts, 3);
	CHECK(!g.from_backup);
	const struct gpt_part *esp = gpt_find_type(&g, gpt_type_esp);

	CHECK(esp != NULL);
	if (esp) {
		CHECK_EQ_U64(esp->number, 1);
		CHECK_EQ_U64(esp->first_lba, first);
		CHECK_EQ_U64(esp->last_lba, last);
		CHECK(!memcmp(esp->part_guid, want_guid, 16));
		CHECK(u16eq(esp->name, "ESP"));
	}
	CHECK(g.parts[1].number == 2 && g.parts[2].number == 3);

	/* damaged primary header: the backup takes over with the same table */
	m.buf[512 + 40] ^= 1;
	CHECK(gpt_read(&m.dev, &g) == 0);
	CHECK(g.from_backup);
	CHECK_EQ_U64(g.n_parts, 3);
	CHECK(gpt_find_type(&g, gpt_type_esp) &&
	      gpt_find_type(&g, gpt_type_esp)->first_lba == first);
	m.buf[512 + 40] ^= 1;

	/* damaged primary entry array: backup too */
	m.buf[1024 + 33] ^= 0x80;
	CHECK(gpt_read(&m.dev, &g) == 0 && g.from_backup && g.n_parts == 3);
	/* and with the backup header also damaged: no GPT at all */
	m.buf[m.len - 512 + 60] ^= 1;
	CHECK(gpt_read(&m.dev, &g) == -FW_ENOENT);
	CHECK_EQ_U64(g.n_parts, 0);

	/* a disk that is not GPT */
	memset(m.buf, 0, m.len);
	CHECK(gpt_read(&m.dev, &g) == -FW_ENOENT);
	free(m.buf);
}

/* A valid header (CRCs recomputed) that lies about sizes must be refused. */
static void test_gpt_hostile_header(void)
{
	char img[128];
	struct memdisk m;
	struct gpt g;

	if (!have_tools())
		SKIP("sgdisk not installed");
	snprintf(img, sizeof(img), "%s/gpt2.img", tmpdir);
	CHECK(sh("truncate -s 2M %s && sgdisk -n 1:0:0 -t 1:ef00 %s >/dev/null", img, img) == 0);
	CHECK(memdisk_load(&m, img, 512) == 0);
	uint8_t *h = m.buf + 512, *b = m.buf + m.len - 512;
	static const struct {
		int off;
		uint32_t val;
	} lies[] = {
	    {80, 0xffffffffu},					  /* entries */
	    {84, 0},						  /* entry size */
	    {84, 100},	       {84, 1u << 20}, {72, 0xfffffff0u}, /* entry array LBA past the end */
	    {12, 4096},						  /* header size > block */
	    {24, 7},						  /* MyLBA */
	};
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		uint8_t save[92], saveb[92];

		memcpy(save, h, 92);
		memcpy(saveb, b, 92);
		put_le32(h + lies[i].off, lies[i].val);
		put_le32(b + lies[i].off, lies[i].val);
		put_le32(h + 16, 0);
		put_le32(h + 16, efi_crc32(0, h, le32(h + 12) <= 512 ? le32(h + 12) : 92));
		put_le32(b + 16, 0);
		put_le32(b + 16, efi_crc32(0, b, le32(b + 12) <= 512 ? le32(b + 12) : 92));
		int ret = gpt_read(&m.dev, &g);

		if (ret != -FW_ENOENT)
			printf("  lie %zu accepted (%d)\n", i, ret);
		CHECK(ret == -FW_ENOENT);
		memcpy(h, save, 92);
		memcpy(b, saveb, 92);
	}
	CHECK(gpt_read(&m.dev, &g) == 0 && g.n_parts == 1);
	free(m.buf);
}

/* ---- FAT ------------------------------------------------------------------ */

#define MT "MTOOLS_SKIP_CHECK=1 MTOOLS_NO_VFAT=0 "

struct hostfile {
	const char *fat_path; /* path inside the volume, '/' separated */
	size_t size;
	uint8_t *data;
};

static struct hostfile files[] = {
    {"/a.bin", 5000, NULL},
    {"/d.bin", 200000, NULL}, /* fills the hole b.bin leaves */
    {"/c.bin", 3000, NULL},
    {"/EFI/BOOT/BOOTX64.EFI", 30001, NULL},
    {"/A Long File Name With Spaces.txt", 513, NULL},
    {"/readme.txt", 0, NULL},
    {"/deep/er/still/x.y", 4096, NULL},
};
#define N_FILES (sizeof(files) / sizeof(files[0]))
#define N_MANY	40

/* Make a FAT volume at img with every file above, b.bin deleted to
 * fragment d.bin, and N_MANY files in /many. */
static int make_fat(const char *img, int bits, unsigned int mb, const char *opts)
{
	char host[256];

	if (sh("rm -f %s && truncate -s %uM %s && mkfs.vfat -F %d %s -n VMLETESP %s >/dev/null",
	       img, mb, img, bits, opts, img))
		return -1;
	if (sh(MT "mmd -i %s ::/EFI ::/EFI/BOOT ::/deep ::/deep/er ::/deep/er/still ::/many", img))
		return -1;
	for (size_t i = 0; i < N_FILES; i++) {
		if (!files[i].data) {
			files[i].data = malloc(files[i].size + 1);
			fill_pattern(files[i].data, files[i].size, (unsigned int)i + 1);
		}
		snprintf(host, sizeof(host), "%s/f%zu", tmpdir, i);
		if (write_file(host, files[i].data, files[i].size))
			return -1;
	}
	/* a.bin, b.bin, c.bin, then b.bin deleted: d.bin fills its hole and
	 * continues after c.bin (a fragmented chain) */
	if (sh("head -c 70000 /dev/zero > %s/b && " MT "mcopy -i %s %s/f0 ::/a.bin && " MT
	       "mcopy -i %s %s/b ::/b.bin && " MT "mcopy -i %s %s/f2 ::/c.bin && " MT
	       "mdel -i %s ::/b.bin",
	       tmpdir, img, tmpdir, img, tmpdir, img, tmpdir, img))
		return -1;
	for (size_t i = 1; i < N_FILES; i++) {
		if (i == 2)
			continue;
		snprintf(host, sizeof(host), "%s/f%zu", tmpdir, i);
		if (sh(MT "mcopy -i %s '%s' '::%s'", img, host, files[i].fat_path))
			return -1;
	}
	for (int i = 0; i < N_MANY; i++)
		if (sh("echo %d > %s/m && " MT "mcopy -i %s %s/m ::/many/file_%02d.dat", i, tmpdir,
		       img, tmpdir, i))
			return -1;
	return 0;
}

static int lookup(struct fat_fs *fs, const struct fat_node *dir, const char *path,
		  struct fat_node *out)
{
	uint16_t p[256];

	u16s(p, path);
	return fat_lookup(fs, dir, p, out);
}

/* Read node in chunks of chunk bytes and compare with want. */
static void check_contents(struct fat_fs *fs, struct fat_node *n, const uint8_t *want, size_t size,
			   size_t chunk)
{
	uint8_t *got = malloc(size + 8192);
	uint64_t pos = 0;
	int64_t r;

	while ((r = fat_read(fs, n, pos, got + pos, chunk)) > 0)
		pos += (uint64_t)r;
	CHECK(r == 0);
	CHECK_EQ_U64(pos, size);
	CHECK(!memcmp(got, want, size));
	/* reads that start in the middle, after a cursor further on */
	if (size > 3000) {
		CHECK(fat_read(fs, n, 1234, got, 1000) == 1000);
		CHECK(!memcmp(got, want + 1234, 1000));
	}
	free(got);
}

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
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/efi_disk_test.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	TEST_RUN(test_gpt_sgdisk);
	TEST_RUN(test_gpt_hostile_header);
	TEST_RUN(test_fat12);
	TEST_RUN(test_fat16);
	TEST_RUN(test_fat16_4k_sectors);
	TEST_RUN(test_fat32);
	TEST_RUN(test_esp_on_gpt);
	TEST_RUN(test_read_cache);
	TEST_RUN(test_esp_cached);
	TEST_RUN(test_fat_damaged);
	sh("rm -rf %s", tmpdir);
	for (size_t i = 0; i < N_FILES; i++)
		free(files[i].data);
	return test_summary();
}
