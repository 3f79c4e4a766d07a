// SPDX-License-Identifier: MIT
/*
 * An O_DIRECT (cache none) raw image whose size is not a multiple of the
 * direct-I/O alignment (issue 28, finding 9): an unaligned write into its
 * last, partial block used to go through the bounce buffer as a
 * read-modify-write of the whole aligned block, which grew the file past
 * its end (and so the disk the next start sees). Now the file keeps its
 * size, the bytes land where the guest wrote them and the rest reads as
 * before. The alignment is made 4096 bytes whatever the disk says (a
 * 512-byte one is common, and any O_DIRECT file takes 4096-aligned I/O):
 * this program's statx() reports it. Skips where the file system takes no
 * O_DIRECT.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/blk.h"

static char dir[64];

/* vmm/disk/blk.c asks statx for the O_DIRECT alignment (this program's
 * definition comes before the C library's): 4096 bytes. */
int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *sx)
{
	long r = syscall(SYS_statx, dirfd, path, flags, mask, sx);

	if (!r && (mask & STATX_DIOALIGN)) {
		sx->stx_mask |= STATX_DIOALIGN;
		sx->stx_dio_offset_align = sx->stx_dio_mem_align = 4096;
	}
	return (int)r;
}

static void test_unaligned_tail(void)
{
	uint8_t pat[1600], got[4608], *back;
	char img[96];
	struct blk *b = NULL;
	struct stat st;
	struct iovec v;
	uint64_t size;

	snprintf(img, sizeof(img), "%s/odd.img", dir);
	/* 3 blocks of 4 KiB and a half, then 512 bytes: a multiple of 512,
	 * not of any O_DIRECT alignment above it */
	size = 3 * 4096 + 2560;
	CHECK(test_sh("head -c %llu /dev/urandom >%s", (unsigned long long)size, img) == 0);
	back = (uint8_t *)test_read_file(img, NULL);
	CHECK(blk_open_format(&b, img, false, BLK_CACHE_NONE, "raw") == 0);
	if (!b || !back)
		return;
	if (b->dio_align != 4096) {
		blk_close(b);
		free(back);
		SKIP("no O_DIRECT here");
	}
	memset(pat, 0xa5, sizeof(pat));
	/* the last three sectors, from an unaligned buffer: bounced */
	v = (struct iovec){pat + 1, 1024};
	CHECK(blk_pwritev(b, &v, 1, size - 1024) == 0);
	memcpy(back + size - 1024, pat + 1, 1024);
	/* a write across the last whole block into the tail */
	v = (struct iovec){pat + 3, 1536};
	CHECK(blk_pwritev(b, &v, 1, 3 * 4096 - 512) == 0);
	memcpy(back + 3 * 4096 - 512, pat + 3, 1536);
	CHECK(blk_flush(b) == 0);
	CHECK(!stat(img, &st) && (uint64_t)st.st_size == size);
	/* everything reads back as written, through the disk and the file */
	v = (struct iovec){got + 1, 4096};
	CHECK(blk_preadv(b, &v, 1, 2 * 4096) == 0);
	CHECK(!memcmp(got + 1, back + 2 * 4096, 4096));
	blk_close(b);
	free(back);
	back = (uint8_t *)test_read_file(img, NULL);
	CHECK(back && !memcmp(back + 2 * 4096, got + 1, 4096));
	CHECK(back && !memcmp(back + size - 1024, pat + 1, 1024));
	free(back);
	CHECK(!stat(img, &st) && (uint64_t)st.st_size == size);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/var/tmp/vmlet-diotail.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	TEST_RUN(test_unaligned_tail);
	test_sh("rm -rf %s", dir);
	return test_summary();
}
