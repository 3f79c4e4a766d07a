/* SPDX-License-Identifier: MIT */
/*
 * layout.h - vmlet's x86_64 guest-physical address map. One place, used by
 * the arch builders (tables that describe the map) and by vmm/ (which backs
 * it with memory slots and devices).
 *
 *   0x0000_0000  real-mode IVT/BDA (RAM)
 *   0x0000_0500  GDT                         ARCH_GDT_GPA
 *   0x0000_1000  PVH hvm_start_info + memmap  ARCH_START_INFO_GPA
 *   0x0000_7000  Linux zero page (boot_params) ARCH_ZERO_PAGE_GPA
 *   0x0000_8000  AP real-mode trampoline page (firmware-owned)
 *   0x0000_9000  PML4, PDPT, 4 PDs (identity map of 0..4 GiB, 2 MiB pages)
 *   0x0002_0000  kernel command line (ARCH_CMDLINE_MAX bytes)
 *   0x0008_0000  initial boot stack top (grows down)
 *   0x0009_fc00  EBDA (reserved) .. 0x000f_ffff
 *   0x000e_0000  ACPI tables (RSDP first, 16-byte aligned, in the BIOS
 *                area so a legacy scan finds it too)
 *   0x000f_0000  SMBIOS entry point and tables (ARCH_SMBIOS_GPA, or just
 *                above the ACPI tables when they reach further), in the
 *                16-byte steps over 0xf0000-0xfffff firmware and OS scan
 *   0x0010_0000  kernel / PVH ELF load area, then RAM
 *   ... RAM up to min(mem, ARCH_MMIO_HOLE_START)
 *   0xc000_0000  32-bit MMIO hole: PCI BARs (ARCH_PCI_MMIO32_*)
 *   0xe000_0000  PCI ECAM, bus 0..ARCH_PCI_ECAM_BUSES-1
 *   0xe010_0000  more PCI BAR space up to the IOAPIC (ARCH_PCI_MMIO32_HI_*):
 *                a BIOS places BARs top-down from 0xfec0_0000
 *   0xfec0_0000  IOAPIC
 *   0xfed4_0000  TPM 2.0: CRB window, 4 KiB (tpm.persistent), or the TIS
 *                window, 5 localities of 4 KiB (tpm: {}); QEMU's address
 *   0xfee0_0000  local APIC
 *   0xfffb_c000  KVM's identity-map page (ARCH_IDENTITY_MAP_GPA) and its
 *   0xfffb_d000  three TSS pages (ARCH_TSS_GPA), which KVM needs on Intel
 *                hosts for real mode without unrestricted guest
 *   0x1_0000_0000 RAM above 4 GiB (whatever did not fit below the hole)
 *
 * Port I/O:
 *   0x3f8-0x3ff COM1 (IRQ 4); 0x60/0x64 i8042 (reset only);
 *   ARCH_PM1A_EVT/CNT: ACPI PM1a event and control blocks (SCI on IRQ 9);
 *   0xcf8/0xcfc PCI config mechanism #1;
 *   FW_ABI_* ports in firmware/abi.h (probe report, debug exit 0xf4).
 */
#ifndef VMLET_ARCH_LAYOUT_H
#define VMLET_ARCH_LAYOUT_H

#define ARCH_GDT_GPA	       0x00000500ull
#define ARCH_START_INFO_GPA    0x00001000ull
#define ARCH_ZERO_PAGE_GPA     0x00007000ull
#define ARCH_AP_TRAMPOLINE_GPA 0x00008000ull
#define ARCH_PML4_GPA	       0x00009000ull
#define ARCH_PDPT_GPA	       0x0000a000ull
#define ARCH_PD_GPA	       0x0000b000ull /* 4 pages: 0xb000..0xefff */
#define ARCH_CMDLINE_GPA       0x00020000ull
#define ARCH_CMDLINE_MAX       0x00010000ull
#define ARCH_BOOT_STACK_GPA    0x00080000ull
#define ARCH_EBDA_GPA	       0x0009fc00ull
#define ARCH_ACPI_GPA	       0x000e0000ull
#define ARCH_ACPI_MAX	       0x00020000ull
#define ARCH_SMBIOS_GPA	       0x000f0000ull
#define ARCH_SMBIOS_END	       0x00100000ull
#define ARCH_HIGH_LOAD_GPA     0x00100000ull

