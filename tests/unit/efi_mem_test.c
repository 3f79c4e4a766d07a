// SPDX-License-Identifier: MIT
/*
 * efi_mem_test - the firmware's UEFI memory map and allocators
 * (firmware/efi/mem.c) on the host: a page-by-page model checks the map
 * after thousands of random AllocatePages/FreePages calls; pools live in a
 * real malloc'd arena and must never overlap.
 */
#include <stdlib.h>

#include "tests/lib/test.h"

#include "firmware/efi/mem.c"

#define NPG 512
static uint8_t model[NPG]; /* type per page of [0, NPG pages); 0xff = hole */

static void check_invariants(const struct efi_mem *m)
{
	for (unsigned int i = 0; i < m->n; i++) {
		CHECK(m->d[i].n_pages > 0);
		CHECK((m->d[i].phys_start & 4095) == 0);
		if (i) {
			CHECK(md_end(&m->d[i - 1]) <= m->d[i].phys_start);
			CHECK(!(md_end(&m->d[i - 1]) == m->d[i].phys_start &&
				m->d[i - 1].type == m->d[i].type));
		}
		CHECK_EQ_U64(m->d[i].attribute, type_attr(m->d[i].type));
	}
}

static bool map_matches_model(const struct efi_mem *m)
{
	for (uint64_t p = 0; p < NPG; p++) {
		uint32_t t = mem_type_at(m, p * 4096);

		if ((model[p] == 0xff && t != EfiMaxMemoryType) ||
		    (model[p] != 0xff && t != model[p])) {
			printf("  page %llu: map %u model %u\n", (unsigned long long)p, t,
			       model[p]);
			return false;
		}
	}
	return true;
}

static void model_set(uint64_t a, uint64_t pages, uint8_t t)
{
	for (uint64_t p = a / 4096; p < a / 4096 + pages; p++)
		model[p] = t;
}

