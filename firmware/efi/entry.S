/* SPDX-License-Identifier: MIT */
/*
 * entry.S - the EFI firmware's PVH entry (32-bit protected mode, paging
 * off, ebx = hvm_start_info): straight to long mode on the lib's static
 * identity map, SSE enabled as UEFI requires for applications, then
 * efi_fw_main(). Also efi_setjmp/efi_longjmp for Exit().
 */
#include "firmware/lib/cpu.h"
#include "firmware/lib/pvh.h"

	.section .note.Xen, "a"
	.balign 4
	.long 4
	.long 8
	.long XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.balign 4
	.quad efi_pvh_entry

	.section .text.entry, "ax"
	.code32
	.globl efi_pvh_entry
efi_pvh_entry:
	cli
	cld
	movl %ebx, %esi
	lgdt fw_gdt_ptr
	/* PAE | OSFXSR | OSXMMEXCPT; PG | MP | PE; EM off */
	FW_ENTER_LONG_MODE 0x620, 0x80000003, 1f, 0x4

	.code64
1:	movl $FW_SEL_DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %eax, %eax
	movl %eax, %fs
	movl %eax, %gs
	leaq efi_stack_top(%rip), %rsp
	movl %esi, %edi
	call efi_fw_main
2:	cli
	hlt
	jmp 2b

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

	.bss
	.balign 16
efi_stack:
	.skip 65536
efi_stack_top:

	.section .note.GNU-stack, "", @progbits
