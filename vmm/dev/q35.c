// SPDX-License-Identifier: MIT
/*
 * q35.c - the MCH and ICH9 LPC registers OVMF expects (q35.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch/x86_64/layout.h"
#include "vmm/dev/q35.h"
#include "vmm/dev/q35_smm.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"

struct q35 {
	struct pci_host *host;
	struct bus *pio;
	struct pci_dev lpc;
	uint64_t t0_ns;
	bool lpc_added, tmr_registered;
	/* SMM (q35_enable_smm) */
	struct vm *vm;
	pthread_mutex_t smi_lock;
	struct q35_smi smi;
	bool smm, apm_registered, smi_registered;
	uint64_t smi_raised;
};

static uint64_t q35_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t q35_pm_timer(uint64_t t0_ns, uint64_t now_ns)
{
	uint64_t ns = now_ns - t0_ns;
	/* ticks = ns * f / 1e9 without overflow for centuries of uptime */
	uint64_t ticks = (ns / 1000000000ull) * Q35_PM_TMR_HZ +
			 (ns % 1000000000ull) * Q35_PM_TMR_HZ / 1000000000ull;

	return (uint32_t)(ticks & 0xffffff);
}

uint64_t q35_pm_timer_start(uint32_t count, uint64_t now_ns)
{
	/* the first time at which the timer counts count (t0 may wrap: the
	 * timer takes now - t0 modulo 2^64) */
	return now_ns - ((uint64_t)count * 1000000000ull + Q35_PM_TMR_HZ - 1) / Q35_PM_TMR_HZ;
}

static void q35_tmr_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct q35 *q = dev;
	uint32_t v = q35_pm_timer(q->t0_ns, q35_now_ns());
	uint8_t b[8] = {0};

	memcpy(b, &v, 4);
	memcpy(data, b + off, len); /* the bus keeps off + len within 4 */
}

static void q35_tmr_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	(void)dev, (void)off, (void)data, (void)len; /* read-only */
}

static const struct io_ops q35_tmr_ops = {q35_tmr_read, q35_tmr_write};

/* PMBASE or ACPI_CNTL written (host->lock held): vmlet's PM block does
 * not move. GEN_PMCON_1 (SMM): SMI_LOCK latches. */
static void q35_lpc_cfg_write(void *opaque, uint32_t off, uint32_t len)
{
	struct q35 *q = opaque;
	uint32_t base;

	if (q->smm && off <= Q35_GEN_PMCON_1 && off + len > Q35_GEN_PMCON_1) {
		pthread_mutex_lock(&q->smi_lock);
		q35_smi_pmcon(&q->smi, q->lpc.cfg[Q35_GEN_PMCON_1]);
		if (q->smi.smi_lock) /* set until reset */
			q->lpc.wmask[Q35_GEN_PMCON_1] &= (uint8_t)~Q35_GEN_PMCON_SMI_LCK;
		pthread_mutex_unlock(&q->smi_lock);
	}
	if (off >= Q35_ACPI_CNTL + 1 || off + len <= Q35_PMBASE)
		return;
	memcpy(&base, q->lpc.cfg + Q35_PMBASE, 4);
	base &= 0xff80;
	if ((q->lpc.cfg[Q35_ACPI_CNTL] & 0x80) && base != ARCH_PM1A_EVT_PORT)
		log_warn_once("q35: the guest moved PMBASE to 0x%x: vmlet's ACPI PM "
			      "registers stay at 0x%x",
			      base, ARCH_PM1A_EVT_PORT);
}

static const struct pci_dev_cb q35_lpc_cb = {.cfg_write = q35_lpc_cfg_write};

