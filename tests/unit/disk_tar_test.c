// SPDX-License-Identifier: MIT
/*
 * disk_tar_test.c - the image store's parsers of untrusted bytes: the tar
 * reader (vmm/disk/tar.h) on archives built here header by header, the
 * manifests and the reference grammar (vmm/disk/image_manifest.h), and
 * SHA-256 against FIPS 180-4's examples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/disk/image_manifest.h"
#include "vmm/disk/sha256.h"
#include "vmm/disk/tar.h"

/* An archive under construction. */
static uint8_t arc[64 * 1024];
static size_t arc_len;

/* Append a header; size is written octal unless b256; magic ustar\0 00. */
static uint8_t *hdr(const char *name, char type, uint64_t size, const char *link)
{
	uint8_t *h = arc + arc_len;
	unsigned int sum = 0;

	memset(h, 0, 512);
	memcpy(h, name, strnlen(name, 100));
	memcpy(h + 100, "0000644", 7);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	h[156] = (uint8_t)type;
	if (link)
		memcpy(h + 157, link, strnlen(link, 100));
	memcpy(h + 257,
	       "ustar\0"
	       "00",
	       8);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	arc_len += 512;
	return h;
}

static void fix_sum(uint8_t *h)
{
	unsigned int sum = 0;

	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static void body(const void *p, size_t n)
{
	memcpy(arc + arc_len, p, n);
	arc_len += (n + 511) / 512 * 512;
}

static void file(const char *name, const char *data)
{
	hdr(name, '0', strlen(data), NULL);
	body(data, strlen(data));
}

static void end(void)
{
	memset(arc + arc_len, 0, 1024);
	arc_len += 1024;
}

static void reset(void)
{
	memset(arc, 0, sizeof(arc));
	arc_len = 0;
}

static struct tar t;
static struct tar_mem_src ms;

static void open_arc(size_t len)
{
	struct tar_src src;

	tar_release(&t);
	tar_src_mem(&src, &ms, arc, len);
	tar_init(&t, &src);
}

/* The next entry's name and data ("" when none), or the error. */
static int next(char *data, size_t cap)
{
	int r = tar_next(&t);
	ssize_t n;

	if (r == 1 && data) {
		n = tar_read(&t, data, cap - 1);
		if (n < 0)
			return (int)n;
		data[n] = 0;
	}
	return r;
}

static void test_ustar_names(void)
{
	char d[64];
	uint8_t *h;

	reset();
	file("./disk//a.img/.", "A");
	h = hdr("b.img", '0', 1, NULL);
	memcpy(h + 345, "disk/sub", 8); /* prefix */
	fix_sum(h);
	body("B", 1);
	hdr("disk/", '5', 0, NULL);
	hdr("./", '5', 0, NULL);
	end();
	open_arc(arc_len);
	CHECK(next(d, sizeof(d)) == 1);
	CHECK_STR(t.e.name, "disk/a.img");
	CHECK_STR(d, "A");
	CHECK(t.e.type == TAR_REG && t.e.offset == 512);
	CHECK(next(d, sizeof(d)) == 1);
	CHECK_STR(t.e.name, "disk/sub/b.img");
	CHECK_STR(d, "B");
	CHECK(next(NULL, 0) == 1 && t.e.type == TAR_DIR);
	CHECK_STR(t.e.name, "disk");
	CHECK(next(NULL, 0) == 1);
	CHECK_STR(t.e.name, "");
	CHECK(next(NULL, 0) == 0);
	CHECK(next(NULL, 0) == 0);
}

static void test_escapes_refused(void)
{
	static const char *const bad[] = {"/etc/shadow", "../x", "disk/../../x", "a/.."};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reset();
		file(bad[i], "x");
		end();
		open_arc(arc_len);
		CHECK(next(NULL, 0) == -EINVAL);
		CHECK(strstr(t.msg, "leaves the archive's root"));
		CHECK(next(NULL, 0) == 0); /* stays ended */
	}
	reset();
	hdr("disk/d.img", '1', 0, "../../etc/shadow");
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == -EINVAL);
	reset();
	hdr("disk/d.img", '2', 0, "/etc/shadow"); /* kept, never followed here */
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == 1 && t.e.type == TAR_SYMLINK);
	CHECK_STR(t.e.link, "/etc/shadow");
}

