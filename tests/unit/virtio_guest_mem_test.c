// SPDX-License-Identifier: MIT
/* guest_mem_ptr: bounds and overflow checks on a static "guest", the
 * marks live migration takes of what devices reach, and SMRAM hidden
 * from devices outside SMM. */
#include "tests/lib/test.h"
#include "vmm/vm/guest_mem.h"

static void test_ptr_bounds(void)
{
	static uint8_t low[4096], high[8192];
	struct guest_mem m = {.n = 2};

	m.r[0] = (struct guest_mem_region){.gpa = 0, .size = sizeof(low), .host = low};
	m.r[1] =
	    (struct guest_mem_region){.gpa = 0x100000000ull, .size = sizeof(high), .host = high};
	CHECK(guest_mem_ptr(&m, 0, 4096) == low);
	CHECK(guest_mem_ptr(&m, 4095, 1) == low + 4095);
	CHECK(guest_mem_ptr(&m, 4096, 0) == low + 4096);
	CHECK(guest_mem_ptr(&m, 4095, 2) == NULL);
	CHECK(guest_mem_ptr(&m, 4096, 1) == NULL);
	CHECK(guest_mem_ptr(&m, 0x100000000ull + 100, 8000) == high + 100);
	CHECK(guest_mem_ptr(&m, 0x100000000ull + 100, 8093) == NULL);
	CHECK(guest_mem_ptr(&m, 0xffffffffull, 2) == NULL);
	CHECK(guest_mem_ptr(&m, ~0ull, 2) == NULL);
	CHECK(guest_mem_ptr(&m, 16, ~0ull) == NULL);
	CHECK(guest_mem_ptr(&m, 0x100000000ull + 8, ~0ull - 4) == NULL);
	CHECK(guest_mem_ptr(NULL, 0, 1) == NULL);
}

static void test_region_at_top(void)
{
	static uint8_t top[4096];
	struct guest_mem m = {.n = 1};

	m.r[0] = (struct guest_mem_region){.gpa = ~0ull - 4095, .size = 4096, .host = top};
	CHECK(guest_mem_ptr(&m, ~0ull - 4095, 4096) == top);
	CHECK(guest_mem_ptr(&m, ~0ull, 1) == top + 4095);
	CHECK(guest_mem_ptr(&m, ~0ull, 2) == NULL);
}

/* Live migration's marks (guest_mem_track): none while off; on, every
 * page a translation or a host range covers, in its own region only. */
static void test_track(void)
{
	static uint8_t low[4 * 4096], high[2 * 4096];
	uint64_t map0[1] = {0}, map1[1] = {0};
	struct guest_mem m = {.n = 2};

	m.r[0] = (struct guest_mem_region){.gpa = 0, .size = sizeof(low), .host = low};
	m.r[1] =
	    (struct guest_mem_region){.gpa = 0x100000000ull, .size = sizeof(high), .host = high};
	m.dev_dirty[0] = map0;
	m.dev_dirty[1] = map1;
	CHECK(guest_mem_ptr(&m, 0, 4096) == low);
	guest_mem_mark_host(&m, low, 100);
	CHECK(map0[0] == 0 && map1[0] == 0);
	map0[0] = 0x80;
	guest_mem_track(&m, true);
	CHECK(map0[0] == 0); /* cleared when tracking starts */
	CHECK(guest_mem_ptr(&m, 4095, 2) == low + 4095);
	CHECK(map0[0] == 0x3);
	CHECK(guest_mem_ptr(&m, 3 * 4096, 0) == low + 3 * 4096);
	CHECK(map0[0] == 0xb);
	CHECK(guest_mem_ptr(&m, 4 * 4096, 0) == low + 4 * 4096); /* one past: no mark */
	CHECK(guest_mem_ptr(&m, 3 * 4096, 4097) == NULL);
	CHECK(map0[0] == 0xb && map1[0] == 0);
	guest_mem_mark_host(&m, high + 4096, 1);
	guest_mem_mark_host(&m, high + 4000, 8192); /* past the region: ignored */
	CHECK(map1[0] == 0x2 && map0[0] == 0xb);
	guest_mem_track(&m, false);
	CHECK(guest_mem_ptr(&m, 4096 * 2, 1) == low + 4096 * 2);
	guest_mem_mark_host(&m, high, 1);
	CHECK(map0[0] == 0xb && map1[0] == 0x2);
}

/* SMRAM hidden outside SMM (q35's TSEG and A segment, vmm/vm/smm.c): no
 * device reaches it through guest_mem_ptr(), whatever range it asks. */
static void test_smram_hidden(void)
{
	static uint8_t low[1u << 20];
	struct guest_mem m = {.n = 1};
	const uint64_t top = sizeof(low), tseg = top - 0x10000;

	m.r[0] = (struct guest_mem_region){.gpa = 0, .size = sizeof(low), .host = low};
	CHECK(guest_mem_ptr(&m, tseg, 4096) == low + tseg);
	CHECK(guest_mem_ptr(&m, 0xa0000, 16) == low + 0xa0000);
	guest_mem_set_smram(&m, tseg, top, true);
	CHECK(guest_mem_ptr(&m, tseg, 4096) == NULL);
	CHECK(guest_mem_ptr(&m, top - 1, 1) == NULL);
	CHECK(guest_mem_ptr(&m, tseg - 4096, 4097) == NULL); /* ends inside */
	CHECK(guest_mem_ptr(&m, 0, top) == NULL);	     /* spans it */
	CHECK(guest_mem_ptr(&m, tseg, 0) == NULL);
	CHECK(guest_mem_ptr(&m, tseg - 4096, 4096) == low + tseg - 4096);
	CHECK(guest_mem_ptr(&m, 0xa0000, 16) == NULL);
	CHECK(guest_mem_ptr(&m, 0xbffff, 1) == NULL);
	CHECK(guest_mem_ptr(&m, 0x9f000, 0x1001) == NULL);
	CHECK(guest_mem_ptr(&m, 0x9f000, 0x1000) == low + 0x9f000);
	CHECK(guest_mem_ptr(&m, 0xc0000, 16) == low + 0xc0000);
	/* SMRAM opened (D_OPEN) or no TSEG: reachable again */
	guest_mem_set_smram(&m, top, top, false);
	CHECK(guest_mem_ptr(&m, tseg, 4096) == low + tseg);
	CHECK(guest_mem_ptr(&m, 0xa0000, 16) == low + 0xa0000);
}

int main(void)
{
	TEST_RUN(test_ptr_bounds);
	TEST_RUN(test_region_at_top);
	TEST_RUN(test_track);
	TEST_RUN(test_smram_hidden);
	return test_summary();
}
