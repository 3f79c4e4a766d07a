/* SPDX-License-Identifier: MIT */
/* acpi.c - ACPI table walking (pure readers) and power-off. */
#include "firmware/abi.h"
#include "firmware/lib/acpi.h"
#include "firmware/lib/io.h"

bool fw_acpi_checksum_ok(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + b[i]);
	return sum == 0;
}

static bool in_map(uint64_t addr, uint64_t len)
{
	return addr && addr < ACPI_LIMIT && len <= ACPI_LIMIT - addr;
}

static const struct acpi_rsdp *rsdp_at(uint64_t addr)
{
	const struct acpi_rsdp *r = (const struct acpi_rsdp *)(uintptr_t)addr;

	if (!in_map(addr, sizeof(*r)) || memcmp(r->signature, "RSD PTR ", 8))
		return NULL;
	if (!fw_acpi_checksum_ok(r, 20))
		return NULL;
	if (r->revision >= 2 &&
	    (r->length < sizeof(*r) || r->length > 4096 || !fw_acpi_checksum_ok(r, r->length)))
		return NULL;
	return r;
}

static const struct acpi_rsdp *scan(uint64_t start, uint64_t end)
{
	for (uint64_t a = start; a + sizeof(struct acpi_rsdp) <= end; a += 16) {
		const struct acpi_rsdp *r = rsdp_at(a);

		if (r)
			return r;
	}
	return NULL;
}

const struct acpi_rsdp *fw_acpi_find_rsdp(uint64_t hint)
{
	const struct acpi_rsdp *r = hint ? rsdp_at(hint) : NULL;
	uintptr_t bda_ebda = 0x40e; /* BDA word: EBDA segment */
	uint64_t ebda;

	if (r)
		return r;
	__asm__("" : "+r"(bda_ebda)); /* a real address, not a null-pointer offset */
	ebda = (uint64_t) * (const volatile uint16_t *)bda_ebda << 4;
	if (ebda >= 0x80000 && ebda < 0xa0000)
		r = scan(ebda, ebda + 1024);
	return r ? r : scan(0xe0000, 0x100000);
}

/* A table header at addr with a sane length, or NULL. */
static const struct acpi_header *table_at(uint64_t addr)
{
	const struct acpi_header *h = (const struct acpi_header *)(uintptr_t)addr;

	if (!in_map(addr, sizeof(*h)))
		return NULL;
	if (h->length < sizeof(*h) || h->length > ACPI_MAX_TABLE_LEN || !in_map(addr, h->length))
		return NULL;
	return h;
}

static void add(struct fw_acpi_table *out, int cap, int *n, const char *sig, uint64_t addr,
		uint32_t len, bool has_sum, bool ok)
{
	if (*n >= cap)
		return;
	memcpy(out[*n].sig, sig, 4);
	out[*n].sig[4] = '\0';
	out[*n].addr = addr;
	out[*n].length = len;
	out[*n].has_checksum = has_sum;
	out[*n].checksum_ok = ok;
	(*n)++;
}

static void add_table(struct fw_acpi_table *out, int cap, int *n, int *errors, uint64_t addr)
{
	const struct acpi_header *h = table_at(addr);

	if (!h) {
		(*errors)++;
		return;
	}
	add(out, cap, n, h->signature, addr, h->length, true, fw_acpi_checksum_ok(h, h->length));
}

/* FACS: signature and length only (it has no checksum). */
static void add_facs(struct fw_acpi_table *out, int cap, int *n, int *errors, uint64_t addr)
{
	const struct acpi_header *h = (const struct acpi_header *)(uintptr_t)addr;

	if (!in_map(addr, 64) || memcmp(h->signature, "FACS", 4)) {
		(*errors)++;
		return;
	}
	add(out, cap, n, "FACS", addr, h->length, false, true);
}

