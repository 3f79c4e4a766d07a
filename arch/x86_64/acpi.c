/* SPDX-License-Identifier: MIT */
/*
 * acpi.c - the ACPI tables of a vmlet guest (ACPI 6.5 chapter 5):
 *
 *   RSDP (rev 2, first, 16-byte aligned) -> XSDT -> FADT, MADT, MCFG, TPM2
 *   FADT -> FACS, DSDT
 *
 * The platform is a full (not hardware-reduced) ACPI one, because that is
 * what gives a guest a fixed-feature power button and an S5 sleep state on
 * plain I/O ports: PM1a event block at ARCH_PM1A_EVT_PORT (PM1_STS,
 * PM1_EN), PM1a control block at ARCH_PM1A_CNT_PORT, SCI on ARCH_SCI_IRQ.
 * There is no SMI command port, so OSPM takes the platform as already in
 * ACPI mode: the PM1a control block must read with SCI_EN set. No PM timer,
 * no GPE blocks, no RTC/CMOS, no i8042 keyboard (the FADT says so); reset
 * is the i8042 pulse (write 0xFE to port 0x64) as the FADT RESET_REG.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/acpi_tables.h"
#include "arch/x86_64/aml.h"

#define OEM_ID	     "VMLET "
#define OEM_TABLE_ID "VMLETVM "
#define CREATOR_ID   "VMLT"

#define RESET_PORT  0x64
#define RESET_VALUE 0xfe

/* Bytes of output: cursor over buf with 16-byte aligned tables. */
struct acpi_out {
	uint8_t *buf;
	size_t cap, len;
	gpa_t base;
};

static uint8_t checksum(const uint8_t *p, size_t n)
{
	uint8_t sum = 0;

	while (n--)
		sum = (uint8_t)(sum + *p++);
	return (uint8_t)-sum;
}

/* Reserve n bytes aligned to align; NULL when they do not fit. */
static uint8_t *out_alloc(struct acpi_out *o, size_t n, size_t align, gpa_t *gpa)
{
	size_t at = (o->len + align - 1) & ~(align - 1);

	if (at > o->cap || n > o->cap - at)
		return NULL;
	memset(o->buf + o->len, 0, at - o->len + n);
	o->len = at + n;
	*gpa = o->base + at;
	return o->buf + at;
}

static void header_init(struct acpi_header *h, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(h->signature, sig, 4);
	h->length = len;
	h->revision = rev;
	memcpy(h->oem_id, OEM_ID, 6);
	memcpy(h->oem_table_id, OEM_TABLE_ID, 8);
	h->oem_revision = 1;
	memcpy(h->creator_id, CREATOR_ID, 4);
	h->creator_revision = 1;
}

static void header_finish(uint8_t *table)
{
	struct acpi_header *h = (struct acpi_header *)table;

	h->checksum = 0;
	h->checksum = checksum(table, h->length);
}

static struct acpi_gas gas_io(uint16_t port, uint8_t bits, uint8_t access)
{
	struct acpi_gas g = {ACPI_GAS_IO, bits, 0, access, port};

	return g;
}

static int build_facs(struct acpi_out *o, gpa_t *gpa)
{
	/* §5.2.10: the FACS must be 64-byte aligned. */
	struct acpi_facs *f = (struct acpi_facs *)out_alloc(o, sizeof(*f), 64, gpa);

	if (!f)
		return -ENOSPC;
	memcpy(f->signature, "FACS", 4);
	f->length = sizeof(*f);
	f->version = 3;
	return 0;
}

