// SPDX-License-Identifier: MIT
/* poweroff.c - an EFI application that powers off at its first statement:
 * scripts/bench-efi times firmware start to application entry with it. */
#include <efi.h>
#include <efilib.h>

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	(void)image;
	st->RuntimeServices->ResetSystem(EfiResetShutdown, EFI_SUCCESS, 0, NULL);
	return EFI_SUCCESS;
}
