/* SPDX-License-Identifier: MIT */
/*
 * The ACPI wire layouts declared twice: by the builder (arch/x86_64/
 * acpi_tables.h) and by the guest firmware's reader (firmware/lib/acpi.h).
 * The layering lets neither include the other (arch/ only arch/,
 * firmware/ only firmware/), so this test is what makes them one layout:
 * every field at the same offset with the same size, each struct the
 * same size, and the fields named here cover each struct exactly (the
 * sizes of the fields listed add up to the struct's size).
 */
#include <stddef.h>

/* the firmware's copies under other names, so both fit one file */
#define acpi_rsdp   fwl_acpi_rsdp
#define acpi_header fwl_acpi_header
#define acpi_gas    fwl_acpi_gas
#include "firmware/lib/acpi.h"
#undef acpi_rsdp
#undef acpi_header
#undef acpi_gas

#include "arch/x86_64/acpi_tables.h"
#include "tests/lib/test.h"

#define FSIZE(t, f) sizeof(((t *)0)->f)

/* arch's field a and the firmware's field b: same offset, same size */
#define SAME(at, a, ft, b)                                                                         \
	do {                                                                                       \
		CHECK_EQ_U64(offsetof(at, a), offsetof(ft, b));                                    \
		CHECK_EQ_U64(FSIZE(at, a), FSIZE(ft, b));                                          \
		covered += FSIZE(at, a);                                                           \
	} while (0)

static void test_rsdp(void)
{
	size_t covered = 0;

	SAME(struct acpi_rsdp, signature, struct fwl_acpi_rsdp, sig);
	SAME(struct acpi_rsdp, checksum, struct fwl_acpi_rsdp, checksum);
	SAME(struct acpi_rsdp, oem_id, struct fwl_acpi_rsdp, oem_id);
	SAME(struct acpi_rsdp, revision, struct fwl_acpi_rsdp, revision);
	SAME(struct acpi_rsdp, rsdt_address, struct fwl_acpi_rsdp, rsdt);
	SAME(struct acpi_rsdp, length, struct fwl_acpi_rsdp, length);
	SAME(struct acpi_rsdp, xsdt_address, struct fwl_acpi_rsdp, xsdt);
	SAME(struct acpi_rsdp, extended_checksum, struct fwl_acpi_rsdp, ext_checksum);
	SAME(struct acpi_rsdp, reserved, struct fwl_acpi_rsdp, res);
	CHECK_EQ_U64(sizeof(struct acpi_rsdp), sizeof(struct fwl_acpi_rsdp));
	CHECK_EQ_U64(covered, sizeof(struct acpi_rsdp));
	CHECK_EQ_U64(sizeof(struct acpi_rsdp), 36); /* ACPI 6.5 §5.2.5.3 */
}

static void test_header(void)
{
	size_t covered = 0;

	SAME(struct acpi_header, signature, struct fwl_acpi_header, sig);
	SAME(struct acpi_header, length, struct fwl_acpi_header, length);
	SAME(struct acpi_header, revision, struct fwl_acpi_header, revision);
	SAME(struct acpi_header, checksum, struct fwl_acpi_header, checksum);
	SAME(struct acpi_header, oem_id, struct fwl_acpi_header, oem_id);
	SAME(struct acpi_header, oem_table_id, struct fwl_acpi_header, oem_table_id);
	SAME(struct acpi_header, oem_revision, struct fwl_acpi_header, oem_revision);
	SAME(struct acpi_header, creator_id, struct fwl_acpi_header, creator_id);
	SAME(struct acpi_header, creator_revision, struct fwl_acpi_header, creator_revision);
	CHECK_EQ_U64(sizeof(struct acpi_header), sizeof(struct fwl_acpi_header));
	CHECK_EQ_U64(covered, sizeof(struct acpi_header));
	CHECK_EQ_U64(sizeof(struct acpi_header), 36); /* §5.2.6 */
}

static void test_gas(void)
{
	size_t covered = 0;

	SAME(struct acpi_gas, space_id, struct fwl_acpi_gas, space);
	SAME(struct acpi_gas, bit_width, struct fwl_acpi_gas, bit_width);
	SAME(struct acpi_gas, bit_offset, struct fwl_acpi_gas, bit_offset);
	SAME(struct acpi_gas, access_size, struct fwl_acpi_gas, access_size);
	SAME(struct acpi_gas, address, struct fwl_acpi_gas, address);
	CHECK_EQ_U64(sizeof(struct acpi_gas), sizeof(struct fwl_acpi_gas));
	CHECK_EQ_U64(covered, sizeof(struct acpi_gas));
	CHECK_EQ_U64(sizeof(struct acpi_gas), 12); /* §5.2.3.2 */
}

int main(void)
{
	TEST_RUN(test_rsdp);
	TEST_RUN(test_header);
	TEST_RUN(test_gas);
	return test_summary();
}
