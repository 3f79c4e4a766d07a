// SPDX-License-Identifier: MIT
/* q35 SMM (vmm/dev/q35_smm.h): the SMRAM state machine (the views the
 * SMRAM/ESMRAMC values give; D_LCK through the MCH's config space, the
 * extended TSEG query), APM writes raising SMIs only with SMI_EN.APMC_EN
 * (broadcast once negotiated), SMI_EN's GBL_SMI_EN locked by SMI_LOCK, the
 * fw_cfg negotiation as OVMF's SmmControl2Dxe does it, and the secure
 * variable flash refusing writes from outside SMM. */
#include <linux/kvm.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/dev/pflash.h"
#include "vmm/dev/q35.h"
#include "vmm/dev/q35_smm.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/vm/vcpu.h"

static void q35_wr(int slot, uint32_t off, uint32_t v, uint32_t len)
{
	mmio_wr(ARCH_Q35_ECAM_GPA + ((uint64_t)slot << 15) + off, v, len);
}

static uint32_t q35_rd(int slot, uint32_t off, uint32_t len)
{
	return mmio_rd(ARCH_Q35_ECAM_GPA + ((uint64_t)slot << 15) + off, len);
}

static uint32_t pio_rd(uint16_t port, uint32_t len)
{
	uint32_t v = 0;

	tbus_access(&tbus_pio, port, &v, len, 0);
	return v;
}

static void pio_wr(uint16_t port, uint32_t v, uint32_t len)
{
	tbus_access(&tbus_pio, port, &v, len, 1);
}

static void test_views(void)
{
	struct device_smram v;

	q35_smram_view(Q35_SMRAM_C_BASE_SEG, Q35_ESMRAMC_DEFAULT, &v); /* reset */
	CHECK(!v.aseg_normal && !v.aseg_smm && v.tseg == 0);
	/* OVMF's SmmAccessPei: TSEG_EXT | T_EN, then G_SMRAME: closed */
	q35_smram_view(Q35_SMRAM_G_SMRAME | 2, 0x38 | 0x06 | Q35_ESMRAMC_T_EN, &v);
	CHECK(!v.aseg_normal && v.aseg_smm);
	CHECK_EQ_U64(v.tseg, 16u << 20);
	/* "open" TSEG: T_EN clear */
	q35_smram_view(Q35_SMRAM_G_SMRAME | 2, 0x38 | 0x06, &v);
	CHECK_EQ_U64(v.tseg, 0);
	/* the sizes */
	q35_smram_view(Q35_SMRAM_G_SMRAME, Q35_ESMRAMC_T_EN, &v);
	CHECK_EQ_U64(v.tseg, 1u << 20);
	q35_smram_view(Q35_SMRAM_G_SMRAME, 0x02 | Q35_ESMRAMC_T_EN, &v);
	CHECK_EQ_U64(v.tseg, 2u << 20);
	q35_smram_view(Q35_SMRAM_G_SMRAME, 0x04 | Q35_ESMRAMC_T_EN, &v);
	CHECK_EQ_U64(v.tseg, 8u << 20);
	/* T_EN without G_SMRAME: nothing */
	q35_smram_view(0, 0x06 | Q35_ESMRAMC_T_EN, &v);
	CHECK_EQ_U64(v.tseg, 0);
	/* A/B segment: D_OPEN shows it outside SMM unless H_SMRAME */
	q35_smram_view(Q35_SMRAM_D_OPEN | Q35_SMRAM_G_SMRAME, 0, &v);
	CHECK(v.aseg_normal && v.aseg_smm);
	q35_smram_view(Q35_SMRAM_D_OPEN | Q35_SMRAM_G_SMRAME, Q35_ESMRAMC_H_SMRAME, &v);
	CHECK(!v.aseg_normal && !v.aseg_smm);
}

