/* SPDX-License-Identifier: MIT */
/*
 * ACPI tables (arch/x86_64/acpi.c) and the AML emitter (aml.c): structure,
 * lengths, checksums, MADT entries, DSDT contents. With VMLET_ACPI_DUMP_DIR
 * set, every table of a few configurations is also written there as
 * CONFIG-SIG.dat for tests/sh/acpi_iasl.sh to disassemble.
 */
#include <errno.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "arch/x86_64/acpi_tables.h"
#include "arch/x86_64/aml.h"
#include "tests/lib/bytes.h"
#include "tests/lib/test.h"

#define BUF_SIZE ARCH_ACPI_MAX

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

struct built {
	uint8_t buf[BUF_SIZE];
	size_t used;
	const uint8_t *t[8]; /* tables reached from the XSDT, then DSDT, FACS */
	size_t nt;
};

/* Host pointer of a table the guest would find at gpa, length-checked. */
static const uint8_t *at(const struct built *b, uint64_t gpa, size_t len)
{
	if (gpa < ARCH_ACPI_GPA || gpa - ARCH_ACPI_GPA + len > b->used)
		return NULL;
	return b->buf + (gpa - ARCH_ACPI_GPA);
}

static const uint8_t *table(const struct built *b, uint64_t gpa)
{
	const uint8_t *h = at(b, gpa, sizeof(struct acpi_header));

	if (!h || !at(b, gpa, rd32(h + 4)))
		return NULL;
	return h;
}

static const uint8_t *find(const struct built *b, const char *sig)
{
	for (size_t i = 0; i < b->nt; i++)
		if (!memcmp(b->t[i], sig, 4))
			return b->t[i];
	return NULL;
}

/* Build, then walk RSDP -> XSDT -> tables -> DSDT/FACS checking checksums. */
static int build_walk(struct built *b, const struct arch_acpi_config *cfg)
{
	const uint8_t *x, *fadt, *p;
	size_t n;

	memset(b, 0, sizeof(*b));
	CHECK_EQ_U64(arch_acpi_build(b->buf, BUF_SIZE, ARCH_ACPI_GPA, cfg, &b->used), 0);
	CHECK(!memcmp(b->buf, "RSD PTR ", 8));
	CHECK_EQ_U64(sum(b->buf, 20), 0);
	CHECK_EQ_U64(sum(b->buf, 36), 0);
	CHECK_EQ_U64(b->buf[15], 2);
	CHECK_EQ_U64(rd32(b->buf + 20), 36);
	x = table(b, rd64(b->buf + 24));
	if (!x) {
		test_fail(__FILE__, __LINE__, "no XSDT");
		return -1;
	}
	CHECK(!memcmp(x, "XSDT", 4));
	CHECK_EQ_U64(sum(x, rd32(x + 4)), 0);
	b->t[b->nt++] = x;
	n = (rd32(x + 4) - 36) / 8;
	for (size_t i = 0; i < n && b->nt < 6; i++) {
		p = table(b, rd64(x + 36 + 8 * i));
		CHECK(p != NULL);
		if (!p)
			return -1;
		CHECK_EQ_U64(sum(p, rd32(p + 4)), 0);
		b->t[b->nt++] = p;
	}
	fadt = find(b, "FACP");
	if (!fadt) {
		test_fail(__FILE__, __LINE__, "no FADT");
		return -1;
	}
	p = table(b, rd64(fadt + offsetof(struct acpi_fadt, x_dsdt)));
	CHECK(p && !memcmp(p, "DSDT", 4));
	CHECK(p && sum(p, rd32(p + 4)) == 0);
	CHECK_EQ_U64(rd32(fadt + offsetof(struct acpi_fadt, dsdt)),
		     rd64(fadt + offsetof(struct acpi_fadt, x_dsdt)));
	if (p)
		b->t[b->nt++] = p;
	p = at(b, rd32(fadt + offsetof(struct acpi_fadt, firmware_ctrl)), 64);
	CHECK(p && !memcmp(p, "FACS", 4) && rd32(p + 4) == 64);
	CHECK_EQ_U64(rd32(fadt + offsetof(struct acpi_fadt, firmware_ctrl)) % 64, 0);
	if (p)
		b->t[b->nt++] = p;
	return 0;
}

