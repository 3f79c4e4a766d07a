/* SPDX-License-Identifier: MIT */
/*
 * q35.h - the parts of Intel's Q35 chipset (MCH 82Q35 + ICH9) that OVMF's
 * platform code looks for, on top of vmlet's PCI host (pci.h). Only VMs
 * that boot OVMF have them (vmm/boot/ovmf_boot.h); every other VM keeps the
 * plain host bridge.
 *
 *   00:00.0  the host bridge answers as the MCH, 8086:29c0. PCIEXBAR
 *            (0x60, 64 bit), PAM0-6 (0x90-0x96), SMRAM (0x9d), ESMRAMC
 *            (0x9e), GGC (0x52), TSEGMB (0xac), TOLUD (0xb0), GBSM (0xb4)
 *            and BGSM (0xb8) read back what was written (OVMF's SMM
 *            access driver reads its TSEG base back from TSEGMB). The
 *            ECAM window OVMF programs through PCIEXBAR
 *            (ARCH_Q35_ECAM_GPA, its build-time base) decodes from the
 *            start, next to vmlet's own at ARCH_PCI_ECAM_GPA that the MCFG
 *            table describes; PAM has no effect (the low megabyte is RAM).
 *            Without SMM SMRAM and ESMRAMC only read back; with it
 *            (q35_enable_smm) they are q35_smm.h's.
 *   00:1f.0  the LPC bridge, 8086:2918, class ISA bridge (OVMF hangs its
 *            serial console and ISA devices on it). PMBASE (0x40), ACPI_CNTL
 *            (0x44), PIRQ routing (0x60-0x63, 0x68-0x6b) and RCBA (0xf0)
 *            read back what was written. The PM registers stay at 0x600
 *            (ARCH_PM1A_EVT_PORT: the PMBASE OVMF programs): a PMBASE moved
 *            elsewhere is logged, not followed.
 *   port ARCH_PM_TMR_PORT (PMBASE+8): the ACPI PM timer, 3.579545 MHz,
 *            24 bits (OVMF's delays and timer calibration run on it).
 * OVMF's debug console, port 0x402, is vmm/dev/legacy.c's (lines to the
 * log at debug level; Debian's RELEASE build writes nothing there).
 *
 * Reset: OVMF resets through 0xcf9 and then the keyboard controller; port
 * 0xcf9 lies in the PCI configuration ports, which ignore it, and the
 * i8042 (vmm/dev/i8042.c) performs the reset.
 */
#ifndef VMLET_DEV_Q35_H
#define VMLET_DEV_Q35_H

#include <stdint.h>

#include "vmm/dev/pci.h"

#define Q35_MCH_DEVICE_ID 0x29c0
#define Q35_LPC_DEVICE_ID 0x2918
#define Q35_LPC_SLOT	  31
#define Q35_PMBASE	  0x40
#define Q35_ACPI_CNTL	  0x44
#define Q35_PCIEXBAR	  0x60
#define Q35_RCBA	  0xf0
#define Q35_GGC		  0x52 /* MCH: graphics control */
#define Q35_TSEGMB	  0xac /* MCH: TSEG memory base (bits 31:20) */
#define Q35_TOLUD	  0xb0 /* MCH: top of low usable DRAM */
#define Q35_GBSM	  0xb4
#define Q35_BGSM	  0xb8
#define Q35_PM_TMR_HZ	  3579545ull

struct q35;

/* SMM (q35_smm.h): SMRAM on the MCH driving vm's SMM address space
 * (device_smm_map), the APM and SMI_EN/SMI_STS ports raising SMIs
 * (device_smm_raise), GEN_PMCON_1. After q35_create, before the guest
 * runs. q35_smm_fw_cfg(): the three etc/smi/ files of the negotiation
 * (no-op without SMM). q35_smis(): SMIs raised so far. 0 or -errno. */
struct vm;
struct fw_cfg;
int q35_enable_smm(struct q35 *q, struct vm *vm);
int q35_smm_fw_cfg(struct q35 *q, struct fw_cfg *fc);
uint64_t q35_smis(struct q35 *q);

/* Turn h's host bridge into the MCH, add the LPC bridge and the ECAM
 * window at ARCH_Q35_ECAM_GPA, claim the PM timer port on pio. */
int q35_create(struct q35 **out, struct pci_host *h, struct bus *pio);
void q35_destroy(struct q35 *q);

/*
 * Snapshot (docs/snapshot.md). The MCH's registers (PCIEXBAR, PAM0-6,
 * SMRAM, ESMRAMC) are the host bridge's config space and the LPC
 * bridge's (PMBASE, ACPI_CNTL, PIRQ routing, RCBA) its own: the PCI
 * snapshot saves both as it saves every function's (pci_snap.c). q35
 * itself saves the PM timer's 24-bit count, which goes on from it after
 * a restore, and with SMM the ICH9 SMI state (SMI_EN, SMI_STS, APM_CNT,
 * APM_STS, SMI_LOCK, the fw_cfg feature negotiation). q35_load() runs
 * after both functions' config space is loaded: with SMM it refuses what
 * the guest cannot make (SMI_STS bits the APM write never sets, features
 * not offered or in force without a negotiation, SMI_LOCK unlike
 * GEN_PMCON_1's, SMRAM both D_LCK and D_OPEN), re-applies the locks
 * (D_LCK freezes SMRAM/ESMRAMC, SMI_LOCK GEN_PMCON_1) and maps SMRAM's
 * views (device_smm_map). load: 0, -EBADMSG or -EINVAL (reason logged).
 * q35_lpc(): the LPC function, to tell it from the others.
 */
struct snap_buf;
struct snap_cur;
void q35_save(struct q35 *q, struct snap_buf *b);
int q35_load(struct q35 *q, struct snap_cur *c);
struct pci_dev *q35_lpc_dev(struct q35 *q);

/* The PM timer's 24-bit count at CLOCK_MONOTONIC time now_ns for a timer
 * started at t0_ns (pure; the port's read uses it). */
uint32_t q35_pm_timer(uint64_t t0_ns, uint64_t now_ns);
/* The t0_ns at which the timer reads count (< 2^24) at now_ns (pure). */
uint64_t q35_pm_timer_start(uint32_t count, uint64_t now_ns);

#endif /* VMLET_DEV_Q35_H */
