/* SPDX-License-Identifier: MIT */
/*
 * cpu_state.c - boot page tables, the boot GDT and the initial register
 * state for the two entry conventions vmlet supports:
 *  - Linux 64-bit boot protocol (Documentation/arch/x86/boot.rst, "64-bit
 *    BOOT PROTOCOL"): long mode, paging on with an identity map, a GDT with
 *    flat __BOOT_CS (0x10, execute/read) and __BOOT_DS (0x18, read/write),
 *    CS = __BOOT_CS, DS/ES/SS = __BOOT_DS, interrupts off, %rsi = zero page;
 *  - Xen PVH (xen docs/misc/pvh.pandoc): 32-bit protected mode, paging off,
 *    CR0.PE set and the other writable bits clear, CR4 = 0, flat 32-bit
 *    code and data segments, EFLAGS.IF/TF/VM clear, %ebx = start_info.
 * Descriptor formats: Intel SDM Vol 3A §3.4.5 (segment descriptors),
 * §7.2.3 (64-bit TSS descriptor), §4.5 (4-level paging, 2 MiB PDEs).
 */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/util.h"

#define PTE_P  (1ull << 0)
#define PTE_RW (1ull << 1)
#define PTE_PS (1ull << 7)

#define CR0_PE	 (1ull << 0)
#define CR0_ET	 (1ull << 4)
#define CR0_NE	 (1ull << 5)
#define CR0_PG	 (1ull << 31)
#define CR4_PAE	 (1ull << 5)
#define EFER_LME (1ull << 8)
#define EFER_LMA (1ull << 10)

#define TSS_LIMIT 0x67 /* minimal 104-byte TSS, never used before the guest reloads TR */

int arch_pgtable_build(uint8_t *low_mem, uint64_t low_size)
{
	uint8_t *pml4 = arch_low_ptr(low_mem, low_size, ARCH_PML4_GPA, 0x1000);
	uint8_t *pdpt = arch_low_ptr(low_mem, low_size, ARCH_PDPT_GPA, 0x1000);
	uint8_t *pd = arch_low_ptr(low_mem, low_size, ARCH_PD_GPA, 4 * 0x1000);
	uint64_t i;

	if (!pml4 || !pdpt || !pd)
		return -ENOSPC;
	memset(pml4, 0, 0x1000);
	memset(pdpt, 0, 0x1000);
	arch_put_le64(pml4, ARCH_PDPT_GPA | PTE_P | PTE_RW);
	for (i = 0; i < 4; i++)
		arch_put_le64(pdpt + 8 * i, (ARCH_PD_GPA + 0x1000 * i) | PTE_P | PTE_RW);
	/* 2048 PDEs of 2 MiB pages cover 0 .. 4 GiB. */
	for (i = 0; i < 4 * 512; i++)
		arch_put_le64(pd + 8 * i, (i << 21) | PTE_P | PTE_RW | PTE_PS);
	return 0;
}

/* An 8-byte code/data or system descriptor with a 20-bit limit. */
static uint64_t gdt_entry(uint32_t base, uint32_t limit, uint16_t flags)
{
	return ((uint64_t)(base & 0xff000000u) << 32) | ((uint64_t)(flags & 0xf0ff) << 40) |
	       ((uint64_t)(limit & 0xf0000u) << 32) | ((uint64_t)(base & 0x00ffffffu) << 16) |
	       (limit & 0xffffu);
}

/* flags = G D/B L AVL in bits 15..12, P DPL S TYPE in bits 7..0. */
#define GDT_CODE32 0xc09b /* G, D, P, S, execute/read accessed */
#define GDT_CODE64 0xa09b /* G, L, P, S, execute/read accessed */
#define GDT_DATA   0xc093 /* G, B, P, S, read/write accessed */
#define GDT_TSS	   0x008b /* P, busy TSS */

int arch_gdt_build(uint8_t *low_mem, uint64_t low_size)
{
	uint8_t *g = arch_low_ptr(low_mem, low_size, ARCH_GDT_GPA, ARCH_GDT_SIZE);

	if (!g)
		return -ENOSPC;
	memset(g, 0, ARCH_GDT_SIZE);
	arch_put_le64(g + ARCH_GDT_SEL_CODE32, gdt_entry(0, 0xfffff, GDT_CODE32));
	arch_put_le64(g + ARCH_GDT_SEL_CODE64, gdt_entry(0, 0xfffff, GDT_CODE64));
	arch_put_le64(g + ARCH_GDT_SEL_DATA, gdt_entry(0, 0xfffff, GDT_DATA));
	/* Upper half of the 16-byte TSS descriptor (base[63:32]) stays zero. */
	arch_put_le64(g + ARCH_GDT_SEL_TSS, gdt_entry(0, TSS_LIMIT, GDT_TSS));
	return 0;
}

