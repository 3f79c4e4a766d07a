// SPDX-License-Identifier: MIT
/*
 * q35_smm.c - the SMRAM and SMI state machines of the q35 platform
 * (q35_smm.h). Pure: no locks, no VM.
 */
#include <string.h>

#include "vmm/dev/q35_smm.h"

void q35_smram_view(uint8_t smram, uint8_t esmramc, struct device_smram *v)
{
	bool g = smram & Q35_SMRAM_G_SMRAME, h = esmramc & Q35_ESMRAMC_H_SMRAME;
	static const uint64_t by_sz[4] = {DEVICE_SMM_TSEG_1M, DEVICE_SMM_TSEG_2M,
					  DEVICE_SMM_TSEG_8M, DEVICE_SMM_TSEG_MAX};

	v->aseg_normal = (smram & Q35_SMRAM_D_OPEN) && !h;
	v->aseg_smm = (g && !h) || v->aseg_normal;
	v->tseg = 0;
	if (g && (esmramc & Q35_ESMRAMC_T_EN))
		v->tseg = by_sz[(esmramc & Q35_ESMRAMC_TSEG_SZ) >> 1];
}

void q35_smram_written(uint8_t *cfg, uint8_t *wmask)
{
	uint16_t ext;

	if (cfg[Q35_SMRAM] & Q35_SMRAM_D_LCK) {
		cfg[Q35_SMRAM] &= (uint8_t)~Q35_SMRAM_D_OPEN;
		wmask[Q35_SMRAM] = Q35_SMRAM_D_CLS;
		wmask[Q35_ESMRAMC] = 0;
	}
	memcpy(&ext, cfg + Q35_EXT_TSEG, 2);
	if (ext == Q35_EXT_TSEG_QUERY) {
		ext = Q35_SMM_EXT_TSEG_MB;
		memcpy(cfg + Q35_EXT_TSEG, &ext, 2);
	}
}

enum q35_smi_raise q35_smi_apm_write(struct q35_smi *s, uint16_t port, uint8_t v)
{
	if (port == Q35_APM_STS_PORT) {
		s->apm_sts = v;
		return Q35_SMI_NONE;
	}
	s->apm_cnt = v;
	if (v == Q35_APM_ACPI_ENABLE || v == Q35_APM_ACPI_DISABLE)
		return Q35_SMI_NONE;
	if (!(s->smi_en & Q35_SMI_EN_APMC))
		return Q35_SMI_NONE;
	s->smi_sts |= Q35_SMI_STS_APM;
	return (s->negotiated & Q35_SMI_F_BROADCAST) ? Q35_SMI_ALL : Q35_SMI_CURRENT;
}

void q35_smi_reg_write(struct q35_smi *s, unsigned int off, uint32_t v)
{
	if (off == 0) {
		if (s->smi_lock)
			v |= s->smi_en & Q35_SMI_EN_GBL;
		s->smi_en = v;
	} else if (off == 4) {
		s->smi_sts &= ~v;
	}
}

uint32_t q35_smi_reg_read(const struct q35_smi *s, unsigned int off)
{
	return off == 0 ? s->smi_en : off == 4 ? s->smi_sts : 0;
}

void q35_smi_pmcon(struct q35_smi *s, uint16_t v)
{
	if (v & Q35_GEN_PMCON_SMI_LCK)
		s->smi_lock = true;
}

uint8_t q35_smi_features_ok(struct q35_smi *s, uint64_t supported)
{
	if (s->features_ok)
		return 1;
	if (s->requested & ~supported)
		return 0;
	s->negotiated = s->requested;
	s->features_ok = true;
	return 1;
}