static void test_fadt(void)
{
	static struct built b;
	uint32_t ids[1] = {0};
	struct arch_acpi_config cfg = {{1, 1, 1}, ids, 1, 0, NULL, 1, 0, 0};
	struct acpi_fadt f;

	if (build_walk(&b, &cfg))
		return;
	memcpy(&f, find(&b, "FACP"), sizeof(f));
	CHECK_EQ_U64(f.h.length, 276);
	CHECK_EQ_U64(f.h.revision, 6);
	CHECK_EQ_U64(f.fadt_minor_version, 5);
	CHECK_EQ_U64(f.sci_int, ARCH_SCI_IRQ);
	CHECK_EQ_U64(f.smi_cmd, 0);
	CHECK_EQ_U64(f.pm1a_evt_blk, ARCH_PM1A_EVT_PORT);
	CHECK_EQ_U64(f.pm1_evt_len, 4);
	CHECK_EQ_U64(f.pm1a_cnt_blk, ARCH_PM1A_CNT_PORT);
	CHECK_EQ_U64(f.pm1_cnt_len, 2);
	CHECK_EQ_U64(f.x_pm1a_evt_blk.address, ARCH_PM1A_EVT_PORT);
	CHECK_EQ_U64(f.x_pm1a_evt_blk.space_id, 1);
	CHECK_EQ_U64(f.x_pm1a_cnt_blk.address, ARCH_PM1A_CNT_PORT);
	CHECK_EQ_U64(f.x_pm1a_cnt_blk.bit_width, 16);
	CHECK_EQ_U64(f.flags & ACPI_FADT_HW_REDUCED, 0);
	CHECK_EQ_U64(f.flags & ACPI_FADT_PWR_BUTTON, 0); /* fixed-feature power button */
	CHECK(f.flags & ACPI_FADT_RESET_REG_SUP);
	CHECK_EQ_U64(f.reset_reg.space_id, 1);
	CHECK_EQ_U64(f.reset_reg.address, 0x64);
	CHECK_EQ_U64(f.reset_value, 0xfe);
	CHECK_EQ_U64(f.iapc_boot_arch & ACPI_IAPC_8042, 0);
	CHECK(f.iapc_boot_arch & ACPI_IAPC_CMOS_ABSENT);
	CHECK(!find(&b, "MCFG"));
	/* Everything sits in the area the e820 map reserves. */
	CHECK(b.used <= ARCH_ACPI_MAX);
}

struct madt_seen {
	uint32_t ids[512];
	size_t n_ids, n_lapic, n_x2apic, n_ioapic, n_nmi, n_x2nmi;
	int iso_pit, iso_sci;
};

