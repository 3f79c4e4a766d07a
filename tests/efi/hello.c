// SPDX-License-Identifier: MIT
/* hello.c - the smallest gnu-efi application: prints a line through the
 * console protocol. tests/unit/efi_pe_test loads it at other addresses and
 * checks the relocated pointer below. */
#include <efi.h>
#include <efilib.h>

static CHAR16 hello_msg[] = L"hello from a relocated image\r\n";
CHAR16 *volatile hello_ptr = hello_msg;

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	(void)image;
	st->ConOut->OutputString(st->ConOut, hello_ptr);
	return EFI_SUCCESS;
}