/* Append the pax record "LEN KEY=VALUE\n" at pax[at]; the new length. */
static int pax_rec(char *pax, int at, const char *key, const char *value)
{
	int body = (int)(strlen(key) + strlen(value) + 2), len = body + 2;

	while (snprintf(NULL, 0, "%d", len) + 1 + body != len)
		len++;
	return at + sprintf(pax + at, "%d %s=%s\n", len, key, value);
}

static void test_gnu_long_and_pax(void)
{
	char d[64], longname[300], pax[512];
	int n;

	memset(longname, 'n', sizeof(longname));
	memcpy(longname, "disk/", 5);
	longname[299] = 0;
	reset();
	hdr("././@LongLink", 'L', 300, NULL);
	body(longname, 300);
	file("short", "L");
	hdr("././@LongLink", 'K', 12, NULL);
	body("data/real\0\0\0", 12);
	hdr("disk/x", '1', 0, "trunc");
	/* pax: a path, and a size larger than the header's */
	n = pax_rec(pax, 0, "path", "disk/p\xc3\xa9.img");
	n = pax_rec(pax, n, "size", "5");
	n = pax_rec(pax, n, "mtime", "1.5");
	hdr("PaxHeaders/x", 'x', (uint64_t)n, NULL);
	body(pax, (size_t)n);
	hdr("ignored", '0', 2, NULL);
	body("hello", 5);
	end();
	open_arc(arc_len);
	CHECK(next(d, sizeof(d)) == 1);
	CHECK_STR(t.e.name, longname);
	CHECK_STR(d, "L");
	CHECK(next(NULL, 0) == 1 && t.e.type == TAR_HARDLINK);
	CHECK_STR(t.e.link, "data/real");
	CHECK(next(d, sizeof(d)) == 1);
	CHECK_STR(t.e.name, "disk/p\xc3\xa9.img");
	CHECK_STR(d, "hello");
	CHECK(next(NULL, 0) == 0);
}

static void test_bad_metadata(void)
{
	char pax[64];

	reset(); /* a long name record larger than allowed */
	hdr("././@LongLink", 'L', TAR_NAME_MAX + 1, NULL);
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == -EINVAL);
	reset(); /* a pax record whose length runs past the data */
	snprintf(pax, sizeof(pax), "99 path=x\n");
	hdr("p", 'x', 10, NULL);
	body(pax, 10);
	file("f", "x");
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == -EINVAL);
	reset(); /* a pax path with a NUL */
	memcpy(pax, "12 path=a\0b\n", 12);
	hdr("p", 'x', 12, NULL);
	body(pax, 12);
	file("f", "x");
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == -EINVAL);
	reset(); /* metadata, then the end */
	hdr("././@LongLink", 'L', 4, NULL);
	body("abc", 4);
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == -EINVAL);
	reset(); /* a bad checksum */
	file("f", "x");
	arc[0] = 'g';
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == -EINVAL);
	CHECK(strstr(t.msg, "checksum"));
	reset(); /* a size field that is not octal */
	memcpy(hdr("f", '0', 0, NULL) + 124, "12x45678901", 11);
	fix_sum(arc);
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == -EINVAL);
}

