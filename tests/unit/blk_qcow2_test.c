// SPDX-License-Identifier: MIT
/*
 * qcow2 backend against images made by qemu-img: reading what qemu-img
 * wrote, writing (cluster and refcount-block allocation), backing files,
 * then `qemu-img check` and `qemu-img compare` on the result; refusing the
 * features we do not support. Skips without qemu-img.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/blk.h"

static char dir[64];

static char *p(const char *name)
{
	static char buf[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* A raw file of size bytes: a pattern with holes of zeroes. */
static uint8_t *make_raw(const char *path, size_t size)
{
	uint8_t *d = malloc(size);
	FILE *f = fopen(path, "wb");

	for (size_t i = 0; i < size; i++)
		d[i] = (i / 65536) % 3 == 1 ? 0 : (uint8_t)(i * 31 + i / 4096);
	if (!f || fwrite(d, 1, size, f) != size) {
		free(d);
		d = NULL;
	}
	if (f)
		fclose(f);
	return d;
}

static int rd(struct blk *b, void *buf, uint64_t len, uint64_t off)
{
	/* two segments to exercise vectored splitting */
	struct iovec v[2] = {{buf, len / 3}, {(uint8_t *)buf + len / 3, len - len / 3}};

	return blk_preadv(b, v, 2, off);
}

static int wr(struct blk *b, const void *buf, uint64_t len, uint64_t off)
{
	struct iovec v[2] = {{(void *)(uintptr_t)buf, len / 2},
			     {(uint8_t *)(uintptr_t)buf + len / 2, len - len / 2}};

	return blk_pwritev(b, v, 2, off);
}

static void test_read_qemu_written(void)
{
	const size_t size = 3 << 20;
	uint8_t *want = make_raw(p("a.raw"), size), *got = malloc(size);
	struct blk *b;

	CHECK(want && got);
	for (int v3 = 0; v3 < 2; v3++) {
		CHECK(test_sh("qemu-img convert -f raw -O qcow2 -o compat=%s,cluster_size=%s %s %s",
			      v3 ? "1.1" : "0.10", v3 ? "65536" : "4096", p("a.raw"),
			      p("a.qcow2")) == 0);
		if (blk_open(&b, p("a.qcow2"), true, BLK_CACHE_WRITEBACK)) {
			test_fail(__FILE__, __LINE__, "open v%d", v3 ? 3 : 2);
			continue;
		}
		CHECK_STR(b->format, "qcow2");
		CHECK_EQ_U64(b->size, size);
		memset(got, 0xcc, size);
		CHECK(rd(b, got, size, 0) == 0);
		CHECK(!memcmp(got, want, size));
		CHECK(rd(b, got, 1000, 70000) == 0);
		CHECK(!memcmp(got, want + 70000, 1000));
		CHECK(rd(b, got, 512, size - 256) == -EIO); /* past the end */
		blk_close(b);
	}
	free(want);
	free(got);
}

static void test_write_then_qemu_check(void)
{
	const size_t size = 24 << 20;
	uint8_t *want = calloc(1, size), buf[20000];
	struct blk *b;

	/* 4 KiB clusters: each refcount block covers 8 MiB, so writes all
	 * over 24 MiB need new refcount blocks */
	CHECK(test_sh("qemu-img create -q -f qcow2 -o cluster_size=4096 %s %zu", p("w.qcow2"),
		      size) == 0);
	CHECK(blk_open(&b, p("w.qcow2"), false, BLK_CACHE_WRITEBACK) == 0);
	for (int i = 0; i < 200; i++) {
		uint64_t off = ((uint64_t)i * 123457 * 512) % (size - sizeof(buf));
		uint64_t len = 512 + (uint64_t)(i * 977) % (sizeof(buf) - 512);

		for (uint64_t j = 0; j < len; j++)
			buf[j] = (uint8_t)(i + j * 13);
		if (wr(b, buf, len, off)) {
			test_fail(__FILE__, __LINE__, "write %d failed", i);
			break;
		}
		memcpy(want + off, buf, len);
	}
	/* 10 MiB more: the host file passes 8 MiB (a second refcount block) */
	for (uint64_t off = 12 << 20; off < 22 << 20; off += sizeof(buf) - 1024) {
		uint64_t len =
		    off + sizeof(buf) - 1024 > 22 << 20 ? (22 << 20) - off : sizeof(buf) - 1024;

		memset(buf, (int)(off >> 12), len);
		CHECK(wr(b, buf, len, off) == 0);
		memcpy(want + off, buf, len);
	}
	CHECK(blk_flush(b) == 0);
	struct stat st;
	CHECK(stat(p("w.qcow2"), &st) == 0 && st.st_size > (9 << 20));
	/* read back through our own code, including a never-written area */
	uint8_t *got = malloc(size);
	CHECK(rd(b, got, size, 0) == 0);
	CHECK(!memcmp(got, want, size));
	blk_close(b);
	FILE *f = fopen(p("w.want"), "wb");
	CHECK(f && fwrite(want, 1, size, f) == size);
	fclose(f);
	CHECK(test_sh("qemu-img check -q %s", p("w.qcow2")) == 0);
	CHECK(test_sh("qemu-img compare -q -f qcow2 -F raw %s %s", p("w.qcow2"), p("w.want")) == 0);
	free(want);
	free(got);
}

