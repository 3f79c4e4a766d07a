/* SPDX-License-Identifier: MIT */
/*
 * hyperv.c - the Hyper-V CPUID leaves 0x4000_0000..0x4000_000A of a vCPU
 * from the enlightenments asked for, laid out as QEMU lays them out for
 * its hv-* flags (Microsoft's Hypervisor Top Level Functional
 * Specification, "Feature and Interface Discovery"):
 *  - 0x4000_0000: EAX the highest Hyper-V leaf (0x4000_0005, or
 *    0x4000_000A when a nested feature is on), EBX..EDX the vendor
 *    ("Microsoft Hv" unless vendorid names another);
 *  - 0x4000_0001: EAX "Hv#1", the interface Windows and Linux look for;
 *  - 0x4000_0002: the version QEMU reports by default, build 14393
 *    (0x3839), 10.0;
 *  - 0x4000_0003: EAX/EBX the partition privileges (which synthetic MSRs
 *    and hypercalls exist), EDX the miscellaneous features;
 *  - 0x4000_0004: EAX the recommendations (hints), EBX the spinlock
 *    retries before a guest notifies (0xFFFFFFFF: never);
 *  - 0x4000_0005: the implementation limits QEMU reports by default: no
 *    limit on virtual processors (0xFFFFFFFF), 64 logical processors;
 *  - 0x4000_0006..9 zero and 0x4000_000A EAX the nested features.
 * Which bits each feature sets is the one table below; the same table
 * says which bits KVM must offer (KVM_GET_SUPPORTED_HV_CPUID) for the
 * feature to work. KVM's paravirtual leaves move to 0x4000_0100 when
 * Hyper-V's are there (KVM finds them at any 0x100 step, and so does
 * Linux), or go when the KVM signature is hidden (QEMU's kvm=off).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/cpuid_features.h"

#define HV_LEAF_VENDOR	 0x40000000u
#define HV_LEAF_IFACE	 0x40000001u
#define HV_LEAF_VERSION	 0x40000002u
#define HV_LEAF_FEATURES 0x40000003u
#define HV_LEAF_HINTS	 0x40000004u
#define HV_LEAF_LIMITS	 0x40000005u
#define HV_LEAF_NESTED	 0x4000000Au
#define HV_KVM_BASE	 0x40000100u

#define HV_IFACE_HV1	 0x31237648u /* "Hv#1" */
#define HV_VERSION_BUILD 0x3839u     /* QEMU's default hv-version-id-build */
#define HV_VERSION_MAJOR 0x000Au
#define HV_NEVER_NOTIFY	 0xFFFFFFFFu
#define HV_MAX_VPS	 0xFFFFFFFFu /* QEMU's hv-max-vps default */
#define HV_MAX_LPS	 64u	     /* QEMU's, "matches Hyper-V 2016" */

/* 0x4000_0003 EAX: partition privileges, low word */
#define HV_VP_RUNTIME	   (1u << 0)
#define HV_TIME_REF_COUNT  (1u << 1)
#define HV_SYNIC	   (1u << 2)
#define HV_SYNTIMERS	   (1u << 3)
#define HV_APIC_ACCESS	   (1u << 4)
#define HV_HYPERCALL	   (1u << 5)
#define HV_VP_INDEX	   (1u << 6)
#define HV_RESET	   (1u << 7)
#define HV_REFERENCE_TSC   (1u << 9)
#define HV_FREQUENCY_MSRS  (1u << 11)
#define HV_REENLIGHTENMENT (1u << 13)
/* 0x4000_0003 EBX: partition privileges, high word */
#define HV_POST_MESSAGES (1u << 4)
#define HV_SIGNAL_EVENTS (1u << 5)
/* 0x4000_0003 EDX */
#define HV_DYN_PARTITIONING (1u << 3)
#define HV_FREQUENCY_AVAIL  (1u << 8)
#define HV_XMM_INPUT	    (1u << 4)
#define HV_CRASH_MSRS	    (1u << 10)
#define HV_EXT_GVA_FLUSH    (1u << 14)
#define HV_STIMER_DIRECT    (1u << 19)
/* 0x4000_0004 EAX: recommendations */
#define HV_REMOTE_TLB_FLUSH_REC (1u << 2)
#define HV_APIC_ACCESS_REC	(1u << 3)
#define HV_RELAXED_TIMING_REC	(1u << 5)
#define HV_CLUSTER_IPI_REC	(1u << 10)
#define HV_EX_PROC_MASKS_REC	(1u << 11)
#define HV_DEPRECATING_AEOI_REC (1u << 9)
#define HV_EVMCS_REC		(1u << 14)
/* 0x4000_000A EAX */
#define HV_NESTED_DIRECT_FLUSH (1u << 17)
#define HV_NESTED_MSR_BITMAP   (1u << 19)

