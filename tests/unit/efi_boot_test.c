// SPDX-License-Identifier: MIT
/* efi_boot_test - the vmm's EFI boot policy (vmm/efi_boot.c). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/efi_boot.h"
#include "vmm/guest_mem.h"

static void test_secure_boot_refused(void)
{
	struct vm_config cfg;

	vm_config_init(&cfg);
	cfg.boot = VM_BOOT_EFI;
	cfg.efi_secure_boot = true;
	CHECK(efi_boot_check(&cfg, false) == -ENOTSUP);
	CHECK(efi_boot_check(&cfg, true) == -ENOTSUP);
	cfg.efi_persistent = true;
	CHECK(efi_boot_check(&cfg, true) == -ENOTSUP);
}

static void test_plain_efi(void)
{
	struct vm_config cfg;
	const void *elf = NULL;
	size_t len = 0;
	int have = efi_boot_embedded(&elf, &len);

	vm_config_init(&cfg);
	cfg.boot = VM_BOOT_EFI;
	CHECK(efi_boot_check(&cfg, true) == 0);
	if (have == 0) {
		CHECK(len > 64 && len <= 128 * 1024);
		CHECK(!memcmp(elf, "\177ELF", 4));
		CHECK(efi_boot_check(&cfg, false) == 0);
	} else {
		CHECK(have == -ENOENT);
		CHECK(efi_boot_check(&cfg, false) == -ENOENT);
	}
}

static void test_not_efi(void)
{
	struct vm_config cfg;

	vm_config_init(&cfg);
	cfg.boot = VM_BOOT_KERNEL;
	cfg.efi_secure_boot = true; /* meaningless without EFI */
	CHECK(efi_boot_check(&cfg, false) == 0);
}

/* SMBIOS: our own parse, then dmidecode's (when installed) as the oracle. */
static void test_smbios(void)
{
	struct vm_config cfg;
	uint8_t buf[1024];
	int n;

	vm_config_init(&cfg);
	cfg.firmware_serial = (char *)"SER-4242";
	cfg.firmware_uuid = (char *)"12345678-9abc-def0-1122-334455667788";
	n = efi_boot_smbios(&cfg, buf, sizeof(buf), 0);
	CHECK(n > 0x20 + 0x18 + 0x1b);
	if (n <= 0)
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

	CHECK(efi_boot_smbios(&cfg, buf, 40, 0) == -ENOSPC);
	cfg.firmware_uuid = (char *)"not-a-uuid";
	CHECK(efi_boot_smbios(&cfg, buf, sizeof(buf), 0) == -EINVAL);
	cfg.firmware_uuid = (char *)"12345678-9abc-def0-1122-334455667788";
	n = efi_boot_smbios(&cfg, buf, sizeof(buf), 0);

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
	CHECK(efi_boot_place_smbios(&cfg, &mem, 0xe1234) == 0);
	CHECK(!memcmp(low + 0xf0000, "_SM3_", 5));
	CHECK_EQ_U64(*(uint64_t *)(low + 0xf0010), 0xf0020);
	memset(low + 0xf0000, 0, 16);
	CHECK(efi_boot_place_smbios(&cfg, &mem, 0xf1001) == 0);
	CHECK(!memcmp(low + 0xf1010, "_SM3_", 5));
	CHECK_EQ_U64(*(uint64_t *)(low + 0xf1020), 0xf1030);
	CHECK(efi_boot_place_smbios(&cfg, &mem, 0xfff80) == -ENOSPC);
	CHECK(efi_boot_place_smbios(&cfg, &mem, 0x100000) == -ENOSPC);
	cfg.firmware_uuid = (char *)"12345678";
	CHECK(efi_boot_place_smbios(&cfg, &mem, 0) == -EINVAL);
	mem.r[0].size = 0xf0000; /* no RAM behind the BIOS area */
	cfg.firmware_uuid = NULL;
	CHECK(efi_boot_place_smbios(&cfg, &mem, 0) == -ENOSPC);
}

int main(void)
{
	TEST_RUN(test_smbios_place);
	TEST_RUN(test_smbios);
	TEST_RUN(test_secure_boot_refused);
	TEST_RUN(test_plain_efi);
	TEST_RUN(test_not_efi);
	return test_summary();
}