static void test_lock(void)
{
	struct pci_host h;
	struct q35 *q;

	tbus_n = 0;
	CHECK(thost_init(&h, NULL) == 0);
	CHECK(q35_create(&q, &h, &tbus_pio) == 0);
	CHECK(q35_enable_smm(q, NULL) == 0);
	CHECK_EQ_U64(q35_rd(0, Q35_SMRAM, 1), Q35_SMRAM_C_BASE_SEG);
	CHECK_EQ_U64(q35_rd(0, Q35_ESMRAMC, 1), Q35_ESMRAMC_DEFAULT);
	/* PlatformPei's extended TSEG query */
	q35_wr(0, Q35_EXT_TSEG, Q35_EXT_TSEG_QUERY, 2);
	CHECK_EQ_U64(q35_rd(0, Q35_EXT_TSEG, 2), 16);
	/* SmmAccessPei writes the TSEG base and later computes its SMRAM map
	 * from what TSEGMB reads back (0 put the SMM core at address 0) */
	q35_wr(0, Q35_TSEGMB, 0x1f000000u, 4);
	CHECK_EQ_U64(q35_rd(0, Q35_TSEGMB, 4), 0x1f000000u);
	q35_wr(0, Q35_TOLUD, 0x2000, 2);
	CHECK_EQ_U64(q35_rd(0, Q35_TOLUD, 2), 0x2000);
	/* SmmAccessPei: TSEG_EXT | T_EN, G_SMRAME; C_BASE_SEG stays */
	q35_wr(0, Q35_ESMRAMC, 0x07, 1);
	q35_wr(0, Q35_SMRAM, Q35_SMRAM_G_SMRAME, 1);
	CHECK_EQ_U64(q35_rd(0, Q35_ESMRAMC, 1), 0x3f);
	CHECK_EQ_U64(q35_rd(0, Q35_SMRAM, 1), Q35_SMRAM_G_SMRAME | Q35_SMRAM_C_BASE_SEG);
	/* open (D_OPEN, T_EN clear), then close and lock */
	q35_wr(0, Q35_SMRAM, Q35_SMRAM_D_OPEN | Q35_SMRAM_G_SMRAME, 1);
	q35_wr(0, Q35_ESMRAMC, 0x06, 1);
	CHECK_EQ_U64(q35_rd(0, Q35_ESMRAMC, 1) & Q35_ESMRAMC_T_EN, 0);
	q35_wr(0, Q35_ESMRAMC, 0x07, 1);
	q35_wr(0, Q35_SMRAM, Q35_SMRAM_D_OPEN | Q35_SMRAM_D_LCK | Q35_SMRAM_G_SMRAME, 1);
	/* D_LCK cleared D_OPEN: locked and closed */
	CHECK_EQ_U64(q35_rd(0, Q35_SMRAM, 1), 0x1a);
	/* the guest cannot reopen: D_OPEN, D_LCK, G_SMRAME and ESMRAMC frozen */
	q35_wr(0, Q35_SMRAM, Q35_SMRAM_D_OPEN | Q35_SMRAM_G_SMRAME, 1);
	CHECK_EQ_U64(q35_rd(0, Q35_SMRAM, 1), 0x1a);
	q35_wr(0, Q35_SMRAM, 0, 1);
	CHECK_EQ_U64(q35_rd(0, Q35_SMRAM, 1), 0x1a);
	q35_wr(0, Q35_ESMRAMC, 0x00, 1);
	CHECK_EQ_U64(q35_rd(0, Q35_ESMRAMC, 1), 0x3f);
	q35_destroy(q);
	pci_host_release(&h);
}

