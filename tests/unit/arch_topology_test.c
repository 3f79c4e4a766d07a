/* SPDX-License-Identifier: MIT */
/* APIC ID composition and decomposition (arch/x86_64/topology.c). */
#include "arch/arch.h"
#include "tests/lib/test.h"

struct topo_case {
	struct arch_topology t;
	uint32_t smt_bits, core_bits;
	uint32_t ids[18]; /* expected APIC IDs by vCPU index (worked out by hand) */
};

static const struct topo_case cases[] = {
    {{1, 1, 1}, 0, 0, {0}},
    {{2, 1, 1}, 0, 0, {0, 1}},
    {{1, 2, 1}, 0, 1, {0, 1}},
    {{1, 1, 2}, 1, 0, {0, 1}},
    {{3, 1, 1}, 0, 0, {0, 1, 2}},
    {{1, 3, 1}, 0, 2, {0, 1, 2}},
    {{1, 1, 3}, 2, 0, {0, 1, 2}},
    {{2, 2, 2}, 1, 1, {0, 1, 2, 3, 4, 5, 6, 7}},
    {{4, 2, 1}, 0, 1, {0, 1, 2, 3, 4, 5, 6, 7}},
    /* threads 1 bit, cores 2 bits: package 1 starts at 8 */
    {{2, 3, 2}, 1, 2, {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13}},
    /* threads 2 bits, cores 2 bits: core 1 at 4, package 1 at 16 */
    {{2, 3, 3}, 2, 2, {0, 1, 2, 4, 5, 6, 8, 9, 10, 16, 17, 18, 20, 21, 22, 24, 25, 26}},
    {{3, 3, 1}, 0, 2, {0, 1, 2, 4, 5, 6, 8, 9, 10}},
};

static void test_widths_and_ids(void)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct topo_case *k = &cases[c];
		struct arch_apic_widths w;

		arch_topo_widths(&k->t, &w);
		CHECK_EQ_U64(w.smt_bits, k->smt_bits);
		CHECK_EQ_U64(w.core_bits, k->core_bits);
		CHECK_EQ_U64(w.pkg_shift, k->smt_bits + k->core_bits);
		for (uint32_t i = 0; i < arch_topo_vcpus(&k->t); i++)
			CHECK_EQ_U64(arch_topo_apic_id(&k->t, i), k->ids[i]);
	}
}

static void test_decompose_roundtrip(void)
{
	static const struct arch_topology ts[] = {
	    {1, 1, 1},	{2, 2, 2}, {3, 1, 1}, {1, 3, 1}, {2, 3, 2},
	    {1, 16, 2}, {4, 2, 1}, {4, 8, 2}, {2, 5, 3}, {64, 1, 1},
	};

	for (size_t c = 0; c < sizeof(ts) / sizeof(ts[0]); c++) {
		const struct arch_topology *t = &ts[c];

		for (uint32_t i = 0; i < arch_topo_vcpus(t); i++) {
			uint32_t id = arch_topo_apic_id(t, i), pkg, core, thr;

			arch_topo_decompose(t, id, &pkg, &core, &thr);
			CHECK_EQ_U64(thr, i % t->threads);
			CHECK_EQ_U64(core, (i / t->threads) % t->cores);
			CHECK_EQ_U64(pkg, i / (t->threads * t->cores));
			/* IDs strictly increase with the index (thread fastest). */
			if (i)
				CHECK(id > arch_topo_apic_id(t, i - 1));
		}
	}
}

static void test_large(void)
{
	/* 4 sockets x 8 cores x 2 threads: 1 + 3 bits, last ID = 3<<4 | 7<<1 | 1. */
	struct arch_topology t = {4, 8, 2};

	CHECK_EQ_U64(arch_topo_apic_id(&t, 63), 0x3f);
	/* 3 sockets x 100 cores: 7 core bits; socket 2 core 99 = 2<<7 | 99. */
	t = (struct arch_topology){3, 100, 1};
	CHECK_EQ_U64(arch_topo_apic_id(&t, 299), (2u << 7) | 99);
}

int main(void)
{
	TEST_RUN(test_widths_and_ids);
	TEST_RUN(test_decompose_roundtrip);
	TEST_RUN(test_large);
	return test_summary();
}