enum hv_reg { R_EAX, R_EBX, R_ECX, R_EDX };

struct hv_bits {
	uint32_t leaf; /* 0: unused */
	enum hv_reg reg;
	uint32_t bits;
};

/* What each feature sets, and what KVM must offer for it (QEMU's
 * kvm_hyperv_properties, the same bits). Spinlocks and the vendor id need
 * nothing of KVM. */
static const struct {
	uint32_t feature;
	const char *desc;
	struct hv_bits b[2];
} hv_table[] = {
    {ARCH_HV_RELAXED, "relaxed timing (relaxed)", {{HV_LEAF_HINTS, R_EAX, HV_RELAXED_TIMING_REC}}},
    {ARCH_HV_VAPIC, "virtual APIC (vapic)", {{HV_LEAF_FEATURES, R_EAX, HV_APIC_ACCESS}}},
    {ARCH_HV_TIME,
     "clocksources (clock.timer.hyperv)",
     {{HV_LEAF_FEATURES, R_EAX, HV_TIME_REF_COUNT | HV_REFERENCE_TSC}}},
    {ARCH_HV_RESET, "reset MSR (reset)", {{HV_LEAF_FEATURES, R_EAX, HV_RESET}}},
    {ARCH_HV_VPINDEX, "VP_INDEX MSR (vpindex)", {{HV_LEAF_FEATURES, R_EAX, HV_VP_INDEX}}},
    {ARCH_HV_RUNTIME, "VP_RUNTIME MSR (runtime)", {{HV_LEAF_FEATURES, R_EAX, HV_VP_RUNTIME}}},
    {ARCH_HV_SYNIC,
     "synthetic interrupt controller (synic)",
     {{HV_LEAF_FEATURES, R_EAX, HV_SYNIC}}},
    {ARCH_HV_STIMER, "synthetic timers (synictimer)", {{HV_LEAF_FEATURES, R_EAX, HV_SYNTIMERS}}},
    {ARCH_HV_STIMER_DIRECT,
     "direct mode synthetic timers (synictimer.direct)",
     {{HV_LEAF_FEATURES, R_EDX, HV_STIMER_DIRECT}}},
    {ARCH_HV_FREQUENCIES,
     "frequency MSRs (frequencies)",
     {{HV_LEAF_FEATURES, R_EAX, HV_FREQUENCY_MSRS}, {HV_LEAF_FEATURES, R_EDX, HV_FREQUENCY_AVAIL}}},
    {ARCH_HV_REENLIGHTENMENT,
     "reenlightenment MSRs (reenlightenment)",
     {{HV_LEAF_FEATURES, R_EAX, HV_REENLIGHTENMENT}}},
    {ARCH_HV_TLBFLUSH,
     "paravirtualized TLB flush (tlbflush)",
     {{HV_LEAF_HINTS, R_EAX, HV_REMOTE_TLB_FLUSH_REC | HV_EX_PROC_MASKS_REC}}},
    {ARCH_HV_TLBFLUSH_EXT,
     "extended GVA ranges for TLB flush (tlbflush.extended)",
     {{HV_LEAF_FEATURES, R_EDX, HV_EXT_GVA_FLUSH}}},
    {ARCH_HV_TLBFLUSH_DIRECT,
     "direct TLB flush (tlbflush.direct)",
     {{HV_LEAF_NESTED, R_EAX, HV_NESTED_DIRECT_FLUSH}}},
    {ARCH_HV_IPI,
     "paravirtualized IPI (ipi)",
     {{HV_LEAF_HINTS, R_EAX, HV_CLUSTER_IPI_REC | HV_EX_PROC_MASKS_REC}}},
    {ARCH_HV_EVMCS, "enlightened VMCS (evmcs)", {{HV_LEAF_HINTS, R_EAX, HV_EVMCS_REC}}},
    {ARCH_HV_CRASH, "crash MSRs", {{HV_LEAF_FEATURES, R_EDX, HV_CRASH_MSRS}}},
    {ARCH_HV_AVIC, "AVIC/APICv support", {{HV_LEAF_HINTS, R_EAX, HV_DEPRECATING_AEOI_REC}}},
    {ARCH_HV_XMM_INPUT, "XMM fast hypercall input", {{HV_LEAF_FEATURES, R_EDX, HV_XMM_INPUT}}},
    {ARCH_HV_MSR_BITMAP, "enlightened MSR-Bitmap", {{HV_LEAF_NESTED, R_EAX, HV_NESTED_MSR_BITMAP}}},
};

