/* SPDX-License-Identifier: MIT */
/*
 * bios_mbr.S - a master boot record for tests/sh/bios_seabios.sh: a BIOS
 * loads it at 0000:7C00 and jumps to it in real mode with DL = the boot
 * drive. It prints a line through INT 10h (teletype), reads the disk's
 * second sector through INT 13h (CHS 0/0/2, to 0000:7E00), prints the
 * NUL-terminated text found there and powers off through the debug-exit
 * port (0xf4; QEMU: -device isa-debug-exit,iobase=0xf4). Build:
 *   as --32 -o mbr.o bios_mbr.S
 *   ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o mbr.bin mbr.o
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
	movw	$0x0201, %ax	/* read 1 sector */
	movw	$0x0002, %cx	/* cylinder 0, sector 2 */
	xorb	%dh, %dh	/* head 0 */
	movb	drive, %dl
	movw	$0x7e00, %bx
	int	$0x13
	jc	fail
	movw	$0x7e00, %si
	call	print
	movw	$flush, %si	/* SeaBIOS's serial console holds the last */
	call	print		/* character back: one more pushes the line out */
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
drive:	.byte 0
flush:	.asciz "."
hello:	.asciz "vmlet-mbr: boot sector runs\r\n"
readerr: .asciz "vmlet-mbr: INT 13h read failed\r\n"
	.org 510
	.word 0xaa55
