/* SPDX-License-Identifier: MIT */
/* RAM regions and the e820 map (arch/x86_64/memmap.c). */
#include <errno.h>

#include "arch/arch.h"
#include "tests/lib/test.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static uint64_t ram_total(const struct arch_e820_entry *e, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (e[i].type == ARCH_E820_RAM)
			sum += e[i].size;
	return sum;
}

static void test_regions(void)
{
	struct arch_ram_region r[2];
	size_t n;

	CHECK_EQ_U64(arch_ram_regions(64 * MiB, r, &n), 0);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(r[0].gpa, 0);
	CHECK_EQ_U64(r[0].size, 64 * MiB);

	CHECK_EQ_U64(arch_ram_regions(3 * GiB, r, &n), 0);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(r[0].size, 3 * GiB);

	/* 5 GiB: 3 GiB below the hole, 2 GiB from 4 GiB. */
	CHECK_EQ_U64(arch_ram_regions(5 * GiB, r, &n), 0);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(r[0].size, 0xc0000000ull);
	CHECK_EQ_U64(r[1].gpa, 0x100000000ull);
	CHECK_EQ_U64(r[1].size, 2 * GiB);

	/* Rounded down to 4 KiB; too small is rejected. */
	CHECK_EQ_U64(arch_ram_regions(100000000, r, &n), 0);
	CHECK_EQ_U64(r[0].size, 100000000ull & ~0xfffull);
	CHECK_EQ_U64(arch_ram_regions(1 * MiB, r, &n), (uint64_t)-EINVAL);
	CHECK_EQ_U64(arch_ram_regions(0, r, &n), (uint64_t)-EINVAL);
}

static void check_sorted(const struct arch_e820_entry *e, size_t n)
{
	for (size_t i = 1; i < n; i++)
		CHECK(e[i].addr >= e[i - 1].addr + e[i - 1].size);
	for (size_t i = 0; i < n; i++)
		CHECK(e[i].size > 0);
}

static void test_e820_small(void)
{
	struct arch_e820_entry e[ARCH_E820_MAX];
	size_t n;

	CHECK_EQ_U64(arch_e820_build(64 * MiB, e, ARCH_E820_MAX, &n), 0);
	CHECK_EQ_U64(n, 6);
	check_sorted(e, n);
	CHECK_EQ_U64(e[0].addr, 0);
	CHECK_EQ_U64(e[0].size, 0x9fc00);
	CHECK_EQ_U64(e[0].type, ARCH_E820_RAM);
	/* EBDA .. 1 MiB reserved: covers the ACPI tables at 0xe0000 too. */
	CHECK_EQ_U64(e[1].addr, 0x9fc00);
	CHECK_EQ_U64(e[1].addr + e[1].size, 0x100000);
	CHECK_EQ_U64(e[1].type, ARCH_E820_RESERVED);
	CHECK(e[1].addr <= ARCH_ACPI_GPA && ARCH_ACPI_GPA + ARCH_ACPI_MAX <= 0x100000);
	CHECK_EQ_U64(e[2].addr, 0x100000);
	CHECK_EQ_U64(e[2].addr + e[2].size, 64 * MiB);
	CHECK_EQ_U64(e[2].type, ARCH_E820_RAM);
	CHECK_EQ_U64(e[3].addr, ARCH_PCI_ECAM_GPA);
	CHECK_EQ_U64(e[3].type, ARCH_E820_RESERVED);
	CHECK_EQ_U64(e[4].addr, ARCH_IOAPIC_GPA);
	CHECK_EQ_U64(e[5].addr, ARCH_LAPIC_GPA);
	CHECK_EQ_U64(ram_total(e, n), 64 * MiB - (0x100000 - 0x9fc00));
}

static void test_e820_high(void)
{
	struct arch_e820_entry e[ARCH_E820_MAX];
	size_t n;

	CHECK_EQ_U64(arch_e820_build(6 * GiB, e, ARCH_E820_MAX, &n), 0);
	CHECK_EQ_U64(n, 7);
	check_sorted(e, n);
	CHECK_EQ_U64(e[2].addr + e[2].size, 0xc0000000ull);
	CHECK_EQ_U64(e[6].addr, 0x100000000ull);
	CHECK_EQ_U64(e[6].size, 3 * GiB);
	CHECK_EQ_U64(e[6].type, ARCH_E820_RAM);
	CHECK_EQ_U64(ram_total(e, n), 6 * GiB - (0x100000 - 0x9fc00));
	/* Nothing but reserved entries inside the MMIO hole. */
	for (size_t i = 0; i < n; i++)
		if (e[i].addr >= 0xc0000000ull && e[i].addr < 0x100000000ull)
			CHECK_EQ_U64(e[i].type, ARCH_E820_RESERVED);
}

