/* SPDX-License-Identifier: MIT */
/*
 * efi_disk_env.h - the fixture of the EFI firmware's disk-reader tests
 * (efi_gpt_test.c, efi_fat_test.c, efi_disk_test.c): the readers
 * (firmware/efi/blk.c, crc32.c, fat.c, gpt.c) compiled for the host into
 * the test program, a file in memory as a block device (struct memdisk),
 * and FAT volumes made with Debian's mkfs.vfat and mtools holding the
 * files of files[] (make_fat: one fragmented, N_MANY in /many), with the
 * checks of a file's contents through the reader. Images go to tmpdir,
 * made by efi_disk_setup() and removed by efi_disk_teardown(). Header-only:
 * include once per test program (a function one of them does not use is
 * fine).
 */
#ifndef VMLET_TESTS_EFI_DISK_ENV_H
#define VMLET_TESTS_EFI_DISK_ENV_H

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

static __attribute__((unused)) bool have_tools(void)
{
	return !system("command -v sgdisk mkfs.vfat mcopy mmd >/dev/null 2>&1");
}

/* A whole file in memory as a block device. */
struct memdisk {
	uint8_t *buf;
	size_t len;
	struct blkdev dev;
};

static __attribute__((unused)) int memdisk_load(struct memdisk *m, const char *path, uint32_t bs)
{
	m->buf = (uint8_t *)test_read_file(path, &m->len);
	if (!m->buf)
		return -1;
	blk_init_mem(&m->dev, m->buf, m->len, bs);
	return 0;
}

static __attribute__((unused)) void u16s(uint16_t *out, const char *s)
{
	while ((*out++ = (uint8_t)*s++))
		;
}

static __attribute__((unused)) bool u16eq(const uint16_t *a, const char *s)
{
	while (*a && *s && *a == (uint8_t)*s)
		a++, s++;
	return *a == 0 && *s == 0;
}

static __attribute__((unused)) void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static __attribute__((unused)) int write_file(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	size_t w = fwrite(buf, 1, n, f);

	fclose(f);
	return w == n ? 0 : -1;
}

#define MT "MTOOLS_SKIP_CHECK=1 MTOOLS_NO_VFAT=0 "

struct hostfile {
	const char *fat_path; /* path inside the volume, '/' separated */
	size_t size;
	uint8_t *data;
};

static __attribute__((unused)) struct hostfile files[] = {
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
static __attribute__((unused)) int make_fat(const char *img, int bits, unsigned int mb,
					    const char *opts)
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

static __attribute__((unused)) int lookup(struct fat_fs *fs, const struct fat_node *dir,
					  const char *path, struct fat_node *out)
{
	uint16_t p[256];

	u16s(p, path);
	return fat_lookup(fs, dir, p, out);
}

/* Read node in chunks of chunk bytes and compare with want. */
static __attribute__((unused)) void check_contents(struct fat_fs *fs, struct fat_node *n,
						   const uint8_t *want, size_t size, size_t chunk)
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

/* tmpdir for the program name; 0 or -1 */
static __attribute__((unused)) int efi_disk_setup(const char *name)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s.XXXXXX", name);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static __attribute__((unused)) void efi_disk_teardown(void)
{
	sh("rm -rf %s", tmpdir);
	for (size_t i = 0; i < N_FILES; i++)
		free(files[i].data);
}

#endif /* VMLET_TESTS_EFI_DISK_ENV_H */
