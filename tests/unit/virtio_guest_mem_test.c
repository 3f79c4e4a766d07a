// SPDX-License-Identifier: MIT
/* guest_mem_ptr: bounds and overflow checks on a static "guest". */
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

int main(void)
{
	TEST_RUN(test_ptr_bounds);
	TEST_RUN(test_region_at_top);
	return test_summary();
}
