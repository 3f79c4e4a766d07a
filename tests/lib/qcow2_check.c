// SPDX-License-Identifier: MIT
/*
 * qcow2_check.c - qcow2_check_file (qcow2_check.h): every pointer of the
 * image is followed and counted, then the counts are compared with the
 * refcounts.
 */
#include <endian.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/qcow2_check.h"

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

int qcow2_check_file(const char *path)
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

int qcow2_test_dir(char *dir, size_t cap, const char *name)
{
	if (system("qemu-img --version >/dev/null 2>&1")) {
		printf("skip: qemu-img not installed\n");
		return 77;
	}
	snprintf(dir, cap, "/tmp/vmlet-%s.XXXXXX", name);
	return mkdtemp(dir) ? 0 : 1;
}