static void test_map_basic(void)
{
	static struct efi_mem m;
	uint64_t a, size = 0, key1 = 0, key2 = 0, dsz = 0;
	uint32_t ver;
	struct efi_memory_descriptor buf[MEM_MAX_DESC];

	mem_init(&m, NPG * 4096);
	CHECK(mem_set(&m, 0, 0x9fc00, EfiConventionalMemory) == EFI_SUCCESS);
	CHECK(mem_set(&m, 0x9fc00, 0x60400, EfiReservedMemoryType) == EFI_SUCCESS);
	CHECK(mem_set(&m, 0x100000, 0x100000, EfiConventionalMemory) == EFI_SUCCESS);
	CHECK(mem_set(&m, 0x100000, 0x12345, EfiBootServicesCode) == EFI_SUCCESS);
	CHECK(mem_set(&m, 0xe0000, 0x1000, EfiACPIReclaimMemory) == EFI_SUCCESS);
	check_invariants(&m);
	CHECK_EQ_U64(m.n, 6);
	CHECK_EQ_U64(m.d[0].n_pages, 0x9f); /* 0x9fc00 rounded down */
	CHECK_EQ_U64(m.d[1].phys_start, 0x9f000);
	CHECK_EQ_U64(m.d[2].phys_start, 0xe0000);
	CHECK_EQ_U64(m.d[4].phys_start, 0x100000);
	CHECK_EQ_U64(m.d[4].n_pages, 0x13);
	CHECK_EQ_U64(m.d[4].type, EfiBootServicesCode);

	CHECK(mem_get_map(&m, &size, NULL, &key1, &dsz, &ver) == EFI_BUFFER_TOO_SMALL);
	CHECK(size >= 6 * sizeof(buf[0]) && dsz == sizeof(buf[0]) && ver == 1);
	CHECK(mem_get_map(&m, &size, buf, &key1, &dsz, &ver) == EFI_SUCCESS);
	CHECK_EQ_U64(size, 6 * sizeof(buf[0]));
	CHECK(!memcmp(buf, m.d, size));

	/* top-down below the limit */
	CHECK(mem_allocate_pages(&m, AllocateAnyPages, EfiLoaderData, 3, &a) == EFI_SUCCESS);
	CHECK_EQ_U64(a, 0x200000 - 3 * 4096);
	size = sizeof(buf);
	CHECK(mem_get_map(&m, &size, buf, &key2, NULL, NULL) == EFI_SUCCESS);
	CHECK(key2 != key1);
	a = 0x150000;
	CHECK(mem_allocate_pages(&m, AllocateMaxAddress, EfiLoaderCode, 1, &a) == EFI_SUCCESS);
	CHECK_EQ_U64(a, 0x14f000);
	a = 0x110000; /* firmware code: taken */
	CHECK(mem_allocate_pages(&m, AllocateAddress, EfiLoaderData, 1, &a) == EFI_NOT_FOUND);
	a = 0xa0000; /* reserved */
	CHECK(mem_allocate_pages(&m, AllocateAddress, EfiLoaderData, 1, &a) == EFI_NOT_FOUND);
	a = 0x1000;
	CHECK(mem_allocate_pages(&m, AllocateAddress, EfiLoaderData, 2, &a) == EFI_SUCCESS);
	a = 0x1800;
	CHECK(mem_allocate_pages(&m, AllocateAddress, EfiLoaderData, 2, &a) ==
	      EFI_INVALID_PARAMETER);
	CHECK(mem_allocate_pages(&m, AllocateAnyPages, EfiConventionalMemory, 1, &a) ==
	      EFI_INVALID_PARAMETER);
	CHECK(mem_allocate_pages(&m, AllocateAnyPages, EfiLoaderData, 0x100000, &a) ==
	      EFI_OUT_OF_RESOURCES);
	/* freeing what is not allocated */
	CHECK(mem_free_pages(&m, 0x9f000, 1) == EFI_NOT_FOUND);
	CHECK(mem_free_pages(&m, 0x30000, 1) == EFI_NOT_FOUND);
	CHECK(mem_free_pages(&m, 0x1000, 3) == EFI_NOT_FOUND); /* third page is free */
	CHECK(mem_free_pages(&m, 0x1000, 2) == EFI_SUCCESS);
	CHECK(mem_free_pages(&m, 0x14f000, 1) == EFI_SUCCESS);
	CHECK(mem_free_pages(&m, 0x200000 - 3 * 4096, 3) == EFI_SUCCESS);
	check_invariants(&m);
	CHECK_EQ_U64(m.n, 6);	     /* merged back to the start */
	CHECK(!memcmp(buf, m.d, 0)); /* (buf is the later map) */
	CHECK_EQ_U64(m.d[5].phys_start, 0x113000);
	CHECK_EQ_U64(m.d[5].n_pages, 0xed);
}

static unsigned int rnd(void)
{
	static unsigned int s = 4242;

	s = s * 1103515245u + 12345u;
	return s >> 8;
}