static int build_fadt(struct acpi_out *o, const struct arch_acpi_config *cfg, gpa_t facs,
		      gpa_t dsdt, gpa_t *gpa)
{
	struct acpi_fadt *f = (struct acpi_fadt *)out_alloc(o, sizeof(*f), 16, gpa);

	if (!f)
		return -ENOSPC;
	header_init(&f->h, "FACP", sizeof(*f), 6);
	f->firmware_ctrl = (uint32_t)facs;
	f->x_firmware_ctrl = facs;
	f->dsdt = (uint32_t)dsdt;
	f->x_dsdt = dsdt;
	f->sci_int = ARCH_SCI_IRQ;
	f->pm1a_evt_blk = ARCH_PM1A_EVT_PORT;
	f->pm1a_cnt_blk = ARCH_PM1A_CNT_PORT;
	f->pm1_evt_len = 4;
	f->pm1_cnt_len = 2;
	f->x_pm1a_evt_blk = gas_io(ARCH_PM1A_EVT_PORT, 32, ACPI_ACCESS_U16);
	f->x_pm1a_cnt_blk = gas_io(ARCH_PM1A_CNT_PORT, 16, ACPI_ACCESS_U16);
	f->p_lvl2_lat = 101;  /* > 100: C2 not supported */
	f->p_lvl3_lat = 1001; /* > 1000: C3 not supported */
	f->iapc_boot_arch = ACPI_IAPC_VGA_ABSENT | ACPI_IAPC_CMOS_ABSENT |
			    (cfg->serial ? ACPI_IAPC_LEGACY_DEVICES : 0);
	/* Power button: fixed feature (PWR_BUTTON clear); no sleep button. */
	f->flags =
	    ACPI_FADT_WBINVD | ACPI_FADT_PROC_C1 | ACPI_FADT_SLP_BUTTON | ACPI_FADT_RESET_REG_SUP;
	f->reset_reg = gas_io(RESET_PORT, 8, ACPI_ACCESS_U8);
	f->reset_value = RESET_VALUE;
	f->fadt_minor_version = 5;
	memcpy(&f->hypervisor_vendor_identity, "VMLET\0\0\0", 8);
	header_finish((uint8_t *)f);
	return 0;
}

static int madt_add(struct acpi_out *o, const void *entry, size_t n)
{
	gpa_t unused;
	uint8_t *p = out_alloc(o, n, 1, &unused);

	if (!p)
		return -ENOSPC;
	memcpy(p, entry, n);
	return 0;
}

/* §5.2.12.12: IDs below 255 use Processor Local APIC structures, the
 * others Processor Local x2APIC structures. UID = vCPU index. */
static int madt_cpus(struct acpi_out *o, const struct arch_acpi_config *cfg, int *any_x2apic)
{
	int r = 0;

	*any_x2apic = 0;
	for (uint32_t i = 0; i < cfg->n_vcpus && !r; i++) {
		uint32_t id = cfg->apic_ids[i];

		if (id < 255) {
			struct acpi_madt_lapic e = {ACPI_MADT_LAPIC, sizeof(e), (uint8_t)i,
						    (uint8_t)id, 1};

			if (i > 255)
				return -EINVAL; /* an xAPIC CPU needs an 8-bit UID */
			r = madt_add(o, &e, sizeof(e));
		} else {
			struct acpi_madt_x2apic e = {ACPI_MADT_X2APIC, sizeof(e), 0, id, 1, i};

			*any_x2apic = 1;
			r = madt_add(o, &e, sizeof(e));
		}
	}
	return r;
}

static int build_madt(struct acpi_out *o, const struct arch_acpi_config *cfg, gpa_t *gpa)
{
	const struct acpi_madt_ioapic ioapic = {
	    ACPI_MADT_IOAPIC, sizeof(ioapic), 0, 0, (uint32_t)ARCH_IOAPIC_GPA, 0};
	/* ISA IRQ 0 (PIT) is wired to IOAPIC pin 2; bus-default flags. */
	const struct acpi_madt_iso iso_pit = {ACPI_MADT_ISO, sizeof(iso_pit), 0, 0, 2, 0};
	/* §5.2.9: the SCI is a sharable, level, active-low interrupt. */
	const struct acpi_madt_iso iso_sci = {
	    ACPI_MADT_ISO, sizeof(iso_sci), 0,
	    ARCH_SCI_IRQ,  ARCH_SCI_IRQ,    ACPI_INTI_POLARITY_LOW | ACPI_INTI_TRIGGER_LEVEL};
	const struct acpi_madt_lapic_nmi nmi = {ACPI_MADT_LAPIC_NMI, sizeof(nmi), 0xff, 0, 1};
	const struct acpi_madt_x2apic_nmi x2nmi = {
	    ACPI_MADT_X2APIC_NMI, sizeof(x2nmi), 0, 0xffffffffu, 1, {0}};
	size_t start = o->len;
	struct acpi_madt *m = (struct acpi_madt *)out_alloc(o, sizeof(*m), 16, gpa);
	int r, x2;

	if (!m)
		return -ENOSPC;
	start = (size_t)((uint8_t *)m - o->buf);
	header_init(&m->h, "APIC", 0, 5);
	m->local_apic_address = (uint32_t)ARCH_LAPIC_GPA;
	m->flags = ACPI_MADT_PCAT_COMPAT;
	r = madt_cpus(o, cfg, &x2);
	if (!r)
		r = madt_add(o, &ioapic, sizeof(ioapic));
	if (!r)
		r = madt_add(o, &iso_pit, sizeof(iso_pit));
	if (!r)
		r = madt_add(o, &iso_sci, sizeof(iso_sci));
	if (!r)
		r = madt_add(o, &nmi, sizeof(nmi));
	if (!r && x2)
		r = madt_add(o, &x2nmi, sizeof(x2nmi));
	if (r)
		return r;
	m = (struct acpi_madt *)(o->buf + start);
	m->h.length = (uint32_t)(o->len - start);
	header_finish(o->buf + start);
	return 0;
}

