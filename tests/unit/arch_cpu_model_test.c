/* SPDX-License-Identifier: MIT */
/* arch/x86_64/cpu_model.c: host-model and host-passthrough present the host
 * CPU without the invariant TSC (not migratable in libvirt/QEMU); a named
 * model is refused; nothing else changes. */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "tests/lib/test.h"

static void host(struct kvm_cpuid_entry2 e[3])
{
	memset(e, 0, 3 * sizeof(*e));
	e[0].function = 1;
	e[0].ecx = 0xfffa3203;
	e[0].edx = 0x178bfbff;
	e[1].function = 0x80000007;
	e[1].ebx = 0x3b;
	e[1].edx = 0x6799; /* invariant TSC (bit 8) and power management bits */
	e[2].function = 0x40000001;
	e[2].eax = 0x01007afb;
}

static void test_models(void)
{
	static const char *const ok[] = {NULL, "host-model", "host-passthrough"};
	struct kvm_cpuid_entry2 e[3], want[3];
	unsigned int i;

	for (i = 0; i < 3; i++) {
		host(e);
		host(want);
		want[1].edx = 0x6699;
		CHECK(arch_cpu_model_apply(ok[i], e, 3) == 0);
		CHECK(memcmp(e, want, sizeof(e)) == 0);
	}
	host(e);
	host(want);
	CHECK(arch_cpu_model_apply("Haswell-noTSX", e, 3) == -EINVAL);
	CHECK(memcmp(e, want, sizeof(e)) == 0);
}

int main(void)
{
	TEST_RUN(test_models);
	return test_summary();
}
