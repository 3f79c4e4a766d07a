/* SPDX-License-Identifier: MIT */
/*
 * CPUID tables (arch/x86_64/cpuid.c) on two hosts' KVM data
 * (arch_cpuid_hosts.h): the vendor the guest sees and its leaf ranges, no
 * feature the host's KVM lacks, the table's order and flags, the
 * arguments refused, the host extras (TSC deadline, brand string), the
 * vendor decisions; and the initial MSRs. The topology against golden
 * data and Linux's derivation is arch_cpuid_topology_test.c.
 */
#include <errno.h>

#include "tests/unit/arch_cpuid_hosts.h"

static void build(const struct table *h, enum arch_cpu_vendor v, const struct arch_topology *t,
		  uint32_t apic, struct kvm_cpuid_entry2 *out, size_t *n)
{
	CHECK_EQ_U64(arch_cpuid_build(t, v, apic, h->e, h->n, out, MAX_ENT, n), 0);
}

static void test_vendor_and_ranges(void)
{
	static struct kvm_cpuid_entry2 out[MAX_ENT];
	const struct table *hosts[2] = {&host_intel, &host_amd};
	struct arch_topology t = {2, 3, 2};
	size_t n;

	for (int h = 0; h < 2; h++) {
		struct kvm_cpuid_entry2 l0, x0;

		build(hosts[h], ARCH_VENDOR_INTEL, &t, 9, out, &n);
		l0 = q(out, n, 0, 0);
		CHECK(!memcmp(&l0.ebx, "Genu", 4) && !memcmp(&l0.edx, "ineI", 4) &&
		      !memcmp(&l0.ecx, "ntel", 4));
		CHECK(l0.eax >= 0x1f);
		x0 = q(out, n, 0x80000000, 0);
		CHECK_EQ_U64(x0.eax, 0x80000008);
		CHECK_EQ_U64(x0.ebx | x0.ecx | x0.edx, 0);
		for (size_t i = 0; i < n; i++)
			CHECK(out[i].function < 0x80000000 || out[i].function > 0x8000ffff ||
			      out[i].function <= 0x80000008);
		/* Intel defines only LAHF/LZCNT/PREFETCHW and SYSCALL/NX/1G/RDTSCP/LM. */
		CHECK_EQ_U64(q(out, n, 0x80000001, 0).ecx & ~0x121u, 0);
		CHECK_EQ_U64(q(out, n, 0x80000001, 0).edx & ~0x2c100800u, 0);

		build(hosts[h], ARCH_VENDOR_AMD, &t, 9, out, &n);
		l0 = q(out, n, 0, 0);
		CHECK(!memcmp(&l0.ebx, "Auth", 4) && !memcmp(&l0.edx, "enti", 4) &&
		      !memcmp(&l0.ecx, "cAMD", 4));
		x0 = q(out, n, 0x80000000, 0);
		CHECK(x0.eax >= 0x8000001e);
		CHECK(!memcmp(&x0.ebx, "Auth", 4) && !memcmp(&x0.ecx, "cAMD", 4));
		CHECK(!lookup(out, n, 0x80000026, 0));	  /* Linux would prefer it to 0xB */
		CHECK(q(out, n, 0x80000006, 0).edx != 0); /* an L3 is described */
	}
}