static void test_e820_cap(void)
{
	struct arch_e820_entry e[4];
	size_t n = 99;

	CHECK_EQ_U64(arch_e820_build(64 * MiB, e, 4, &n), (uint64_t)-ENOSPC);
	CHECK_EQ_U64(n, 99);
}

/* What a BIOS starts from (fw_cfg etc/e820): all RAM, the ECAM and KVM's
 * pages reserved; the BIOS reserves its own areas below 1 MiB. */
static void test_e820_firmware(void)
{
	struct arch_e820_entry e[ARCH_E820_MAX];
	size_t n;

	CHECK_EQ_U64(arch_e820_firmware(6 * GiB, e, ARCH_E820_MAX, &n), 0);
	CHECK_EQ_U64(n, 4);
	check_sorted(e, n);
	CHECK(e[0].addr == 0 && e[0].size == 0xc0000000ull && e[0].type == ARCH_E820_RAM);
	CHECK(e[1].addr == ARCH_PCI_ECAM_GPA && e[1].type == ARCH_E820_RESERVED);
	CHECK(e[2].addr == ARCH_IDENTITY_MAP_GPA && e[2].addr + e[2].size == ARCH_TSS_GPA + 0x3000);
	CHECK(e[3].addr == 0x100000000ull && e[3].size == 3 * GiB);
	CHECK_EQ_U64(ram_total(e, n), 6 * GiB);
	CHECK_EQ_U64(arch_e820_firmware(64 * MiB, e, ARCH_E820_MAX, &n), 0);
	CHECK(n == 3 && e[0].size == 64 * MiB);
	CHECK_EQ_U64(arch_e820_firmware(64 * MiB, e, 2, &n), (uint64_t)-ENOSPC);
}

/* The q35 (OVMF) layout: low RAM below the ECAM window OVMF programs. */
static void test_q35_regions(void)
{
	struct arch_ram_region r[2];
	size_t n;

	CHECK_EQ_U64(arch_q35_low_max(1 * GiB), 0xb0000000ull);
	CHECK_EQ_U64(arch_ram_regions_below(1 * GiB, arch_q35_low_max(1 * GiB), r, &n), 0);
	CHECK(n == 1 && r[0].size == 1 * GiB);
	CHECK_EQ_U64(arch_ram_regions_below(0xb0000000ull, arch_q35_low_max(0xb0000000ull), r, &n),
		     0);
	CHECK(n == 1 && r[0].size == 0xb0000000ull);
	/* 3 GiB does not fit below 0xb0000000: 2 GiB low, 1 GiB high (QEMU's split) */
	CHECK_EQ_U64(arch_ram_regions_below(3 * GiB, arch_q35_low_max(3 * GiB), r, &n), 0);
	CHECK(n == 2 && r[0].size == 2 * GiB && r[1].gpa == 4 * GiB && r[1].size == 1 * GiB);
	CHECK_EQ_U64(arch_ram_regions_below(3 * GiB, 0xd0000000ull, r, &n), (uint64_t)-EINVAL);
	CHECK_EQ_U64(arch_ram_regions_below(3 * GiB, 0x80000001ull, r, &n), (uint64_t)-EINVAL);
}

static void test_cmos_memory(void)
{
	uint8_t c[128] = {0};

	arch_cmos_memory(1 * GiB, 0, c);
	CHECK_EQ_U64(c[0x15] | c[0x16] << 8, 640);
	CHECK_EQ_U64(c[0x17] | c[0x18] << 8, 0xffff); /* saturated */
	CHECK_EQ_U64(c[0x34] | c[0x35] << 8, (1 * GiB - 16 * MiB) >> 16);
	CHECK_EQ_U64(c[0x5b] | c[0x5c] << 8 | c[0x5d] << 16, 0);
	arch_cmos_memory(2 * GiB, 3 * GiB, c);
	CHECK_EQ_U64(c[0x34] | c[0x35] << 8, (2 * GiB - 16 * MiB) >> 16);
	CHECK_EQ_U64(c[0x5b] | c[0x5c] << 8 | c[0x5d] << 16, (3 * GiB) >> 16);
	arch_cmos_memory(8 * MiB, 0, c);
	CHECK_EQ_U64(c[0x30] | c[0x31] << 8, 7 * 1024);
	CHECK_EQ_U64(c[0x34] | c[0x35] << 8, 0);
}

int main(void)
{
	TEST_RUN(test_q35_regions);
	TEST_RUN(test_cmos_memory);
	TEST_RUN(test_e820_firmware);
	TEST_RUN(test_regions);
	TEST_RUN(test_e820_small);
	TEST_RUN(test_e820_high);
	TEST_RUN(test_e820_cap);
	return test_summary();
}