static void q35_mch(struct pci_dev *b)
{
	const uint16_t vendor = 0x8086, device = Q35_MCH_DEVICE_ID;

	memcpy(b->cfg + PCI_VENDOR_ID, &vendor, 2);
	memcpy(b->cfg + PCI_DEVICE_ID, &device, 2);
	memset(b->wmask + Q35_PCIEXBAR, 0xff, 8);
	memset(b->wmask + 0x90, 0xff, 7); /* PAM0..6 */
	b->wmask[0x9d] = 0xff;		  /* SMRAM */
	b->wmask[0x9e] = 0xff;		  /* ESMRAMC */
	/* what OVMF's SmmAccessPei programs and reads back: GGC, and the
	 * TSEG base (TSEGMB) its SMRAM map is computed from, TOLUD, GBSM,
	 * BGSM. QEMU leaves the MCH's whole device-specific space writable;
	 * these are the registers OVMF uses. */
	memset(b->wmask + Q35_GGC, 0xff, 2);
	memset(b->wmask + Q35_TSEGMB, 0xff, 4);
	memset(b->wmask + Q35_TOLUD, 0xff, 2);
	memset(b->wmask + Q35_GBSM, 0xff, 4);
	memset(b->wmask + Q35_BGSM, 0xff, 4);
}

static void q35_lpc(struct q35 *q)
{
	struct pci_dev *d = &q->lpc;

	pci_dev_init(d, 0x8086, Q35_LPC_DEVICE_ID, 0x060100, 2, 0x1af4, 0x1100, &q35_lpc_cb, q);
	d->cfg[PCI_INTERRUPT_PIN] = 0;
	d->cfg[Q35_PMBASE] = 1; /* I/O space indicator */
	d->wmask[Q35_PMBASE] = 0x80;
	d->wmask[Q35_PMBASE + 1] = 0xff;
	d->wmask[Q35_ACPI_CNTL] = 0x87; /* ACPI_EN, SCI IRQ select */
	memset(d->cfg + 0x60, 0x80, 4); /* PIRQA-D routing: disabled */
	memset(d->cfg + 0x68, 0x80, 4); /* PIRQE-H */
	memset(d->wmask + 0x60, 0x8f, 4);
	memset(d->wmask + 0x68, 0x8f, 4);
	memset(d->wmask + Q35_RCBA, 0xff, 4);
	d->wmask[Q35_RCBA] = 0x01; /* bits 13:1 reserved, 31:14 the base */
	d->wmask[Q35_RCBA + 1] = 0xc0;
}

/* MCH config written (host->lock held): SMRAM, ESMRAMC, EXT_TSEG. */
static void q35_mch_cfg_write(void *opaque, uint32_t off, uint32_t len)
{
	struct q35 *q = opaque;
	struct pci_dev *b = &q->host->bridge;
	struct device_smram v;

	(void)off, (void)len;
	q35_smram_written(b->cfg, b->wmask);
	q35_smram_view(b->cfg[Q35_SMRAM], b->cfg[Q35_ESMRAMC], &v);
	if (device_smm_map(q->vm, &v))
		log_warn_once("q35: SMRAM 0x%02x / ESMRAMC 0x%02x could not be mapped",
			      b->cfg[Q35_SMRAM], b->cfg[Q35_ESMRAMC]);
}

static const struct pci_dev_cb q35_mch_cb = {.cfg_write = q35_mch_cfg_write};

static void q35_apm_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct q35 *q = dev;
	uint8_t b[2];

	pthread_mutex_lock(&q->smi_lock);
	b[0] = q->smi.apm_cnt, b[1] = q->smi.apm_sts;
	pthread_mutex_unlock(&q->smi_lock);
	memset(data, 0, len);
	memcpy(data, b + off, len > 2 - off ? 2 - off : len);
}