/* The output never claims a feature the host's KVM does not support. */
static void test_features_subset(void)
{
	static struct kvm_cpuid_entry2 out[MAX_ENT];
	const struct table *hosts[2] = {&host_intel, &host_amd};
	struct arch_topology t = {1, 4, 2};

	for (int h = 0; h < 2; h++) {
		for (int v = 0; v < 2; v++) {
			const struct kvm_cpuid_entry2 *he = hosts[h]->e;
			size_t hn = hosts[h]->n, n;
			struct kvm_cpuid_entry2 a, b;

			build(hosts[h], (enum arch_cpu_vendor)v, &t, 3, out, &n);
			a = q(out, n, 1, 0), b = q(he, hn, 1, 0);
			CHECK_EQ_U64(a.eax, b.eax);
			CHECK_EQ_U64(a.ecx & ~b.ecx & ~(1u << 31), 0);
			CHECK_EQ_U64(a.edx & ~b.edx & ~(1u << 28), 0);
			CHECK(a.ecx & (1u << 31));
			a = q(out, n, 7, 0), b = q(he, hn, 7, 0);
			CHECK(!memcmp(&a, &b, sizeof(a)));
			a = q(out, n, 0xd, 0), b = q(he, hn, 0xd, 0);
			CHECK(!memcmp(&a, &b, sizeof(a)));
			a = q(out, n, 0x80000001, 0), b = q(he, hn, 0x80000001, 0);
			CHECK_EQ_U64(a.ecx & ~b.ecx & ~((1u << 1) | (1u << 22)), 0);
			CHECK_EQ_U64(a.edx & ~b.edx, 0);
			/* KVM paravirt leaves pass through unchanged, but for the
			 * hypercall features of a guest of the other vendor (it
			 * would use the hypercall instruction this CPU faults on) */
			a = q(out, n, 0x40000000, 0), b = q(he, hn, 0x40000000, 0);
			CHECK(!memcmp(&a, &b, sizeof(a)));
			CHECK(!memcmp(&a.ebx, "KVMKVMKVM", 9));
			a = q(out, n, 0x40000001, 0), b = q(he, hn, 0x40000001, 0);
			CHECK(b.eax & (1u << 11)); /* PV_SEND_IPI in both host tables */
			if (h == v) { /* hosts[0] is Intel, hosts[1] AMD, like the vendors */
				CHECK(!memcmp(&a, &b, sizeof(a)));
			} else {
				CHECK_EQ_U64(a.eax, b.eax & ~((1u << 7) | (1u << 11) | (1u << 13)));
				CHECK_EQ_U64(a.ebx | a.ecx | a.edx, b.ebx | b.ecx | b.edx);
			}
		}
	}
}

static void test_table_shape(void)
{
	static struct kvm_cpuid_entry2 out[MAX_ENT];
	struct arch_topology t = {2, 2, 2};
	size_t n;

	for (int v = 0; v < 2; v++) {
		build(&host_amd, (enum arch_cpu_vendor)v, &t, 5, out, &n);
		for (size_t i = 1; i < n; i++)
			CHECK(out[i - 1].function < out[i].function ||
			      (out[i - 1].function == out[i].function &&
			       out[i - 1].index < out[i].index));
		for (size_t i = 0; i < n; i++) {
			uint32_t f = out[i].function;

			if (f == 4 || f == 0xb || f == 0x1f || f == 0x8000001d)
				CHECK(out[i].flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX);
		}
	}
}

static void test_errors(void)
{
	static struct kvm_cpuid_entry2 out[MAX_ENT];
	struct arch_topology t = {2, 3, 2}, bad = {0, 1, 1};
	size_t n = 7;

	/* APIC ID 6 is a hole of the 3-core field; 16 is package 2 of 2. */
	CHECK_EQ_U64(arch_cpuid_build(&t, ARCH_VENDOR_INTEL, 6, host_intel.e, host_intel.n, out,
				      MAX_ENT, &n),
		     (uint64_t)-EINVAL);
	CHECK_EQ_U64(arch_cpuid_build(&t, ARCH_VENDOR_INTEL, 16, host_intel.e, host_intel.n, out,
				      MAX_ENT, &n),
		     (uint64_t)-EINVAL);
	CHECK_EQ_U64(arch_cpuid_build(&bad, ARCH_VENDOR_INTEL, 0, host_intel.e, host_intel.n, out,
				      MAX_ENT, &n),
		     (uint64_t)-EINVAL);
	CHECK_EQ_U64(arch_cpuid_build(&t, (enum arch_cpu_vendor)7, 0, host_intel.e, host_intel.n,
				      out, MAX_ENT, &n),
		     (uint64_t)-EINVAL);
	CHECK_EQ_U64(
	    arch_cpuid_build(&t, ARCH_VENDOR_AMD, 0, host_intel.e, host_intel.n, out, 20, &n),
	    (uint64_t)-ENOSPC);
	CHECK_EQ_U64(n, 7);
	/* No host data at all still gives a consistent table (generic caches). */
	CHECK_EQ_U64(arch_cpuid_build(&t, ARCH_VENDOR_INTEL, 9, NULL, 0, out, MAX_ENT, &n), 0);
	CHECK_EQ_U64(q(out, n, 4, 3).eax >> 14 & 0xfff, 7);
	CHECK_EQ_U64(q(out, n, 0xb, 1).edx, 9);
}

