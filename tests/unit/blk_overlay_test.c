// SPDX-License-Identifier: MIT
/*
 * blk_overlay_open(): reads see the base image until a sector is written;
 * writes, write-zeroes and discards land in the scratch file only (the
 * base is never written, even when it is writable on disk); reads that
 * mix written and unwritten sectors are assembled in order; unaligned
 * requests are refused; the scratch file is gone from the directory
 * while the overlay is open; closing frees everything (ASan).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/blk.h"

#define SIZE (64u << 20) /* two bitmap regions and more */

static char dir[] = "/tmp/vmlet-ovl-XXXXXX";
static char img[64];

static uint8_t pat(uint64_t i)
{
	return (uint8_t)(i * 13 + i / 512);
}

static int files_in(const char *d)
{
	struct dirent *e;
	DIR *dp = opendir(d);
	int n = 0;

	while (dp && (e = readdir(dp)))
		n += e->d_name[0] != '.';
	if (dp)
		closedir(dp);
	return n;
}

static int rd(struct blk *b, void *buf, uint64_t len, uint64_t off)
{
	struct iovec v = {buf, len};

	return blk_preadv(b, &v, 1, off);
}

static int wr(struct blk *b, const void *buf, uint64_t len, uint64_t off)
{
	struct iovec v = {(void *)buf, len};

	return blk_pwritev(b, &v, 1, off);
}

static void test_overlay(void)
{
	static uint8_t buf[1 << 20], w[8192], want[1 << 20];
	struct blk *base = NULL, *o = NULL;
	uint64_t off = 32ull << 20; /* across the region boundary below */
	struct iovec v[3];

	CHECK(blk_open(&base, img, true, BLK_CACHE_WRITEBACK) == 0);
	if (!base)
		return;
	CHECK(blk_overlay_open(&o, base, dir) == 0);
	if (!o) {
		blk_close(base);
		return;
	}
	CHECK(o->size == SIZE && !o->read_only && o->backing == base);
	CHECK_EQ_U64(files_in(dir), 1); /* the image only: scratch unlinked */
	/* untouched: the base's bytes */
	CHECK(rd(o, buf, 4096, off - 2048) == 0);
	for (unsigned int i = 0; i < 4096; i++)
		if (buf[i] != pat(off - 2048 + i)) {
			CHECK(!"base bytes");
			break;
		}
	/* write 8 KiB straddling the region boundary, and one lone sector */
	memset(w, 0xa5, sizeof(w));
	CHECK(wr(o, w, sizeof(w), off - 4096) == 0);
	CHECK(wr(o, w, 512, off + 8192) == 0);
	/* a 64 KiB read from off - 16 KiB through three iovecs mixes both */
	v[0] = (struct iovec){buf, 1000 * 16};
	v[1] = (struct iovec){buf + 16000, 384};
	v[2] = (struct iovec){buf + 16384, 65536 - 16384};
	CHECK(blk_preadv(o, v, 3, off - 16384) == 0);
	for (unsigned int i = 0; i < 65536; i++) {
		uint64_t a = off - 16384 + i;
		bool mine =
		    (a >= off - 4096 && a < off + 4096) || (a >= off + 8192 && a < off + 8704);

		want[i] = mine ? 0xa5 : pat(a);
	}
	CHECK(!memcmp(buf, want, 65536));
	/* zeroes and discard read back as zeroes; the base never changes */
	CHECK(blk_write_zeroes(o, 4096, 8192, false) == 0);
	CHECK(blk_discard(o, SIZE - 4096, 4096) == 0);
	CHECK(rd(o, buf, 8192, 4096) == 0);
	CHECK(buf[0] == 0 && buf[8191] == 0);
	CHECK(rd(o, buf, 4096, SIZE - 4096) == 0);
	CHECK(buf[0] == 0 && buf[4095] == 0);
	CHECK(blk_flush(o) == 0);
	CHECK(rd(base, buf, 4096, off - 4096) == 0 && buf[0] == pat(off - 4096));
	/* unaligned requests are refused */
	CHECK(wr(o, w, 100, 0) == -EINVAL);
	CHECK(rd(o, buf, 512, 3) == -EINVAL);
	/* the overlay takes no lock itself; the base is read-locked */
	CHECK(blk_lock(o, false) == 0);
	blk_close(o);
}

int main(void)
{
	uint8_t *d = malloc(SIZE);
	int fd;

	if (!d || !mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/base.raw", dir);
	for (uint64_t i = 0; i < SIZE; i++)
		d[i] = pat(i);
	fd = open(img, O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || write(fd, d, SIZE) != SIZE)
		return 1;
	close(fd);
	free(d);
	TEST_RUN(test_overlay);
	unlink(img);
	rmdir(dir);
	return test_summary();
}
