// SPDX-License-Identifier: MIT
/*
 * qcow2 writes killed at every point: vmlet killed (SIGKILL) leaves the
 * image as its completed write() calls made it, so this test interposes
 * pwrite/pwritev and, before each write to the image, checks the image as
 * it is then, as a kill right there would leave it. Every pointer in it
 * (L1 -> L2 table, L2 -> data cluster, refcount table -> refcount block)
 * must be to a cluster inside the file whose refcount counts it; a
 * counted cluster nothing points at is a leak, which is allowed (qemu-img
 * check: "leaked clusters", exit 3). Small clusters (512 bytes: 256 per
 * refcount block) make the writes cross refcount blocks, and flushes
 * every few writes write the L2 cache's dirty entries back. Every few
 * points, and at the end, `qemu-img check` agrees. Skips without qemu-img.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/lib/qcow2_check.h"
#include "tests/lib/test.h"
#include "vmm/disk/blk.h"

static char dir[64], img[96];
static ino_t img_ino;
static bool watching;
static unsigned int points, leaky, bad, qemu_checked;

/* Before each write to the image: the state a kill now would leave. */
static void kill_point(int fd)
{
	struct stat st;
	int s;

	if (!watching || fstat(fd, &st) || st.st_ino != img_ino)
		return;
	watching = false; /* the checks below write files of their own */
	points++;
	s = qcow2_check_file(img);
	if (s == 1)
		leaky++;
	if (s == 2) {
		bad++;
		printf("  killed before write %u: the image is corrupt\n", points);
	}
	if (points % 97 == 0 || (s == 2 && bad == 1)) {
		int q =
		    test_sh("cp %s %s.k && qemu-img check -q %s.k >/dev/null 2>&1", img, img, img);

		q = WIFEXITED(q) ? WEXITSTATUS(q) : 255;
		qemu_checked++;
		if (q != 0 && q != 3)
			printf("  killed before write %u: qemu-img check exit %d\n", points, q);
		CHECK(q == 0 || q == 3 || s == 2);
	}
	watching = true;
}

/* The writes of vmm/disk/ come here first (this program's definitions
 * take precedence over the C library's). */
ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	kill_point(fd);
	return syscall(SYS_pwrite64, fd, buf, len, off);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	kill_point(fd);
	return syscall(SYS_pwritev, fd, iov, n, (unsigned long)off, 0ul);
}

static void test_kill_everywhere(void)
{
	static uint8_t buf[4096], got[4096];
	struct blk *b;
	struct stat st;
	uint64_t seed = 12345;

	snprintf(img, sizeof(img), "%s/k.qcow2", dir);
	CHECK(test_sh("qemu-img create -q -f qcow2 -o cluster_size=512 %s 1M", img) == 0);
	CHECK(stat(img, &st) == 0);
	img_ino = st.st_ino;
	CHECK(blk_open(&b, img, false, BLK_CACHE_WRITEBACK) == 0);
	watching = true;
	for (int i = 0; i < 160; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t len = 512 + (seed >> 33) % (sizeof(buf) - 512);
		uint64_t off = ((seed >> 20) % ((1 << 20) - sizeof(buf))) & ~511ull;
		struct iovec v = {buf, len & ~511ull};

		memset(buf, i + 1, sizeof(buf));
		CHECK(blk_pwritev(b, &v, 1, off) == 0);
		CHECK(blk_preadv(b, &(struct iovec){got, v.iov_len}, 1, off) == 0);
		CHECK(!memcmp(got, buf, v.iov_len));
		if (i % 8 == 7) /* the dirty L2 entries written back, killed too */
			CHECK(blk_flush(b) == 0);
	}
	watching = false;
	blk_close(b);
	CHECK(stat(img, &st) == 0);
	printf("  %u kill points (%u with leaked clusters), %u also checked by qemu-img, "
	       "image %lld bytes\n",
	       points, leaky, qemu_checked, (long long)st.st_size);
	CHECK(points > 600); /* the writes crossed a refcount block */
	CHECK(st.st_size > 256 * 512);
	CHECK(bad == 0);
	CHECK(qcow2_check_file(img) == 0);
	CHECK(test_sh("qemu-img check -q %s", img) == 0);
}

int main(void)
{
	int r = qcow2_test_dir(dir, sizeof(dir), "qkill");

	if (r)
		return r;
	TEST_RUN(test_kill_everywhere);
	test_sh("rm -rf %s", dir);
	return test_summary();
}
