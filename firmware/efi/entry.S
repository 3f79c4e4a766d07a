/* SPDX-License-Identifier: MIT */
/*
 * entry.S - efi_setjmp/efi_longjmp for Exit(), and efi_pvh_jump back out
 * of long mode into a PVH payload. (The PVH entry and long mode are the
 * lib's: firmware/lib/entry.S, ending in fw_main().)
 */
#include "firmware/lib/cpu.h"

/* int efi_setjmp(struct efi_jmp *j): rbx rbp r12 r13 r14 r15 rsp rip */
	.text
	.globl efi_setjmp
efi_setjmp:
	movq %rbx, 0(%rdi)
	movq %rbp, 8(%rdi)
	movq %r12, 16(%rdi)
	movq %r13, 24(%rdi)
	movq %r14, 32(%rdi)
	movq %r15, 40(%rdi)
	leaq 8(%rsp), %rax
	movq %rax, 48(%rdi)
	movq (%rsp), %rax
	movq %rax, 56(%rdi)
	xorl %eax, %eax
	ret

/* void efi_longjmp(struct efi_jmp *j, int v) */
	.globl efi_longjmp
efi_longjmp:
	movq 0(%rdi), %rbx
	movq 8(%rdi), %rbp
	movq 16(%rdi), %r12
	movq 24(%rdi), %r13
	movq 32(%rdi), %r14
	movq 40(%rdi), %r15
	movq 48(%rdi), %rsp
	movl %esi, %eax
	testl %eax, %eax
	jnz 1f
	incl %eax
1:	jmp *56(%rdi)

/* void efi_pvh_jump(uint32_t entry, uint32_t start_info): the PVH boot
 * state (32-bit protected mode, flat segments, paging off, ebx =
 * start_info) and a jump to entry. Through compatibility mode on the lib's
 * 32-bit code segment; turning paging off leaves long mode. */
	.globl efi_pvh_jump
efi_pvh_jump:
	cli
	movl %edi, %ebp
	movl %esi, %ebx
	leaq 1f(%rip), %rax
	pushq $FW_SEL_CODE32
	pushq %rax
	lretq

	.code32
1:	movl $FW_SEL_DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	movl %cr0, %eax
	andl $0x7fffffff, %eax           /* PG off: long mode ends */
	movl %eax, %cr0
	movl $0xc0000080, %ecx           /* EFER.LME off */
	rdmsr
	andl $~0x100, %eax
	wrmsr
	xorl %eax, %eax
	movl %eax, %cr4
	jmp *%ebp
	.code64

	.section .note.GNU-stack, "", @progbits
