// SPDX-License-Identifier: MIT
/* efi_boot_test - the vmm's EFI boot policy (vmm/boot/efi_boot.c). */
#include <errno.h>

#include "tests/lib/test.h"
#include "vmm/boot/efi_boot.h"

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

int main(void)
{
	TEST_RUN(test_secure_boot_refused);
	TEST_RUN(test_plain_efi);
	TEST_RUN(test_not_efi);
	return test_summary();
}
