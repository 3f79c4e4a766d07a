/* SPDX-License-Identifier: MIT */
/*
 * entry.S - the one way into long mode, for every image and every CPU.
 *
 * fw_pvh_entry: the PVH entry (32-bit protected mode, paging off, ebx =
 * hvm_start_info) of an image that links the lib: its Xen note is here,
 * and it ends in the image's fw_main(start_info) on a 64 KiB boot stack.
 *
 * fw_long_mode: from 32-bit protected mode (flat code segment, paging
 * off) to 64-bit mode on the lib's GDT and static identity map, with SSE
 * enabled (OSFXSR, as UEFI requires for applications; x87 emulation off),
 * data segments loaded and fs/gs null; then jumps to the 64-bit address in
 * ebp. esi, edi and ebp are kept. Used by fw_pvh_entry and by the APs
 * (ap.S). No 32-bit paging is ever enabled (it stops the VM on our hosts).
 */
#include "firmware/lib/cpu.h"
#include "firmware/lib/pvh.h"

	.section .note.Xen, "a"
	.balign 4
	.long 4                          /* name size: "Xen\0" */
	.long 8                          /* descriptor size */
	.long XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.balign 4
	.quad fw_pvh_entry               /* 8 bytes in an ELF64, like Linux */

	.section .text.entry, "ax"
	.code32
	.globl fw_pvh_entry
fw_pvh_entry:
	cli
	cld
	movl %ebx, %esi
	movl $1f, %ebp
	jmp fw_long_mode

	.code64
1:	leaq fw_boot_stack_top(%rip), %rsp
	movl %esi, %edi                  /* zero-extends */
	call fw_main
2:	cli
	hlt
	jmp 2b

	.code32
	.globl fw_long_mode
fw_long_mode:
	lgdt %cs:fw_gdt_ptr               /* ds may still be real mode's (APs) */
	movl $FW_SEL_DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	movl %cr4, %eax
	orl $0x620, %eax                 /* PAE | OSFXSR | OSXMMEXCPT */
	movl %eax, %cr4
	movl $fw_pml4, %eax
	movl %eax, %cr3
	movl $0xc0000080, %ecx           /* EFER.LME */
	rdmsr
	orl $0x100, %eax
	wrmsr
	movl %cr0, %eax
	andl $~0x4, %eax                 /* EM off */
	orl $0x80000003, %eax            /* PG | MP | PE */
	movl %eax, %cr0
	ljmp $FW_SEL_CODE64, $3f

	.code64
3:	movl $FW_SEL_DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %eax, %eax
	movl %eax, %fs
	movl %eax, %gs
	movl %ebp, %ebp                  /* zero-extends */
	jmp *%rbp

	.bss
	.balign 16
fw_boot_stack:
	.skip 65536
fw_boot_stack_top:

	.section .note.GNU-stack, "", @progbits
