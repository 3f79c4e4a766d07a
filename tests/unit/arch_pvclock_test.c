/* SPDX-License-Identifier: MIT */
/*
 * The kvm-clock a guest reads from its pvclock record (arch/x86_64/pvclock.c):
 * a known scale, a 128-bit reference over random records (Linux's
 * pvclock_scale_delta), and the records it must refuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "tests/lib/test.h"

static void put(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void record(uint8_t rec[ARCH_PVCLOCK_SIZE], uint32_t version, uint64_t stamp,
		   uint64_t system_time, uint32_t mul, int8_t shift)
{
	memset(rec, 0, ARCH_PVCLOCK_SIZE);
	put(rec, version, 4);
	put(rec + 8, stamp, 8);
	put(rec + 16, system_time, 8);
	put(rec + 24, mul, 4);
	memcpy(rec + 28, &shift, 1);
}

static uint64_t reference(uint64_t stamp, uint64_t system_time, uint32_t mul, int8_t shift,
			  uint64_t tsc)
{
	uint64_t delta = tsc - stamp;

	delta = shift < 0 ? delta >> -shift : delta << shift;
	return system_time + (uint64_t)(((unsigned __int128)delta * mul) >> 32);
}

static void test_known_scale(void)
{
	uint8_t rec[ARCH_PVCLOCK_SIZE];
	uint64_t ns = 0;

	/* a 2 GHz TSC: half a ns per tick (mul 2^31, no shift) */
	record(rec, 2, 1000, 5000000000ull, 0x80000000u, 0);
	CHECK(arch_pvclock_ns(rec, 1000 + 2000000000ull, &ns) == 0);
	CHECK_EQ_U64(ns, 6000000000ull);
	/* the same through a shift: mul 2^31 with shift -1 is a quarter */
	record(rec, 4, 0, 0, 0x80000000u, -1);
	CHECK(arch_pvclock_ns(rec, 4000, &ns) == 0);
	CHECK_EQ_U64(ns, 1000);
}

static void test_against_reference(void)
{
	uint8_t rec[ARCH_PVCLOCK_SIZE];

	srand(7);
	for (int i = 0; i < 100000; i++) {
		uint64_t stamp = (uint64_t)rand() << 31 ^ (uint64_t)rand();
		uint64_t sys = (uint64_t)rand() << 20;
		uint32_t mul = (uint32_t)rand() << 1 | 1;
		int8_t shift = (int8_t)(rand() % 7 - 3);
		uint64_t tsc = stamp + ((uint64_t)rand() << (rand() % 24)), ns = 0;

		record(rec, 2 * (uint32_t)i, stamp, sys, mul, shift);
		CHECK(arch_pvclock_ns(rec, tsc, &ns) == 0);
		CHECK_EQ_U64(ns, reference(stamp, sys, mul, shift, tsc));
	}
}

static void test_refused(void)
{
	uint8_t rec[ARCH_PVCLOCK_SIZE];
	uint64_t ns = 42;

	record(rec, 3, 0, 0, 0x80000000u, 0); /* KVM writing it */
	CHECK(arch_pvclock_ns(rec, 10, &ns) == -EAGAIN);
	record(rec, 2, 0, 0, 0, 0); /* never written: no scale */
	CHECK(arch_pvclock_ns(rec, 10, &ns) == -EINVAL);
	record(rec, 2, 100, 0, 0x80000000u, 0); /* a TSC before the stamp */
	CHECK(arch_pvclock_ns(rec, 99, &ns) == -EINVAL);
	record(rec, 2, 0, 0, 0x80000000u, 40); /* a shift no scale has */
	CHECK(arch_pvclock_ns(rec, 10, &ns) == -EINVAL);
	CHECK_EQ_U64(ns, 42);
}

int main(void)
{
	TEST_RUN(test_known_scale);
	TEST_RUN(test_against_reference);
	TEST_RUN(test_refused);
	return test_summary();
}