static void test_sizes(void)
{
	uint8_t *h;

	reset(); /* base-256: 600 bytes */
	h = hdr("big", '0', 0, NULL);
	memset(h + 124, 0, 12);
	h[124] = 0x80;
	h[134] = 0x02;
	h[135] = 0x58;
	fix_sum(h);
	arc_len += 1024;
	file("next", "n");
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == 1 && t.e.size == 600);
	CHECK(next(NULL, 0) == 1);
	CHECK_STR(t.e.name, "next");
	reset(); /* negative base-256 */
	h = hdr("neg", '0', 0, NULL);
	memset(h + 124, 0xff, 12);
	fix_sum(h);
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == -EINVAL);
	/* a size past the end: reading it and skipping it are -EIO */
	reset();
	hdr("f", '0', 1u << 20, NULL);
	body("abc", 3);
	open_arc(arc_len);
	{
		char d[1024];
		ssize_t n, total = 0;

		CHECK(tar_next(&t) == 1);
		while ((n = tar_read(&t, d, sizeof(d))) > 0)
			total += n;
		CHECK(n == -EIO && total == 512);
	}
	open_arc(arc_len);
	CHECK(next(NULL, 0) == 1);
	CHECK(next(NULL, 0) == -EIO);
	CHECK(next(NULL, 0) == 0); /* and it stays ended */
	/* links, devices and directories carry no data whatever size says */
	reset();
	hdr("dev", '3', 512, NULL);
	file("after", "a");
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == 1 && t.e.type == TAR_CHR && t.e.size == 0);
	CHECK(next(NULL, 0) == 1);
	CHECK_STR(t.e.name, "after");
}

