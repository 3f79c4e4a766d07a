// SPDX-License-Identifier: MIT
/*
 * A disk's identity in a snapshot (vmm/disk/blk_id.h) on an O_DIRECT
 * (cache none) image whose size is not a multiple of 4 KiB: the hash is
 * the FNV-1a of the file's first and last MiB as any reader sees them
 * (the O_DIRECT descriptor used to fail its unaligned reads, so that no
 * byte was hashed, or some were, depending on where malloc() put the
 * buffer: a snapshot's disk "differed" at random, and a changed disk with
 * its mtime put back was taken for the snapshot's). A byte changed in the
 * last MiB, mtime restored, is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/blk.h"
#include "vmm/disk/blk_id.h"

#define MIB (1u << 20)

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void test_identity(void)
{
	char dir[] = "/tmp/vmlet-blkid-XXXXXX", img[64];
	const uint64_t size = 3 * MIB + 1536;
	struct timespec keep[2];
	struct blk_id id, again;
	struct blk *b = NULL;
	struct stat st;
	uint8_t *data;
	uint64_t want;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(img, sizeof(img), "%s/d.img", dir);
	CHECK(test_sh("head -c %llu /dev/urandom >%s", (unsigned long long)size, img) == 0);
	data = (uint8_t *)test_read_file(img, NULL);
	CHECK(data != NULL);
	CHECK(blk_open(&b, img, false, BLK_CACHE_NONE) == 0);
	if (!b || !data)
		return;
	CHECK_EQ_U64(blk_id_read(b, &id), 0);
	want = fnv(fnv(0xcbf29ce484222325ull, data, MIB), data + size - MIB, MIB);
	CHECK_EQ_U64(id.hash, want);
	CHECK_EQ_U64(id.file_size, size);
	CHECK_EQ_U64(blk_id_check(b, "d", &id), 0);
	/* a byte of the last MiB changed, the mtime put back */
	CHECK(stat(img, &st) == 0);
	keep[0] = st.st_atim, keep[1] = st.st_mtim;
	fd = open(img, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, "\x5a\xa5", 2, (off_t)(size - 700)) == 2);
	CHECK(fd >= 0 && futimens(fd, keep) == 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ_U64(blk_id_read(b, &again), 0);
	CHECK_EQ_U64(again.mtime_ns, id.mtime_ns);
	CHECK(again.hash != id.hash);
	CHECK_EQ_U64(blk_id_check(b, "d", &id), -EINVAL);
	blk_close(b);
	free(data);
	test_sh("rm -rf -- '%s'", dir);
}

int main(void)
{
	TEST_RUN(test_identity);
	return test_summary();
}
