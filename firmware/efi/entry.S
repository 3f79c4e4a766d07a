/* SPDX-License-Identifier: MIT */
/*
 * entry.S - efi_setjmp/efi_longjmp for Exit(). (The PVH entry and long
 * mode are the lib's: firmware/lib/entry.S, ending in fw_main().)
 */

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

	.section .note.GNU-stack, "", @progbits
