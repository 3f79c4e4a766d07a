/* SPDX-License-Identifier: MIT */
/*
 * The ACPI tables as fw_cfg files plus table-loader script
 * (arch/x86_64/acpi_loader.c), checked by executing the script the way a
 * firmware does: the RSDP placed at some address A, the tables at A + the
 * file offset, must come out byte for byte as arch_acpi_build() makes them
 * for base A. A second placement (RSDP and tables far apart) must give a
 * consistent chain with valid checksums. The ADD_CHECKSUM commands must
 * come out right both as SeaBIOS runs them (subtract the range's sum from
 * the byte) and as OVMF does (EDK II: the byte := the negated sum of the
 * range, the byte included): that needs the byte 0 in the file.
 */
#include <errno.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "tests/lib/bytes.h"
#include "tests/lib/test.h"

#define CMD 128

struct file {
	const char *name;
	uint8_t *data;
	size_t len;
	uint64_t addr;
};

static struct file *lookup(struct file *f, size_t n, const uint8_t *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp((const char *)name, f[i].name, 56))
			return &f[i];
	return NULL;
}

/* Run the script over files (their addr set by the caller as ALLOCATE
 * would). Returns the number of commands, -1 on a malformed one. */
static int ovmf_checksums; /* execute() ADD_CHECKSUM as OVMF does */

static int execute(const uint8_t *s, size_t len, struct file *f, size_t nf)
{
	int n = 0;

	for (size_t off = 0; off + CMD <= len; off += CMD, n++) {
		const uint8_t *c = s + off;
		struct file *d, *src;
		uint64_t v = 0;

		switch (rd32(c)) {
		case 1:
			if (!lookup(f, nf, c + 4) || (c[64] != 1 && c[64] != 2))
				return -1;
			break;
		case 2:
			d = lookup(f, nf, c + 4);
			src = lookup(f, nf, c + 60);
			if (!d || !src || rd32(c + 116) + c[120] > d->len)
				return -1;
			memcpy(&v, d->data + rd32(c + 116), c[120]);
			v += src->addr;
			memcpy(d->data + rd32(c + 116), &v, c[120]);
			break;
		case 3: {
			uint8_t sum = 0;

			d = lookup(f, nf, c + 4);
			if (!d || rd32(c + 64) + rd32(c + 68) > d->len || rd32(c + 60) >= d->len)
				return -1;
			for (uint32_t i = 0; i < rd32(c + 68); i++)
				sum = (uint8_t)(sum + d->data[rd32(c + 64) + i]);
			if (ovmf_checksums) /* CalculateCheckSum8 of the range, stored */
				d->data[rd32(c + 60)] = (uint8_t)(0 - sum);
			else
				d->data[rd32(c + 60)] = (uint8_t)(d->data[rd32(c + 60)] - sum);
			break;
		}
		default:
			return -1;
		}
	}
	return n;
}

static void config(struct arch_acpi_config *c, uint32_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ids[i] = i;
	*c = (struct arch_acpi_config){
	    .topo = {1, n, 1}, .apic_ids = ids, .n_vcpus = n, .pci = 1, .serial = 1};
}

static uint8_t bytesum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

static void test_same_as_built_in_place(void)
{
	static uint8_t blob[ARCH_ACPI_MAX], want[ARCH_ACPI_MAX], script[ARCH_ACPI_LOADER_MAX];
	const uint64_t base = 0x7fe0000;
	struct arch_acpi_config c;
	uint32_t ids[4];
	size_t used = 0, used2 = 0, slen = 0, toff = 0;

	config(&c, ids, 4);
	CHECK(arch_acpi_build(blob, sizeof(blob), 0, &c, &used) == 0);
	CHECK(arch_acpi_build(want, sizeof(want), base, &c, &used2) == 0);
	CHECK_EQ_U64(used, used2);
	CHECK(arch_acpi_loader_build(blob, used, 0, script, sizeof(script), &slen, &toff) == 0);
	CHECK_EQ_U64(toff, 64);
	CHECK(slen % CMD == 0 && slen >= 6 * CMD);

	struct file f[2] = {
	    {ARCH_ACPI_FILE_RSDP, blob, ARCH_ACPI_RSDP_SIZE, base},
	    {ARCH_ACPI_FILE_TABLES, blob + toff, used - toff, base + toff},
	};
	/* the first two commands allocate: RSDP in the F segment, tables high */
	CHECK(rd32(script) == 1 && script[64] == 2 && rd32(script + 60) == 16);
	CHECK(rd32(script + CMD) == 1 && script[CMD + 64] == 1 && rd32(script + CMD + 60) == 64);
	CHECK(execute(script, slen, f, 2) == (int)(slen / CMD));
	CHECK(!memcmp(blob, want, ARCH_ACPI_RSDP_SIZE));
	CHECK(!memcmp(blob + toff, want + toff, used - toff));
}