static void test_msrs(void)
{
	struct kvm_msr_entry m[32];
	int n0 = arch_msrs_initial(0, m, 32), found = 0;

	CHECK(n0 > 0);
	for (int i = 0; i < n0; i++) {
		if (m[i].index == 0x1b) { /* IA32_APIC_BASE: base, enabled, BSP */
			CHECK_EQ_U64(m[i].data, 0xfee00000ull | 1 << 11 | 1 << 8);
			found++;
		}
		if (m[i].index == 0x277) { /* PAT power-on value (SDM Vol 3A 13.12.4) */
			CHECK_EQ_U64(m[i].data, 0x0007040600070406ull);
			found++;
		}
		if (m[i].index == 0x2ff) {		/* MTRRs on, default write-back */
			CHECK_EQ_U64(m[i].data, 0x806); /* E (bit 11) | WB */
			found++;
		}
		if (m[i].index == 0xc0000082 || m[i].index == 0x174) {
			CHECK_EQ_U64(m[i].data, 0);
			found++;
		}
	}
	CHECK_EQ_U64(found, 5);
	CHECK_EQ_U64(arch_msrs_initial(3, m, 32), (uint64_t)n0);
	for (int i = 0; i < n0; i++)
		if (m[i].index == 0x1b)
			CHECK_EQ_U64(m[i].data, 0xfee00000ull | 1 << 11);
	CHECK_EQ_U64(arch_msrs_initial(0, m, 2), (uint64_t)-ENOSPC);
}

/* arch_cpuid_host_extras(): KVM's TSC-deadline timer (CPUID.1:ECX[24]) and
 * the host's brand string reach every vCPU's table, for either vendor;
 * leaves KVM filled are kept, and without extras nothing changes. */
static void test_host_extras(void)
{
	static struct kvm_cpuid_entry2 out[MAX_ENT];
	static struct table h;
	const struct table *hosts[2] = {&host_intel, &host_amd};
	const char brand[48] = "  Test CPU 9000 @ 2.00GHz";
	struct arch_topology t = {1, 2, 2};
	struct kvm_cpuid_entry2 e;
	size_t n;

	for (int i = 0; i < 2; i++) {
		h = *hosts[i];
		for (size_t k = 0; k < h.n; k++) /* some KVMs list it, most do not */
			if (h.e[k].function == 1)
				h.e[k].ecx &= ~(1u << 24);
		build(&h, ARCH_VENDOR_INTEL, &t, 1, out, &n);
		CHECK(!(q(out, n, 1, 0).ecx & (1u << 24)));
		arch_cpuid_host_extras(h.e, h.n, false, NULL);
		build(&h, ARCH_VENDOR_AMD, &t, 1, out, &n);
		CHECK(!(q(out, n, 1, 0).ecx & (1u << 24)));
		arch_cpuid_host_extras(h.e, h.n, true, brand);
		for (int v = 0; v < 2; v++) {
			build(&h, (enum arch_cpu_vendor)v, &t, 1, out, &n);
			CHECK(q(out, n, 1, 0).ecx & (1u << 24));
			if (!lookup(hosts[i]->e, hosts[i]->n, 0x80000002, 0))
				continue;
			for (uint32_t l = 0; l < 3; l++) {
				e = q(out, n, 0x80000002 + l, 0);
				CHECK(!memcmp(&e.eax, brand + 16 * l, 4));
				CHECK(!memcmp(&e.ebx, brand + 16 * l + 4, 4));
				CHECK(!memcmp(&e.ecx, brand + 16 * l + 8, 4));
				CHECK(!memcmp(&e.edx, brand + 16 * l + 12, 4));
			}
		}
	}
	/* a brand KVM already shows is kept */
	h = host_intel;
	for (size_t i = 0; i < h.n; i++)
		if (h.e[i].function == 0x80000002)
			h.e[i].eax = 0x41414141;
	arch_cpuid_host_extras(h.e, h.n, false, brand);
	CHECK_EQ_U64(q(h.e, h.n, 0x80000002, 0).eax, 0x41414141);
	CHECK_EQ_U64(q(h.e, h.n, 0x80000002, 0).ebx, 0);
}

