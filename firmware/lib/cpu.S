/* SPDX-License-Identifier: MIT */
/*
 * cpu.S - static long-mode data and trap entry. The GDT and the identity
 * map are plain initialized data so a 32-bit entry can use them before any
 * code runs (building 2048 page-directory entries in a loop would cost
 * milliseconds of emulated CPL0 time on our hosts).
 */
#include "firmware/lib/cpu.h"

	.section .data.fw_gdt, "aw"
	.balign 16
	.globl fw_gdt, fw_gdt_end, fw_gdt_ptr
fw_gdt:
	.quad 0                      /* null */
	.quad 0x00af9a000000ffff     /* 0x08 code64, DPL0 */
	.quad 0x00cf92000000ffff     /* 0x10 data, DPL0 */
	.quad 0x00cf9a000000ffff     /* 0x18 code32, DPL0 (AP trampoline) */
	.quad 0x00cff2000000ffff     /* 0x20 data, DPL3 */
	.quad 0x00affa000000ffff     /* 0x28 code64, DPL3 */
	.quad 0, 0                   /* 0x30 TSS, filled by fw_cpl_init */
fw_gdt_end:
	.if (fw_gdt_end - fw_gdt) - FW_GDT_SIZE
	.error "FW_GDT_SIZE does not match the GDT"
	.endif
	.balign 8
	/* 6 bytes for 32-bit lgdt, 10 for 64-bit: the base is the low half */
fw_gdt_ptr:
	.word FW_GDT_SIZE - 1
	.quad fw_gdt

/*
 * Identity map of 0..4 GiB with 2 MiB pages, every level user accessible.
 * 0xc000_0000..4 GiB (MMIO: LAPIC, IOAPIC, PCI) is uncached.
 */
#define PTE_P   0x001
#define PTE_RW  0x002
#define PTE_US  0x004
#define PTE_PWT 0x008
#define PTE_PCD 0x010
#define PTE_PS  0x080

	.section .data.fw_idmap, "aw"
	.balign 4096
	.globl fw_pml4
fw_pml4:
	.quad fw_pdpt + (PTE_P | PTE_RW | PTE_US)
	.fill 511, 8, 0
fw_pdpt:
	.quad fw_pd + (PTE_P | PTE_RW | PTE_US)
	.quad fw_pd + 0x1000 + (PTE_P | PTE_RW | PTE_US)
	.quad fw_pd + 0x2000 + (PTE_P | PTE_RW | PTE_US)
	.quad fw_pd + 0x3000 + (PTE_P | PTE_RW | PTE_US)
	.fill 508, 8, 0
fw_pd:
	.set addr, 0
	.rept 1536
	.quad addr + (PTE_P | PTE_RW | PTE_US | PTE_PS)
	.set addr, addr + 0x200000
	.endr
	.rept 512
	.quad addr + (PTE_P | PTE_RW | PTE_US | PTE_PS | PTE_PWT | PTE_PCD)
	.set addr, addr + 0x200000
	.endr

/* ---- trap entry: vector stubs push (error, vector), then fw_trap_common */
	.text
	.code64
	.macro trap_stub vec
	.balign 16
trap_stub_\vec:
	.if (\vec == 8) || (\vec == 10) || (\vec == 11) || (\vec == 12) || (\vec == 13) || (\vec == 14) || (\vec == 17) || (\vec == 21) || (\vec == 29) || (\vec == 30)
	.else
	pushq $0
	.endif
	pushq $\vec
	jmp fw_trap_common
	.endm

	.irp vec, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	trap_stub \vec
	.endr

fw_trap_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	cld
	movq %rsp, %rdi
	call fw_trap
fw_trap_return:
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp
	iretq

	.section .rodata.fw_trap_stubs, "a"
	.balign 8
	.globl fw_trap_stubs
fw_trap_stubs:
	.irp vec, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.quad trap_stub_\vec
	.endr

/* void fw_cpl3_enter(void (*fn)(void *) rdi, void *arg rsi, void *user_sp rdx) */
	.text
	.globl fw_cpl3_enter
fw_cpl3_enter:
	xorl %eax, %eax              /* fake return address 0: returning faults */
/* fn rdi, arg rsi, user_sp rdx, fn's return address rax: iretq to fn(arg)
 * at CPL3 (fw_cpl3_run comes here too) */
cpl3_iret:
	subq $8, %rdx
	movq %rax, (%rdx)
	pushq $(FW_SEL_UDATA | 3)
	pushq %rdx
	pushq $0x2                   /* rflags: IF=0, IOPL=0 */
	pushq $(FW_SEL_UCODE64 | 3)
	pushq %rdi
	movq %rsi, %rdi
	xorl %eax, %eax
	movl %eax, %ds
	movl %eax, %es
	iretq

/*
 * bool fw_cpl3_run(fn rdi, arg rsi, user_sp rdx, val rcx) and
 * bool fw_cpl3_resume(ret rdi, val rsi): the CPL0 side is saved on its own
 * stack (rflags, callee-saved registers, val) and its rsp in fw_cpl0_rsp;
 * fw_cpl0_back (from fw_trap, on the TSS stack) comes back to it.
 * CPL0_SAVE is that save, shared by both.
 */
.macro CPL0_SAVE val
	pushfq
	pushq %rbx
	pushq %rbp
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	pushq \val
	movq %rsp, fw_cpl0_rsp(%rip)
	movb $1, fw_cpl3_running(%rip)
.endm

	.text
	.globl fw_cpl3_run, fw_cpl3_resume, fw_cpl0_back
fw_cpl3_run:
	CPL0_SAVE %rcx
	leaq fw_cpl3_done(%rip), %rax /* fn returns into fw_cpl3_done */
	jmp cpl3_iret

fw_cpl3_resume:
	CPL0_SAVE %rsi
	leaq fw_cpl3_frame(%rip), %rsp  /* iretq from the saved frame */
	movq %rdi, 14*8(%rsp)         /* its rax: fw_cpl3_yield's result */
	xorl %eax, %eax
	movl %eax, %ds
	movl %eax, %es
	jmp fw_trap_return

/* CPL3: where fn returns to */
fw_cpl3_done:
	movq %rax, %rdi
	movl $FW_KC_DONE, %eax
	int3
	ud2

/* void fw_cpl0_back(bool yielded edi, uint64_t val rsi) */
fw_cpl0_back:
	movq fw_cpl0_rsp(%rip), %rsp
	popq %rcx
	movq %rsi, (%rcx)
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbp
	popq %rbx
	movl $FW_SEL_DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	popfq
	movzbl %dil, %eax
	ret

	.bss
	.balign 8
fw_cpl0_rsp:
	.skip 8

	.section .note.GNU-stack, "", @progbits