static void test_apart(void)
{
	static uint8_t blob[ARCH_ACPI_MAX], script[ARCH_ACPI_LOADER_MAX];
	struct arch_acpi_config c;
	uint32_t ids[2];
	size_t used = 0, slen = 0, toff = 0;
	uint64_t xsdt, fadt, dsdt, facs;

	config(&c, ids, 2);
	CHECK(arch_acpi_build(blob, sizeof(blob), 0, &c, &used) == 0);
	CHECK(arch_acpi_loader_build(blob, used, 0, script, sizeof(script), &slen, &toff) == 0);
	struct file f[2] = {
	    {ARCH_ACPI_FILE_RSDP, blob, ARCH_ACPI_RSDP_SIZE, 0xf5a10},
	    {ARCH_ACPI_FILE_TABLES, blob + toff, used - toff, 0x3ff00000},
	};
	CHECK(execute(script, slen, f, 2) > 0);
	CHECK(bytesum(blob, 20) == 0 && bytesum(blob, ARCH_ACPI_RSDP_SIZE) == 0);
	xsdt = rd64(blob + 24);
	CHECK(xsdt >= 0x3ff00000 && xsdt < 0x3ff00000 + used - toff);
	const uint8_t *x = blob + toff + (xsdt - 0x3ff00000);

	CHECK(!memcmp(x, "XSDT", 4) && bytesum(x, rd32(x + 4)) == 0);
	fadt = rd64(x + 36);
	const uint8_t *fp = blob + toff + (fadt - 0x3ff00000);

	CHECK(!memcmp(fp, "FACP", 4) && bytesum(fp, rd32(fp + 4)) == 0);
	dsdt = rd64(fp + 140);
	facs = rd64(fp + 132);
	CHECK_EQ_U64(rd32(fp + 40), dsdt);
	CHECK_EQ_U64(rd32(fp + 36), facs);
	CHECK(!memcmp(blob + toff + (dsdt - 0x3ff00000), "DSDT", 4));
	CHECK(!memcmp(blob + toff + (facs - 0x3ff00000), "FACS", 4));
	CHECK(facs % 64 == 0);
}

/* OVMF's loader (OvmfPkg/AcpiPlatformDxe): a table is only installed when
 * it sums to zero after the script; the FADT did not, so Linux under OVMF
 * found no FADT ("AcpiEnable failed", no power-off) */
static void test_ovmf_checksums(void)
{
	static uint8_t blob[ARCH_ACPI_MAX], script[ARCH_ACPI_LOADER_MAX];
	struct arch_acpi_config c;
	uint32_t ids[2];
	size_t used = 0, slen = 0, toff = 0, n_sums = 0;

	config(&c, ids, 2);
	CHECK(arch_acpi_build(blob, sizeof(blob), 0, &c, &used) == 0);
	CHECK(arch_acpi_loader_build(blob, used, 0, script, sizeof(script), &slen, &toff) == 0);
	/* QEMU's contract: every checksum byte is 0 in the files */
	for (size_t off = 0; off + CMD <= slen; off += CMD)
		if (rd32(script + off) == 3) {
			const uint8_t *base =
			    strcmp((const char *)script + off + 4, ARCH_ACPI_FILE_RSDP)
				? blob + toff
				: blob;

			CHECK(base[rd32(script + off + 60)] == 0);
			n_sums++;
		}
	CHECK_EQ_U64(n_sums, 4); /* FADT, XSDT, RSDP 20 and 36 bytes */
	struct file f[2] = {
	    {ARCH_ACPI_FILE_RSDP, blob, ARCH_ACPI_RSDP_SIZE, 0xf5a10},
	    {ARCH_ACPI_FILE_TABLES, blob + toff, used - toff, 0x1f779000},
	};
	ovmf_checksums = 1;
	CHECK(execute(script, slen, f, 2) > 0);
	ovmf_checksums = 0;
	CHECK(bytesum(blob, 20) == 0 && bytesum(blob, ARCH_ACPI_RSDP_SIZE) == 0);
	const uint8_t *x = blob + toff + (rd64(blob + 24) - 0x1f779000);

	CHECK(!memcmp(x, "XSDT", 4) && bytesum(x, rd32(x + 4)) == 0);
	const uint8_t *fp = blob + toff + (rd64(x + 36) - 0x1f779000);

	CHECK(!memcmp(fp, "FACP", 4) && bytesum(fp, rd32(fp + 4)) == 0);
	/* and every table the XSDT lists */
	for (uint32_t e = 36; e + 8 <= rd32(x + 4); e += 8) {
		const uint8_t *t = blob + toff + (rd64(x + e) - 0x1f779000);

		CHECK(bytesum(t, rd32(t + 4)) == 0);
	}
}

static void test_rejects(void)
{
	static uint8_t blob[ARCH_ACPI_MAX], script[ARCH_ACPI_LOADER_MAX];
	struct arch_acpi_config c;
	uint32_t ids[1];
	size_t used = 0, slen = 0, toff = 0;

	config(&c, ids, 1);
	CHECK(arch_acpi_build(blob, sizeof(blob), 0x1000, &c, &used) == 0);
	/* built for another base than the caller says: pointers out of range */
	CHECK(arch_acpi_loader_build(blob, used, 0, script, sizeof(script), &slen, &toff) ==
	      -EINVAL);
	CHECK(arch_acpi_build(blob, sizeof(blob), 0, &c, &used) == 0);
	CHECK(arch_acpi_loader_build(blob, used, 0, script, 3 * CMD, &slen, &toff) == -ENOSPC);
	memset(blob, 0, 8);
	CHECK(arch_acpi_loader_build(blob, used, 0, script, sizeof(script), &slen, &toff) ==
	      -EINVAL);
}

int main(void)
{
	TEST_RUN(test_same_as_built_in_place);
	TEST_RUN(test_apart);
	TEST_RUN(test_ovmf_checksums);
	TEST_RUN(test_rejects);
	return test_summary();
}
