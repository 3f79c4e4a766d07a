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
 * refcount block) make the writes cross refcount blocks. Every few
 * points, and at the end, `qemu-img check` agrees. Skips without qemu-img.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/blk.h"

static char dir[64], img[96];
static ino_t img_ino;
static bool watching;
static unsigned int points, leaky, bad, qemu_checked;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static uint32_t be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

/* References to cluster at off; false (and a message) when it is not a
 * cluster of the file. */
static bool ref(uint16_t *refs, uint64_t n, uint64_t cs, uint64_t off, const char *what)
{
	if (off % cs || off / cs >= n) {
		printf("  %s at %#llx: not a cluster of the file\n", what, (unsigned long long)off);
		return false;
	}
	refs[off / cs]++;
	return true;
}

/* The image file as it is now: 0 consistent, 1 leaks only, 2 corrupt. */
static int image_state(const char *path)
{
	const uint64_t mask = 0x00fffffffffffe00ull;
	int fd = open(path, O_RDONLY), r = 0;
	struct stat st;
	uint8_t *f = NULL;
	uint16_t *refs = NULL;

	if (fd < 0 || fstat(fd, &st) || !(f = malloc((size_t)st.st_size + 1)) ||
	    pread(fd, f, (size_t)st.st_size, 0) != st.st_size) {
		r = 2;
		goto out;
	}
	uint64_t cs = 1ull << be32(f + 20), n = ((uint64_t)st.st_size + cs - 1) / cs;
	uint64_t l1 = be64(f + 40), rt = be64(f + 48), per_block = cs / 2;
	uint32_t l1n = be32(f + 36), rtc = be32(f + 56);
	bool ok = true;

	refs = calloc(n, sizeof(*refs));
	ok = refs && ref(refs, n, cs, 0, "header");
	for (uint64_t i = 0; ok && i < (l1n * 8 + cs - 1) / cs; i++)
		ok = ref(refs, n, cs, l1 + i * cs, "L1 table");
	for (uint32_t i = 0; ok && i < rtc; i++)
		ok = ref(refs, n, cs, rt + i * cs, "refcount table");
	for (uint64_t i = 0; ok && i < rtc * cs / 8; i++)
		if (be64(f + rt + 8 * i) & mask)
			ok = ref(refs, n, cs, be64(f + rt + 8 * i) & mask, "refcount block");
	for (uint32_t i = 0; ok && i < l1n; i++) {
		uint64_t l2 = be64(f + l1 + 8 * i) & mask;

		if (!l2)
			continue;
		ok = ref(refs, n, cs, l2, "L2 table");
		for (uint64_t j = 0; ok && j < cs / 8; j++)
			if (be64(f + l2 + 8 * j) & mask)
				ok = ref(refs, n, cs, be64(f + l2 + 8 * j) & mask, "data cluster");
	}
	for (uint64_t c = 0; ok && c < n; c++) {
		uint64_t blk = be64(f + rt + 8 * (c / per_block)) & mask;
		uint16_t count = 0;

		if (blk) {
			memcpy(&count, f + blk + 2 * (c % per_block), 2);
			count = be16toh(count);
		}
		if (refs[c] > count) {
			printf("  cluster %llu: refcount %u, %u references\n",
			       (unsigned long long)c, count, refs[c]);
			ok = false;
		} else if (refs[c] < count) {
			r = 1;
		}
	}
	if (!ok)
		r = 2;
out:
	free(refs);
	free(f);
	if (fd >= 0)
		close(fd);
	return r;
}

/* Before each write to the image: the state a kill now would leave. */
static void kill_point(int fd)
{
	struct stat st;
	int s;

	if (!watching || fstat(fd, &st) || st.st_ino != img_ino)
		return;
	watching = false; /* the checks below write files of their own */
	points++;
	s = image_state(img);
	if (s == 1)
		leaky++;
	if (s == 2) {
		bad++;
		printf("  killed before write %u: the image is corrupt\n", points);
	}
	if (points % 97 == 0 || (s == 2 && bad == 1)) {
		int q = sh("cp %s %s.k && qemu-img check -q %s.k >/dev/null 2>&1", img, img, img);

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
	CHECK(sh("qemu-img create -q -f qcow2 -o cluster_size=512 %s 1M", img) == 0);
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
	CHECK(image_state(img) == 0);
	CHECK(sh("qemu-img check -q %s", img) == 0);
}

int main(void)
{
	if (system("qemu-img --version >/dev/null 2>&1")) {
		printf("skip: qemu-img not installed\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "/tmp/vmlet-qkill.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	TEST_RUN(test_kill_everywhere);
	sh("rm -rf %s", dir);
	return test_summary();
}
