// SPDX-License-Identifier: MIT
/* What a migration's source refuses before it touches anything
 * (vmm/snapshot/mig_send.c migrate_send()): a VM with no config to send
 * (vmlet probe), and a VM with SMM, whose SMRAM slots the dirty log does
 * not follow yet. The VM here is a bare struct: a refusal must come
 * before any ioctl or device is reached. */
#include <errno.h>
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/snapshot/migrate.h"
#include "vmm/vm_config.h"
#include "vmm/vm/vm.h"

static void test_no_config(void)
{
	struct vm_config cfg = {0};
	struct vm vm = {.cfg = &cfg, .vm_fd = -1};
	char msg[256];

	CHECK_EQ_U64(migrate_send(&vm, -1, 0, NULL, msg, sizeof(msg)), (uint64_t)-ENOTSUP);
	CHECK(strstr(msg, "no config to send") != NULL);
}

static void test_smm(void)
{
	struct vm_config cfg = {0};
	struct vm vm = {.cfg = &cfg, .vm_fd = -1, .snapshot_config = "{}"};
	char msg[256];

	vm.opt.smm = true;
	CHECK_EQ_U64(migrate_send(&vm, -1, 0, NULL, msg, sizeof(msg)), (uint64_t)-ENOTSUP);
	CHECK(strstr(msg, "SMM") && strstr(msg, "snapshot with --stop"));
}

int main(void)
{
	TEST_RUN(test_no_config);
	TEST_RUN(test_smm);
	return test_summary();
}