static void test_backing_file(void)
{
	const size_t size = 2 << 20;
	uint8_t *base = make_raw(p("base.raw"), size), *got = malloc(size), buf[6000];
	struct blk *b;

	CHECK(test_sh("qemu-img convert -f raw -O qcow2 %s %s", p("base.raw"), p("base.qcow2")) ==
	      0);
	/* overlay bigger than its base: the tail reads as zeroes */
	CHECK(test_sh("cd %s && qemu-img create -q -f qcow2 -b base.qcow2 -F qcow2 ov.qcow2 3M",
		      dir) == 0);
	CHECK(blk_open(&b, p("ov.qcow2"), false, BLK_CACHE_WRITEBACK) == 0);
	CHECK_EQ_U64(b->size, 3 << 20);
	CHECK(rd(b, got, size, 0) == 0);
	CHECK(!memcmp(got, base, size));
	CHECK(rd(b, got, 4096, size) == 0);
	memset(buf, 0, 4096);
	CHECK(!memcmp(got, buf, 4096));
	/* a partial-cluster write keeps the rest of the cluster from the base */
	memset(buf, 0x77, sizeof(buf));
	CHECK(wr(b, buf, sizeof(buf) - 880, 100 * 512) == 0);
	memcpy(base + 100 * 512, buf, sizeof(buf) - 880);
	CHECK(rd(b, got, size, 0) == 0);
	CHECK(!memcmp(got, base, size));
	blk_close(b);
	CHECK(test_sh("qemu-img check -q %s", p("ov.qcow2")) == 0);
	/* the base is untouched, the overlay shows the write */
	CHECK(test_sh("qemu-img compare -q %s %s", p("base.qcow2"), p("base.raw")) == 0);
	CHECK(test_sh("qemu-img convert -O raw %s %s", p("ov.qcow2"), p("ov.raw")) == 0);
	FILE *f = fopen(p("ov.raw"), "rb");
	CHECK(f && fread(got, 1, size, f) == size);
	fclose(f);
	CHECK(!memcmp(got, base, size));
	/* a raw backing file declared as raw */
	CHECK(test_sh("cd %s && qemu-img create -q -f qcow2 -b base.raw -F raw ov2.qcow2", dir) ==
	      0);
	CHECK(blk_open(&b, p("ov2.qcow2"), true, BLK_CACHE_WRITEBACK) == 0);
	CHECK(rd(b, got, 65536, 65536 * 2) == 0);
	blk_close(b);
	free(base);
	free(got);
}

/* A backing chain that loops (found by tests/fuzz/qcow2_fuzz.c: it used to
 * recurse until the stack overflowed) and one too long are refused. */
static void test_backing_loop(void)
{
	struct blk *b = NULL;

	CHECK(test_sh("cd %s && qemu-img create -q -f qcow2 self.qcow2 1M && "
		      "qemu-img rebase -u -b self.qcow2 -F qcow2 self.qcow2",
		      dir) == 0);
	CHECK(blk_open(&b, p("self.qcow2"), true, BLK_CACHE_WRITEBACK) == -ELOOP);
	CHECK(blk_open(&b, p("self.qcow2"), false, BLK_CACHE_WRITEBACK) == -ELOOP);
	CHECK(test_sh("cd %s && qemu-img create -q -f qcow2 l1.qcow2 1M && "
		      "qemu-img create -q -f qcow2 -b l1.qcow2 -F qcow2 l2.qcow2 && "
		      "qemu-img rebase -u -b l2.qcow2 -F qcow2 l1.qcow2",
		      dir) == 0);
	CHECK(blk_open(&b, p("l2.qcow2"), true, BLK_CACHE_WRITEBACK) == -ELOOP);
	/* 16 backing files under an image are fine, 17 are too many */
	CHECK(test_sh("cd %s && qemu-img create -q -f raw c0 1M && for i in $(seq 1 17); do "
		      "qemu-img create -q -f qcow2 -b c$((i - 1)) -F $([ $i = 1 ] && echo raw || "
		      "echo qcow2) c$i || exit 1; done",
		      dir) == 0);
	CHECK(blk_open(&b, p("c16"), false, BLK_CACHE_WRITEBACK) == 0);
	blk_close(b);
	CHECK(blk_open(&b, p("c17"), false, BLK_CACHE_WRITEBACK) == -ELOOP);
	/* the same file twice in a chain without a loop is fine (read-only) */
	CHECK(test_sh("cd %s && qemu-img create -q -f qcow2 -b c0 -F raw d1 && "
		      "qemu-img create -q -f qcow2 -b d1 -F qcow2 d2",
		      dir) == 0);
	CHECK(blk_open(&b, p("d2"), false, BLK_CACHE_WRITEBACK) == 0);
	blk_close(b);
}

