/* SPDX-License-Identifier: MIT */
/*
 * arch_hyperv_test.c - arch_hv_cpuid() and arch_hv_unsupported(): every
 * enlightenment sets its TLFS bits (the ones QEMU sets for the same hv-*
 * flag) and no other feature's, KVM's leaves move to 0x4000_0100 or go
 * (kvm.hidden), and a host KVM without a feature's bits is named.
 */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "tests/lib/test.h"

#define CAP 32

/* A vCPU table as arch_cpuid_build leaves it: leaf 0, 1, KVM's two. */
static size_t base_table(struct kvm_cpuid_entry2 *e)
{
	memset(e, 0, CAP * sizeof(*e));
	e[0].function = 0;
	e[0].eax = 0xd;
	e[1].function = 1;
	e[1].ecx = 1u << 31;
	e[2].function = 0x40000000;
	e[2].eax = 0x40000001;
	memcpy(&e[2].ebx, "KVMKVMKVM\0\0\0", 12);
	e[3].function = 0x40000001;
	e[3].eax = 0x01007efb;
	return 4;
}

static const struct kvm_cpuid_entry2 *get(const struct kvm_cpuid_entry2 *e, size_t n, uint32_t fn)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].function == fn)
			return &e[i];
	return NULL;
}

static uint32_t reg(const struct kvm_cpuid_entry2 *e, size_t n, uint32_t fn, char r)
{
	const struct kvm_cpuid_entry2 *x = get(e, n, fn);

	if (!x)
		return 0xdeadbeef;
	return r == 'a' ? x->eax : r == 'b' ? x->ebx : r == 'c' ? x->ecx : x->edx;
}

/* The 12-byte signature of leaf fn (EBX, ECX, EDX) into s[13]. */
static const char *sig(const struct kvm_cpuid_entry2 *e, size_t n, uint32_t fn, char *s)
{
	const struct kvm_cpuid_entry2 *x = get(e, n, fn);

	memset(s, 0, 13);
	if (x) {
		memcpy(s, &x->ebx, 4);
		memcpy(s + 4, &x->ecx, 4);
		memcpy(s + 8, &x->edx, 4);
	}
	return s;
}

/* Each feature alone: its bits (TLFS), leaf by leaf, over what every
 * enlightened table has (HYPERCALL in 3.EAX, dynamic partitioning in
 * 3.EDX, as QEMU). */
static void test_each_flag(void)
{
	static const struct {
		uint32_t f;
		uint32_t a3, b3, d3, a4, aa;
	} t[] = {
	    {ARCH_HV_RELAXED, 0, 0, 0, 1u << 5, 0},
	    {ARCH_HV_VAPIC, 1u << 4, 0, 0, 1u << 3, 0},
	    {ARCH_HV_TIME, (1u << 1) | (1u << 9), 0, 0, 0, 0},
	    {ARCH_HV_RESET, 1u << 7, 0, 0, 0, 0},
	    {ARCH_HV_VPINDEX, 1u << 6, 0, 0, 0, 0},
	    {ARCH_HV_RUNTIME, 1u << 0, 0, 0, 0, 0},
	    {ARCH_HV_SYNIC, 1u << 2, (1u << 4) | (1u << 5), 0, 0, 0},
	    {ARCH_HV_STIMER, 1u << 3, 0, 0, 0, 0},
	    {ARCH_HV_STIMER_DIRECT, 0, 0, 1u << 19, 0, 0},
	    {ARCH_HV_FREQUENCIES, 1u << 11, 0, 1u << 8, 0, 0},
	    {ARCH_HV_REENLIGHTENMENT, 1u << 13, 0, 0, 0, 0},
	    {ARCH_HV_TLBFLUSH, 0, 0, 0, (1u << 2) | (1u << 11), 0},
	    {ARCH_HV_TLBFLUSH_EXT, 0, 0, 1u << 14, 0, 0},
	    {ARCH_HV_TLBFLUSH_DIRECT, 0, 0, 0, 0, 1u << 17},
	    {ARCH_HV_IPI, 0, 0, 0, (1u << 10) | (1u << 11), 0},
	    {ARCH_HV_EVMCS, 0, 0, 0, 1u << 14, 0x0101},
	    {ARCH_HV_SPINLOCKS, 0, 0, 0, 0, 0},
	};
	struct kvm_cpuid_entry2 e[CAP];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct arch_hv hv = {
		    .features = t[i].f, .spinlock_retries = 8191, .evmcs_version = 0x0101};
		size_t n = base_table(e);

		CHECK(arch_hv_enabled(&hv));
		CHECK(arch_hv_cpuid(&hv, e, &n, CAP) == 0);
		CHECK_EQ_U64(reg(e, n, 0x40000003, 'a'), t[i].a3 | (1u << 5));
		CHECK_EQ_U64(reg(e, n, 0x40000003, 'b'), t[i].b3);
		CHECK_EQ_U64(reg(e, n, 0x40000003, 'd'), t[i].d3 | (1u << 3));
		CHECK_EQ_U64(reg(e, n, 0x40000004, 'a'), t[i].a4);
		CHECK_EQ_U64(reg(e, n, 0x40000004, 'b'),
			     t[i].f == ARCH_HV_SPINLOCKS ? 8191 : 0xffffffffu);
		/* the nested leaf only with a nested feature */
		CHECK_EQ_U64(reg(e, n, 0x40000000, 'a'), t[i].aa ? 0x4000000a : 0x40000005);
		CHECK_EQ_U64(reg(e, n, 0x4000000a, 'a'), t[i].aa ? t[i].aa : 0xdeadbeef);
		CHECK(t[i].aa ? get(e, n, 0x40000007) != NULL : get(e, n, 0x40000006) == NULL);
	}
}