static void seg_flat(struct kvm_segment *s, uint16_t sel, uint8_t type, int l, int db)
{
	memset(s, 0, sizeof(*s));
	s->base = 0;
	s->limit = 0xffffffff;
	s->selector = sel;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->l = (uint8_t)l;
	s->db = (uint8_t)db;
	s->g = 1;
}

static void sregs_common(struct kvm_sregs *sregs, uint16_t cs_sel, int cs_l)
{
	seg_flat(&sregs->cs, cs_sel, 0xb, cs_l, !cs_l);
	seg_flat(&sregs->ds, ARCH_GDT_SEL_DATA, 0x3, 0, 1);
	sregs->es = sregs->ds;
	sregs->fs = sregs->ds;
	sregs->gs = sregs->ds;
	sregs->ss = sregs->ds;

	memset(&sregs->tr, 0, sizeof(sregs->tr));
	sregs->tr.selector = ARCH_GDT_SEL_TSS;
	sregs->tr.limit = TSS_LIMIT;
	sregs->tr.type = 0xb; /* busy TSS (32-bit, or 64-bit in long mode) */
	sregs->tr.present = 1;

	memset(&sregs->ldt, 0, sizeof(sregs->ldt));
	sregs->ldt.type = 0x2;
	sregs->ldt.unusable = 1;

	memset(&sregs->gdt, 0, sizeof(sregs->gdt));
	sregs->gdt.base = ARCH_GDT_GPA;
	sregs->gdt.limit = ARCH_GDT_SIZE - 1;
	memset(&sregs->idt, 0, sizeof(sregs->idt));
	sregs->cr2 = 0;
}

void arch_regs_linux64(uint64_t entry, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	memset(regs, 0, sizeof(*regs));
	regs->rip = entry;
	regs->rsi = ARCH_ZERO_PAGE_GPA;
	regs->rsp = ARCH_BOOT_STACK_GPA;
	regs->rflags = 0x2; /* reserved bit 1; IF clear */

	sregs_common(sregs, ARCH_GDT_SEL_CODE64, 1);
	sregs->cr0 = CR0_PE | CR0_ET | CR0_NE | CR0_PG;
	sregs->cr3 = ARCH_PML4_GPA;
	sregs->cr4 = CR4_PAE;
	sregs->efer = EFER_LME | EFER_LMA;
}

void arch_regs_pvh32(uint32_t entry, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	memset(regs, 0, sizeof(*regs));
	regs->rip = entry;
	regs->rbx = ARCH_START_INFO_GPA;
	regs->rsp = ARCH_BOOT_STACK_GPA;
	regs->rflags = 0x2;

	sregs_common(sregs, ARCH_GDT_SEL_CODE32, 0);
	sregs->cr0 = CR0_PE | CR0_ET; /* ET is hard-wired to 1 */
	sregs->cr3 = 0;
	sregs->cr4 = 0;
	sregs->efer = 0;
}

/* A real-mode segment as the reset state has it (SDM Vol 3A §9.1.1). */
static void seg_real(struct kvm_segment *s, uint16_t sel, uint8_t type)
{
	memset(s, 0, sizeof(*s));
	s->selector = sel;
	s->base = (uint64_t)sel << 4;
	s->limit = 0xffff;
	s->type = type;
	s->present = 1;
	s->s = 1;
}

void arch_regs_bios(struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	memset(regs, 0, sizeof(*regs));
	regs->rip = 0xfff0;
	regs->rflags = 0x2;

	seg_real(&sregs->cs, 0xf000, 0xb);
	seg_real(&sregs->ds, 0, 0x3);
	sregs->es = sregs->ds;
	sregs->fs = sregs->ds;
	sregs->gs = sregs->ds;
	sregs->ss = sregs->ds;
	memset(&sregs->tr, 0, sizeof(sregs->tr));
	sregs->tr.limit = 0xffff;
	sregs->tr.type = 0xb;
	sregs->tr.present = 1;
	memset(&sregs->ldt, 0, sizeof(sregs->ldt));
	sregs->ldt.limit = 0xffff;
	sregs->ldt.type = 0x2;
	sregs->ldt.present = 1;
	memset(&sregs->gdt, 0, sizeof(sregs->gdt));
	sregs->gdt.limit = 0xffff;
	memset(&sregs->idt, 0, sizeof(sregs->idt));
	sregs->idt.limit = 0xffff;
	sregs->cr0 = 0x60000010; /* CD, NW, ET: the reset value */
	sregs->cr2 = 0;
	sregs->cr3 = 0;
	sregs->cr4 = 0;
	sregs->efer = 0;
}

void arch_regs_reset(struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	arch_regs_bios(regs, sregs);
	sregs->cs.base = 0xffff0000;
}

bool arch_regs_is_reset(const struct kvm_regs *regs, const struct kvm_sregs *sregs)
{
	return regs->rip == 0xfff0 && regs->rsp == 0 && sregs->cs.selector == 0xf000 &&
	       !(sregs->cr0 & 1) && !sregs->cr3 && !sregs->efer;
}