static void test_apm(void)
{
	struct pci_host h;
	struct q35 *q;
	const uint16_t smi_en = ARCH_PM1A_EVT_PORT + Q35_SMI_EN_OFF;

	tbus_n = 0;
	CHECK(thost_init(&h, NULL) == 0);
	CHECK(q35_create(&q, &h, &tbus_pio) == 0);
	CHECK(q35_enable_smm(q, NULL) == 0);
	/* SmmControl2Dxe: APMC_EN must read clear (set = "no SMI support") */
	CHECK_EQ_U64(pio_rd(smi_en, 4), 0);
	pio_wr(Q35_APM_STS_PORT, 0x5a, 1);
	pio_wr(Q35_APM_CNT_PORT, 0x01, 1); /* not enabled: no SMI */
	CHECK_EQ_U64(q35_smis(q), 0);
	CHECK_EQ_U64(pio_rd(Q35_APM_STS_PORT, 1), 0x5a);
	pio_wr(smi_en, Q35_SMI_EN_APMC | Q35_SMI_EN_GBL, 4);
	q35_wr(Q35_LPC_SLOT, Q35_GEN_PMCON_1, Q35_GEN_PMCON_SMI_LCK, 2);
	/* GBL_SMI_EN is locked now; APMC_EN is not */
	pio_wr(smi_en, Q35_SMI_EN_APMC, 4);
	CHECK_EQ_U64(pio_rd(smi_en, 4), Q35_SMI_EN_APMC | Q35_SMI_EN_GBL);
	q35_wr(Q35_LPC_SLOT, Q35_GEN_PMCON_1, 0, 2); /* SMI_LOCK stays */
	CHECK_EQ_U64(q35_rd(Q35_LPC_SLOT, Q35_GEN_PMCON_1, 2), Q35_GEN_PMCON_SMI_LCK);
	pio_wr(Q35_APM_CNT_PORT, 0x01, 1);
	CHECK_EQ_U64(q35_smis(q), 1);
	CHECK_EQ_U64(pio_rd(smi_en + 4, 4) & Q35_SMI_STS_APM, Q35_SMI_STS_APM);
	pio_wr(smi_en + 4, Q35_SMI_STS_APM, 4); /* write 1 to clear */
	CHECK_EQ_U64(pio_rd(smi_en + 4, 4), 0);
	/* ACPI enable/disable raise none */
	pio_wr(Q35_APM_CNT_PORT, Q35_APM_ACPI_ENABLE, 1);
	pio_wr(Q35_APM_CNT_PORT, Q35_APM_ACPI_DISABLE, 1);
	CHECK_EQ_U64(q35_smis(q), 1);
	q35_destroy(q);
	pci_host_release(&h);
}

static void test_apm_pure(void)
{
	struct q35_smi s = {.smi_en = Q35_SMI_EN_APMC};

	CHECK(q35_smi_apm_write(&s, Q35_APM_CNT_PORT, 0x10) == Q35_SMI_CURRENT);
	s.requested = Q35_SMI_F_BROADCAST;
	CHECK_EQ_U64(q35_smi_features_ok(&s, Q35_SMI_F_BROADCAST), 1);
	CHECK(q35_smi_apm_write(&s, Q35_APM_CNT_PORT, 0x10) == Q35_SMI_ALL);
	s.smi_en = 0;
	CHECK(q35_smi_apm_write(&s, Q35_APM_CNT_PORT, 0x10) == Q35_SMI_NONE);
}

/* fw_cfg: find file name's key */
static uint16_t fw_key(struct fw_cfg *fc, const char *name)
{
	uint8_t e[64];
	uint32_t n;
	uint16_t key = FW_CFG_FILE_DIR;

	fw_cfg_pio_write(fc, FW_CFG_PORT_SEL, &key, 2);
	for (int i = 0; i < 4; i++)
		fw_cfg_pio_read(fc, FW_CFG_PORT_DATA, (uint8_t *)&n + 3 - i, 1);
	for (uint32_t k = 0; k < n; k++) {
		for (int i = 0; i < 64; i++)
			fw_cfg_pio_read(fc, FW_CFG_PORT_DATA, e + i, 1);
		if (!strcmp((char *)e + 8, name))
			return (uint16_t)(e[4] << 8 | e[5]);
	}
	return 0;
}

