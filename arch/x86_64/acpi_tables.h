/* SPDX-License-Identifier: MIT */
/*
 * acpi_tables.h - the ACPI table layouts vmlet builds (ACPI 6.5), packed,
 * little-endian as on x86, with their sizes checked at compile time.
 * The RSDP, the table header and the Generic Address Structure, which the
 * guest firmware reads too, are in acpi_wire.h.
 */
#ifndef VMLET_ARCH_X86_64_ACPI_TABLES_H
#define VMLET_ARCH_X86_64_ACPI_TABLES_H

#include <stdint.h>

#include "arch/x86_64/acpi_wire.h"

#define ACPI_GAS_IO	1
#define ACPI_ACCESS_U8	1
#define ACPI_ACCESS_U16 2
#define ACPI_ACCESS_U32 3

/* §5.2.9 Fixed ACPI Description Table, revision 6 (Table 5.9). */
struct acpi_fadt {
	struct acpi_header h;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable;
	uint8_t acpi_disable;
	uint8_t s4bios_req;
	uint8_t pstate_cnt;
	uint32_t pm1a_evt_blk;
	uint32_t pm1b_evt_blk;
	uint32_t pm1a_cnt_blk;
	uint32_t pm1b_cnt_blk;
	uint32_t pm2_cnt_blk;
	uint32_t pm_tmr_blk;
	uint32_t gpe0_blk;
	uint32_t gpe1_blk;
	uint8_t pm1_evt_len;
	uint8_t pm1_cnt_len;
	uint8_t pm2_cnt_len;
	uint8_t pm_tmr_len;
	uint8_t gpe0_blk_len;
	uint8_t gpe1_blk_len;
	uint8_t gpe1_base;
	uint8_t cst_cnt;
	uint16_t p_lvl2_lat;
	uint16_t p_lvl3_lat;
	uint16_t flush_size;
	uint16_t flush_stride;
	uint8_t duty_offset;
	uint8_t duty_width;
	uint8_t day_alrm;
	uint8_t mon_alrm;
	uint8_t century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t fadt_minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;
	struct acpi_gas x_pm1a_evt_blk;
	struct acpi_gas x_pm1b_evt_blk;
	struct acpi_gas x_pm1a_cnt_blk;
	struct acpi_gas x_pm1b_cnt_blk;
	struct acpi_gas x_pm2_cnt_blk;
	struct acpi_gas x_pm_tmr_blk;
	struct acpi_gas x_gpe0_blk;
	struct acpi_gas x_gpe1_blk;
	struct acpi_gas sleep_control_reg;
	struct acpi_gas sleep_status_reg;
	uint64_t hypervisor_vendor_identity;
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT size");
_Static_assert(__builtin_offsetof(struct acpi_fadt, flags) == 112, "FADT flags offset");
_Static_assert(__builtin_offsetof(struct acpi_fadt, x_dsdt) == 140, "FADT X_DSDT offset");

/* FADT flags (Table 5.10) */
#define ACPI_FADT_WBINVD	(1u << 0)
#define ACPI_FADT_PROC_C1	(1u << 2)
#define ACPI_FADT_PWR_BUTTON	(1u << 4) /* set: power button is NOT fixed */
#define ACPI_FADT_SLP_BUTTON	(1u << 5) /* set: no fixed sleep button */
#define ACPI_FADT_RESET_REG_SUP (1u << 10)
#define ACPI_FADT_HW_REDUCED	(1u << 20)
/* IA-PC boot architecture flags (Table 5.11) */
#define ACPI_IAPC_LEGACY_DEVICES (1u << 0)
#define ACPI_IAPC_8042		 (1u << 1)
#define ACPI_IAPC_VGA_ABSENT	 (1u << 2)
#define ACPI_IAPC_CMOS_ABSENT	 (1u << 5)

/* §5.2.10 Firmware ACPI Control Structure (version 3). */
struct acpi_facs {
	char signature[4]; /* "FACS" */
	uint32_t length;   /* 64 */
	uint32_t hardware_signature;
	uint32_t firmware_waking_vector;
	uint32_t global_lock;
	uint32_t flags;
	uint64_t x_firmware_waking_vector;
	uint8_t version;
	uint8_t reserved0[3];
	uint32_t ospm_flags;
	uint8_t reserved1[24];
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_facs) == 64, "FACS size");

