// SPDX-License-Identifier: MIT
/* poweroff.c - an EFI application whose first statement writes a marker
 * byte (BEL, 0x07, which no firmware message contains) to COM1 and whose
 * second powers off: scripts/bench-efi times VMM start to the marker on the
 * console (the application's first instruction, give or take gnu-efi's
 * crt0 self-relocation) and to the process's exit. */
#include <efi.h>
#include <efilib.h>

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	__asm__ volatile("outb %0, %1" : : "a"((unsigned char)0x07), "Nd"((unsigned short)0x3f8));
	(void)image;
	st->RuntimeServices->ResetSystem(EfiResetShutdown, EFI_SUCCESS, 0, NULL);
	return EFI_SUCCESS;
}