static uint8_t ram[0x4000];
static struct guest_mem mem = {.n = 1, .r = {{.gpa = 0, .size = sizeof(ram), .host = ram}}};

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* QemuFwCfgWriteBytes: a DMA write of n bytes from ram[0x1000] */
static uint32_t fw_write(struct fw_cfg *fc, uint16_t key, const void *buf, uint32_t n)
{
	uint8_t hi[4] = {0}, lo[4];

	memcpy(ram + 0x1000, buf, n);
	put_be32(ram + 0x100, (uint32_t)key << 16 | FW_CFG_DMA_SELECT | FW_CFG_DMA_WRITE);
	put_be32(ram + 0x104, n);
	put_be32(ram + 0x108, 0);
	put_be32(ram + 0x10c, 0x1000);
	put_be32(lo, 0x100);
	fw_cfg_pio_write(fc, FW_CFG_PORT_DMA, hi, 4);
	fw_cfg_pio_write(fc, FW_CFG_PORT_DMA + 4, lo, 4);
	return (uint32_t)ram[0x100] << 24 | ram[0x101] << 16 | ram[0x102] << 8 | ram[0x103];
}

static uint8_t fw_read8(struct fw_cfg *fc, uint16_t key)
{
	uint8_t v = 0;

	fw_cfg_pio_write(fc, FW_CFG_PORT_SEL, &key, 2);
	fw_cfg_pio_read(fc, FW_CFG_PORT_DATA, &v, 1);
	return v;
}

static void test_negotiation(void)
{
	struct pci_host h;
	struct q35 *q;
	struct fw_cfg *fc;
	uint64_t want = 0xff, bcast = Q35_SMI_F_BROADCAST, none = 0;
	uint16_t sup, req, ok;

	tbus_n = 0;
	CHECK(thost_init(&h, NULL) == 0);
	CHECK(q35_create(&q, &h, &tbus_pio) == 0);
	CHECK(fw_cfg_create(&fc, &mem) == 0);
	CHECK(q35_smm_fw_cfg(q, fc) == 0); /* no SMM: no files */
	CHECK_EQ_U64(fw_key(fc, "etc/smi/supported-features"), 0);
	CHECK(q35_enable_smm(q, NULL) == 0);
	CHECK(q35_smm_fw_cfg(q, fc) == 0);
	sup = fw_key(fc, "etc/smi/supported-features");
	req = fw_key(fc, "etc/smi/requested-features");
	ok = fw_key(fc, "etc/smi/features-ok");
	CHECK(sup && req && ok);
	CHECK_EQ_U64(fw_read8(fc, sup), 1); /* broadcast only */
	/* the supported set is read-only; an oversized write is refused */
	CHECK_EQ_U64(fw_write(fc, sup, &want, 8), FW_CFG_DMA_ERROR);
	CHECK_EQ_U64(fw_write(fc, req, ram, 9), FW_CFG_DMA_ERROR);
	/* asking for more than supported: features-ok reads 0, still open */
	CHECK_EQ_U64(fw_write(fc, req, &want, 8), 0);
	CHECK_EQ_U64(fw_read8(fc, ok), 0);
	/* broadcast: accepted, then locked (a later request changes nothing) */
	CHECK_EQ_U64(fw_write(fc, req, &bcast, 8), 0);
	CHECK_EQ_U64(fw_read8(fc, ok), 1);
	CHECK_EQ_U64(fw_write(fc, req, &none, 8), 0);
	CHECK_EQ_U64(fw_read8(fc, ok), 1);
	/* an APM write now raises a broadcast SMI (counted; no VM here) */
	pio_wr(ARCH_PM1A_EVT_PORT + Q35_SMI_EN_OFF, Q35_SMI_EN_APMC, 4);
	pio_wr(Q35_APM_CNT_PORT, 0x10, 1);
	CHECK_EQ_U64(q35_smis(q), 1);
	fw_cfg_destroy(fc);
	q35_destroy(q);
	pci_host_release(&h);
}

/* The variable flash of an SMM VM: outside SMM a program command and its
 * data do nothing (the file's bytes stay), reads give the array; in SMM
 * (kvm_run.flags & KVM_RUN_X86_SMM on the exit) it programs. */