/* The one table of vendor strings, leaf 0's EBX, EDX, ECX. */
static void test_vendor_of(void)
{
	CHECK(arch_cpu_vendor_of(0x756e6547, 0x49656e69, 0x6c65746e) == ARCH_VENDOR_INTEL);
	CHECK(arch_cpu_vendor_of(0x68747541, 0x69746e65, 0x444d4163) == ARCH_VENDOR_AMD);
	CHECK(arch_cpu_vendor_of(0x6f677948, 0x6e65476e, 0x656e6975) == ARCH_VENDOR_AMD);
	/* "CentaurHauls", and AMD's first word alone */
	CHECK(arch_cpu_vendor_of(0x746e6543, 0x48727561, 0x736c7561) == -1);
	CHECK(arch_cpu_vendor_of(0x68747541, 0, 0) == -1);
}

/* The one host-vendor decision (vmm/vm/vm.c's default and arch_cpuid_build()'s
 * hypercall rule both use it): AMD's kind (Hygon counted) or Intel. */
static void test_host_vendor(void)
{
	struct kvm_cpuid_entry2 e[2] = {{.function = 1}, {.function = 0}};

	CHECK(arch_cpuid_host_vendor(host_intel.e, host_intel.n) == ARCH_VENDOR_INTEL);
	CHECK(arch_cpuid_host_vendor(host_amd.e, host_amd.n) == ARCH_VENDOR_AMD);
	e[1].ebx = 0x6f677948, e[1].edx = 0x6e65476e, e[1].ecx = 0x656e6975; /* HygonGenuine */
	CHECK(arch_cpuid_host_vendor(e, 2) == ARCH_VENDOR_AMD);
	e[1].ebx = 0x68747541, e[1].edx = 0x69746e65, e[1].ecx = 0x444d4163; /* AuthenticAMD */
	CHECK(arch_cpuid_host_vendor(e, 2) == ARCH_VENDOR_AMD);
	e[1].ebx = 0x746e6543, e[1].edx = 0x48727561, e[1].ecx = 0x736c7561; /* CentaurHauls */
	CHECK(arch_cpuid_host_vendor(e, 2) == ARCH_VENDOR_INTEL);
	CHECK(arch_cpuid_host_vendor(e, 1) == ARCH_VENDOR_INTEL); /* no leaf 0 */
	CHECK(arch_cpuid_host_vendor(NULL, 0) == ARCH_VENDOR_INTEL);
}

int main(void)
{
	if (cpuid_hosts_load())
		return 1;
	TEST_RUN(test_vendor_and_ranges);
	TEST_RUN(test_features_subset);
	TEST_RUN(test_table_shape);
	TEST_RUN(test_errors);
	TEST_RUN(test_host_extras);
	TEST_RUN(test_host_vendor);
	TEST_RUN(test_vendor_of);
	TEST_RUN(test_msrs);
	return test_summary();
}