static void walk_madt(const uint8_t *m, struct madt_seen *s)
{
	uint32_t len = rd32(m + 4);

	memset(s, 0, sizeof(*s));
	CHECK_EQ_U64(rd32(m + 36), ARCH_LAPIC_GPA);
	CHECK_EQ_U64(rd32(m + 40) & 1, 1); /* PCAT_COMPAT */
	for (uint32_t off = 44; off < len;) {
		const uint8_t *e = m + off;

		CHECK(e[1] >= 2 && off + e[1] <= len);
		if (e[1] < 2 || off + e[1] > len)
			return;
		switch (e[0]) {
		case ACPI_MADT_LAPIC:
			CHECK_EQ_U64(e[1], 8);
			CHECK_EQ_U64(e[2], s->n_ids); /* UID = vCPU index */
			CHECK_EQ_U64(rd32(e + 4) & 1, 1);
			s->ids[s->n_ids++] = e[3];
			s->n_lapic++;
			break;
		case ACPI_MADT_X2APIC:
			CHECK_EQ_U64(e[1], 16);
			CHECK_EQ_U64(rd32(e + 12), s->n_ids);
			CHECK(rd32(e + 4) >= 255);
			s->ids[s->n_ids++] = rd32(e + 4);
			s->n_x2apic++;
			break;
		case ACPI_MADT_IOAPIC:
			CHECK_EQ_U64(rd32(e + 4), ARCH_IOAPIC_GPA);
			CHECK_EQ_U64(rd32(e + 8), 0);
			s->n_ioapic++;
			break;
		case ACPI_MADT_ISO:
			if (e[3] == 0 && rd32(e + 4) == 2)
				s->iso_pit++;
			if (e[3] == ARCH_SCI_IRQ && rd32(e + 4) == ARCH_SCI_IRQ &&
			    (e[8] | e[9] << 8) == 0xf) /* level, active low */
				s->iso_sci++;
			break;
		case ACPI_MADT_LAPIC_NMI:
			CHECK_EQ_U64(e[2], 0xff);
			CHECK_EQ_U64(e[5], 1);
			s->n_nmi++;
			break;
		case ACPI_MADT_X2APIC_NMI:
			CHECK_EQ_U64(rd32(e + 4), 0xffffffffu);
			s->n_x2nmi++;
			break;
		default:
			test_fail(__FILE__, __LINE__, "unexpected MADT entry type %u", e[0]);
		}
		off += e[1];
	}
}

static void test_madt(void)
{
	static struct built b;
	static uint32_t ids[400];
	struct arch_topology t = {4, 100, 1};
	struct arch_acpi_config cfg = {t, ids, 400, 1, NULL, 1, 0, 0};
	struct madt_seen s;

	for (uint32_t i = 0; i < 400; i++)
		ids[i] = arch_topo_apic_id(&t, i);
	if (build_walk(&b, &cfg))
		return;
	walk_madt(find(&b, "APIC"), &s);
	CHECK_EQ_U64(s.n_ids, 400);
	for (uint32_t i = 0; i < s.n_ids; i++)
		CHECK_EQ_U64(s.ids[i], ids[i]);
	/* IDs 0-99, 128-227 are xAPIC; 256-355 and 384-483 need x2APIC. */
	CHECK_EQ_U64(s.n_lapic, 200);
	CHECK_EQ_U64(s.n_x2apic, 200);
	CHECK_EQ_U64(s.n_ioapic, 1);
	CHECK_EQ_U64(s.iso_pit, 1);
	CHECK_EQ_U64(s.iso_sci, 1);
	CHECK_EQ_U64(s.n_nmi, 1);
	CHECK_EQ_U64(s.n_x2nmi, 1);

	/* A small machine: only xAPIC entries, no x2APIC NMI. */
	t = (struct arch_topology){2, 3, 2};
	for (uint32_t i = 0; i < 12; i++)
		ids[i] = arch_topo_apic_id(&t, i);
	cfg = (struct arch_acpi_config){t, ids, 12, 0, NULL, 0, 0, 0};
	if (build_walk(&b, &cfg))
		return;
	walk_madt(find(&b, "APIC"), &s);
	CHECK_EQ_U64(s.n_lapic, 12);
	CHECK_EQ_U64(s.n_x2apic + s.n_x2nmi, 0);
	CHECK_EQ_U64(s.ids[6], 8); /* package 1 starts at APIC ID 8 */
}

static int contains(const uint8_t *p, size_t n, const void *pat, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp(p + i, pat, m))
			return 1;
	return 0;
}