/* A source without skip, that hands out 7 bytes at a time (a pipe). */
static ssize_t slow_read(void *ctx, void *buf, size_t n)
{
	struct tar_mem_src *m = ctx;

	n = n < 7 ? n : 7;
	n = n < m->len - m->pos ? n : m->len - m->pos;
	memcpy(buf, m->p + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static void test_truncation_and_end(void)
{
	struct tar_src src;

	reset();
	file("a", "0123456789");
	file("b", "x");
	/* no end blocks: the input ending on a header boundary ends it */
	open_arc(arc_len);
	CHECK(next(NULL, 0) == 1 && next(NULL, 0) == 1 && next(NULL, 0) == 0);
	/* cut inside a header, inside data, inside padding */
	for (size_t cut = 100; cut < arc_len; cut += 200) {
		int r = 0;

		tar_release(&t);
		tar_src_mem(&src, &ms, arc, cut);
		src = (struct tar_src){.read = slow_read, .ctx = &ms};
		tar_init(&t, &src);
		for (int k = 0; k < 3 && (r = next((char[16]){0}, 16)) == 1; k++)
			;
		CHECK(r == -EIO);
	}
}

static void test_gnu_sparse_skipped(void)
{
	uint8_t *h;

	reset();
	h = hdr("sparse", 'S', 512, NULL);
	memcpy(h + 257, "ustar  \0", 8); /* old GNU */
	h[482] = 1;			 /* an extension block follows */
	fix_sum(h);
	memset(arc + arc_len, 0, 512);
	arc[arc_len + 504] = 0; /* and no more */
	arc_len += 512;
	arc_len += 512; /* the stored data */
	file("after", "a");
	end();
	open_arc(arc_len);
	CHECK(next(NULL, 0) == 1 && t.e.type == TAR_OTHER);
	CHECK(next(NULL, 0) == 1);
	CHECK_STR(t.e.name, "after");
}

static void test_refs(void)
{
	static const char *const good[] = {
	    "quay.io/containerdisks/fedora:40",
	    "registry:5000/a/b",
	    "localhost/x",
	    "127.0.0.1:5000/vmlet/oci:1",
	    "[::1]:5000/a:b",
	    "busybox",
	    "a__b/c-d--e.f:T_ag-1.0",
	    "ex.org/x@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	};
	static const char *const bad[] = {
	    "",		"-x",	       "--help",	"ex.org/a:1 --src-creds=x",
	    "ex.org/A", "a/b\n",       "a//b",		"a:",
	    "a:-tag",	"ex.org./a",   ".ex.org/a",	"a_",
	    "a/-b",	"a@sha256:12", "ex.org:port/a", "a b",
	};

	for (unsigned int i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!image_ref_valid(good[i]))
			test_fail(__FILE__, __LINE__, "refused: '%s'", good[i]);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (image_ref_valid(bad[i]))
			test_fail(__FILE__, __LINE__, "accepted: '%s'", bad[i]);
}

#define J(s) s, strlen(s)

static void test_manifests(void)
{
	struct image_names n;
	char dg[72];
	const char *d64 = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char buf[512];

	CHECK(image_docker_layers(J("[{\"RepoTags\":[\"a:1\"],\"Layers\":[\"./l/layer.tar\"]}]"),
				  "a:1", &n) == 0);
	CHECK(n.n == 1);
	CHECK_STR(n.name[0], "l/layer.tar");
	image_names_release(&n);
	CHECK(image_docker_layers(J("[{\"RepoTags\":[\"a:1\"],\"Layers\":[\"l\"]}]"), "b:1", &n) ==
	      -ENOENT);
	CHECK(image_docker_layers(J("[{\"RepoTags\":[\"a:1\"],\"Layers\":[\"../l\"]}]"), "a:1",
				  &n) == -EINVAL);
	CHECK(image_docker_layers(J("[{\"RepoTags\":[\"a:1\"],\"Layers\":[\"/l\"]}]"), "a:1", &n) ==
	      -EINVAL);
	/* wrong JSON types anywhere are malformed or absent, never a crash */
	CHECK(image_docker_layers(J("{\"RepoTags\":1}"), "a:1", &n) == -EINVAL);
	CHECK(image_docker_layers(J("[1,{\"RepoTags\":{}},{\"RepoTags\":[2]}]"), "a:1", &n) ==
	      -ENOENT);
	CHECK(image_docker_layers(J("[{\"RepoTags\":[\"a:1\"],\"Layers\":[7]}]"), "a:1", &n) ==
	      -EINVAL);
	CHECK(image_docker_layers(J("[{\"RepoTags\":[\"a:1\"],\"Layers\":\"x\"}]"), "a:1", &n) ==
	      -EINVAL);
	CHECK(image_docker_layers(J("[] trailing"), "a:1", &n) == -EINVAL);
	snprintf(buf, sizeof(buf),
		 "{\"manifests\":[{\"digest\":\"%s\",\"annotations\":{\"org.opencontainers."
		 "image.ref.name\":\"a:1\"}}]}",
		 d64);
	CHECK(image_oci_index(J(buf), "a:1", dg) == 0);
	CHECK_STR(dg, d64);
	CHECK(image_oci_index(J(buf), "a:2", dg) == -ENOENT);
	CHECK(image_oci_index(J("{\"manifests\":[{\"digest\":\"sha256:../../x\",\"annotations\":"
				"{\"org.opencontainers.image.ref.name\":\"a:1\"}}]}"),
			      "a:1", dg) == -EINVAL);
	CHECK(image_oci_index(J("{\"manifests\":{}}"), "a:1", dg) == -ENOENT);
	snprintf(buf, sizeof(buf), "{\"layers\":[{\"digest\":\"%s\"}]}", d64);
	CHECK(image_oci_layers(J(buf), &n) == 0 && n.n == 1);
	image_names_release(&n);
	CHECK(image_oci_layers(J("{\"layers\":[{\"digest\":\"md5:00\"}]}"), &n) == -EINVAL);
	CHECK(image_oci_layers(J("{\"layers\":null}"), &n) == -EINVAL);
}

static void test_sha256(void)
{
	struct sha256 s;
	char hex[65];
	static char million[1000000];

	sha256_init(&s);
	sha256_update(&s, "abc", 3);
	sha256_hex(&s, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256_init(&s);
	sha256_update(&s, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56);
	sha256_hex(&s, hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', sizeof(million));
	sha256_init(&s);
	sha256_update(&s, million, 333333);
	sha256_update(&s, million, sizeof(million) - 333333);
	sha256_hex(&s, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

int main(void)
{
	TEST_RUN(test_ustar_names);
	TEST_RUN(test_escapes_refused);
	TEST_RUN(test_gnu_long_and_pax);
	TEST_RUN(test_bad_metadata);
	TEST_RUN(test_sizes);
	TEST_RUN(test_truncation_and_end);
	TEST_RUN(test_gnu_sparse_skipped);
	TEST_RUN(test_refs);
	TEST_RUN(test_manifests);
	TEST_RUN(test_sha256);
	tar_release(&t);
	return test_summary();
}