static int build_mcfg(struct acpi_out *o, gpa_t *gpa)
{
	struct acpi_mcfg *m;
	struct acpi_mcfg_alloc *a;
	size_t len = sizeof(*m) + sizeof(*a);
	uint8_t *p = out_alloc(o, len, 16, gpa);

	if (!p)
		return -ENOSPC;
	m = (struct acpi_mcfg *)p;
	a = (struct acpi_mcfg_alloc *)(p + sizeof(*m));
	header_init(&m->h, "MCFG", (uint32_t)len, 1);
	a->base = ARCH_PCI_ECAM_GPA;
	a->segment = 0;
	a->start_bus = 0;
	a->end_bus = ARCH_PCI_ECAM_BUSES - 1;
	header_finish(p);
	return 0;
}

/* The TPM2 table for the CRB at ARCH_TPM_CRB_GPA (arch.h: cfg->tpm), or
 * for the FIFO (cfg->tpm_tis: start method 6 and no control area, as
 * QEMU's tpm-tis; Linux's tpm_tis binds only with start method 6). */
static int build_tpm2(struct acpi_out *o, const struct arch_acpi_config *cfg, gpa_t *gpa)
{
	struct acpi_tpm2 *t = (struct acpi_tpm2 *)out_alloc(o, sizeof(*t), 16, gpa);

	if (!t)
		return -ENOSPC;
	header_init(&t->h, "TPM2", sizeof(*t), 4);
	t->control_area = cfg->tpm_tis ? 0 : ARCH_TPM_CRB_GPA + ARCH_TPM_CRB_CTRL;
	t->start_method = cfg->tpm_tis ? ACPI_TPM2_START_FIFO : ACPI_TPM2_START_CRB;
	header_finish((uint8_t *)t);
	return 0;
}

static int build_xsdt(struct acpi_out *o, const gpa_t *tables, size_t n, gpa_t *gpa)
{
	size_t len = sizeof(struct acpi_header) + 8 * n;
	uint8_t *p = out_alloc(o, len, 16, gpa);

	if (!p)
		return -ENOSPC;
	header_init((struct acpi_header *)p, "XSDT", (uint32_t)len, 1);
	for (size_t i = 0; i < n; i++)
		memcpy(p + sizeof(struct acpi_header) + 8 * i, &tables[i], 8);
	header_finish(p);
	return 0;
}

static void build_rsdp(uint8_t *p, gpa_t xsdt)
{
	struct acpi_rsdp *r = (struct acpi_rsdp *)p;

	memset(r, 0, sizeof(*r));
	memcpy(r->signature, "RSD PTR ", 8);
	memcpy(r->oem_id, OEM_ID, 6);
	r->revision = 2;
	r->length = sizeof(*r);
	r->xsdt_address = xsdt;
	r->checksum = checksum(p, 20);
	r->extended_checksum = checksum(p, sizeof(*r));
}

/* ---- DSDT ---------------------------------------------------------------- */

#define PCI_SLOTS 32

/* GSI of slot's INTx pin: the config's hint, else the usual swizzle over
 * IOAPIC pins 16..23. */
static uint32_t pci_gsi(const struct arch_acpi_config *cfg, unsigned slot, unsigned pin)
{
	if (cfg->pci_irq_pins && cfg->pci_irq_pins[slot])
		return cfg->pci_irq_pins[slot];
	return 16 + ((slot + pin) & 7);
}