static void test_dsdt_and_mcfg(void)
{
	static struct built b;
	uint32_t ids[2] = {0, 1};
	struct arch_acpi_config cfg = {{1, 2, 1}, ids, 2, 1, NULL, 1, 0, 0};
	/* Name(_S5_, Package(4) {5, 5, 0, 0}) */
	static const uint8_t s5[] = {0x08, '\\', '_',  'S',  '5',  '_',	 0x12, 0x08,
				     0x04, 0x0a, 0x05, 0x0a, 0x05, 0x00, 0x00};
	static const uint8_t pnp0501[] = {0x0c, 0x41, 0xd0, 0x05, 0x01};
	static const uint8_t pnp0a08[] = {0x0c, 0x41, 0xd0, 0x0a, 0x08};
	/* IO(Decode16, 0x3F8, 0x3F8, 1, 8), IRQNoFlags() {4} */
	static const uint8_t com1_crs[] = {0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03,
					   0x01, 0x08, 0x22, 0x10, 0x00};
	static const uint8_t cpu1[] = {'C', '0', '0', '1', 0x08, '_', 'H', 'I', 'D', 0x0d,
				       'A', 'C', 'P', 'I', '0',	 '0', '0', '7', 0};
	const uint8_t *d, *m;
	size_t dl;

	CHECK_EQ_U64(ARCH_PM_S5_SLP_TYP, 5);
	if (build_walk(&b, &cfg))
		return;
	d = find(&b, "DSDT");
	dl = rd32(d + 4);
	CHECK(contains(d, dl, s5, sizeof(s5)));
	CHECK(contains(d, dl, pnp0501, sizeof(pnp0501)));
	CHECK(contains(d, dl, com1_crs, sizeof(com1_crs)));
	CHECK(contains(d, dl, pnp0a08, sizeof(pnp0a08)));
	CHECK(contains(d, dl, "_PRT", 4));
	CHECK(contains(d, dl, cpu1, sizeof(cpu1)));
	m = find(&b, "MCFG");
	CHECK(m != NULL);
	if (m) {
		CHECK_EQ_U64(rd32(m + 4), 60);
		CHECK_EQ_U64(rd64(m + 44), ARCH_PCI_ECAM_GPA);
		CHECK_EQ_U64(m[54], 0);
		CHECK_EQ_U64(m[55], ARCH_PCI_ECAM_BUSES - 1);
	}

	cfg.serial = 0;
	cfg.pci = 0;
	if (build_walk(&b, &cfg))
		return;
	d = find(&b, "DSDT");
	dl = rd32(d + 4);
	CHECK(!contains(d, dl, pnp0501, sizeof(pnp0501)));
	CHECK(!contains(d, dl, pnp0a08, sizeof(pnp0a08)));
	CHECK(contains(d, dl, s5, sizeof(s5)));
	CHECK(!find(&b, "MCFG"));
}

static void test_errors(void)
{
	static uint8_t buf[BUF_SIZE];
	uint32_t ids[2] = {0, 1};
	struct arch_acpi_config cfg = {{1, 2, 1}, ids, 2, 1, NULL, 1, 0, 0};
	size_t used = 0;

	CHECK_EQ_U64(arch_acpi_build(buf, 200, ARCH_ACPI_GPA, &cfg, &used), (uint64_t)-ENOSPC);
	for (size_t cap = 0; cap < 1200; cap += 7) {
		int r = arch_acpi_build(buf, cap, ARCH_ACPI_GPA, &cfg, &used);

		CHECK(r == -ENOSPC || (r == 0 && used <= cap));
	}
	CHECK_EQ_U64(arch_acpi_build(buf, BUF_SIZE, ARCH_ACPI_GPA + 4, &cfg, &used),
		     (uint64_t)-EINVAL);
	cfg.n_vcpus = 0;
	CHECK_EQ_U64(arch_acpi_build(buf, BUF_SIZE, ARCH_ACPI_GPA, &cfg, &used), (uint64_t)-EINVAL);
}