static void q35_apm_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct q35 *q = dev;
	const uint8_t *in = data;
	enum q35_smi_raise how = Q35_SMI_NONE;

	pthread_mutex_lock(&q->smi_lock);
	for (uint32_t i = 0; i < len && off + i < 2; i++) {
		enum q35_smi_raise h =
		    q35_smi_apm_write(&q->smi, (uint16_t)(Q35_APM_CNT_PORT + off + i), in[i]);
		how = h > how ? h : how;
	}
	pthread_mutex_unlock(&q->smi_lock);
	if (how != Q35_SMI_NONE) {
		__atomic_add_fetch(&q->smi_raised, 1, __ATOMIC_RELAXED);
		if (device_smm_raise(q->vm, how == Q35_SMI_ALL))
			log_warn_once("q35: an SMI could not be raised");
	}
}

static const struct io_ops q35_apm_ops = {q35_apm_read, q35_apm_write};

/* SMI_EN (0..3) and SMI_STS (4..7): 32-bit registers, any access size. */
static void q35_smi_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct q35 *q = dev;
	uint32_t v[2];

	pthread_mutex_lock(&q->smi_lock);
	v[0] = q35_smi_reg_read(&q->smi, 0), v[1] = q35_smi_reg_read(&q->smi, 4);
	pthread_mutex_unlock(&q->smi_lock);
	memcpy(data, (uint8_t *)v + off, len); /* the bus keeps off + len within 8 */
}

static void q35_smi_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct q35 *q = dev;
	unsigned int reg = off < 4 ? 0 : 4;
	uint32_t v;

	pthread_mutex_lock(&q->smi_lock);
	v = q35_smi_reg_read(&q->smi, reg);
	if (reg == 4) /* write 1 to clear: the bytes not written clear nothing */
		v = 0;
	memcpy((uint8_t *)&v + (off - reg), data, off - reg + len > 4 ? 4 - (off - reg) : len);
	q35_smi_reg_write(&q->smi, reg, v);
	pthread_mutex_unlock(&q->smi_lock);
}

static const struct io_ops q35_smi_ops = {q35_smi_read, q35_smi_write};

int q35_enable_smm(struct q35 *q, struct vm *vm)
{
	struct pci_dev *b = &q->host->bridge;
	int r;

	q->vm = vm;
	pthread_mutex_init(&q->smi_lock, NULL);
	q->smm = true;
	b->cb = &q35_mch_cb;
	b->opaque = q;
	b->cfg[Q35_SMRAM] = Q35_SMRAM_C_BASE_SEG;
	b->wmask[Q35_SMRAM] = Q35_SMRAM_WMASK;
	b->cfg[Q35_ESMRAMC] = Q35_ESMRAMC_DEFAULT;
	b->wmask[Q35_ESMRAMC] = Q35_ESMRAMC_WMASK;
	b->wmask[Q35_EXT_TSEG] = b->wmask[Q35_EXT_TSEG + 1] = 0xff;
	q->lpc.wmask[Q35_GEN_PMCON_1] = Q35_GEN_PMCON_SMI_LCK;
	r = bus_register(q->pio, Q35_APM_CNT_PORT, 2, &q35_apm_ops, q);
	q->apm_registered = !r;
	if (!r) {
		r = bus_register(q->pio, ARCH_PM1A_EVT_PORT + Q35_SMI_EN_OFF, 8, &q35_smi_ops, q);
		q->smi_registered = !r;
	}
	if (r)
		return error_errno(r, "q35: cannot claim the APM / SMI_EN ports");
	return 0;
}

static void q35_features_select(void *opaque, uint8_t *data, size_t len)
{
	struct q35 *q = opaque;

	pthread_mutex_lock(&q->smi_lock);
	data[0] = q35_smi_features_ok(&q->smi, Q35_SMI_F_BROADCAST);
	pthread_mutex_unlock(&q->smi_lock);
	(void)len;
}

static void q35_features_written(void *opaque, const uint8_t *data, size_t len)
{
	struct q35 *q = opaque;
	uint64_t want = 0;

	for (size_t i = 0; i < len && i < 8; i++)
		want |= (uint64_t)data[i] << (8 * i);
	pthread_mutex_lock(&q->smi_lock);
	q->smi.requested = want;
	pthread_mutex_unlock(&q->smi_lock);
}

