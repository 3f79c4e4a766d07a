/* SPDX-License-Identifier: MIT */
/*
 * vmm_tiny_guest.S - a minimal PVH guest for the VMM's shell tests: 32-bit
 * protected mode, no paging, a few instructions. It prints one line on COM1
 * and then does what the MODE symbol says (as --defsym MODE=n):
 *   0 poll PM1_STS until the power button is pressed, then enter S5
 *   1 hold: cli; hlt forever (never powers off)
 *   2 pulse the i8042 reset line
 *   3 triple fault (load an empty IDT, then int3)
 *   4 write the debug-exit port 0xf4
 *   5 enter S5 at once
 *   6 read COM1 (polling LSR.DR) and echo each byte until 'q', then S5
 *   7 print the CMOS RTC's hours and minutes ("rtc=HHMM", the BCD digits
 *     as they are), then S5
 *   8 print "x" on COM1 without end, until the power button is pressed,
 *     then S5 (a console nobody reads)
 *   9 a memory check for live migration: 1024 pages from 16 MiB on each
 *     hold the round number (in EBX); a round checks them all, then
 *     writes the next number into each; "x" every 16 rounds; a page that
 *     disagrees prints "BAD" and holds; the power button: S5
 * Ports: arch/x86_64/layout.h (PM1a at 0x600/0x604, S5 SLP_TYP 5).
 */
	.section .note.pvh, "a"
	.balign 4
	.long 4, 4, 18		/* namesz, descsz, XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.long _start

	.text
	.code32
	.globl _start
_start:
	mov $0x3f8, %dx
	mov $msg, %esi
1:	lodsb
	test %al, %al
	jz 2f
	out %al, %dx
	jmp 1b
2:
.if MODE == 0
	mov $0x600, %dx
3:	in %dx, %ax
	test $0x100, %ax
	jz 3b
.endif
.if MODE == 8
7:	mov $0x3f8, %dx
	mov $'x', %al
	out %al, %dx
	mov $0x600, %dx
	in %dx, %ax
	test $0x100, %ax
	jz 7b
.endif
.if MODE == 9
	xor %ebx, %ebx
9:	mov $0x1000000, %edi
	mov $1024, %ecx
10:	cmp %ebx, (%edi)
	jne 90f
	add $4096, %edi
	loop 10b
	inc %ebx
	mov $0x1000000, %edi
	mov $1024, %ecx
11:	mov %ebx, (%edi)
	add $4096, %edi
	loop 11b
	test $15, %ebx
	jnz 12f
	mov $0x3f8, %dx
	mov $'x', %al
	out %al, %dx
12:	mov $0x600, %dx
	in %dx, %ax
	test $0x100, %ax
	jz 9b
	jmp 13f
90:	mov $0x3f8, %dx
	mov $'B', %al
	out %al, %dx
	mov $'A', %al
	out %al, %dx
	mov $'D', %al
	out %al, %dx
	mov $'\n', %al
	out %al, %dx
	cli
91:	hlt
	jmp 91b
13:
.endif
.if MODE == 6
	mov $0x3f8, %dx
5:	add $5, %dx		/* LSR */
6:	in %dx, %al
	test $1, %al		/* data ready */
	jz 6b
	sub $5, %dx
	in %dx, %al		/* RBR */
	out %al, %dx		/* echo */
	cmp $'q', %al
	jne 5b
.endif
.if MODE == 7
	.macro putc c
	mov \c, %al
	out %al, %dx
	.endm
	.macro putbcd reg	/* CMOS register reg as two BCD digits */
	mov \reg, %al
	out %al, $0x70
	in $0x71, %al
	mov %al, %bl
	shr $4, %al
	add $'0', %al
	out %al, %dx
	mov %bl, %al
	and $0xf, %al
	add $'0', %al
	out %al, %dx
	.endm
	mov $0x3f8, %dx
	putc $'r'
	putc $'t'
	putc $'c'
	putc $'='
	putbcd $0x04
	putbcd $0x02
	putc $'\n'
.endif
.if MODE == 0 || MODE == 5 || MODE == 6 || MODE == 7 || MODE == 8 || MODE == 9
	mov $0x604, %dx
	mov $((5 << 10) | (1 << 13)), %ax
	out %ax, %dx
.endif
.if MODE == 2
	mov $0xfe, %al
	out %al, $0x64
.endif
.if MODE == 3
	lidt null_idt
	int3
.endif
.if MODE == 4
	mov $0x10, %eax
	out %eax, $0xf4
.endif
	cli
4:	hlt
	jmp 4b

null_idt:
	.word 0
	.long 0
msg:	.asciz "tiny-guest: up\n"
