/* SPDX-License-Identifier: MIT */
/*
 * entry.S - PVH entry: 32-bit protected mode, paging off, ebx =
 * hvm_start_info. Straight to long mode on the static identity map (no
 * 32-bit paging, which stops the VM on our hosts), then probe_main().
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
	.quad pvh_entry                  /* 8 bytes in an ELF64, like Linux */

	.section .text.entry, "ax"
	.code32
	.globl pvh_entry
pvh_entry:
	cli
	cld
	movl %ebx, %esi
	lgdt fw_gdt_ptr
	FW_ENTER_LONG_MODE 0x20, 0x80000001, 1f /* PAE; PG | PE */

	.code64
1:	movl $FW_SEL_DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %eax, %eax
	movl %eax, %fs
	movl %eax, %gs
	leaq probe_boot_stack_top(%rip), %rsp
	movl %esi, %edi                  /* zero-extends */
	call probe_main
2:	cli
	hlt
	jmp 2b

	.bss
	.balign 16
	.globl probe_boot_stack_top
probe_boot_stack:
	.skip 16384
probe_boot_stack_top:

	.section .note.GNU-stack, "", @progbits
