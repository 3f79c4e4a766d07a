/* SPDX-License-Identifier: MIT */
/*
 * arch_cpuid_hosts.h - the host side of the CPUID unit tests: what two
 * hosts' KVM_GET_SUPPORTED_CPUID return (tests/data/arch/host-kvm-*.txt,
 * loaded by cpuid_hosts_load() into host_intel and host_amd), and the
 * guest's view of a table (lookup: the entry or NULL; q: what the CPUID
 * instruction returns, zeros for an absent entry). Header-only: included
 * once per test program by arch_cpuid_test.c and
 * arch_cpuid_topology_test.c; run from the repository root.
 */
#ifndef VMLET_TESTS_ARCH_CPUID_HOSTS_H
#define VMLET_TESTS_ARCH_CPUID_HOSTS_H

#include <stdlib.h>

#include "arch/arch.h"
#include "tests/lib/test.h"

#define DATA_DIR "tests/data/arch"
#define MAX_ENT	 256

struct table {
	struct kvm_cpuid_entry2 e[MAX_ENT];
	size_t n;
};

static struct table host_intel, host_amd;

static inline int load_host(const char *name, struct table *t)
{
	char path[256], *buf, *line, *save = NULL;
	size_t len;

	snprintf(path, sizeof(path), DATA_DIR "/%s", name);
	buf = test_read_file(path, &len);
	if (!buf)
		return -1;
	t->n = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct kvm_cpuid_entry2 *e = &t->e[t->n];

		if (line[0] == '#' || t->n >= MAX_ENT)
			continue;
		memset(e, 0, sizeof(*e));
		if (sscanf(line, "%x %x %x %x %x %x %x", &e->function, &e->index, &e->flags,
			   &e->eax, &e->ebx, &e->ecx, &e->edx) == 7)
			t->n++;
	}
	free(buf);
	return 0;
}

static inline const struct kvm_cpuid_entry2 *lookup(const struct kvm_cpuid_entry2 *e, size_t n,
						    uint32_t fn, uint32_t idx)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].function == fn && e[i].index == idx)
			return &e[i];
	return NULL;
}

/* What the guest's CPUID instruction returns: zeros for absent entries. */
static inline struct kvm_cpuid_entry2 q(const struct kvm_cpuid_entry2 *e, size_t n, uint32_t fn,
					uint32_t idx)
{
	const struct kvm_cpuid_entry2 *p = lookup(e, n, fn, idx);
	struct kvm_cpuid_entry2 z;

	memset(&z, 0, sizeof(z));
	return p ? *p : z;
}

/* Both hosts' tables; 0, or -1 with the reason printed. */
static inline int cpuid_hosts_load(void)
{
	if (load_host("host-kvm-intel.txt", &host_intel) ||
	    load_host("host-kvm-amd.txt", &host_amd)) {
		printf("cannot read " DATA_DIR " (run from the repository root)\n");
		return -1;
	}
	return 0;
}

#endif /* VMLET_TESTS_ARCH_CPUID_HOSTS_H */
