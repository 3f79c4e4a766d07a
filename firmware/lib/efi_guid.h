/* SPDX-License-Identifier: MIT */
/*
 * efi_guid.h - the EFI configuration-table GUIDs that both vmlet's EFI
 * firmware (which installs the tables) and the probe (which reports what it
 * finds) name, kept in one place. Each is an argument list in the order the
 * UEFI specification writes a GUID, (d1, d2, d3, d4[0], ..., d4[7]); expand
 * it into an initializer with FW_GUID_APPLY, e.g.
 *   FW_GUID_APPLY(FW_GUID_INIT, FW_GUID_ACPI20)   for a struct fw_guid,
 *   FW_GUID_APPLY(EFI_GUID, FW_GUID_ACPI20)       for firmware/efi's efi_guid.
 */
#ifndef FW_LIB_EFI_GUID_H
#define FW_LIB_EFI_GUID_H

#include "firmware/lib/fw.h"

/* A GUID as it lies in memory (little-endian d1..d3): 16 bytes. */
struct fw_guid {
	uint32_t d1;
	uint16_t d2, d3;
	uint8_t d4[8];
};

_Static_assert(sizeof(struct fw_guid) == 16, "an EFI GUID is 16 bytes");

#define FW_GUID_INIT(a, b, c, ...)                                                                 \
	{                                                                                          \
		(a), (b), (c),                                                                     \
		{                                                                                  \
			__VA_ARGS__                                                                \
		}                                                                                  \
	}
/* Expands a GUID argument list before handing it to macro m. */
#define FW_GUID_APPLY(m, ...) m(__VA_ARGS__)

/* EFI_ACPI_TABLE_GUID (ACPI 2.0+ RSDP) and ACPI_TABLE_GUID (ACPI 1.0). */
#define FW_GUID_ACPI20 0x8868e871, 0xe4f1, 0x11d3, 0xbc, 0x22, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81
#define FW_GUID_ACPI10 0xeb9d2d30, 0x2d88, 0x11d3, 0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d
/* SMBIOS3_TABLE_GUID (64-bit entry point) and SMBIOS_TABLE_GUID (32-bit). */
#define FW_GUID_SMBIOS3 0xf2fd1544, 0x9794, 0x4a2c, 0x99, 0x2e, 0xe5, 0xbb, 0xcf, 0x20, 0xe3, 0x94
#define FW_GUID_SMBIOS	0xeb9d2d31, 0x2d88, 0x11d3, 0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d

#endif