/* §5.2.12 Multiple APIC Description Table. */
struct acpi_madt {
	struct acpi_header h;
	uint32_t local_apic_address;
	uint32_t flags; /* bit 0 PCAT_COMPAT: dual 8259s present */
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_madt) == 44, "MADT size");

#define ACPI_MADT_PCAT_COMPAT 1u

enum {
	ACPI_MADT_LAPIC = 0,
	ACPI_MADT_IOAPIC = 1,
	ACPI_MADT_ISO = 2,
	ACPI_MADT_LAPIC_NMI = 4,
	ACPI_MADT_X2APIC = 9,
	ACPI_MADT_X2APIC_NMI = 10,
};

struct acpi_madt_lapic { /* §5.2.12.2 */
	uint8_t type, length;
	uint8_t processor_uid;
	uint8_t apic_id;
	uint32_t flags; /* bit 0 enabled */
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_madt_lapic) == 8, "LAPIC entry size");

struct acpi_madt_ioapic { /* §5.2.12.3 */
	uint8_t type, length;
	uint8_t ioapic_id;
	uint8_t reserved;
	uint32_t address;
	uint32_t gsi_base;
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_madt_ioapic) == 12, "IOAPIC entry size");

struct acpi_madt_iso { /* §5.2.12.5 */
	uint8_t type, length;
	uint8_t bus; /* 0 = ISA */
	uint8_t source;
	uint32_t gsi;
	uint16_t flags; /* MPS INTI flags */
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_madt_iso) == 10, "ISO entry size");

/* MPS INTI flags (Table 5.26) */
#define ACPI_INTI_POLARITY_HIGH 0x1
#define ACPI_INTI_POLARITY_LOW	0x3
#define ACPI_INTI_TRIGGER_EDGE	(0x1 << 2)
#define ACPI_INTI_TRIGGER_LEVEL (0x3 << 2)

struct acpi_madt_lapic_nmi { /* §5.2.12.7 */
	uint8_t type, length;
	uint8_t processor_uid; /* 0xff = all */
	uint16_t flags;
	uint8_t lint;
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_madt_lapic_nmi) == 6, "LAPIC NMI size");

struct acpi_madt_x2apic { /* §5.2.12.12 */
	uint8_t type, length;
	uint16_t reserved;
	uint32_t x2apic_id;
	uint32_t flags;
	uint32_t processor_uid;
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_madt_x2apic) == 16, "x2APIC entry size");

struct acpi_madt_x2apic_nmi { /* §5.2.12.13 */
	uint8_t type, length;
	uint16_t flags;
	uint32_t processor_uid; /* 0xffffffff = all */
	uint8_t lint;
	uint8_t reserved[3];
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_madt_x2apic_nmi) == 12, "x2APIC NMI size");

/* TCG ACPI Specification 1.3 §8.3 TPM2, revision 4, with an empty log area
 * (LAML 0: the firmware keeps the event log, EFI's TCG2 protocol). */
struct acpi_tpm2 {
	struct acpi_header h;
	uint16_t platform_class; /* 0: client */
	uint16_t reserved;
	uint64_t control_area; /* the CRB's control registers (CTRL_REQ) */
	uint32_t start_method;
	uint8_t start_params[12];
	uint32_t log_min_len; /* LAML */
	uint64_t log_start;   /* LASA */
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_tpm2) == 76, "TPM2 size");

#define ACPI_TPM2_START_CRB  7 /* Command Response Buffer interface */
#define ACPI_TPM2_START_FIFO 6 /* Memory mapped I/O: the FIFO (TIS) interface */

/* PCI Firmware Specification 3.2 §4.1.2 MCFG. */
struct acpi_mcfg {
	struct acpi_header h;
	uint64_t reserved;
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_mcfg) == 44, "MCFG size");

struct acpi_mcfg_alloc {
	uint64_t base;
	uint16_t segment;
	uint8_t start_bus, end_bus;
	uint32_t reserved;
} ACPI_PACKED;
_Static_assert(sizeof(struct acpi_mcfg_alloc) == 16, "MCFG entry size");

#endif /* VMLET_ARCH_X86_64_ACPI_TABLES_H */