#define HV_TABLE_N (sizeof(hv_table) / sizeof(hv_table[0]))

static uint32_t reg_of(const struct kvm_cpuid_entry2 *e, enum hv_reg r)
{
	return r == R_EAX ? e->eax : r == R_EBX ? e->ebx : r == R_ECX ? e->ecx : e->edx;
}

static const struct kvm_cpuid_entry2 *entry_find(const struct kvm_cpuid_entry2 *e, size_t n,
						 uint32_t fn)
{
	for (size_t i = 0; e && i < n; i++)
		if (e[i].function == fn && e[i].index == 0)
			return &e[i];
	return NULL;
}

/* The bits of (leaf, reg) the features of hv set. */
static uint32_t hv_collect(const struct arch_hv *hv, uint32_t leaf, enum hv_reg reg)
{
	uint32_t v = 0;

	for (size_t i = 0; i < HV_TABLE_N; i++)
		for (size_t k = 0; k < 2; k++)
			if ((hv->features & hv_table[i].feature) && hv_table[i].b[k].leaf == leaf &&
			    hv_table[i].b[k].reg == reg)
				v |= hv_table[i].b[k].bits;
	return v;
}

bool arch_hv_enabled(const struct arch_hv *hv)
{
	return hv && (hv->features & ~ARCH_HV_VENDOR_ID) != 0;
}

const char *arch_hv_unsupported(const struct arch_hv *hv, const struct kvm_cpuid_entry2 *sup,
				size_t n_sup)
{
	for (size_t i = 0; hv && i < HV_TABLE_N; i++) {
		if (!(hv->features & hv_table[i].feature))
			continue;
		for (size_t k = 0; k < 2; k++) {
			const struct hv_bits *b = &hv_table[i].b[k];
			const struct kvm_cpuid_entry2 *e;

			if (!b->leaf)
				continue;
			e = entry_find(sup, n_sup, b->leaf);
			if (!e || (reg_of(e, b->reg) & b->bits) != b->bits)
				return hv_table[i].desc;
		}
	}
	return NULL;
}

int arch_hv_passthrough(struct arch_hv *hv, const struct kvm_cpuid_entry2 *sup, size_t n_sup)
{
	const struct kvm_cpuid_entry2 *v = entry_find(sup, n_sup, HV_LEAF_VENDOR);
	const struct kvm_cpuid_entry2 *ver = entry_find(sup, n_sup, HV_LEAF_VERSION);
	const struct kvm_cpuid_entry2 *lim = entry_find(sup, n_sup, HV_LEAF_LIMITS);
	const struct kvm_cpuid_entry2 *h = entry_find(sup, n_sup, HV_LEAF_HINTS);
	struct arch_hv one = {0};

	if (!hv || !v)
		return -EINVAL;
	for (size_t i = 0; i < HV_TABLE_N; i++) {
		one.features = hv_table[i].feature;
		if (!arch_hv_unsupported(&one, sup, n_sup))
			hv->features |= hv_table[i].feature;
	}
	hv->features |= ARCH_HV_VENDOR_ID | ARCH_HV_SPINLOCKS;
	memcpy(hv->vendor_id, &v->ebx, 4);
	memcpy(hv->vendor_id + 4, &v->ecx, 4);
	memcpy(hv->vendor_id + 8, &v->edx, 4);
	hv->spinlock_retries = h ? h->ebx : HV_NEVER_NOTIFY;
	hv->host_ids = true;
	if (ver)
		memcpy(hv->version, (uint32_t[4]){ver->eax, ver->ebx, ver->ecx, ver->edx},
		       sizeof(hv->version));
	if (lim)
		memcpy(hv->limits, (uint32_t[4]){lim->eax, lim->ebx, lim->ecx, lim->edx},
		       sizeof(hv->limits));
	return 0;
}

/* Move KVM's leaves 0x4000_00xx to 0x4000_01xx, or drop them (hidden). */
static void kvm_leaves(struct kvm_cpuid_entry2 *e, size_t *n, bool hide)
{
	size_t i, k = 0;

	for (i = 0; i < *n; i++) {
		if (e[i].function >= CPUID_LEAF_KVM_BASE && e[i].function <= CPUID_LEAF_KVM_LAST) {
			if (hide)
				continue;
			if (e[i].function == CPUID_LEAF_KVM_BASE &&
			    e[i].eax >= CPUID_LEAF_KVM_BASE && e[i].eax <= CPUID_LEAF_KVM_LAST)
				e[i].eax += HV_KVM_BASE - CPUID_LEAF_KVM_BASE;
			e[i].function += HV_KVM_BASE - CPUID_LEAF_KVM_BASE;
		}
		e[k++] = e[i];
	}
	*n = k;
}