int q35_smm_fw_cfg(struct q35 *q, struct fw_cfg *fc)
{
	const uint8_t sup[8] = {(uint8_t)Q35_SMI_F_BROADCAST}, req[8] = {0}, ok = 0;
	const struct fw_cfg_file_cb wcb = {NULL, q35_features_written, q};
	const struct fw_cfg_file_cb scb = {q35_features_select, NULL, q};
	int r;

	if (!q || !q->smm)
		return 0;
	r = fw_cfg_add_file(fc, "etc/smi/supported-features", sup, sizeof(sup));
	if (!r)
		r = fw_cfg_add_file_cb(fc, "etc/smi/requested-features", req, sizeof(req), &wcb);
	if (!r)
		r = fw_cfg_add_file_cb(fc, "etc/smi/features-ok", &ok, 1, &scb);
	return r;
}

uint64_t q35_smis(struct q35 *q)
{
	return q ? __atomic_load_n(&q->smi_raised, __ATOMIC_RELAXED) : 0;
}

int q35_create(struct q35 **out, struct pci_host *h, struct bus *pio)
{
	struct q35 *q = calloc(1, sizeof(*q));
	int r;

	if (!q)
		return -ENOMEM;
	q->host = h;
	q->pio = pio;
	q->t0_ns = q35_now_ns();
	q35_mch(&h->bridge);
	q35_lpc(q);
	r = pci_dev_add_at(h, &q->lpc, Q35_LPC_SLOT);
	if (r) {
		pthread_mutex_destroy(&q->lpc.msix_lock);
		free(q);
		return error_errno(r, "q35: slot 00:1f.0 for the LPC bridge is taken");
	}
	q->lpc_added = true;
	r = pci_host_add_ecam(h, ARCH_Q35_ECAM_GPA, ARCH_Q35_ECAM_SIZE);
	if (!r) {
		r = bus_register(pio, ARCH_PM_TMR_PORT, 4, &q35_tmr_ops, q);
		if (r)
			error_errno(r, "q35: cannot claim the PM timer port 0x%x",
				    ARCH_PM_TMR_PORT);
		q->tmr_registered = !r;
	}
	if (r) {
		q35_destroy(q);
		return r;
	}
	*out = q;
	return 0;
}

void q35_destroy(struct q35 *q)
{
	if (!q)
		return;
	if (q->tmr_registered)
		bus_unregister(q->pio, ARCH_PM_TMR_PORT);
	if (q->apm_registered)
		bus_unregister(q->pio, Q35_APM_CNT_PORT);
	if (q->smi_registered)
		bus_unregister(q->pio, ARCH_PM1A_EVT_PORT + Q35_SMI_EN_OFF);
	if (q->smm) {
		q->host->bridge.cb = NULL;
		pthread_mutex_destroy(&q->smi_lock);
	}
	if (q->lpc_added)
		pci_dev_remove(q->host, &q->lpc); /* destroys its msix_lock */
	free(q);
}

enum { Q35_SNAP_TMR = 1, Q35_SNAP_SMI };

/* The ICH9 SMI state as saved: little-endian fields, no padding. */
struct q35_snap_smi {
	uint32_t smi_en, smi_sts;
	uint64_t requested, negotiated;
	uint8_t apm_cnt, apm_sts, smi_lock, features_ok;
	uint32_t zero;
} __attribute__((packed));

void q35_save(struct q35 *q, struct snap_buf *b)
{
	uint32_t count = q35_pm_timer(q->t0_ns, q35_now_ns());
	struct q35_snap_smi s = {0};

	snap_buf_item(b, Q35_SNAP_TMR, &count, sizeof(count));
	if (!q->smm)
		return;
	pthread_mutex_lock(&q->smi_lock);
	s.smi_en = q->smi.smi_en, s.smi_sts = q->smi.smi_sts;
	s.requested = q->smi.requested, s.negotiated = q->smi.negotiated;
	s.apm_cnt = q->smi.apm_cnt, s.apm_sts = q->smi.apm_sts;
	s.smi_lock = q->smi.smi_lock, s.features_ok = q->smi.features_ok;
	pthread_mutex_unlock(&q->smi_lock);
	snap_buf_item(b, Q35_SNAP_SMI, &s, sizeof(s));
}