static void test_secure_flash(void)
{
	static uint8_t arr[8192];
	struct kvm_run run = {0};
	struct vcpu v = {.run = &run};
	struct pflash f;
	uint8_t b;

	memset(arr, 0xff, sizeof(arr));
	CHECK(pflash_init(&f, arr, sizeof(arr), 4096) == 0);
	f.secure = true;
	device_set_vcpu(&v); /* a vCPU, not in SMM */
	b = 0x10;
	pflash_ops.write(&f, 0x100, &b, 1); /* program */
	b = 0x42;
	pflash_ops.write(&f, 0x100, &b, 1);
	CHECK_EQ_U64(arr[0x100], 0xff);
	b = 0x20;
	pflash_ops.write(&f, 0x100, &b, 1); /* erase */
	b = 0xd0;
	pflash_ops.write(&f, 0x100, &b, 1);
	CHECK_EQ_U64(f.refused, 4);
	arr[0x200] = 0x33;
	pflash_ops.read(&f, 0x200, &b, 1);
	CHECK_EQ_U64(b, 0x33);
	/* a thread that is no vCPU is not in SMM either */
	device_set_vcpu(NULL);
	b = 0x10;
	pflash_ops.write(&f, 0x100, &b, 1);
	b = 0x42;
	pflash_ops.write(&f, 0x100, &b, 1);
	CHECK_EQ_U64(arr[0x100], 0xff);
	/* in SMM */
	device_set_vcpu(&v);
	run.flags = KVM_RUN_X86_SMM;
	b = 0x10;
	pflash_ops.write(&f, 0x100, &b, 1);
	b = 0x42;
	pflash_ops.write(&f, 0x100, &b, 1);
	CHECK_EQ_U64(arr[0x100], 0x42);
	CHECK_EQ_U64(f.refused, 6);
	device_set_vcpu(NULL);
	pflash_release(&f);
}

/* A chipset with SMM as OVMF leaves it: the fw_cfg device in *fc. */
static struct q35 *smm_chipset(struct pci_host *h, struct fw_cfg **fc)
{
	struct q35 *q;

	tbus_n = 0;
	CHECK(thost_init(h, NULL) == 0);
	CHECK(q35_create(&q, h, &tbus_pio) == 0);
	CHECK(q35_enable_smm(q, NULL) == 0);
	CHECK(fw_cfg_create(fc, &mem) == 0);
	CHECK(q35_smm_fw_cfg(q, *fc) == 0);
	return q;
}

static void smm_chipset_free(struct q35 *q, struct pci_host *h, struct fw_cfg *fc)
{
	fw_cfg_destroy(fc);
	q35_destroy(q);
	pci_host_release(h);
}

static void smm_save(struct q35 *q, struct pci_host *h, struct snap_buf *b)
{
	b->len = 0;
	pci_dev_save(&h->bridge, b);
	pci_dev_save(q35_lpc_dev(q), b);
	q35_save(q, b);
	CHECK(b->err == 0);
}

/* Load b into a new chipset with SMM: q35_load's answer (the PCI loads
 * must pass); the chipset in *qo / *h / *fc when they are given. */
static int smm_load(const struct snap_buf *b, struct q35 **qo, struct pci_host *h,
		    struct fw_cfg **fc)
{
	struct pci_host h1;
	struct fw_cfg *fc1;
	struct q35 *q = smm_chipset(h ? h : &h1, fc ? fc : &fc1);
	struct snap_cur c = snap_cur_make(b->p, b->len);
	int r;

	CHECK(pci_dev_load(h ? h : &h1, h ? &h->bridge : &h1.bridge, &c) == 0);
	CHECK(pci_dev_load(h ? h : &h1, q35_lpc_dev(q), &c) == 0);
	r = q35_load(q, &c);
	if (qo)
		*qo = q;
	else
		smm_chipset_free(q, &h1, fc1);
	return r;
}

/* The bytes of the last item of b (q35's SMI state). */
static uint8_t *smi_item(struct snap_buf *b)
{
	return b->p + b->len - 32; /* 32 bytes, after tag and length */
}

/* Snapshot of the SMM chipset: SMRAM locked and closed, SMI_EN, SMI_STS,
 * the APM bytes, SMI_LOCK and the negotiated broadcast come back in a new
 * chipset, locks in force (save -> load -> save gives the same bytes but
 * the PM timer's count); what the guest cannot make is refused. */