static void test_map_random(void)
{
	static struct efi_mem m;
	static const uint32_t types[] = {EfiLoaderCode, EfiLoaderData, EfiBootServicesData,
					 EfiRuntimeServicesData, EfiACPIReclaimMemory};
	unsigned int ok_alloc = 0, ok_free = 0;

	mem_init(&m, NPG * 4096);
	memset(model, 0xff, sizeof(model));
	mem_set(&m, 0x1000, 0x80000, EfiConventionalMemory);
	model_set(0x1000, 0x80, EfiConventionalMemory);
	mem_set(&m, 0x100000, 0x100000, EfiConventionalMemory);
	model_set(0x100000, 0x100, EfiConventionalMemory);
	for (int it = 0; it < 4000; it++) {
		uint32_t t = types[rnd() % 5];
		uint64_t pages = 1 + rnd() % 24, a = (uint64_t)(rnd() % NPG) * 4096;
		unsigned int op = rnd() % 4;
		efi_status st;

		if (op == 0 || op == 1) {
			uint32_t how = op == 0 ? AllocateAnyPages : AllocateAddress;

			st = mem_allocate_pages(&m, how, t, pages, &a);
			if (st == EFI_SUCCESS) {
				for (uint64_t p = a / 4096; p < a / 4096 + pages; p++)
					CHECK(model[p] == EfiConventionalMemory);
				model_set(a, pages, (uint8_t)t);
				ok_alloc++;
			}
		} else if (op == 2) {
			a = 0x1000 + (uint64_t)(rnd() % 0x80) * 4096;
			st = mem_allocate_pages(&m, AllocateMaxAddress, t, pages, &a);
			if (st == EFI_SUCCESS) {
				CHECK(a + pages * 4096 <= 0x81000 + 4096);
				model_set(a, pages, (uint8_t)t);
			}
		} else {
			bool allocated = a / 4096 + pages <= NPG;

			for (uint64_t p = a / 4096; allocated && p < a / 4096 + pages; p++)
				allocated = model[p] != 0xff && model[p] != EfiConventionalMemory;
			st = mem_free_pages(&m, a, pages);
			if (allocated ? st != EFI_SUCCESS : st != EFI_NOT_FOUND) {
				printf("  free %llx+%llu: %llx\n", (unsigned long long)a,
				       (unsigned long long)pages, (unsigned long long)st);
				CHECK(!"FreePages disagrees with the model");
				break;
			}
			if (st == EFI_SUCCESS) {
				model_set(a, pages, EfiConventionalMemory);
				ok_free++;
			}
		}
		if (!map_matches_model(&m)) {
			CHECK(!"map differs from the model");
			break;
		}
	}
	check_invariants(&m);
	printf("  %u allocations, %u frees\n", ok_alloc, ok_free);
	CHECK(ok_alloc > 200);
	CHECK(ok_free > 100);
}

static void test_pool(void)
{
	static struct efi_mem m;
	size_t arena_len = 4u << 20;
	uint8_t *arena = aligned_alloc(4096, arena_len);
	void *ptr[600] = {0};
	size_t sz[600] = {0};

	mem_init(&m, UINT64_MAX);
	CHECK(mem_set(&m, (uintptr_t)arena, arena_len, EfiConventionalMemory) == EFI_SUCCESS);
	for (int it = 0; it < 6000; it++) {
		int i = (int)(rnd() % 600);

		if (ptr[i]) {
			/* still intact? */
			for (size_t k = 0; k < sz[i]; k++)
				if (((uint8_t *)ptr[i])[k] != (uint8_t)(i + k)) {
					CHECK(!"pool block overwritten");
					it = 6000;
					break;
				}
			CHECK(mem_pool_free(&m, ptr[i]) == EFI_SUCCESS);
			ptr[i] = NULL;
			continue;
		}
		sz[i] = rnd() % 8 == 0 ? rnd() % 40000 : rnd() % 300;
		uint32_t type = (i & 1) ? EfiLoaderData : EfiBootServicesData;

		CHECK(mem_pool_alloc(&m, type, sz[i], &ptr[i]) == EFI_SUCCESS);
		if (!ptr[i])
			break;
		CHECK(((uintptr_t)ptr[i] & 7) == 0);
		CHECK((uint8_t *)ptr[i] >= arena && (uint8_t *)ptr[i] + sz[i] <= arena + arena_len);
		CHECK_EQ_U64(mem_type_at(&m, (uintptr_t)ptr[i]), type);
		for (size_t k = 0; k < sz[i]; k++)
			((uint8_t *)ptr[i])[k] = (uint8_t)(i + k);
	}
	for (int i = 0; i < 600; i++)
		if (ptr[i])
			CHECK(mem_pool_free(&m, ptr[i]) == EFI_SUCCESS);
	/* a pointer that is not from the pool */
	uint64_t junk[8] = {0};

	CHECK(mem_pool_free(&m, &junk[4]) == EFI_INVALID_PARAMETER);
	check_invariants(&m);
	free(arena);
}

int main(void)
{
	TEST_RUN(test_map_basic);
	TEST_RUN(test_map_random);
	TEST_RUN(test_pool);
	return test_summary();
}
