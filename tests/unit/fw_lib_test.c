/* SPDX-License-Identifier: MIT */
/*
 * The freestanding guest library (firmware/lib), compiled for the host:
 * fw_vsnprintf against libc's snprintf, and the ACPI readers the probe
 * uses (RSDP, walk with checksums, MADT, FADT power-off, \_S5 in the AML)
 * on the tables vmlet itself builds with arch_acpi_build(). The tables are
 * built at a fixed low host address equal to their guest-physical base so
 * the guest code's identity-map pointers are valid here.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "tests/lib/test.h"

#include "firmware/lib/acpi.c"
#include "firmware/lib/printf.c"

#define MAP_AT	 0x40000000ul /* below 4 GiB, outside ASan's shadow */
#define MAP_SIZE (1ul << 20)

static void check_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void check_fmt(const char *fmt, ...)
{
	char ours[128], libc[128];
	va_list ap;
	int a, b;

	va_start(ap, fmt);
	a = fw_vsnprintf(ours, sizeof(ours), fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	b = vsnprintf(libc, sizeof(libc), fmt, ap);
	va_end(ap);
	if (a != b || strcmp(ours, libc))
		test_fail(__FILE__, __LINE__, "format \"%s\": ours \"%s\" (%d), libc \"%s\" (%d)",
			  fmt, ours, a, libc, b);
}

static void test_printf(void)
{
	char small[6];
	struct fw_buf b;
	char store[16];

	check_fmt("plain");
	check_fmt("%d %i %u", -42, 7, 4000000000u);
	check_fmt("%x %X %08x %-6x|", 0xbeefu, 0xbeefu, 0x1fu, 0xau);
	check_fmt("%ld %lu %lld %llu %llx", -1l, 18446744073709551615ul, -9223372036854775807ll - 1,
		  18446744073709551615ull, 0x123456789abcdefull);
	check_fmt("%zu %hhu %hu %hd", (size_t)12345, 300, 70000, -2);
	check_fmt("%5d|%-5d|%05d|%-5d|%03d", 42, 42, 42, -42, -7);
	check_fmt("%s|%8s|%-8s|%.3s|%.*s", "acpi", "rsdp", "xsdt", "abcdef", 2, "xyz");
	check_fmt("%c%c %% %p", 'o', 'k', (void *)0x1234);
	check_fmt("%d", 0);
	CHECK_EQ_U64(fw_snprintf(small, sizeof(small), "%s", "truncated"), 9);
	CHECK_STR(small, "trunc");
	fw_buf_init(&b, store, sizeof(store));
	fw_buf_printf(&b, "%s=%u\n", "key", 12);
	CHECK_STR(store, "key=12\n");
	CHECK(!b.overflow);
	fw_buf_printf(&b, "%s", "far too long for the rest");
	CHECK(b.overflow);
	CHECK_STR(store, "key=12\n");
}

static uint8_t *map_low(void)
{
	void *p = mmap((void *)MAP_AT, MAP_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (p != (void *)MAP_AT) {
		munmap(p, MAP_SIZE);
		return NULL;
	}
	return p;
}

static void check_tables(uint8_t *mem, const struct arch_topology *t)
{
	uint32_t n = arch_topo_vcpus(t), ids[1024], got[1024];
	struct arch_acpi_config cfg = {.topo = *t, .apic_ids = ids, .n_vcpus = n, .serial = 1};
	struct fw_acpi_table tabs[FW_ABI_MAX_ACPI_TABLES];
	const struct acpi_header *madt, *fadt, *dsdt;
	const struct acpi_rsdp *rsdp;
	struct fw_acpi_power pw;
	uint64_t lapic = 0;
	size_t used = 0;
	int nt, errors = -1, nm;

	for (uint32_t i = 0; i < n; i++)
		ids[i] = arch_topo_apic_id(t, i);
	memset(mem, 0, MAP_SIZE);
	CHECK_EQ_U64(arch_acpi_build(mem, MAP_SIZE, MAP_AT, &cfg, &used), 0);
	rsdp = fw_acpi_find_rsdp(MAP_AT);
	CHECK(rsdp == (const void *)mem);
	if (!rsdp)
		return;
	nt = fw_acpi_walk(rsdp, tabs, FW_ABI_MAX_ACPI_TABLES, &errors);
	CHECK_EQ_U64(errors, 0);
	CHECK(nt >= 6);
	CHECK_STR(tabs[0].sig, "RSDP");
	CHECK_STR(tabs[1].sig, "XSDT");
	for (int i = 0; i < nt; i++) {
		CHECK(tabs[i].checksum_ok);
		CHECK(tabs[i].addr >= MAP_AT && tabs[i].addr + tabs[i].length <= MAP_AT + used);
	}
	madt = fw_acpi_find(tabs, nt, "APIC");
	fadt = fw_acpi_find(tabs, nt, "FACP");
	dsdt = fw_acpi_find(tabs, nt, "DSDT");
	CHECK(madt && fadt && dsdt);
	if (!madt || !fadt || !dsdt)
		return;
	CHECK(fw_acpi_find(tabs, nt, "FACS") == NULL); /* no checksum: not "found" */
	nm = fw_madt_apic_ids(madt, got, 1024, &lapic);
	CHECK_EQ_U64(nm, n);
	CHECK(!memcmp(got, ids, n * sizeof(ids[0])));
	CHECK_EQ_U64(lapic, ARCH_LAPIC_GPA);
	fw_acpi_power_info(fadt, dsdt, &pw);
	CHECK_EQ_U64(pw.pm1a_cnt, ARCH_PM1A_CNT_PORT);
	CHECK_EQ_U64(pw.pm1b_cnt, 0);
	CHECK_EQ_U64(pw.slp_typ, ARCH_PM_S5_SLP_TYP);

	/* a corrupted table is listed with a bad checksum and not "found" */
	((uint8_t *)madt)[sizeof(struct acpi_header)] ^= 0x55;
	nt = fw_acpi_walk(rsdp, tabs, FW_ABI_MAX_ACPI_TABLES, &errors);
	for (int i = 0; i < nt; i++)
		CHECK(tabs[i].checksum_ok == !!strcmp(tabs[i].sig, "APIC"));
	CHECK(fw_acpi_find(tabs, nt, "APIC") == NULL);
}

static void test_acpi_on_vmlet_tables(void)
{
	static const struct arch_topology topos[] = {
	    {1, 1, 1}, {2, 3, 2}, {1, 16, 2}, {4, 100, 1}, /* x2APIC entries */
	};
	uint8_t *mem = map_low();

	if (!mem)
		SKIP("cannot map memory at a fixed low address");
	for (size_t i = 0; i < sizeof(topos) / sizeof(topos[0]); i++)
		check_tables(mem, &topos[i]);
	munmap(mem, MAP_SIZE);
}

static void test_aml_s5(void)
{
	/* Name (\_S5, Package (0x04) { 0x05, Zero, 0, 0 }) and variants */
	static const uint8_t byte_pfx[] = {0x10, 0x08, '\\', '_',  'S',	 '5',  '_',  0x12,
					   0x0a, 0x04, 0x0a, 0x05, 0x00, 0x0a, 0x00, 0x00};
	static const uint8_t zero_op[] = {0x08, '_',  'S',  '5',  '_',	0x12, 0x06,
					  0x04, 0x00, 0x00, 0x00, 0x00, 0,    0};
	static const uint8_t two_byte_len[] = {0x08, '_',  'S',	 '5',  '_',  0x12, 0x40, 0x01,
					       0x04, 0x0a, 0x07, 0x0a, 0x07, 0,	   0};
	static const uint8_t method_ref[] = {0x14, 0x0a, '_',  'S', '5', '_', 0x00,
					     0xa4, 0x0a, 0x05, 0,   0,	 0,   0};
	static const uint8_t truncated[] = {0x08, '_', 'S', '5', '_', 0x12, 0x0a, 0x04, 0x0a};

	CHECK_EQ_U64(fw_aml_s5_slp_typ(byte_pfx, sizeof(byte_pfx)), 5);
	CHECK_EQ_U64(fw_aml_s5_slp_typ(zero_op, sizeof(zero_op)), 0);
	CHECK_EQ_U64(fw_aml_s5_slp_typ(two_byte_len, sizeof(two_byte_len)), 7);
	CHECK_EQ_U64(fw_aml_s5_slp_typ(method_ref, sizeof(method_ref)), (uint64_t)-1);
	CHECK_EQ_U64(fw_aml_s5_slp_typ(truncated, sizeof(truncated)), (uint64_t)-1);
	for (size_t n = 0; n < sizeof(byte_pfx); n++)
		CHECK(fw_aml_s5_slp_typ(byte_pfx, n) == -1 || n >= 12);
}

int main(void)
{
	TEST_RUN(test_printf);
	TEST_RUN(test_acpi_on_vmlet_tables);
	TEST_RUN(test_aml_s5);
	return test_summary();
}
