// SPDX-License-Identifier: MIT
/* pflash: the CFI command protocol as OVMF's flash driver drives it
 * (probe, program, erase, back to read array), the ID and CFI query, a
 * bad erase confirm, and accesses at the array's edge. */
#include <errno.h>
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/dev/pflash.h"

#define SIZE  (16 * 1024)
#define BLOCK 4096

static uint8_t arr[SIZE];

static uint8_t rd(struct pflash *f, uint64_t off)
{
	uint8_t v;

	pflash_ops.read(f, off, &v, 1);
	return v;
}

static void wr(struct pflash *f, uint64_t off, uint8_t v)
{
	pflash_ops.write(f, off, &v, 1);
}

/* OVMF's QemuFlashDetected(): clear status, read, read status, expect 0. */
static void test_probe(void)
{
	struct pflash f;
	uint8_t orig;

	memset(arr, 0x5a, sizeof(arr));
	CHECK_EQ_U64(pflash_init(&f, arr, SIZE, BLOCK), 0);
	orig = rd(&f, 0);
	CHECK_EQ_U64(orig, 0x5a);
	wr(&f, 0, 0x50);
	CHECK_EQ_U64(rd(&f, 0), orig); /* not RAM: the write did not stick */
	wr(&f, 0, 0x70);
	CHECK_EQ_U64(rd(&f, 0), 0x00); /* cleared status: "behaves as FLASH" */
	wr(&f, 0, 0xff);
	CHECK_EQ_U64(rd(&f, 0), orig);
	CHECK_EQ_U64(arr[0], 0x5a);
	pflash_release(&f);
}

/* QemuFlashWrite: 0x10 + data per byte, then 0xff at the last byte. */
static void test_program_erase(void)
{
	struct pflash f;
	const char *msg = "vars";
	uint32_t word = 0x11223344, back;

	memset(arr, 0xff, sizeof(arr));
	CHECK_EQ_U64(pflash_init(&f, arr, SIZE, BLOCK), 0);
	for (unsigned int i = 0; i < 4; i++) {
		wr(&f, 0x1000 + i, 0x10);
		wr(&f, 0x1000 + i, (uint8_t)msg[i]);
		CHECK(rd(&f, 0x1000) & 0x80); /* status, ready */
	}
	wr(&f, 0x1003, 0xff);
	CHECK(memcmp(arr + 0x1000, "vars", 4) == 0);
	CHECK_EQ_U64(rd(&f, 0x1002), 'r');
	/* 0x40 and a wider write */
	wr(&f, 0x2000, 0x40);
	pflash_ops.write(&f, 0x2000, &word, 4);
	wr(&f, 0, 0xff);
	pflash_ops.read(&f, 0x2000, &back, 4);
	CHECK_EQ_U64(back, word);
	CHECK_EQ_U64(f.writes, 5);
	/* erase the block holding 0x1003: only that block */
	arr[0x0fff] = 0;
	arr[0x2000 - 1] = 0;
	wr(&f, 0x1003, 0x20);
	wr(&f, 0x1003, 0xd0);
	CHECK_EQ_U64(rd(&f, 0x1800), 0x80); /* status until read array */
	wr(&f, 0x1003, 0xff);
	CHECK_EQ_U64(rd(&f, 0x1000), 0xff);
	CHECK_EQ_U64(rd(&f, 0x1fff), 0xff);
	CHECK_EQ_U64(rd(&f, 0x0fff), 0x00);
	CHECK_EQ_U64(rd(&f, 0x2000), 0x44);
	CHECK_EQ_U64(f.erases, 1);
	/* erase without its confirm: nothing erased, error status */
	wr(&f, 0x2000, 0x20);
	wr(&f, 0x2000, 0x00);
	CHECK_EQ_U64(rd(&f, 0x2000) & 0x30, 0x30);
	wr(&f, 0, 0x50);
	CHECK_EQ_U64(rd(&f, 0x2000), 0x44);
	wr(&f, 0, 0x70);
	CHECK_EQ_U64(rd(&f, 0), 0);
	pflash_release(&f);
}

static void test_id_cfi(void)
{
	struct pflash f;

	memset(arr, 0, sizeof(arr));
	CHECK_EQ_U64(pflash_init(&f, arr, SIZE, BLOCK), 0);
	wr(&f, 0, 0x90);
	CHECK_EQ_U64(rd(&f, 0), PFLASH_MANUFACTURER);
	CHECK_EQ_U64(rd(&f, 1), PFLASH_DEVICE_ID);
	wr(&f, 0, 0x98);
	CHECK_EQ_U64(rd(&f, 0x10), 'Q');
	CHECK_EQ_U64(rd(&f, 0x11), 'R');
	CHECK_EQ_U64(rd(&f, 0x12), 'Y');
	CHECK_EQ_U64(rd(&f, 0x27), 14); /* 16 KiB = 2^14 */
	CHECK_EQ_U64(rd(&f, 0x2d), 3);	/* 4 blocks - 1 */
	CHECK_EQ_U64(rd(&f, 0x2f), BLOCK >> 8);
	wr(&f, 0, 0xf0);
	CHECK_EQ_U64(rd(&f, 0x10), 0);
	pflash_release(&f);
}

/* The guest cannot reach outside the array; bad geometry is refused. */
static void test_bounds(void)
{
	struct pflash f;
	uint64_t v = 0;

	CHECK_EQ_U64(pflash_init(&f, arr, SIZE, 1000), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pflash_init(&f, arr, SIZE + 1, BLOCK), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pflash_init(&f, NULL, SIZE, BLOCK), (uint64_t)-EINVAL);
	memset(arr, 0xff, sizeof(arr));
	CHECK_EQ_U64(pflash_init(&f, arr, SIZE, BLOCK), 0);
	wr(&f, SIZE - 4, 0x10);
	pflash_ops.write(&f, SIZE - 4, &v, 8); /* crosses the end: dropped */
	wr(&f, 0, 0xff);
	CHECK_EQ_U64(arr[SIZE - 1], 0xff);
	pflash_ops.read(&f, SIZE - 4, &v, 8);
	CHECK_EQ_U64(v, ~0ull);
	wr(&f, SIZE + 100, 0x20); /* outside: ignored */
	CHECK_EQ_U64(rd(&f, 0), 0xff);
	pflash_release(&f);
}

int main(void)
{
	TEST_RUN(test_probe);
	TEST_RUN(test_program_erase);
	TEST_RUN(test_id_cfi);
	TEST_RUN(test_bounds);
	return test_summary();
}