/* What the guest cannot make of the SMI registers and of SMRAM (the MCH's
 * and LPC's config space are loaded already): NULL, or the reason. */
static const char *q35_smm_refused(const struct q35 *q, const struct q35_snap_smi *s)
{
	const uint8_t *mch = q->host->bridge.cfg;
	bool pmcon_lock = q->lpc.cfg[Q35_GEN_PMCON_1] & Q35_GEN_PMCON_SMI_LCK;

	if (s->smi_lock > 1 || s->features_ok > 1 || s->zero)
		return "a flag is neither 0 nor 1";
	if (s->smi_sts & ~(uint32_t)Q35_SMI_STS_APM)
		return "SMI_STS has a bit only the APM write sets";
	if (s->negotiated & ~Q35_SMI_F_BROADCAST)
		return "a feature negotiated that is not offered";
	if (!s->features_ok && s->negotiated)
		return "features in force without a negotiation";
	if (s->smi_lock != pmcon_lock)
		return "SMI_LOCK differs from GEN_PMCON_1";
	if ((mch[Q35_SMRAM] & Q35_SMRAM_D_LCK) && (mch[Q35_SMRAM] & Q35_SMRAM_D_OPEN))
		return "SMRAM locked (D_LCK) and open (D_OPEN)";
	return NULL;
}

/* SMM: the SMI registers, SMRAM's lock and the views it gives. */
static int q35_load_smm(struct q35 *q, struct snap_cur *c)
{
	struct pci_dev *b = &q->host->bridge;
	struct q35_snap_smi s;
	struct device_smram v;
	const char *why;
	int r;

	if (snap_cur_want(c, Q35_SNAP_SMI, &s, sizeof(s)))
		return error_errno(-EBADMSG, "q35: saved SMI state does not fit");
	why = q35_smm_refused(q, &s);
	if (why)
		return error_errno(-EINVAL, "q35: saved SMM state refused: %s", why);
	pthread_mutex_lock(&q->smi_lock);
	q->smi = (struct q35_smi){.smi_en = s.smi_en,
				  .smi_sts = s.smi_sts,
				  .apm_cnt = s.apm_cnt,
				  .apm_sts = s.apm_sts,
				  .smi_lock = s.smi_lock,
				  .requested = s.requested,
				  .negotiated = s.negotiated,
				  .features_ok = s.features_ok};
	if (q->smi.smi_lock)
		q->lpc.wmask[Q35_GEN_PMCON_1] &= (uint8_t)~Q35_GEN_PMCON_SMI_LCK;
	pthread_mutex_unlock(&q->smi_lock);
	pthread_rwlock_wrlock(&q->host->lock);
	q35_smram_written(b->cfg, b->wmask);
	q35_smram_view(b->cfg[Q35_SMRAM], b->cfg[Q35_ESMRAMC], &v);
	r = q->vm ? device_smm_map(q->vm, &v) : 0;
	pthread_rwlock_unlock(&q->host->lock);
	return r;
}

int q35_load(struct q35 *q, struct snap_cur *c)
{
	uint32_t count;

	if (snap_cur_want(c, Q35_SNAP_TMR, &count, sizeof(count)) || count > 0xffffff)
		return error_errno(-EBADMSG, "q35: saved PM timer state does not fit");
	if (q->smm) {
		int r = q35_load_smm(q, c);

		if (r)
			return r;
	}
	q->t0_ns = q35_pm_timer_start(count, q35_now_ns());
	return 0;
}

struct pci_dev *q35_lpc_dev(struct q35 *q)
{
	return &q->lpc;
}