static void test_aml(void)
{
	uint8_t buf[512];
	struct aml a;
	size_t p;

	aml_init(&a, buf, sizeof(buf));
	aml_integer(&a, 0);
	aml_integer(&a, 1);
	aml_integer(&a, 0x2a);
	aml_integer(&a, 0x1234);
	aml_integer(&a, 0x12345678);
	aml_integer(&a, 0x100000000ull);
	static const uint8_t ints[] = {0x00, 0x01, 0x0a, 0x2a, 0x0b, 0x34, 0x12,
				       0x0c, 0x78, 0x56, 0x34, 0x12, 0x0e, 0,
				       0,    0,	   0,	 1,    0,    0,	   0};
	CHECK_EQ_U64(a.len, sizeof(ints));
	CHECK(!memcmp(buf, ints, sizeof(ints)));

	/* Name strings: single, dual, multi and root-prefixed. */
	aml_init(&a, buf, sizeof(buf));
	aml_name_string(&a, "\\_SB.PCI0.S1");
	static const uint8_t ns[] = {'\\', 0x2f, 3,   '_', 'S', 'B', '_', 'P',
				     'C',  'I',	 '0', 'S', '1', '_', '_'};
	CHECK_EQ_U64(a.len, sizeof(ns));
	CHECK(!memcmp(buf, ns, sizeof(ns)));
	aml_init(&a, buf, sizeof(buf));
	aml_name_string(&a, "A.B");
	CHECK_EQ_U64(buf[0], 0x2e);
	CHECK_EQ_U64(a.len, 9);
	aml_init(&a, buf, sizeof(buf));
	aml_name_string(&a, "1BAD");
	CHECK_EQ_U64(a.err, (uint64_t)-EINVAL);

	/* PkgLength: one byte below 64, two bytes (lead 0x4N) up to 4095. */
	aml_init(&a, buf, sizeof(buf));
	p = aml_package_open(&a, 3);
	aml_integer(&a, 5);
	aml_close(&a, p);
	static const uint8_t small[] = {0x12, 0x04, 0x03, 0x0a, 0x05};
	CHECK_EQ_U64(a.len, sizeof(small));
	CHECK(!memcmp(buf, small, sizeof(small)));
	aml_init(&a, buf, sizeof(buf));
	p = aml_package_open(&a, 100);
	for (int i = 0; i < 100; i++)
		aml_integer(&a, 0);
	aml_close(&a, p);
	/* body = 1 (count) + 100 = 101; +2 PkgLength bytes = 103 = 0x67 */
	CHECK_EQ_U64(a.len, 1 + 2 + 101);
	CHECK_EQ_U64(buf[1], 0x40 | 0x7);
	CHECK_EQ_U64(buf[2], 0x6);
	CHECK_EQ_U64(buf[3], 100);

	/* EISA IDs: PNP0A03 is the DWord 0x030AD041. */
	aml_init(&a, buf, sizeof(buf));
	aml_eisaid(&a, "PNP0A03");
	CHECK_EQ_U64(buf[0], 0x0c);
	CHECK_EQ_U64(rd32(buf + 1), 0x030ad041);
	aml_eisaid(&a, "pnp0a03");
	CHECK_EQ_U64(a.err, (uint64_t)-EINVAL);

	/* Overflow is sticky and never writes past the buffer. */
	aml_init(&a, buf, 4);
	aml_string(&a, "too long");
	CHECK_EQ_U64(a.err, (uint64_t)-ENOSPC);
	CHECK(a.len <= 4);
}

static void dump(const char *dir, const char *tag, const struct built *b)
{
	char path[512];
	FILE *f;

	for (size_t i = 0; i <= b->nt; i++) {
		const uint8_t *p = i < b->nt ? b->t[i] : b->buf;
		size_t len = i < b->nt ? rd32(p + 4) : 36;
		char sig[5] = {0};

		memcpy(sig, i < b->nt ? (const char *)p : "RSDP", 4);
		if (!memcmp(sig, "FACS", 4))
			len = 64;
		snprintf(path, sizeof(path), "%s/%s-%s.dat", dir, tag, sig);
		f = fopen(path, "wb");
		CHECK(f != NULL);
		if (!f)
			return;
		CHECK_EQ_U64(fwrite(p, 1, len, f), len);
		fclose(f);
	}
}

/* cfg.tpm: the TPM2 table (start method CRB, the control area at the
 * window's CTRL_REQ) and Device(TPM_) MSFT0101 with Memory32Fixed over the
 * window; with cfg.tpm_tis start method 6 and the 0x5000 TIS window; none
 * of it without. */
