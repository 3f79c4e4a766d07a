// SPDX-License-Identifier: MIT
/* pflash: the CFI command protocol as OVMF's flash driver drives it
 * (probe, program, erase, back to read array), the ID and CFI query, a
 * bad erase confirm, accesses at the array's edge, and the snapshot of
 * the command state and the store. */
#include <errno.h>
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/dev/pflash.h"
#include "vmm/snapshot/snap_buf.h"

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

static uint8_t arr2[SIZE];

static int load(struct pflash *f, const struct snap_buf *b, bool adopt)
{
	struct snap_cur c = snap_cur_make(b->p, b->len);
	int r = pflash_load(f, &c, adopt, "vars");

	return !r && c.left ? -EBADMSG : r;
}

/* Save in the middle of a program (armed), load into a part over the same
 * bytes: the next write is the program's data; save -> load -> save gives
 * the same bytes; a new store adopts the saved bytes, a kept one that
 * differs is refused; states the part cannot be in are refused, nothing
 * set. */
static void test_snapshot(void)
{
	struct snap_buf b = {0}, b2 = {0}, bad = {0};
	struct pflash f, g;
	static const struct {
		unsigned int off;
		uint8_t v;
	} plant[] = {{8, 0x42}, {8, 0xf0}, {9, 0x01}, {10, 2}, {11, 1}, {8, 0x70}};

	memset(arr, 0x5a, sizeof(arr));
	arr[100] = 0x11;
	CHECK_EQ_U64(pflash_init(&f, arr, SIZE, BLOCK), 0);
	wr(&f, 0, 0x40); /* program: armed */
	pflash_save(&f, &b);
	CHECK(b.err == 0);
	memcpy(arr2, arr, sizeof(arr));
	CHECK_EQ_U64(pflash_init(&g, arr2, SIZE, BLOCK), 0);
	CHECK_EQ_U64(load(&g, &b, false), 0);
	pflash_save(&g, &b2);
	CHECK(b2.len == b.len && !memcmp(b.p, b2.p, b.len));
	wr(&g, 5, 0x42);
	CHECK_EQ_U64(arr2[5], 0x42);
	CHECK_EQ_U64(rd(&g, 0), PFLASH_STATUS_READY);
	/* a kept store that differs (arr2[5] now) is refused, nothing set */
	CHECK_EQ_U64(load(&g, &b, false), -ESTALE);
	CHECK_EQ_U64(rd(&g, 0), PFLASH_STATUS_READY);
	CHECK_EQ_U64(arr2[5], 0x42);
	/* a new store takes the saved bytes */
	memset(arr2, 0xff, sizeof(arr2));
	CHECK_EQ_U64(load(&g, &b, true), 0);
	CHECK(!memcmp(arr2, arr, sizeof(arr)));
	/* planted: unknown command, the alias 0xf0 (stored as 0xff), a status
	 * bit, armed 2, the pad, armed under read status */
	for (unsigned int i = 0; i < sizeof(plant) / sizeof(plant[0]); i++) {
		bad.len = 0;
		snap_buf_put(&bad, b.p, b.len);
		bad.p[plant[i].off] = plant[i].v;
		memset(arr2, 0xff, sizeof(arr2));
		CHECK_EQ_U64(load(&g, &bad, true), -EINVAL);
		CHECK_EQ_U64(arr2[100], 0xff);
	}
	/* the store of another size, truncated */
	bad.len = 0;
	snap_buf_put(&bad, b.p, b.len - 4);
	memcpy(bad.p + 16, &(uint32_t){SIZE - 4}, 4);
	CHECK_EQ_U64(load(&g, &bad, true), -EBADMSG);
	bad.len = 12;
	CHECK_EQ_U64(load(&g, &bad, true), -EBADMSG);
	snap_buf_release(&b);
	snap_buf_release(&b2);
	snap_buf_release(&bad);
	pflash_release(&f);
	pflash_release(&g);
}

int main(void)
{
	TEST_RUN(test_probe);
	TEST_RUN(test_program_erase);
	TEST_RUN(test_id_cfi);
	TEST_RUN(test_bounds);
	TEST_RUN(test_snapshot);
	return test_summary();
}
