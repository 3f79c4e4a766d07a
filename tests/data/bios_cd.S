/* SPDX-License-Identifier: MIT */
/*
 * bios_cd.S - an El Torito no-emulation boot image for tests/sh/cdrom_run.sh:
 * the BIOS loads it (4 virtual sectors, 2048 bytes) at 0000:7C00 and jumps
 * to it in real mode with DL = the CD's drive number. It prints a line
 * through INT 10h, reads the ISO's block 16 (the Primary Volume
 * Descriptor) through INT 13h AH=42h (extended read; a CD's blocks are
 * 2048 bytes) to 0000:8000, prints its volume identifier (32 bytes at
 * offset 40) and powers off through the debug-exit port (0xf4; QEMU:
 * -device isa-debug-exit,iobase=0xf4). Build:
 *   as --32 -o cd.o bios_cd.S
 *   ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o cd.bin cd.o
 */
	.code16
	.text
	.globl _start
_start:
	cli
	xorw	%ax, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %ss
	movw	$0x7c00, %sp
	movb	%dl, drive
	movw	$hello, %si
	call	print
	movb	$0x42, %ah	/* extended read, the packet at DS:SI */
	movb	drive, %dl
	movw	$dap, %si
	int	$0x13
	jc	fail
	cmpl	$0x30444301, 0x8000	/* type 1, "CD0" */
	jne	fail
	movb	$0, 0x8000 + 72	/* the identifier's 32 bytes, NUL-terminated */
	movw	$0x8000 + 40, %si
	call	print
	movw	$done, %si
	call	print
	movw	$0xf4, %dx
	movb	$0x10, %al
	outb	%al, %dx
	hlt
fail:	movw	$readerr, %si
	call	print
	hlt
print:	lodsb
	testb	%al, %al
	jz	1f
	movb	$0x0e, %ah
	movw	$0x0007, %bx
	int	$0x10
	jmp	print
1:	ret

	.p2align 2
dap:	.byte	16, 0		/* size, reserved */
	.word	1		/* blocks */
	.word	0x8000, 0	/* to 0000:8000 */
	.long	16, 0		/* LBA 16 */
drive:	.byte	0
hello:	.asciz	"vmlet-cd: booted from CD\r\n"
done:	.asciz	"|\r\nvmlet-cd: the volume descriptor read through INT 13h\r\n\r\n"
readerr: .asciz	"vmlet-cd: INT 13h read failed\r\n"
