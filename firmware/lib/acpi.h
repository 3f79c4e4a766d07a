/* SPDX-License-Identifier: MIT */
/*
 * acpi.h - reading the ACPI tables a VMM or firmware left in memory:
 * RSDP -> XSDT (or RSDT) -> every table, the FADT's DSDT and FACS, with
 * each checksum verified; MADT processor entries; FADT power-off data and
 * the \_S5 sleep type from the DSDT's AML. Tables are read through the
 * identity map, so only tables below 4 GiB are reachable; every length is
 * bounded. Pure readers: usable at CPL3.
 *
 * struct acpi_rsdp, acpi_header and acpi_gas are the wire layouts of
 * arch/x86_64/acpi_wire.h, the one header vmlet's ACPI builder and this
 * reader share.
 */
#ifndef FW_LIB_ACPI_H
#define FW_LIB_ACPI_H

#include "arch/x86_64/acpi_wire.h"
#include "firmware/lib/fw.h"

#define ACPI_MAX_TABLE_LEN (16u << 20)
#define ACPI_LIMIT	   0x100000000ull /* end of the identity map */

/* One table found by fw_acpi_walk. */
struct fw_acpi_table {
	char sig[5];
	bool checksum_ok;
	bool has_checksum; /* false for FACS */
	uint64_t addr;
	uint32_t length;
};

/* RSDP from a boot-info hint (0 = none), else scanned in the EBDA and
 * 0xe0000..0xfffff. Signature and checksum(s) checked; NULL if none. */
const struct acpi_rsdp *fw_acpi_find_rsdp(uint64_t hint);

/* Byte sum of len bytes == 0 mod 256. */
bool fw_acpi_checksum_ok(const void *p, size_t len);

/*
 * List every table reachable from rsdp in discovery order: "RSDP", the
 * XSDT (RSDT when there is no XSDT), its entries, then the FADT's DSDT and
 * FACS. Returns the count (at most cap); *errors counts entries that could
 * not be read (beyond 4 GiB, length out of bounds).
 */
int fw_acpi_walk(const struct acpi_rsdp *rsdp, struct fw_acpi_table *out, int cap, int *errors);
/* First table with signature sig and a good checksum, or NULL. */
const struct acpi_header *fw_acpi_find(const struct fw_acpi_table *t, int n, const char *sig);

/* Enabled processors of the MADT (Local APIC and Local x2APIC entries, in
 * table order): their APIC IDs into ids[] (at most cap). Returns the
 * count. *lapic_addr gets the LAPIC address (override entry honoured). */
int fw_madt_apic_ids(const struct acpi_header *madt, uint32_t *ids, int cap, uint64_t *lapic_addr);

/* How to power off through ACPI. */
struct fw_acpi_power {
	uint16_t pm1a_cnt, pm1b_cnt; /* I/O ports; 0 = none */
	uint16_t pm1a_evt;	     /* PM1a status/enable I/O port; 0 = none */
	struct acpi_gas sleep_ctl;   /* HW-reduced ACPI; address 0 = none */
	int slp_typ;		     /* \_S5 SLP_TYPa, -1 = unknown */
};

/* From the FADT (and its DSDT, located through tables[]). */
void fw_acpi_power_info(const struct acpi_header *fadt, const struct acpi_header *dsdt,
			struct fw_acpi_power *p);
/* SLP_TYPa of the \_S5 package in AML, or -1. */
int fw_aml_s5_slp_typ(const uint8_t *aml, size_t len);

/* CPL0: power off through ACPI, then QEMU's isa-debug-exit, then halt. */
FW_NORETURN void fw_poweroff(const struct fw_acpi_power *p);

#endif /* FW_LIB_ACPI_H */