static void test_layout(void)
{
	struct arch_hv hv = {.features = ARCH_HV_RELAXED | ARCH_HV_VPINDEX};
	struct kvm_cpuid_entry2 e[CAP];
	size_t n = base_table(e);
	char s[13] = "";

	CHECK(arch_hv_cpuid(&hv, e, &n, CAP) == 0);
	CHECK_STR(sig(e, n, 0x40000000, s), "Microsoft Hv");
	CHECK_EQ_U64(reg(e, n, 0x40000001, 'a'), 0x31237648); /* "Hv#1" */
	CHECK_EQ_U64(reg(e, n, 0x40000002, 'a'), 0x3839);
	CHECK_EQ_U64(reg(e, n, 0x40000002, 'b'), 0x000a0000);
	CHECK_EQ_U64(reg(e, n, 0x40000005, 'a'), 0xffffffff); /* QEMU's */
	CHECK_EQ_U64(reg(e, n, 0x40000005, 'b'), 64);
	/* KVM at the next 0x100 step, its max leaf with it */
	CHECK_STR(sig(e, n, 0x40000100, s), "KVMKVMKVM");
	CHECK_EQ_U64(reg(e, n, 0x40000100, 'a'), 0x40000101);
	CHECK_EQ_U64(reg(e, n, 0x40000101, 'a'), 0x01007efb);
	CHECK_EQ_U64(reg(e, n, 1, 'c'), 1u << 31); /* the rest untouched */
	for (size_t i = 1; i < n; i++)
		CHECK(e[i - 1].function < e[i].function);
	CHECK_EQ_U64(n, 2 + 6 + 2);

	/* a vendor id of the manifest's */
	hv.features |= ARCH_HV_VENDOR_ID;
	memcpy(hv.vendor_id, "KubeVirt\0\0\0\0", 12);
	n = base_table(e);
	CHECK(arch_hv_cpuid(&hv, e, &n, CAP) == 0);
	CHECK_STR(sig(e, n, 0x40000000, s), "KubeVirt");
}

static void test_kvm_hidden(void)
{
	struct arch_hv hv = {.features = ARCH_HV_RELAXED, .kvm_hidden = true};
	struct kvm_cpuid_entry2 e[CAP];
	size_t n = base_table(e);

	CHECK(arch_hv_cpuid(&hv, e, &n, CAP) == 0);
	CHECK(get(e, n, 0x40000100) == NULL && get(e, n, 0x40000101) == NULL);
	CHECK_EQ_U64(reg(e, n, 0x40000001, 'a'), 0x31237648);
	/* hidden without Hyper-V: no leaf at 0x4000_0000 at all */
	hv.features = 0;
	n = base_table(e);
	CHECK(!arch_hv_enabled(&hv));
	CHECK(arch_hv_cpuid(&hv, e, &n, CAP) == 0);
	CHECK_EQ_U64(n, 2);
	CHECK(get(e, n, 0x40000000) == NULL);
	/* neither, or the vendor id alone: the table is left as it is */
	hv = (struct arch_hv){.features = ARCH_HV_VENDOR_ID};
	n = base_table(e);
	CHECK(arch_hv_cpuid(&hv, e, &n, CAP) == 0);
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_U64(reg(e, n, 0x40000000, 'a'), 0x40000001);
}