static void test_tpm2(void)
{
	static struct built b;
	uint32_t ids[1] = {0};
	struct arch_acpi_config cfg = {{1, 1, 1}, ids, 1, 1, NULL, 1, 1, 0};
	static const uint8_t hid[] = {0x08, '_', 'H', 'I', 'D', 0x0d, 'M', 'S',
				      'F',  'T', '0', '1', '0', '1',  0};
	/* Memory32Fixed(ReadWrite, 0xFED40000, 0x1000) */
	static const uint8_t crs[] = {0x86, 0x09, 0x00, 0x01, 0x00, 0x00,
				      0xd4, 0xfe, 0x00, 0x10, 0x00, 0x00};
	/* Memory32Fixed(ReadWrite, 0xFED40000, 0x5000) */
	static const uint8_t crs_tis[] = {0x86, 0x09, 0x00, 0x01, 0x00, 0x00,
					  0xd4, 0xfe, 0x00, 0x50, 0x00, 0x00};
	const uint8_t *t, *d;

	if (build_walk(&b, &cfg))
		return;
	t = find(&b, "TPM2");
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_U64(rd32(t + 4), 76);
		CHECK_EQ_U64(t[8], 4); /* revision */
		CHECK_EQ_U64(rd64(t + 40), ARCH_TPM_CRB_GPA + 0x40);
		CHECK_EQ_U64(rd32(t + 48), 7); /* start method: CRB */
	}
	d = find(&b, "DSDT");
	CHECK(contains(d, rd32(d + 4), "TPM_", 4));
	CHECK(contains(d, rd32(d + 4), hid, sizeof(hid)));
	CHECK(contains(d, rd32(d + 4), crs, sizeof(crs)));
	/* tpm_tis: start method 6, no control area, the 0x5000 FIFO window */
	cfg.tpm_tis = 1;
	if (build_walk(&b, &cfg))
		return;
	t = find(&b, "TPM2");
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_U64(rd64(t + 40), 0);
		CHECK_EQ_U64(rd32(t + 48), 6); /* start method: memory mapped (FIFO) */
	}
	d = find(&b, "DSDT");
	CHECK(contains(d, rd32(d + 4), hid, sizeof(hid)));
	CHECK(contains(d, rd32(d + 4), crs_tis, sizeof(crs_tis)));
	CHECK(!contains(d, rd32(d + 4), crs, sizeof(crs)));
	cfg.tpm = 0;
	if (build_walk(&b, &cfg))
		return;
	CHECK(find(&b, "TPM2") == NULL);
	d = find(&b, "DSDT");
	CHECK(!contains(d, rd32(d + 4), hid, sizeof(hid)));
}

/* Writes the tables for tests/sh/acpi_iasl.sh; skipped without the env. */
static void test_dump(void)
{
	static struct built b;
	static uint32_t ids[400];
	const char *dir = getenv("VMLET_ACPI_DUMP_DIR");
	struct arch_topology t = {4, 100, 1};
	struct arch_acpi_config cfg = {t, ids, 400, 1, NULL, 1, 1, 0};

	if (!dir)
		SKIP("VMLET_ACPI_DUMP_DIR not set");
	for (uint32_t i = 0; i < 400; i++)
		ids[i] = arch_topo_apic_id(&t, i);
	if (!build_walk(&b, &cfg))
		dump(dir, "x2apic-pci", &b);
	cfg.n_vcpus = 1;
	cfg.pci = 0;
	cfg.serial = 0;
	if (!build_walk(&b, &cfg))
		dump(dir, "min", &b);
	cfg.n_vcpus = 4;
	cfg.serial = 1;
	if (!build_walk(&b, &cfg))
		dump(dir, "serial", &b);
	cfg.tpm_tis = 1;
	if (!build_walk(&b, &cfg))
		dump(dir, "tis", &b);
}

int main(void)
{
	TEST_RUN(test_fadt);
	TEST_RUN(test_madt);
	TEST_RUN(test_dsdt_and_mcfg);
	TEST_RUN(test_errors);
	TEST_RUN(test_tpm2);
	TEST_RUN(test_aml);
	TEST_RUN(test_dump);
	return test_summary();
}