static int add(struct kvm_cpuid_entry2 *e, size_t *n, size_t cap, uint32_t fn, uint32_t eax,
	       uint32_t ebx, uint32_t ecx, uint32_t edx)
{
	if (*n >= cap)
		return -ENOSPC;
	memset(&e[*n], 0, sizeof(e[*n]));
	e[*n].function = fn;
	e[*n].eax = eax;
	e[*n].ebx = ebx;
	e[*n].ecx = ecx;
	e[*n].edx = edx;
	(*n)++;
	return 0;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct kvm_cpuid_entry2 *x = a, *y = b;

	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int hv_leaves(const struct arch_hv *hv, struct kvm_cpuid_entry2 *e, size_t *n, size_t cap)
{
	static const char ms[12] = "Microsoft Hv";
	uint32_t v[3], nested = hv_collect(hv, HV_LEAF_NESTED, R_EAX);
	uint32_t eax, ebx, edx, fn;
	const char *vendor = (hv->features & ARCH_HV_VENDOR_ID) ? hv->vendor_id : ms;
	int r;

	if (hv->features & ARCH_HV_EVMCS)
		nested |= hv->evmcs_version;
	memcpy(v, vendor, sizeof(v));
	r = add(e, n, cap, HV_LEAF_VENDOR, nested ? HV_LEAF_NESTED : HV_LEAF_LIMITS, v[0], v[1],
		v[2]);
	if (!r)
		r = add(e, n, cap, HV_LEAF_IFACE, HV_IFACE_HV1, 0, 0, 0);
	if (!r)
		r = hv->host_ids ? add(e, n, cap, HV_LEAF_VERSION, hv->version[0], hv->version[1],
				       hv->version[2], hv->version[3])
				 : add(e, n, cap, HV_LEAF_VERSION, HV_VERSION_BUILD,
				       HV_VERSION_MAJOR << 16, 0, 0);
	eax = hv_collect(hv, HV_LEAF_FEATURES, R_EAX) | HV_HYPERCALL;
	ebx = hv_collect(hv, HV_LEAF_FEATURES, R_EBX);
	if (hv->features & ARCH_HV_SYNIC)
		ebx |= HV_POST_MESSAGES | HV_SIGNAL_EVENTS;
	edx = hv_collect(hv, HV_LEAF_FEATURES, R_EDX) | HV_DYN_PARTITIONING;
	if (!r)
		r = add(e, n, cap, HV_LEAF_FEATURES, eax, ebx, 0, edx);
	eax = hv_collect(hv, HV_LEAF_HINTS, R_EAX);
	if ((hv->features & ARCH_HV_VAPIC) && !(hv->features & ARCH_HV_AVIC))
		eax |= HV_APIC_ACCESS_REC;
	if (!r)
		r = add(e, n, cap, HV_LEAF_HINTS, eax,
			(hv->features & ARCH_HV_SPINLOCKS) ? hv->spinlock_retries : HV_NEVER_NOTIFY,
			0, 0);
	if (!r)
		r = hv->host_ids ? add(e, n, cap, HV_LEAF_LIMITS, hv->limits[0], hv->limits[1],
				       hv->limits[2], hv->limits[3])
				 : add(e, n, cap, HV_LEAF_LIMITS, HV_MAX_VPS, HV_MAX_LPS, 0, 0);
	for (fn = HV_LEAF_LIMITS + 1; !r && nested && fn < HV_LEAF_NESTED; fn++)
		r = add(e, n, cap, fn, 0, 0, 0, 0);
	if (!r && nested)
		r = add(e, n, cap, HV_LEAF_NESTED, nested, 0, 0, 0);
	return r;
}

int arch_hv_cpuid(const struct arch_hv *hv, struct kvm_cpuid_entry2 *e, size_t *n, size_t cap)
{
	bool on = arch_hv_enabled(hv);
	int r;

	if (!hv || !e || !n || *n > cap)
		return -EINVAL;
	if (!on && !hv->kvm_hidden)
		return 0;
	kvm_leaves(e, n, hv->kvm_hidden);
	if (on) {
		r = hv_leaves(hv, e, n, cap);
		if (r)
			return r;
	}
	qsort(e, *n, sizeof(*e), cmp_fn);
	return 0;
}
