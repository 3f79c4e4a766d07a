/* SPDX-License-Identifier: MIT */
/*
 * q35_smm.h - System Management Mode on the q35 platform of an OVMF VM
 * that has features.smm (docs/firmware.md, "SMM"): what OVMF's SMM build
 * (Debian's OVMF_CODE_4M.secboot.fd) programs, as QEMU's q35 with smm=on
 * models it.
 *
 * SMRAM, on the MCH (00:00.0):
 *   SMRAM   0x9d  D_OPEN 0x40, D_CLS 0x20, D_LCK 0x10, G_SMRAME 0x08,
 *                 C_BASE_SEG 0x02 (fixed). D_LCK, once set, clears D_OPEN
 *                 and leaves only D_CLS writable, in SMRAM and nothing in
 *                 ESMRAMC, until the VM is reset.
 *   ESMRAMC 0x9e  H_SMRAME 0x80, TSEG_SZ 0x06 (1, 2, 8 MiB, or 3: the
 *                 extended size), T_EN 0x01 (TSEG closed to code outside
 *                 SMM: OVMF "opens" TSEG by clearing it).
 *   EXT_TSEG 0x50 (16 bit) reads Q35_SMM_EXT_TSEG_MB after the guest
 *                 writes 0xffff (OVMF's query; QEMU's
 *                 mch.extended-tseg-mbytes, 16 on current machine types).
 * What the two address spaces see (q35_smram_view):
 *   TSEG = [low RAM end - size, low RAM end) when T_EN and G_SMRAME: RAM
 *          in SMM, unassigned (reads 0xff, writes dropped) outside it.
 *   A/B seg 0xa0000-0xbffff: RAM outside SMM only when D_OPEN and not
 *          H_SMRAME (else the legacy VGA window: unassigned, vmlet has
 *          no VGA); RAM in SMM when G_SMRAME and not H_SMRAME, or when it
 *          is RAM outside.
 *
 * SMIs, ICH9 (Intel ICH9 datasheet §13.8.3, §10.1):
 *   port 0xb2 APM_CNT: a write raises an SMI when SMI_EN.APMC_EN is set
 *        (sets SMI_STS.APM_STS): on every vCPU when "broadcast" was
 *        negotiated, else on the writing one. 2 and 3 (ACPI enable and
 *        disable) raise none: vmlet's PM1_CNT.SCI_EN is always set.
 *   port 0xb3 APM_STS: a scratch byte.
 *   PMBASE+0x30 SMI_EN (32 bit): APMC_EN 0x20, GBL_SMI_EN 0x01, read/write;
 *        GBL_SMI_EN cannot be cleared once GEN_PMCON_1.SMI_LOCK is set.
 *   PMBASE+0x34 SMI_STS (32 bit): write 1 to clear.
 *   LPC 0xa0 GEN_PMCON_1 (16 bit): SMI_LOCK 0x10, set once until reset.
 * SMI feature negotiation, QEMU's fw_cfg files (OVMF SmmControl2Dxe):
 *   etc/smi/supported-features (8 bytes, LE): Q35_SMI_F_BROADCAST only
 *   etc/smi/requested-features (8 bytes, writable): what the guest wants
 *   etc/smi/features-ok (1 byte): selecting it checks the request: 1 and
 *        the request is in force (and locked: later requests change
 *        nothing) when it asks for nothing unsupported, else 0.
 *
 * The pure parts below are the state machine; q35.c holds the registers
 * and applies the views through device_smm_*() (device.h).
 */
#ifndef VMLET_DEV_Q35_SMM_H
#define VMLET_DEV_Q35_SMM_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/vm/device.h"

#define Q35_SMRAM	      0x9d
#define Q35_ESMRAMC	      0x9e
#define Q35_EXT_TSEG	      0x50
#define Q35_EXT_TSEG_QUERY    0xffff
#define Q35_SMM_EXT_TSEG_MB   (DEVICE_SMM_TSEG_MAX >> 20)
#define Q35_SMRAM_D_OPEN      0x40
#define Q35_SMRAM_D_CLS	      0x20
#define Q35_SMRAM_D_LCK	      0x10
#define Q35_SMRAM_G_SMRAME    0x08
#define Q35_SMRAM_C_BASE_SEG  0x02
#define Q35_SMRAM_WMASK	      0x78
#define Q35_ESMRAMC_H_SMRAME  0x80
#define Q35_ESMRAMC_TSEG_SZ   0x06
#define Q35_ESMRAMC_T_EN      0x01
#define Q35_ESMRAMC_WMASK     0x87
#define Q35_ESMRAMC_DEFAULT   0x38 /* SM_CACHE, SM_L1, SM_L2 (read-only) */
#define Q35_ASEG_GPA	      0xa0000u
#define Q35_ASEG_SIZE	      0x20000u
#define Q35_GEN_PMCON_1	      0xa0
#define Q35_GEN_PMCON_SMI_LCK 0x10
#define Q35_APM_CNT_PORT      0xb2
#define Q35_APM_STS_PORT      0xb3
#define Q35_SMI_EN_OFF	      0x30 /* from PMBASE */
#define Q35_SMI_EN_APMC	      0x20
#define Q35_SMI_EN_GBL	      0x01
#define Q35_SMI_STS_APM	      0x20
#define Q35_APM_ACPI_ENABLE   2
#define Q35_APM_ACPI_DISABLE  3
#define Q35_SMI_F_BROADCAST   1ull

/* What each address space sees (see above), for device_smm_map() (pure). */
struct device_smram;
void q35_smram_view(uint8_t smram, uint8_t esmramc, struct device_smram *v);

/* After the guest wrote the MCH's config (wmask applied): D_LCK's effect
 * on cfg and wmask, the extended TSEG query answered (pure). */
void q35_smram_written(uint8_t *cfg, uint8_t *wmask);

/* The ICH9 SMI registers and the negotiation. */
struct q35_smi {
	uint32_t smi_en, smi_sts;
	uint8_t apm_cnt, apm_sts;
	bool smi_lock;
	uint64_t requested, negotiated;
	bool features_ok; /* negotiation done and locked */
};

enum q35_smi_raise { Q35_SMI_NONE, Q35_SMI_CURRENT, Q35_SMI_ALL };

/* A write of port (0xb2 or 0xb3): which SMI to raise (pure). */
enum q35_smi_raise q35_smi_apm_write(struct q35_smi *s, uint16_t port, uint8_t v);
/* SMI_EN (off 0) or SMI_STS (off 4) written with the 32-bit value v. */
void q35_smi_reg_write(struct q35_smi *s, unsigned int off, uint32_t v);
uint32_t q35_smi_reg_read(const struct q35_smi *s, unsigned int off);
/* GEN_PMCON_1 written: SMI_LOCK latches. */
void q35_smi_pmcon(struct q35_smi *s, uint16_t v);
/* etc/smi/features-ok selected: 1 when the requested features are
 * accepted (then in force for good), else 0. */
uint8_t q35_smi_features_ok(struct q35_smi *s, uint64_t supported);

#endif /* VMLET_DEV_Q35_SMM_H */
