/* SPDX-License-Identifier: MIT */
/*
 * acpi_wire.h - the ACPI structures both sides of the guest boundary use:
 * vmlet's table builder (arch/x86_64/acpi*.c) writes them and the guest
 * firmware's reader (firmware/lib/acpi.c) walks them. ACPI 6.5, packed,
 * little-endian as on x86, sizes checked at compile time.
 *
 * The one arch/ header firmware/ may include (scripts/check-layering.sh,
 * rule 6): it must stay freestanding, <stdint.h> and nothing else, no
 * functions, so that both a hosted builder and a -ffreestanding guest can
 * use it.
 */
#ifndef VMLET_ARCH_X86_64_ACPI_WIRE_H
#define VMLET_ARCH_X86_64_ACPI_WIRE_H

#include <stdint.h>

#define ACPI_PACKED __attribute__((packed))

/* §5.2.5.3 Root System Description Pointer (revision 2). */
struct acpi_rsdp {
	char signature[8]; /* "RSD PTR " */
	uint8_t checksum;  /* first 20 bytes */
	char oem_id[6];
	uint8_t revision; /* 2 */
	uint32_t rsdt_address;
	uint32_t length; /* 36 */
	uint64_t xsdt_address;
	uint8_t extended_checksum; /* all 36 bytes */
	uint8_t reserved[3];
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP size");

/* §5.2.6 System Description Table Header. */
struct acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_header) == 36, "header size");

/* §5.2.3.2 Generic Address Structure. */
struct acpi_gas {
	uint8_t space_id; /* 0 memory, 1 system I/O */
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size; /* 1 byte, 2 word, 3 dword, 4 qword */
	uint64_t address;
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS size");

#endif
