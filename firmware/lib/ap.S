/* SPDX-License-Identifier: MIT */
/*
 * ap.S - AP entry. fw_ap_tramp_start..fw_ap_tramp_end is copied below
 * 1 MiB and entered in real mode by a SIPI (CS = vector << 8, IP = 0); it
 * loads the shared GDT and jumps to fw_ap_entry32 in the image, which
 * enters long mode the way the boot CPU did (fw_long_mode, entry.S).
 */
#include "firmware/lib/cpu.h"
#include "firmware/lib/smp.h"

	.text
	.code16
	.globl fw_ap_tramp_start, fw_ap_tramp_end
fw_ap_tramp_start:
	cli
	cld
	lgdtl %cs:(fw_ap_gdt_ptr - fw_ap_tramp_start)
	movl %cr0, %eax
	orl $1, %eax
	movl %eax, %cr0
	ljmpl $FW_SEL_CODE32, $fw_ap_entry32
	.balign 8
fw_ap_gdt_ptr:
	.word FW_GDT_SIZE - 1
	.long fw_gdt
fw_ap_tramp_end:

	.code32
fw_ap_entry32:
	movl $fw_ap_entry64, %ebp
	jmp fw_long_mode

	.code64
fw_ap_entry64:
	movl $1, %edi
	lock xaddl %edi, fw_ap_count(%rip)
	cmpl $FW_SMP_MAX_APS, %edi
	jae 2f
	leal 1(%rdi), %eax
	shlq $10, %rax                /* FW_SMP_STACK */
	leaq fw_ap_stacks(%rip), %rsp
	addq %rax, %rsp
	call *fw_ap_main(%rip)
2:	cli
	hlt
	jmp 2b

	.bss
	.balign 16
fw_ap_stacks:
	.skip FW_SMP_MAX_APS * FW_SMP_STACK

	.section .note.GNU-stack, "", @progbits
