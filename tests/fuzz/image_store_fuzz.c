/* SPDX-License-Identifier: MIT */
/*
 * image_store_fuzz.c - libFuzzer target for what the image store parses
 * from an image (vmm/disk/image_store.h): images are untrusted. The first
 * input byte picks the parser, the rest is its input:
 *   0  a tar archive (vmm/disk/tar.h): every entry, its data read (bit 3
 *      of byte 0 set: through a source that cannot skip and hands out a
 *      few bytes at a time, as a decompressor's pipe does)
 *   1  a docker save manifest.json, for "ex.org/a:1"
 *   2  an OCI index.json, for "ex.org/a:1"
 *   3  an OCI image manifest
 *   4  an image reference
 *   5  an image of two uncompressed layers (byte 1: where the first one
 *      ends, in 256ths; byte 2 bit 0: containerDisk.path "/disk/d.img",
 *      else the only file in /disk) whose disk is extracted into a memfd
 *      (vmm/disk/image_layer.h): whiteouts, links, the listing
 * Any crash, sanitizer report, leak or hang is a bug; so is a disk that
 * is larger than the input.
 *
 * FUZZ_ARGS: -close_fd_mask=2 -max_len=65536
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/disk/image_layer.h"
#include "vmm/disk/image_manifest.h"
#include "vmm/disk/tar.h"
#include "vmm/util/log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int in_fd = -1, out_fd = -1;
static uint8_t buf[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "image-store-fuzz", NULL);
	in_fd = memfd_create("image-fuzz-in", MFD_CLOEXEC);
	out_fd = memfd_create("image-fuzz-out", MFD_CLOEXEC);
	if (in_fd < 0 || out_fd < 0)
		abort();
	return 0;
}

static ssize_t trickle(void *ctx, void *p, size_t n)
{
	struct tar_mem_src *m = ctx;

	n = n < 13 ? n : 13;
	n = n < m->len - m->pos ? n : m->len - m->pos;
	memcpy(p, m->p + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

/* Whether a normalised name could leave the root: absolute, a ".." part,
 * an empty part. */
static bool name_escapes(const char *name)
{
	if (name[0] == '/')
		return true;
	for (const char *p = name; *p;) {
		size_t l = strcspn(p, "/");

		if ((l == 2 && p[0] == '.' && p[1] == '.') || (l == 1 && p[0] == '.') || !l)
			return true;
		p += l + (p[l] == '/');
		if (p[-1] == '/' && !*p)
			return true;
	}
	return false;
}

static void fuzz_tar(const uint8_t *d, size_t n, bool slow)
{
	struct tar_mem_src ms;
	struct tar_src src;
	struct tar t;
	int r;

	tar_src_mem(&src, &ms, d, n);
	if (slow)
		src = (struct tar_src){.read = trickle, .ctx = &ms};
	tar_init(&t, &src);
	while ((r = tar_next(&t)) == 1) {
		ssize_t got;
		uint64_t total = 0;

		if (!t.e.name || name_escapes(t.e.name) ||
		    (t.e.type == TAR_HARDLINK && name_escapes(t.e.link)))
			__builtin_trap(); /* a name that leaves the root got through */
		while ((got = tar_read(&t, buf, sizeof(buf))) > 0)
			total += (uint64_t)got;
		if (got == 0 && total != t.e.size)
			__builtin_trap();
	}
	tar_release(&t);
}

static void fuzz_extract(const uint8_t *d, size_t n)
{
	struct image_layer l[2];
	uint64_t split;
	struct stat st;

	if (n < 2 || ftruncate(in_fd, 0) || pwrite(in_fd, d + 2, n - 2, 0) != (ssize_t)(n - 2) ||
	    ftruncate(out_fd, 0))
		return;
	n -= 2;
	split = (uint64_t)n * d[0] / 256;
	l[0] = (struct image_layer){.fd = in_fd, .off = 0, .len = split};
	l[1] = (struct image_layer){.fd = in_fd, .off = split, .len = n - split};
	/* compressed layers would start gzip or zstd per input: not here */
	for (int i = 0; i < 2; i++)
		if (l[i].len >= 2 && (d[2 + l[i].off] == 0x1f || d[2 + l[i].off] == 0x28))
			return;
	if (!image_layer_extract(l, 2, (d[1] & 1) ? "disk/d.img" : NULL, out_fd, "fuzz") &&
	    (fstat(out_fd, &st) || (uint64_t)st.st_size > n))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image_names names;
	char digest[72], *s;

	if (!size)
		return 0;
	switch (data[0] & 7) {
	case 0:
		fuzz_tar(data + 1, size - 1, data[0] & 8);
		break;
	case 1:
		if (!image_docker_layers((const char *)data + 1, size - 1, "ex.org/a:1", &names))
			image_names_release(&names);
		break;
	case 2:
		(void)image_oci_index((const char *)data + 1, size - 1, "ex.org/a:1", digest);
		break;
	case 3:
		if (!image_oci_layers((const char *)data + 1, size - 1, &names))
			image_names_release(&names);
		break;
	case 4:
		if ((s = strndup((const char *)data + 1, size - 1))) {
			(void)image_ref_valid(s);
			free(s);
		}
		break;
	case 5:
		fuzz_extract(data + 1, size - 1);
		break;
	default:
		break;
	}
	return 0;
}
