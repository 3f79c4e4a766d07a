/* SPDX-License-Identifier: MIT */
/*
 * cpu_model.c - what cpu.model means for the CPUID vmlet presents.
 *
 * vmlet presents the host CPU: the host's KVM-supported CPUID, which
 * arch_cpuid_build() then shapes for the topology and vendor. For KubeVirt
 * that is cpu.model host-passthrough, and close to host-model, its default
 * (libvirt expands it to the host's closest named CPU model plus the host
 * features it knows, so the feature list can differ from KVM's by what
 * libvirt does not know; vmlet keeps every feature KVM offers and the
 * host's family/model/stepping). Both are migratable in libvirt
 * and QEMU by default (host-passthrough,migratable=on; host-model names a
 * migratable model): features QEMU marks unmigratable are left out. Of the
 * bits KVM reports, that is the invariant TSC (CPUID 0x8000_0007 EDX[8],
 * QEMU's "invtsc"), which a guest would otherwise trust across a migration
 * to a host with another TSC rate.
 */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/cpuid_features.h"

#define CPUID_80000007_EDX_INVTSC (1u << 8)

int arch_cpu_model_apply(const char *model, struct kvm_cpuid_entry2 *host, size_t n)
{
	size_t i;

	if (model && strcmp(model, "host-model") && strcmp(model, "host-passthrough"))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (host[i].function == CPUID_LEAF_APM)
			host[i].edx &= ~CPUID_80000007_EDX_INVTSC;
	return 0;
}
