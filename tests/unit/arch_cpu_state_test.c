/* SPDX-License-Identifier: MIT */
/* Page tables, GDT and entry registers (arch/x86_64/cpu_state.c). */
#include <errno.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "tests/lib/bytes.h"
#include "tests/lib/test.h"

/* Walk the 4-level tables like the MMU does (Intel SDM Vol 3A §4.5). */
static int translate(const uint8_t *mem, uint64_t cr3, uint64_t va, uint64_t *pa)
{
	uint64_t e = rd64(mem + cr3 + 8 * ((va >> 39) & 511));

	if (!(e & 1))
		return -1;
	e = rd64(mem + (e & 0xffffffffff000ull) + 8 * ((va >> 30) & 511));
	if (!(e & 1) || (e & 0x80))
		return -1;
	e = rd64(mem + (e & 0xffffffffff000ull) + 8 * ((va >> 21) & 511));
	if (!(e & 1) || !(e & 0x80) || !(e & 2))
		return -1;
	*pa = (e & 0xfffffffe00000ull) | (va & 0x1fffff);
	return 0;
}

static void test_pgtable(void)
{
	uint64_t size = 1 << 20, pa;
	uint8_t *mem = calloc(1, size);
	static const uint64_t vas[] = {0,	   0x1234,     0x100000,  0x7fffffff,
				       0xc0000000, 0xfee00000, 0xffffffff};

	CHECK_EQ_U64(arch_pgtable_build(mem, size), 0);
	for (size_t i = 0; i < sizeof(vas) / sizeof(vas[0]); i++) {
		CHECK_EQ_U64(translate(mem, ARCH_PML4_GPA, vas[i], &pa), 0);
		CHECK_EQ_U64(pa, vas[i]);
	}
	CHECK(translate(mem, ARCH_PML4_GPA, 0x100000000ull, &pa) < 0);
	CHECK_EQ_U64(arch_pgtable_build(mem, ARCH_PD_GPA + 0x3000), (uint64_t)-ENOSPC);
	free(mem);
}

static void test_gdt(void)
{
	uint8_t mem[0x1000] = {0};
	const uint8_t *g = mem + ARCH_GDT_GPA;

	CHECK_EQ_U64(arch_gdt_build(mem, sizeof(mem)), 0);
	CHECK_EQ_U64(rd64(g), 0);
	/* Flat descriptors as the SDM encodes them (base 0, limit 0xfffff, G). */
	CHECK_EQ_U64(rd64(g + ARCH_GDT_SEL_CODE32), 0x00cf9b000000ffffull);
	CHECK_EQ_U64(rd64(g + ARCH_GDT_SEL_CODE64), 0x00af9b000000ffffull);
	CHECK_EQ_U64(rd64(g + ARCH_GDT_SEL_DATA), 0x00cf93000000ffffull);
	CHECK_EQ_U64(rd64(g + ARCH_GDT_SEL_TSS), 0x00008b0000000067ull);
	CHECK_EQ_U64(rd64(g + ARCH_GDT_SEL_TSS + 8), 0);
	/* Linux boot.rst: __BOOT_CS = 0x10, __BOOT_DS = 0x18. */
	CHECK_EQ_U64(ARCH_GDT_SEL_CODE64, 0x10);
	CHECK_EQ_U64(ARCH_GDT_SEL_DATA, 0x18);
	CHECK_EQ_U64(arch_gdt_build(mem, ARCH_GDT_GPA + 8), (uint64_t)-ENOSPC);
}

static void test_regs(void)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	memset(&s, 0, sizeof(s));
	s.apic_base = 0xfee00900;
	arch_regs_linux64(0x1000200, &r, &s);
	CHECK_EQ_U64(r.rip, 0x1000200);
	CHECK_EQ_U64(r.rsi, ARCH_ZERO_PAGE_GPA);
	CHECK_EQ_U64(r.rflags & (1 << 9), 0); /* IF clear */
	CHECK_EQ_U64(s.cs.selector, 0x10);
	CHECK(s.cs.l && !s.cs.db && s.cs.present && s.cs.s);
	CHECK_EQ_U64(s.ds.selector, 0x18);
	CHECK_EQ_U64(s.ss.selector, 0x18);
	CHECK_EQ_U64(s.cr0 & 0x80000001u, 0x80000001u);
	CHECK_EQ_U64(s.cr3, ARCH_PML4_GPA);
	CHECK_EQ_U64(s.cr4 & 0x20, 0x20);
	CHECK_EQ_U64(s.efer & 0x500, 0x500);
	CHECK_EQ_U64(s.gdt.base, ARCH_GDT_GPA);
	CHECK_EQ_U64(s.gdt.limit, ARCH_GDT_SIZE - 1);
	CHECK_EQ_U64(s.apic_base, 0xfee00900); /* kept */

	arch_regs_pvh32(0x100040, &r, &s);
	CHECK_EQ_U64(r.rip, 0x100040);
	CHECK_EQ_U64(r.rbx, ARCH_START_INFO_GPA);
	CHECK_EQ_U64(s.cs.selector, ARCH_GDT_SEL_CODE32);
	CHECK(!s.cs.l && s.cs.db);
	CHECK_EQ_U64(s.cr0 & 0x80000001u, 1); /* PE on, PG off */
	CHECK_EQ_U64(s.cr4, 0);
	CHECK_EQ_U64(s.efer, 0);
	CHECK_EQ_U64(s.tr.selector, ARCH_GDT_SEL_TSS);
}

/* The reset state (what KVM on AMD leaves after a triple fault) is told
 * from a guest's own state, real mode included. */
static void test_regs_is_reset(void)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	memset(&s, 0, sizeof(s));
	arch_regs_bios(&r, &s);
	CHECK(arch_regs_is_reset(&r, &s));
	s.cr0 = 0x10; /* as KVM_GET_SREGS showed it after an L2 triple fault */
	CHECK(arch_regs_is_reset(&r, &s));
	r.rip = 0xfff1; /* SeaBIOS one instruction on */
	CHECK(!arch_regs_is_reset(&r, &s));
	arch_regs_bios(&r, &s);
	r.rsp = 0x7000;
	CHECK(!arch_regs_is_reset(&r, &s));
	arch_regs_bios(&r, &s);
	s.cs.selector = 0;
	CHECK(!arch_regs_is_reset(&r, &s));
	arch_regs_linux64(0xfff0, &r, &s); /* long mode at the same offset */
	CHECK(!arch_regs_is_reset(&r, &s));
	arch_regs_pvh32(0xfff0, &r, &s);
	CHECK(!arch_regs_is_reset(&r, &s));
}

int main(void)
{
	TEST_RUN(test_pgtable);
	TEST_RUN(test_gdt);
	TEST_RUN(test_regs);
	TEST_RUN(test_regs_is_reset);
	return test_summary();
}