/* _PRT (ACPI 6.5 §6.2.13): Package { Address, Pin, Source 0, GSI } per slot
 * and pin of bus 0; Address = slot << 16 | 0xFFFF (any function). */
static void dsdt_prt(struct aml *a, const struct arch_acpi_config *cfg)
{
	size_t prt;

	aml_name(a, "_PRT");
	prt = aml_package_open(a, (PCI_SLOTS - 1) * 4);
	for (unsigned slot = 1; slot < PCI_SLOTS; slot++) {
		for (unsigned pin = 0; pin < 4; pin++) {
			size_t e = aml_package_open(a, 4);

			aml_integer(a, (uint64_t)slot << 16 | 0xffff);
			aml_integer(a, pin);
			aml_integer(a, 0);
			aml_integer(a, pci_gsi(cfg, slot, pin));
			aml_close(a, e);
		}
	}
	aml_close(a, prt);
}

/* PCI Firmware Spec §4.1: a PCIe host bridge (PNP0A08, compatible PNP0A03)
 * decoding config mechanism #1 ports, the bus range of the ECAM, the I/O
 * space around 0xCF8 and the 32-bit MMIO windows (below and above ECAM). */
static void dsdt_pci(struct aml *a, const struct arch_acpi_config *cfg)
{
	struct aml_rt rt = {.len = 0};
	size_t dev = aml_device_open(a, "PCI0");

	aml_name_eisaid(a, "_HID", "PNP0A08");
	aml_name_eisaid(a, "_CID", "PNP0A03");
	aml_name_integer(a, "_SEG", 0);
	aml_name_integer(a, "_BBN", 0);
	aml_name_integer(a, "_UID", 0);
	aml_rt_word_bus(&rt, 0, ARCH_PCI_ECAM_BUSES - 1);
	aml_rt_io(&rt, 0xcf8, 8);
	aml_rt_word_io(&rt, 0x0000, 0x0cf7);
	aml_rt_word_io(&rt, 0x0d00, 0xffff);
	aml_rt_dword_mem(&rt, (uint32_t)ARCH_PCI_MMIO32_START,
			 (uint32_t)(ARCH_PCI_MMIO32_START + ARCH_PCI_MMIO32_SIZE - 1));
	aml_rt_dword_mem(&rt, (uint32_t)ARCH_PCI_MMIO32_HI_START,
			 (uint32_t)(ARCH_PCI_MMIO32_HI_START + ARCH_PCI_MMIO32_HI_SIZE - 1));
	aml_rt_end(&rt);
	aml_name_rt(a, "_CRS", &rt);
	dsdt_prt(a, cfg);
	aml_close(a, dev);
}

/* The TPM as QEMU's tpm-crb / tpm-tis describe it: MSFT0101 over the CRB
 * window or the TIS window (no IRQ: the driver polls). */
static void dsdt_tpm(struct aml *a, bool tis)
{
	struct aml_rt rt = {.len = 0};
	size_t dev = aml_device_open(a, "TPM");

	aml_name_string_obj(a, "_HID", "MSFT0101");
	aml_name_string_obj(a, "_STR", "TPM 2.0 Device");
	aml_name_integer(a, "_UID", 1);
	aml_rt_mem32_fixed(&rt, (uint32_t)ARCH_TPM_CRB_GPA,
			   (uint32_t)(tis ? ARCH_TPM_TIS_SIZE : ARCH_TPM_CRB_SIZE));
	aml_rt_end(&rt);
	aml_name_rt(a, "_CRS", &rt);
	aml_close(a, dev);
}

static void dsdt_com1(struct aml *a)
{
	struct aml_rt rt = {.len = 0};
	size_t dev = aml_device_open(a, "COM1");

	aml_name_eisaid(a, "_HID", "PNP0501"); /* 16550A-compatible UART */
	aml_name_integer(a, "_UID", 1);
	aml_rt_io(&rt, ARCH_COM1_PORT, 8);
	aml_rt_irq(&rt, ARCH_COM1_IRQ);
	aml_rt_end(&rt);
	aml_name_rt(a, "_CRS", &rt);
	aml_close(a, dev);
}