static uint64_t rd64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void walk_fadt(const struct acpi_header *f, struct fw_acpi_table *out, int cap, int *n,
		      int *errors)
{
	const uint8_t *b = (const uint8_t *)f;
	uint64_t dsdt = f->length >= 44 ? rd32(b + 40) : 0;
	uint64_t facs = f->length >= 40 ? rd32(b + 36) : 0;

	if (f->length >= 148 && rd64(b + 140))
		dsdt = rd64(b + 140);
	if (f->length >= 140 && rd64(b + 132))
		facs = rd64(b + 132);
	if (dsdt)
		add_table(out, cap, n, errors, dsdt);
	if (facs)
		add_facs(out, cap, n, errors, facs);
}

int fw_acpi_walk(const struct acpi_rsdp *rsdp, struct fw_acpi_table *out, int cap, int *errors)
{
	const struct acpi_header *root;
	bool xsdt = rsdp->revision >= 2 && rsdp->xsdt_address;
	uint32_t esize = xsdt ? 8 : 4;
	int n = 0, first;

	*errors = 0;
	add(out, cap, &n, "RSDP", (uintptr_t)rsdp, rsdp->revision >= 2 ? rsdp->length : 20, true,
	    true);
	root = table_at(xsdt ? rsdp->xsdt_address : rsdp->rsdt_address);
	if (!root) {
		(*errors)++;
		return n;
	}
	add(out, cap, &n, root->signature, (uintptr_t)root, root->length, true,
	    fw_acpi_checksum_ok(root, root->length));
	first = n;
	for (uint32_t off = sizeof(*root); off + esize <= root->length; off += esize) {
		const uint8_t *e = (const uint8_t *)root + off;

		add_table(out, cap, &n, errors, esize == 8 ? rd64(e) : rd32(e));
	}
	for (int i = first, end = n; i < end; i++)
		if (!memcmp(out[i].sig, "FACP", 4))
			walk_fadt((const struct acpi_header *)(uintptr_t)out[i].addr, out, cap, &n,
				  errors);
	return n;
}

const struct acpi_header *fw_acpi_find(const struct fw_acpi_table *t, int n, const char *sig)
{
	for (int i = 0; i < n; i++)
		if (t[i].has_checksum && t[i].checksum_ok && !memcmp(t[i].sig, sig, 4))
			return (const struct acpi_header *)(uintptr_t)t[i].addr;
	return NULL;
}

#define MADT_LAPIC	    0
#define MADT_LAPIC_OVERRIDE 5
#define MADT_X2APIC	    9

int fw_madt_apic_ids(const struct acpi_header *madt, uint32_t *ids, int cap, uint64_t *lapic_addr)
{
	const uint8_t *b = (const uint8_t *)madt;
	uint32_t off = 44;
	int n = 0;

	*lapic_addr = madt->length >= 40 ? rd32(b + 36) : 0;
	while (off + 2 <= madt->length) {
		uint8_t type = b[off], len = b[off + 1];

		if (len < 2 || off + len > madt->length)
			break;
		if (type == MADT_LAPIC && len >= 8 && (rd32(b + off + 4) & 1) && n < cap)
			ids[n++] = b[off + 3];
		else if (type == MADT_X2APIC && len >= 16 && (rd32(b + off + 8) & 1) && n < cap)
			ids[n++] = rd32(b + off + 4);
		else if (type == MADT_LAPIC_OVERRIDE && len >= 12)
			*lapic_addr = rd64(b + off + 4);
		off += len;
	}
	return n;
}

/* AML PkgLength: lead byte bits 7:6 = number of following bytes. */
static size_t pkglen_size(uint8_t lead)
{
	return 1 + (lead >> 6);
}

int fw_aml_s5_slp_typ(const uint8_t *aml, size_t len)
{
	for (size_t i = 1; i + 8 < len; i++) {
		size_t p;

		if (memcmp(aml + i, "_S5_", 4))
			continue;
		if (aml[i - 1] != 0x08 && !(aml[i - 1] == '\\' && i >= 2 && aml[i - 2] == 0x08))
			continue; /* not NameOp _S5_ */
		p = i + 4;
		if (aml[p] != 0x12) /* PackageOp */
			continue;
		p += 1 + pkglen_size(aml[p + 1]) + 1; /* PkgLength, NumElements */
		if (p + 1 >= len)
			return -1;
		switch (aml[p]) {
		case 0x00: /* ZeroOp */
			return 0;
		case 0x01: /* OneOp */
			return 1;
		case 0x0a: /* BytePrefix */
		case 0x0b: /* WordPrefix */
		case 0x0c: /* DWordPrefix */
			return aml[p + 1] & 7;
		default:
			return -1;
		}
	}
	return -1;
}