static uint64_t be64_at(int fd, uint64_t off)
{
	uint8_t b[8] = {0};
	uint64_t v = 0;

	if (pread(fd, b, 8, (off_t)off) != 8)
		return 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/*
 * An L2 entry pointing past the end of the file (found by qcow2_fuzz): new
 * clusters are allocated there, so writing through that entry would let
 * two guest clusters share one host cluster. It reads as zeroes and
 * writing it is an I/O error; the other clusters keep their data.
 */
static void test_cluster_past_eof(void)
{
	uint8_t buf[4096], got[4096];
	struct blk *b = NULL;
	uint64_t l2, host, e;
	int fd;

	CHECK(test_sh("qemu-img create -q -f qcow2 -o cluster_size=4096 %s 1M && "
		      "qemu-io -f qcow2 -c 'write -P 0x5a 0 4k' %s >/dev/null",
		      p("eof.qcow2"), p("eof.qcow2")) == 0);
	fd = open(p("eof.qcow2"), O_RDWR);
	CHECK(fd >= 0);
	l2 = be64_at(fd, be64_at(fd, 40)) & 0x00fffffffffffe00ull; /* L1[0] */
	host = be64_at(fd, l2) & 0x00fffffffffffe00ull;		   /* guest cluster 0 */
	CHECK(l2 && host && host + 4096 == (uint64_t)lseek(fd, 0, SEEK_END));
	/* guest cluster 1 -> two clusters past the end (COPIED) */
	e = (host + 2 * 4096) | 1ull << 63;
	for (int i = 0; i < 8; i++)
		buf[i] = (uint8_t)(e >> (56 - 8 * i));
	CHECK(pwrite(fd, buf, 8, (off_t)(l2 + 8)) == 8);
	close(fd);
	CHECK(blk_open(&b, p("eof.qcow2"), false, BLK_CACHE_WRITEBACK) == 0);
	memset(buf, 0, sizeof(buf));
	CHECK(rd(b, got, 4096, 4096) == 0 && !memcmp(got, buf, 4096));
	memset(buf, 0x11, sizeof(buf));
	CHECK(wr(b, buf, 4096, 4096) == -EIO);
	for (int c = 2; c < 5; c++) { /* allocated at the end of the file */
		memset(buf, c, sizeof(buf));
		CHECK(wr(b, buf, 4096, 4096ull * c) == 0);
	}
	for (int c = 2; c < 5; c++) {
		memset(buf, c, sizeof(buf));
		CHECK(rd(b, got, 4096, 4096ull * c) == 0 && !memcmp(got, buf, 4096));
	}
	memset(buf, 0x5a, sizeof(buf));
	CHECK(rd(b, got, 4096, 0) == 0 && !memcmp(got, buf, 4096));
	blk_close(b);
}

/*
 * An L1 table whose half a million entries all point at one L2 table:
 * opening scans each L2 table once. It used to scan it once per L1 entry:
 * 4 G entries here, 10^12 at the format's limits (2 MiB clusters, a
 * 32 MiB L1 table), hours of a stuck vmlet for a 40 MiB image.
 */
static void test_shared_l2_table(void)
{
	struct blk *b = NULL;
	uint8_t buf[4096], got[4096];
	uint64_t l1, l2, n = 524288;
	uint8_t *tab = malloc(8 * n);
	int fd;

	CHECK(test_sh("qemu-img create -q -f qcow2 %s 256T && "
		      "qemu-io -f qcow2 -c 'write -P 0x3c 0 4k' %s >/dev/null",
		      p("wide.qcow2"), p("wide.qcow2")) == 0);
	fd = open(p("wide.qcow2"), O_RDWR);
	CHECK(fd >= 0 && tab);
	l1 = be64_at(fd, 40);
	l2 = be64_at(fd, l1);
	CHECK(be64_at(fd, 36) >> 32 == n && l2 >> 63); /* l1_size; COPIED */
	for (uint64_t i = 0; i < n; i++)
		for (int k = 0; k < 8; k++)
			tab[8 * i + k] = (uint8_t)(l2 >> (56 - 8 * k));
	CHECK(pwrite(fd, tab, 8 * n, (off_t)l1) == (ssize_t)(8 * n));
	close(fd);
	CHECK(blk_open(&b, p("wide.qcow2"), true, BLK_CACHE_WRITEBACK) == 0);
	memset(buf, 0x3c, sizeof(buf));
	CHECK(rd(b, got, 4096, (n - 1) << 29) == 0 && !memcmp(got, buf, 4096));
	blk_close(b);
	free(tab);
}

/*
 * An image whose header says it is encrypted (crypt_method, the 4 bytes at
 * offset 32, big-endian: 1 AES, 2 LUKS). Crafted rather than made with
 * `qemu-img create -o encrypt.format=luks`: qemu-img times PBKDF2 with the
 * thread's CPU clock and gives up ("Unable to get accurate CPU usage") where
 * that clock does not advance in 1 ms steps, whatever iter-time says.
 */
static int make_encrypted(const char *path, uint32_t method)
{
	uint8_t be[4] = {0, 0, 0, (uint8_t)method};
	int fd, rc;

	if (test_sh("qemu-img create -q -f qcow2 %s 1M", path))
		return -EIO;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	rc = pwrite(fd, be, sizeof(be), 32) == sizeof(be) ? 0 : -EIO;
	close(fd);
	return rc;
}

static void test_refused_features(void)
{
	struct blk *b = NULL;

	uint8_t *raw = make_raw(p("r.raw"), 1 << 20);

	CHECK(raw);
	free(raw);
	CHECK(test_sh("qemu-img convert -c -f raw -O qcow2 %s %s", p("r.raw"), p("c.qcow2")) == 0);
	CHECK(blk_open(&b, p("c.qcow2"), true, BLK_CACHE_WRITEBACK) == -ENOTSUP);
	/* encryption: AES (1) and LUKS (2) in the header's crypt_method */
	CHECK(make_encrypted(p("e1.qcow2"), 1) == 0);
	CHECK(test_sh("qemu-img info %s | grep -q '^encrypted: yes'", p("e1.qcow2")) == 0);
	CHECK(blk_open(&b, p("e1.qcow2"), true, BLK_CACHE_WRITEBACK) == -ENOTSUP);
	CHECK(make_encrypted(p("e2.qcow2"), 2) == 0);
	CHECK(blk_open(&b, p("e2.qcow2"), true, BLK_CACHE_WRITEBACK) == -ENOTSUP);
	CHECK(test_sh("qemu-img create -q -f qcow2 -o data_file=%s %s 1M", p("d.data"),
		      p("d.qcow2")) == 0);
	CHECK(blk_open(&b, p("d.qcow2"), true, BLK_CACHE_WRITEBACK) == -ENOTSUP);
	/* internal snapshots: readable, not writable */
	CHECK(test_sh("qemu-img convert -f raw -O qcow2 %s %s && qemu-img snapshot -c s1 %s",
		      p("r.raw"), p("s.qcow2"), p("s.qcow2")) == 0);
	CHECK(blk_open(&b, p("s.qcow2"), false, BLK_CACHE_WRITEBACK) == -ENOTSUP);
	CHECK(blk_open(&b, p("s.qcow2"), true, BLK_CACHE_WRITEBACK) == 0);
	blk_close(b);
	/* garbage after the magic */
	FILE *f = fopen(p("bad.qcow2"), "wb");
	fwrite("QFI\xfb\0\0\0\x09garbage", 1, 15, f);
	fclose(f);
	CHECK(blk_open(&b, p("bad.qcow2"), true, BLK_CACHE_WRITEBACK) < 0);
	/* forcing qcow2 on a raw file */
	CHECK(blk_open_format(&b, p("r.raw"), true, BLK_CACHE_WRITEBACK, "qcow2") == -EINVAL);
}

int main(void)
{
	if (system("qemu-img --version >/dev/null 2>&1")) {
		printf("skip: qemu-img not installed\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "/tmp/vmlet-qcow2.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	TEST_RUN(test_read_qemu_written);
	TEST_RUN(test_write_then_qemu_check);
	TEST_RUN(test_backing_file);
	TEST_RUN(test_refused_features);
	TEST_RUN(test_backing_loop);
	TEST_RUN(test_cluster_past_eof);
	TEST_RUN(test_shared_l2_table);
	test_sh("rm -rf %s", dir);
	return test_summary();
}
