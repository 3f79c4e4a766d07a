/* SPDX-License-Identifier: MIT */
/*
 * qcow2_fuzz.c - libFuzzer target for the disk image reader (vmm/dev/blk.h):
 * images are untrusted (a user's cloud image, a containerDisk). Input: 8
 * script bytes, then the image file. The image is written as "img" in a
 * private directory (on /dev/shm) that also holds "base", a 64 KiB raw
 * image a backing-file name may point at (as may "img" itself). The
 * script opens it (read-only or read-write, writeback or writethrough)
 * through blk_open(), the format found by its magic, and makes three
 * requests at offsets spread over the virtual size: reads, writes and
 * write-zeroes (each read back and compared), discards, then a flush. Any
 * crash, sanitizer report, leak, hang or wrong read-back is a bug.
 *
 * The read-back must match for raw images, and for qcow2 requests inside
 * one cluster: a corrupt qcow2 image can point two guest clusters, or a
 * guest cluster and a table, at the same host cluster (qemu-img check
 * finds that, not every write), so the pieces of a longer request may
 * overwrite each other.
 *
 * FUZZ_ARGS: -close_fd_mask=2 -max_len=65536
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/blk.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"

#define SCRIPT	 8
#define REQ_MAX	 (160u << 10)
#define BASE_LEN (64u << 10)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], img[96], base[96];
static uint8_t *wbuf, *rbuf;
static uint64_t cluster; /* qcow2 cluster size, 0 for raw */

static void cleanup(void)
{
	unlink(img);
	unlink(base);
	rmdir(dir);
}

static int write_file(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ok = fd >= 0 && write(fd, p, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "qcow2-fuzz", NULL);
	snprintf(dir, sizeof(dir), "/dev/shm/vmlet-qcow2-fuzz.XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/vmlet-qcow2-fuzz.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(img, sizeof(img), "%s/img", dir);
	snprintf(base, sizeof(base), "%s/base", dir);
	wbuf = malloc(REQ_MAX);
	rbuf = malloc(REQ_MAX);
	if (!wbuf || !rbuf)
		abort();
	for (unsigned int i = 0; i < REQ_MAX; i++)
		wbuf[i] = (uint8_t)(i * 7 + (i >> 9));
	if (write_file(base, wbuf, BASE_LEN))
		abort();
	atexit(cleanup);
	return 0;
}

/* The request's bytes as three uneven iovecs (the formats split them). */
static int iov3(struct iovec *v, uint8_t *p, uint64_t len)
{
	uint64_t a = len / 3, b = len / 2;

	v[0] = (struct iovec){p, a};
	v[1] = (struct iovec){p + a, b};
	v[2] = (struct iovec){p + a + b, len - a - b};
	return 3;
}

/* One request; op: bits 0-1 kind, 2-4 offset (eighths of the size), 5-7
 * length class; arg: fine offset. */
static void request(struct blk *b, uint8_t op, uint8_t arg)
{
	static const uint32_t lens[8] = {512, 4096, 1, 65536, 65536 + 512, 3 * 512, 7, REQ_MAX};
	uint64_t len = lens[op >> 5], off = b->size / 8 * (op >> 2 & 7) + (uint64_t)arg * 512;
	struct iovec v[3];
	int n, r;

	if (b->size < len)
		len = b->size;
	if (off > b->size - len)
		off = b->size - len;
	bool exact = !cluster || off / cluster == (off + len - 1) / cluster;

	switch (op & 3) {
	case 0:
		n = iov3(v, rbuf, len);
		(void)blk_preadv(b, v, n, off);
		break;
	case 1:
		n = iov3(v, wbuf + arg, len < REQ_MAX - arg ? len : REQ_MAX - arg);
		len = iov_size(v, n);
		if (blk_pwritev(b, v, n, off))
			break;
		n = iov3(v, rbuf, len);
		r = blk_preadv(b, v, n, off);
		if (!r && exact && memcmp(rbuf, wbuf + arg, len))
			__builtin_trap(); /* the write did not stick */
		break;
	case 2:
		if (blk_write_zeroes(b, off, len, arg & 1))
			break;
		n = iov3(v, rbuf, len);
		r = blk_preadv(b, v, n, off);
		for (uint64_t i = 0; !r && exact && i < len; i++)
			if (rbuf[i])
				__builtin_trap(); /* zeroes that are not */
		break;
	default:
		(void)blk_discard(b, off, len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct blk *b = NULL;
	bool ro;
	enum blk_cache cache;

	if (size < SCRIPT + 4)
		return 0;
	if (write_file(img, data + SCRIPT, size - SCRIPT))
		abort();
	ro = data[0] & 1;
	cache = (data[0] & 2) ? BLK_CACHE_WRITETHROUGH : BLK_CACHE_WRITEBACK;
	if (blk_open(&b, img, ro, cache) && (ro || blk_open(&b, img, true, cache)))
		return 0;
	cluster = 0;
	if (!strcmp(b->format, "qcow2"))
		cluster = 1ull << (data[SCRIPT + 23] & 63); /* header checked */
	for (unsigned int i = 0; i < 3; i++)
		request(b, data[1 + 2 * i], data[2 + 2 * i]);
	(void)blk_flush(b);
	blk_close(b);
	return 0;
}