static void test_no_room(void)
{
	struct arch_hv hv = {.features = ARCH_HV_EVMCS};
	struct kvm_cpuid_entry2 e[CAP];
	size_t n = base_table(e);

	CHECK(arch_hv_cpuid(&hv, e, &n, 8) == -ENOSPC);
	n = 9;
	CHECK(arch_hv_cpuid(&hv, e, &n, 8) == -EINVAL);
	CHECK(arch_hv_cpuid(NULL, e, &n, CAP) == -EINVAL);
}

/* KVM_GET_SUPPORTED_HV_CPUID of an AMD host (Linux 6.1): everything but
 * the enlightened VMCS */
static size_t amd_sup(struct kvm_cpuid_entry2 *s)
{
	memset(s, 0, 4 * sizeof(*s));
	s[0].function = 0x40000003;
	s[0].eax = 0x3fff;
	s[0].ebx = 0x3b;
	s[0].edx = 0xbed7b2;
	s[1].function = 0x40000004;
	s[1].eax = 0xe2e;
	s[2].function = 0x40000005;
	s[2].eax = 1024;
	s[3].function = 0x4000000a;
	s[3].eax = 0xa0000;
	return 4;
}

static void test_unsupported(void)
{
	struct kvm_cpuid_entry2 s[7];
	size_t n = amd_sup(s);
	struct arch_hv hv = {.features = ~0u & ~ARCH_HV_EVMCS};

	CHECK(arch_hv_unsupported(&hv, s, n) == NULL);
	hv.features |= ARCH_HV_EVMCS;
	CHECK_STR(arch_hv_unsupported(&hv, s, n), "enlightened VMCS (evmcs)");
	hv.features = ARCH_HV_STIMER | ARCH_HV_SYNIC;
	s[0].eax &= ~(1u << 3);
	CHECK_STR(arch_hv_unsupported(&hv, s, n), "synthetic timers (synictimer)");
	/* no Hyper-V in KVM at all (kvm-pvm): the first asked for */
	hv.features = ARCH_HV_RELAXED | ARCH_HV_TIME;
	CHECK_STR(arch_hv_unsupported(&hv, NULL, 0), "relaxed timing (relaxed)");
	/* spinlocks and the vendor id need nothing of KVM */
	hv.features = ARCH_HV_SPINLOCKS | ARCH_HV_VENDOR_ID;
	CHECK(arch_hv_unsupported(&hv, NULL, 0) == NULL);
}

/* hypervPassthrough: everything KVM offers, KVM's ids (QEMU's
 * hv-passthrough); the hints without APIC_ACCESS_RECOMMENDED, as AVIC is
 * among them */
static void test_passthrough(void)
{
	struct kvm_cpuid_entry2 s[7], e[CAP];
	size_t ns = amd_sup(s), n = base_table(e);
	struct arch_hv hv = {0};
	char v[13];

	s[ns] = (struct kvm_cpuid_entry2){.function = 0x40000000, .eax = 0x4000000a};
	memcpy(&s[ns].ebx, "Linux KVM Hv", 12);
	s[ns + 1] =
	    (struct kvm_cpuid_entry2){.function = 0x40000002, .eax = 0x3839, .ebx = 0xa0000};
	s[1].ebx = 0xfff;
	s[2].ebx = 64;
	CHECK(arch_hv_passthrough(&hv, s, 1) == -EINVAL); /* no vendor leaf */
	CHECK(arch_hv_passthrough(&hv, s, ns + 2) == 0);
	CHECK_EQ_U64(hv.features, ~0u & ((1u << 22) - 1) & ~ARCH_HV_EVMCS);
	CHECK(arch_hv_cpuid(&hv, e, &n, CAP) == 0);
	CHECK_STR(sig(e, n, 0x40000000, v), "Linux KVM Hv");
	CHECK_EQ_U64(reg(e, n, 0x40000000, 'a'), 0x4000000a);
	/* the table's hints: tlbflush, relaxed, AVIC, ipi, ex masks */
	CHECK_EQ_U64(reg(e, n, 0x40000004, 'a'),
		     (1u << 2) | (1u << 5) | (1u << 9) | (1u << 10) | (1u << 11));
	CHECK_EQ_U64(reg(e, n, 0x40000004, 'b'), 0xfff);
	CHECK_EQ_U64(reg(e, n, 0x40000005, 'a'), 1024);
	CHECK_EQ_U64(reg(e, n, 0x40000005, 'b'), 64);
	CHECK_EQ_U64(reg(e, n, 0x4000000a, 'a'), (1u << 17) | (1u << 19));
}

int main(void)
{
	TEST_RUN(test_each_flag);
	TEST_RUN(test_layout);
	TEST_RUN(test_kvm_hidden);
	TEST_RUN(test_no_room);
	TEST_RUN(test_unsupported);
	TEST_RUN(test_passthrough);
	return test_summary();
}
