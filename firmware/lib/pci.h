/* SPDX-License-Identifier: MIT */
/*
 * pci.h - PCI configuration access through ECAM (PCIe base spec §7.2.2)
 * for the guest firmware; bus 0 only. Usable at CPL0 and CPL3 (the
 * identity map makes ECAM and BARs reachable from both).
 */
#ifndef FW_LIB_PCI_H
#define FW_LIB_PCI_H

#include "firmware/lib/fw.h"

#define FW_PCI_MAX_FNS 32

/* configuration header offsets and bits (PCI local bus 3.0 §6.2) */
#define FW_PCI_COMMAND	       0x04
#define FW_PCI_COMMAND_MEMORY  0x2
#define FW_PCI_COMMAND_MASTER  0x4
#define FW_PCI_STATUS	       0x06
#define FW_PCI_STATUS_CAP_LIST 0x10
#define FW_PCI_CAPABILITY_LIST 0x34
#define FW_PCI_CAP_ID_VNDR     0x09
#define FW_PCI_CAP_ID_MSIX     0x11

struct fw_pci_fn {
	uint8_t dev, fn;
	uint16_t vendor, device;
	uint32_t class_code;   /* base << 16 | sub << 8 | prog-if */
	volatile uint8_t *cfg; /* the function's 4 KiB of ECAM */
};

/* ECAM base of segment 0 bus 0 from an MCFG table (0 if none). */
uint64_t fw_pci_ecam_from_mcfg(const void *mcfg);
/* Functions present on bus 0 (function 0 of each device, plus the other
 * functions of multi-function devices). Returns the count. */
int fw_pci_scan(uint64_t ecam, struct fw_pci_fn *out, int cap);
/* The same for the device numbers in slots only (bit n: device n), when
 * the VMM says which are in use (each configuration read is an exit). */
int fw_pci_scan_slots(uint64_t ecam, uint32_t slots, struct fw_pci_fn *out, int cap);

uint8_t fw_pci_read8(const struct fw_pci_fn *f, uint32_t off);
uint16_t fw_pci_read16(const struct fw_pci_fn *f, uint32_t off);
uint32_t fw_pci_read32(const struct fw_pci_fn *f, uint32_t off);
void fw_pci_write16(const struct fw_pci_fn *f, uint32_t off, uint16_t v);
void fw_pci_write32(const struct fw_pci_fn *f, uint32_t off, uint32_t v);

/* Base of memory BAR bar (64-bit BARs combined); assigns an address from
 * *next (then advanced) when the BAR is unprogrammed. 0 for I/O BARs. */
uint64_t fw_pci_bar(const struct fw_pci_fn *f, int bar, uint64_t *next);

#endif /* FW_LIB_PCI_H */