#define FADT_FLAGS_OFF	112
#define FADT_HW_REDUCED (1u << 20)

void fw_acpi_power_info(const struct acpi_header *fadt, const struct acpi_header *dsdt,
			struct fw_acpi_power *p)
{
	const uint8_t *b = (const uint8_t *)fadt;

	*p = (struct fw_acpi_power){.slp_typ = -1};
	if (dsdt)
		p->slp_typ = fw_aml_s5_slp_typ((const uint8_t *)dsdt + sizeof(*dsdt),
					       dsdt->length - sizeof(*dsdt));
	if (!fadt)
		return;
	if (fadt->length >= 72) {
		p->pm1a_evt = (uint16_t)rd32(b + 56);
		p->pm1a_cnt = (uint16_t)rd32(b + 64);
		p->pm1b_cnt = (uint16_t)rd32(b + 68);
	}
	if (fadt->length >= 196) {
		struct acpi_gas xa, xb;

		memcpy(&xa, b + 172, sizeof(xa));
		memcpy(&xb, b + 184, sizeof(xb));
		if (xa.address && xa.space_id == 1 && xa.address < 0x10000)
			p->pm1a_cnt = (uint16_t)xa.address;
		if (xb.address && xb.space_id == 1 && xb.address < 0x10000)
			p->pm1b_cnt = (uint16_t)xb.address;
	}
	if (fadt->length >= 256)
		memcpy(&p->sleep_ctl, b + 244, sizeof(p->sleep_ctl));
	if (fadt->length >= FADT_FLAGS_OFF + 4 && (rd32(b + FADT_FLAGS_OFF) & FADT_HW_REDUCED)) {
		p->pm1a_cnt = 0;
		p->pm1b_cnt = 0;
		p->pm1a_evt = 0;
	}
}

#define SLEEP_CTL_SLP_EN   (1u << 5)
#define PM1_SLP_MASK	   (FW_ABI_PM1_SLP_EN | 7u << FW_ABI_PM1_SLP_TYP_SHIFT)
#define POWEROFF_GRACE_TSC (1ull << 31)

void fw_poweroff(const struct fw_acpi_power *p)
{
	if (p && p->slp_typ >= 0) {
		uint16_t v = (uint16_t)(p->slp_typ << FW_ABI_PM1_SLP_TYP_SHIFT) | FW_ABI_PM1_SLP_EN;
		uint8_t s = (uint8_t)((p->slp_typ & 7) << 2) | SLEEP_CTL_SLP_EN;

		if (p->pm1a_cnt) { /* keep the other bits (SCI_EN) as they read */
			outw(p->pm1a_cnt, (inw(p->pm1a_cnt) & (uint16_t)~PM1_SLP_MASK) | v);
			if (p->pm1b_cnt)
				outw(p->pm1b_cnt, (inw(p->pm1b_cnt) & (uint16_t)~PM1_SLP_MASK) | v);
		} else if (p->sleep_ctl.address && p->sleep_ctl.space_id == 1) {
			outb((uint16_t)p->sleep_ctl.address, s);
		} else if (p->sleep_ctl.address && p->sleep_ctl.space_id == 0 &&
			   p->sleep_ctl.address < ACPI_LIMIT) {
			mmio_write8((uintptr_t)p->sleep_ctl.address, s);
		}
		/* A VMM may act on the request asynchronously (QEMU does,
		 * from its main loop, which a loaded host may not schedule
		 * for a while): give it ~0.7 s before the fallback. vmlet
		 * acts at once, so this costs nothing there. */
		for (uint64_t t0 = rdtsc(); rdtsc() - t0 < POWEROFF_GRACE_TSC;)
			fw_pause();
	}
	outl(FW_ABI_DEBUG_EXIT_PORT, FW_ABI_DEBUG_EXIT_OK);
	fw_halt_forever();
}