/* Processor devices (§8.4, ACPI0007) matching the MADT UIDs. */
static void dsdt_cpus(struct aml *a, const struct arch_acpi_config *cfg)
{
	static const char hex[] = "0123456789ABCDEF";

	for (uint32_t i = 0; i < cfg->n_vcpus; i++) {
		char name[5] = {'C', hex[(i >> 8) & 15], hex[(i >> 4) & 15], hex[i & 15], 0};
		size_t dev = aml_device_open(a, name);

		aml_name_string_obj(a, "_HID", "ACPI0007");
		aml_name_integer(a, "_UID", i);
		aml_close(a, dev);
	}
}

static int build_dsdt(struct acpi_out *o, const struct arch_acpi_config *cfg, gpa_t *gpa)
{
	size_t start = (o->len + 15) & ~(size_t)15, hdr = sizeof(struct acpi_header);
	uint8_t *p = out_alloc(o, hdr, 16, gpa);
	struct aml a;
	size_t blk;

	if (!p || cfg->n_vcpus > 4096)
		return p ? -EINVAL : -ENOSPC;
	aml_init(&a, o->buf + start + hdr, o->cap - start - hdr);

	/* \_S5: SLP_TYPa, SLP_TYPb, reserved, reserved (§7.4.2). */
	aml_name(&a, "\\_S5");
	blk = aml_package_open(&a, 4);
	aml_integer(&a, ARCH_PM_S5_SLP_TYP);
	aml_integer(&a, ARCH_PM_S5_SLP_TYP);
	aml_integer(&a, 0);
	aml_integer(&a, 0);
	aml_close(&a, blk);
	/* \_PIC(mode) (§5.8.1): nothing to switch, the IOAPIC is always on. */
	blk = aml_method_open(&a, "\\_PIC", 1, 0);
	aml_close(&a, blk);

	blk = aml_scope_open(&a, "\\_SB");
	dsdt_cpus(&a, cfg);
	if (cfg->serial)
		dsdt_com1(&a);
	if (cfg->pci)
		dsdt_pci(&a, cfg);
	if (cfg->tpm)
		dsdt_tpm(&a, cfg->tpm_tis);
	aml_close(&a, blk);
	if (a.err)
		return a.err;

	o->len = start + hdr + a.len;
	header_init((struct acpi_header *)p, "DSDT", (uint32_t)(hdr + a.len), 2);
	header_finish(p);
	return 0;
}

static int config_valid(const struct arch_acpi_config *cfg)
{
	if (!cfg->n_vcpus || !cfg->apic_ids)
		return 0;
	for (uint32_t i = 0; i < cfg->n_vcpus; i++)
		if (cfg->apic_ids[i] == 0xffffffffu)
			return 0;
	return 1;
}

int arch_acpi_build(uint8_t *buf, size_t cap, gpa_t base, const struct arch_acpi_config *cfg,
		    size_t *used)
{
	struct acpi_out o = {buf, cap, 0, base};
	gpa_t rsdp, facs, dsdt, fadt, madt, mcfg = 0, tpm2 = 0, xsdt, tables[4];
	uint8_t *rsdp_p;
	size_t nt = 0;
	int r;

	/* FADT and FACS/DSDT pointers are 32-bit: the tables live below 4 GiB. */
	if (!buf || !cfg || !config_valid(cfg) || (base & 15) || base + cap > 0x100000000ull)
		return -EINVAL;
	rsdp_p = out_alloc(&o, sizeof(struct acpi_rsdp), 16, &rsdp);
	if (!rsdp_p)
		return -ENOSPC;
	r = build_facs(&o, &facs);
	if (!r)
		r = build_dsdt(&o, cfg, &dsdt);
	if (!r)
		r = build_fadt(&o, cfg, facs, dsdt, &fadt);
	if (!r)
		r = build_madt(&o, cfg, &madt);
	if (!r && cfg->pci)
		r = build_mcfg(&o, &mcfg);
	if (!r && cfg->tpm)
		r = build_tpm2(&o, cfg, &tpm2);
	if (r)
		return r;
	tables[nt++] = fadt;
	tables[nt++] = madt;
	if (cfg->pci)
		tables[nt++] = mcfg;
	if (cfg->tpm)
		tables[nt++] = tpm2;
	r = build_xsdt(&o, tables, nt, &xsdt);
	if (r)
		return r;
	build_rsdp(rsdp_p, xsdt);
	*used = o.len;
	return 0;
}