static void test_snapshot(void)
{
	const uint16_t smi_en = ARCH_PM1A_EVT_PORT + Q35_SMI_EN_OFF;
	uint64_t bcast = Q35_SMI_F_BROADCAST;
	struct snap_buf b = {0}, b2 = {0}, bad = {0};
	struct pci_host h;
	struct fw_cfg *fc;
	struct q35 *q = smm_chipset(&h, &fc);
	uint32_t cnt = 0;

	q35_wr(0, Q35_EXT_TSEG, Q35_EXT_TSEG_QUERY, 2);
	q35_wr(0, Q35_ESMRAMC, 0x07, 1);
	q35_wr(0, Q35_SMRAM, Q35_SMRAM_D_OPEN | Q35_SMRAM_D_LCK | Q35_SMRAM_G_SMRAME, 1);
	pio_wr(smi_en, Q35_SMI_EN_APMC | Q35_SMI_EN_GBL, 4);
	q35_wr(Q35_LPC_SLOT, Q35_GEN_PMCON_1, Q35_GEN_PMCON_SMI_LCK, 2);
	CHECK_EQ_U64(fw_write(fc, fw_key(fc, "etc/smi/requested-features"), &bcast, 8), 0);
	CHECK_EQ_U64(fw_read8(fc, fw_key(fc, "etc/smi/features-ok")), 1);
	pio_wr(Q35_APM_STS_PORT, 0x5a, 1);
	pio_wr(Q35_APM_CNT_PORT, 0x10, 1);
	smm_save(q, &h, &b);
	smm_chipset_free(q, &h, fc);
	CHECK(smm_load(&b, &q, &h, &fc) == 0);
	CHECK_EQ_U64(q35_rd(0, Q35_SMRAM, 1), 0x1a);
	CHECK_EQ_U64(q35_rd(0, Q35_ESMRAMC, 1), 0x3f);
	CHECK_EQ_U64(q35_rd(0, Q35_EXT_TSEG, 2), 16);
	CHECK_EQ_U64(pio_rd(smi_en, 4), Q35_SMI_EN_APMC | Q35_SMI_EN_GBL);
	CHECK_EQ_U64(pio_rd(smi_en + 4, 4), Q35_SMI_STS_APM);
	CHECK_EQ_U64(pio_rd(Q35_APM_CNT_PORT, 2), 0x5a10);
	smm_save(q, &h, &b2);
	CHECK_EQ_U64(b2.len, b.len);
	/* the PM timer's count (the item after the two functions') differs */
	memcpy(b.p + b.len - 40 - 4, &cnt, 4);
	memcpy(b2.p + b2.len - 40 - 4, &cnt, 4);
	CHECK(b2.len == b.len && !memcmp(b.p, b2.p, b.len));
	/* the locks hold after the restore */
	q35_wr(0, Q35_SMRAM, Q35_SMRAM_D_OPEN | Q35_SMRAM_G_SMRAME, 1);
	q35_wr(0, Q35_ESMRAMC, 0, 1);
	CHECK_EQ_U64(q35_rd(0, Q35_SMRAM, 1), 0x1a);
	CHECK_EQ_U64(q35_rd(0, Q35_ESMRAMC, 1), 0x3f);
	pio_wr(smi_en, 0, 4);
	CHECK_EQ_U64(pio_rd(smi_en, 4), Q35_SMI_EN_GBL);
	q35_wr(Q35_LPC_SLOT, Q35_GEN_PMCON_1, 0, 2);
	CHECK_EQ_U64(q35_rd(Q35_LPC_SLOT, Q35_GEN_PMCON_1, 2), Q35_GEN_PMCON_SMI_LCK);
	/* broadcast stays negotiated: a new request is not accepted anew */
	bcast = 0;
	CHECK_EQ_U64(fw_write(fc, fw_key(fc, "etc/smi/requested-features"), &bcast, 8), 0);
	CHECK_EQ_U64(fw_read8(fc, fw_key(fc, "etc/smi/features-ok")), 1);
	smm_chipset_free(q, &h, fc);
	/* planted: SMI_STS bit 0, a feature not offered, SMI_LOCK unlike
	 * GEN_PMCON_1, SMRAM locked yet open, a flag of 2 */
	static const struct {
		size_t off; /* from the SMI item's bytes; ~0: the MCH's SMRAM */
		uint8_t v;
	} plant[] = {{4, 0x21}, {16, 3}, {26, 0}, {26, 2}, {27, 2}, {28, 1}, {~(size_t)0, 0x5a}};
	for (unsigned int i = 0; i < sizeof(plant) / sizeof(plant[0]); i++) {
		bad.len = 0;
		snap_buf_put(&bad, b.p, b.len);
		if (plant[i].off == ~(size_t)0)
			bad.p[8 + Q35_SMRAM] = plant[i].v;
		else
			smi_item(&bad)[plant[i].off] = plant[i].v;
		CHECK_EQ_U64(smm_load(&bad, NULL, NULL, NULL), -EINVAL);
	}
	/* without negotiation, features in force */
	bad.len = 0;
	snap_buf_put(&bad, b.p, b.len);
	smi_item(&bad)[27] = 0;
	CHECK_EQ_U64(smm_load(&bad, NULL, NULL, NULL), -EINVAL);
	/* truncated: no SMI item */
	bad.len = b.len - 40;
	CHECK_EQ_U64(smm_load(&bad, NULL, NULL, NULL), -EBADMSG);
	snap_buf_release(&b);
	snap_buf_release(&b2);
	snap_buf_release(&bad);
}

