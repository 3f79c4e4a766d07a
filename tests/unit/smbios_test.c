// SPDX-License-Identifier: MIT
/* smbios_test - the SMBIOS tables (arch/x86_64/smbios.c) and their place in
 * the BIOS area (vmm/boot/boot.c). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "arch/arch.h"
#include "tests/lib/test.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

/* SMBIOS: our own parse, then dmidecode's (when installed) as the oracle. */
static void test_smbios(void)
{
	struct arch_smbios_ids ids = {"SER-4242", "12345678-9abc-def0-1122-334455667788", 0};
	uint8_t buf[1024];
	size_t used = 0;
	int n;

	CHECK(arch_smbios_build(buf, sizeof(buf), 0, &ids, &used) == 0);
	n = (int)used;
	CHECK(n > 0x20 + 0x18 + 0x1b);
	if (n <= 0x20)
		return;
	uint8_t sum = 0;

	for (int i = 0; i < 0x18; i++)
		sum = (uint8_t)(sum + buf[i]);
	CHECK(!memcmp(buf, "_SM3_", 5) && sum == 0 && buf[6] == 0x18);
	CHECK_EQ_U64(*(uint64_t *)(buf + 16), 0x20);
	CHECK_EQ_U64(*(uint32_t *)(buf + 12), (unsigned)n - 0x20);
	CHECK(buf[0x20] == 0); /* type 0 first */
	CHECK(memmem(buf, (size_t)n, "SER-4242", 9) != NULL);
	/* UUID bytes: first three fields little-endian */
	static const uint8_t want_uuid[16] = {0x78, 0x56, 0x34, 0x12, 0xbc, 0x9a, 0xf0, 0xde,
					      0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
	CHECK(memmem(buf, (size_t)n, want_uuid, 16) != NULL);

	CHECK(arch_smbios_build(buf, 40, 0, &ids, &used) == -ENOSPC);
	CHECK(arch_smbios_build(buf, sizeof(buf), 8, &ids, &used) == -ENOSPC); /* unaligned */
	ids.uuid = "not-a-uuid";
	CHECK(arch_smbios_build(buf, sizeof(buf), 0, &ids, &used) == -EINVAL);
	ids.uuid = "12345678-9abc-def0-1122-334455667788";
	CHECK(arch_smbios_build(buf, sizeof(buf), 0, &ids, &used) == 0 && (int)used == n);

	if (system("command -v dmidecode >/dev/null 2>&1"))
		return;
	char path[] = "/tmp/efi_smbios.XXXXXX", cmd[256], out[4096] = "";
	int fd = mkstemp(path);

	CHECK(fd >= 0 && write(fd, buf, (size_t)n) == n);
	close(fd);
	snprintf(cmd, sizeof(cmd), "dmidecode --from-dump %s -t 1 2>&1", path);
	FILE *p = popen(cmd, "r");
	size_t got = p ? fread(out, 1, sizeof(out) - 1, p) : 0;

	if (p)
		pclose(p);
	out[got] = 0;
	unlink(path);
	CHECK(strstr(out, "Manufacturer: KubeVirt") != NULL);
	CHECK(strstr(out, "Product Name: None") != NULL);
	CHECK(strstr(out, "Serial Number: SER-4242") != NULL);
	CHECK(strstr(out, "UUID: 12345678-9abc-def0-1122-334455667788") != NULL);
	CHECK(strstr(out, "Family: KubeVirt") != NULL);
	if (!strstr(out, "SER-4242"))
		printf("%s\n", out);
}

/* Placement in the BIOS area: at 0xf0000, or after ACPI tables that reach
 * past it; the entry point's table address follows the placement. */
static void test_smbios_place(void)
{
	static uint8_t low[1 << 20];
	struct guest_mem mem = {.r = {{0, sizeof(low), low}}, .n = 1, .total = sizeof(low)};
	struct vm_config cfg;

	vm_config_init(&cfg);
	cfg.firmware_serial = (char *)"S-1";
	CHECK(boot_place_smbios(&cfg, &mem, 0xe1234) == 0);
	CHECK(!memcmp(low + 0xf0000, "_SM3_", 5));
	CHECK_EQ_U64(*(uint64_t *)(low + 0xf0010), 0xf0020);
	memset(low + 0xf0000, 0, 16);
	CHECK(boot_place_smbios(&cfg, &mem, 0xf1001) == 0);
	CHECK(!memcmp(low + 0xf1010, "_SM3_", 5));
	CHECK_EQ_U64(*(uint64_t *)(low + 0xf1020), 0xf1030);
	CHECK(boot_place_smbios(&cfg, &mem, 0xfff80) == -ENOSPC);
	CHECK(boot_place_smbios(&cfg, &mem, 0x100000) == -ENOSPC);
	cfg.firmware_uuid = (char *)"12345678";
	CHECK(boot_place_smbios(&cfg, &mem, 0) == -EINVAL);
	mem.r[0].size = 0xf0000; /* no RAM behind the BIOS area */
	cfg.firmware_uuid = NULL;
	CHECK(boot_place_smbios(&cfg, &mem, 0) == -ENOSPC);
}

/* The split form (fw_cfg hands tables and entry point over separately)
 * makes the same bytes as the one-buffer form. */
static void test_smbios_split(void)
{
	const struct arch_smbios_ids ids = {"S-2", NULL, 0};
	uint8_t one[512], tables[512], ep[ARCH_SMBIOS_ENTRY_SIZE];
	size_t n1 = 0, n2 = 0;

	CHECK(arch_smbios_build(one, sizeof(one), 0xf0000, &ids, &n1) == 0);
	CHECK(arch_smbios_tables(tables, sizeof(tables), &ids, &n2) == 0);
	CHECK_EQ_U64(n1, n2 + ARCH_SMBIOS_TABLES_OFF);
	CHECK(!memcmp(one + ARCH_SMBIOS_TABLES_OFF, tables, n2));
	arch_smbios_entry(ep, 0xf0000 + ARCH_SMBIOS_TABLES_OFF, (uint32_t)n2);
	CHECK(!memcmp(one, ep, sizeof(ep)));
	CHECK(arch_smbios_tables(tables, n2 - 1, &ids, &n2) == -ENOSPC);
}

/* no_type0 (BIOS boot: SeaBIOS brings its own type 0): the same
 * structures from type 1 on. */
static void test_smbios_no_type0(void)
{
	static uint8_t all[1024], rest[1024];
	struct arch_smbios_ids ids = {"S-3", NULL, 0};
	size_t n_all = 0, n_rest = 0, t0;

	CHECK(arch_smbios_tables(all, sizeof(all), &ids, &n_all) == 0);
	ids.no_type0 = 1;
	CHECK(arch_smbios_tables(rest, sizeof(rest), &ids, &n_rest) == 0);
	CHECK(all[0] == 0 && rest[0] == 1);
	t0 = n_all - n_rest;
	CHECK(t0 > all[1] && !all[t0 - 1] && !all[t0 - 2]);
	CHECK(!memcmp(all + t0, rest, n_rest));
}

int main(void)
{
	TEST_RUN(test_smbios_no_type0);
	TEST_RUN(test_smbios_place);
	TEST_RUN(test_smbios);
	TEST_RUN(test_smbios_split);
	return test_summary();
}