#define ARCH_MMIO_HOLE_START	 0xc0000000ull
#define ARCH_MMIO_HOLE_END	 0x100000000ull
#define ARCH_PCI_MMIO32_START	 0xc0000000ull
#define ARCH_PCI_MMIO32_SIZE	 0x20000000ull
#define ARCH_PCI_ECAM_GPA	 0xe0000000ull
#define ARCH_PCI_ECAM_BUSES	 1u
#define ARCH_PCI_ECAM_SIZE	 (ARCH_PCI_ECAM_BUSES * 0x100000ull)
#define ARCH_PCI_MMIO32_HI_START (ARCH_PCI_ECAM_GPA + ARCH_PCI_ECAM_SIZE)
#define ARCH_PCI_MMIO32_HI_SIZE	 (ARCH_IOAPIC_GPA - ARCH_PCI_MMIO32_HI_START)
#define ARCH_IOAPIC_GPA		 0xfec00000ull
#define ARCH_TPM_CRB_GPA	 0xfed40000ull
#define ARCH_TPM_CRB_SIZE	 0x1000ull
#define ARCH_TPM_CRB_CTRL	 0x40ull /* CTRL_REQ: the control area TPM2 names */
#define ARCH_TPM_TIS_SIZE	 0x5000ull
#define ARCH_LAPIC_GPA		 0xfee00000ull
#define ARCH_IDENTITY_MAP_GPA	 0xfffbc000ull
#define ARCH_TSS_GPA		 0xfffbd000ull /* 3 pages */
#define ARCH_HIGH_RAM_START	 0x100000000ull

/* The q35-like layout of OVMF VMs (vmm/boot/ovmf_boot.c): OVMF programs the
 * MCH's PCIEXBAR to its build-time ECAM base 0xb0000000 (256 MiB) and puts
 * the 32-bit PCI window above it, so low RAM ends at or below it (QEMU:
 * 2 GiB low when the RAM does not fit); flash is mapped just below 4 GiB
 * and KVM's private pages move to where QEMU puts them. */
#define ARCH_Q35_ECAM_GPA	  0xb0000000ull
#define ARCH_Q35_ECAM_SIZE	  0x10000000ull
#define ARCH_Q35_LOW_SPLIT	  0x80000000ull
#define ARCH_Q35_IDENTITY_MAP_GPA 0xfeffc000ull
#define ARCH_Q35_TSS_GPA	  0xfeffd000ull /* 3 pages */
#define ARCH_FLASH_END		  0x100000000ull
#define ARCH_FLASH_MAX		  0x01000000ull /* 16 MiB below 4 GiB */

#define ARCH_COM1_PORT	   0x3f8
#define ARCH_COM1_IRQ	   4
#define ARCH_SCI_IRQ	   9
#define ARCH_PM1A_EVT_PORT 0x600 /* 4 bytes: PM1_STS, PM1_EN */
#define ARCH_PM1A_CNT_PORT 0x604 /* 2 bytes: PM1_CNT */
#define ARCH_PM_S5_SLP_TYP 5	 /* value the DSDT _S5 package carries */
#define ARCH_PM_TMR_PORT   0x608 /* ICH9 PMBASE+8: the ACPI PM timer (q35 VMs) */
#define ARCH_RST_CNT_PORT  0xcf9 /* ICH9 reset control (q35 VMs) */

#endif /* VMLET_ARCH_LAYOUT_H */