/* A vCPU's saved SMM state (KVM_VCPUEVENT_VALID_SMM) as the restore
 * checks it before KVM_SET_VCPU_EVENTS. */
static void test_vcpu_events(void)
{
	struct kvm_vcpu_events ev = {.flags = KVM_VCPUEVENT_VALID_SMM};
	const char *why;

	CHECK(snap_vcpu_events_check(&ev, false, &why) == 0);
	CHECK(snap_vcpu_events_check(&ev, true, &why) == 0);
	ev.smi.smm = ev.smi.smm_inside_nmi = ev.smi.pending = ev.smi.latched_init = 1;
	CHECK(snap_vcpu_events_check(&ev, true, &why) == 0);		 /* in SMM from an NMI */
	CHECK_EQ_U64(snap_vcpu_events_check(&ev, false, &why), -EINVAL); /* no SMM */
	CHECK(why != NULL);
	ev.smi.smm = 0;
	CHECK_EQ_U64(snap_vcpu_events_check(&ev, true, &why), -EINVAL); /* NMI, not in SMM */
	ev.smi.smm_inside_nmi = 0;
	ev.smi.pending = 2;
	CHECK_EQ_U64(snap_vcpu_events_check(&ev, true, &why), -EINVAL);
	ev.smi.pending = 0;
	ev.smi.latched_init = 0x80;
	CHECK_EQ_U64(snap_vcpu_events_check(&ev, true, &why), -EINVAL);
	ev.smi.latched_init = 1; /* an INIT can be latched outside SMM too */
	CHECK(snap_vcpu_events_check(&ev, false, &why) == 0);
	ev.smi.pending = 1;
	CHECK_EQ_U64(snap_vcpu_events_check(&ev, false, &why), -EINVAL);
	ev.flags = 0; /* KVM always reports it: a VM with SMM needs it */
	CHECK_EQ_U64(snap_vcpu_events_check(&ev, true, &why), -EINVAL);
	CHECK(snap_vcpu_events_check(&ev, false, &why) == 0);
}

int main(void)
{
	TEST_RUN(test_views);
	TEST_RUN(test_lock);
	TEST_RUN(test_apm);
	TEST_RUN(test_apm_pure);
	TEST_RUN(test_negotiation);
	TEST_RUN(test_secure_flash);
	TEST_RUN(test_snapshot);
	TEST_RUN(test_vcpu_events);
	return test_summary();
}
