/* SPDX-License-Identifier: MIT */
/*
 * cpuid.c - one vCPU's CPUID table: the host's KVM-supported entries with
 * every topology leaf rewritten for the configured sockets/cores/threads and
 * presented in the chosen vendor's enumeration.
 *
 * Field widths come from arch_topo_widths(): smt_bits for the thread field,
 * pkg_shift for the whole package. Per vendor:
 *  - both: leaf 0 vendor string; leaf 1 EBX[31:24] initial APIC ID, EDX[28]
 *    HTT when a package has more than one logical processor, ECX[31]
 *    hypervisor; leaf 0xB with an SMT level (shift smt_bits), a core level
 *    (shift pkg_shift) and an invalid terminating subleaf, EDX = x2APIC ID
 *    on every subleaf (Intel SDM Vol 2A CPUID leaf 0BH; AMD APM Vol 3
 *    E.4.x "Function 0Bh"). Linux (arch/x86/kernel/cpu/topology_ext.c)
 *    reads 0x1F, else 0x8000_0026, else 0xB on either vendor.
 *  - Intel: leaf 1 EBX[23:16] = addressable IDs per package (1 << pkg_shift,
 *    SDM: "the nearest power-of-2 integer that is not smaller than
 *    EBX[23:16] is the number of unique initial APIC IDs reserved");
 *    leaf 4 EAX[25:14] = IDs sharing the cache - 1 (threads of a core for
 *    L1/L2, the package for L3+), EAX[31:26] = core IDs per package - 1;
 *    leaf 0x1F like 0xB; the 0x8000_00xx range reduced to the bits Intel
 *    defines, with the maximum extended leaf 0x8000_0008.
 *  - AMD (APM Vol 3 E.5 "Multiple Processor Calculation"): leaf 1
 *    EBX[23:16] = LogicalProcessorCount, 0x8000_0001 ECX CmpLegacy (more than
 *    one thread per package) and TopologyExtensions, 0x8000_0008 ECX
 *    ApicIdCoreIdSize = pkg_shift and NC = threads per package - 1,
 *    0x8000_001D cache sharing (NumSharingCache = sharing threads - 1),
 *    0x8000_001E EAX extended APIC ID, EBX core id and threads per core - 1,
 *    ECX node id (one node per package); no leaf 4 and no 0x1F. 0x8000_0026
 *    is dropped so Linux falls back to 0xB.
 * Feature bits are never added: the output is the host's KVM-supported set
 * with vendor-foreign bits removed (only topology, cache and the hypervisor
 * bit are synthesized). Leaves 0x4000_0000.. (KVM paravirt) pass through.
 * arch_cpuid_host_extras() adds to the host's set what KVM supports outside
 * KVM_GET_SUPPORTED_CPUID (the TSC-deadline timer) and the brand string.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/cpuid_features.h"

#define MAX_CACHES 8

struct cache_desc {
	uint32_t eax, ebx, ecx, edx; /* eax without the sharing fields */
};

struct cpuid_ctx {
	const struct arch_topology *t;
	struct arch_apic_widths w;
	enum arch_cpu_vendor vendor;
	uint32_t apic_id, pkg, core, thread;
	struct kvm_cpuid_entry2 *out;
	size_t cap, n;
	struct cache_desc caches[MAX_CACHES];
	size_t n_caches;
};

static struct kvm_cpuid_entry2 *find(struct cpuid_ctx *c, uint32_t fn, uint32_t idx)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->out[i].function == fn && c->out[i].index == idx)
			return &c->out[i];
	return NULL;
}

/* The entry for (fn, idx), created zeroed when missing; NULL when full. */
static struct kvm_cpuid_entry2 *get(struct cpuid_ctx *c, uint32_t fn, uint32_t idx, uint32_t flags)
{
	struct kvm_cpuid_entry2 *e = find(c, fn, idx);

	if (e)
		return e;
	if (c->n >= c->cap)
		return NULL;
	e = &c->out[c->n++];
	memset(e, 0, sizeof(*e));
	e->function = fn;
	e->index = idx;
	e->flags = flags;
	return e;
}

/* Set an indexed leaf's subleaf (KVM_CPUID_FLAG_SIGNIFCANT_INDEX). */
static int put(struct cpuid_ctx *c, uint32_t fn, uint32_t idx, uint32_t eax, uint32_t ebx,
	       uint32_t ecx, uint32_t edx)
{
	struct kvm_cpuid_entry2 *e = get(c, fn, idx, KVM_CPUID_FLAG_SIGNIFCANT_INDEX);

	if (!e)
		return -ENOSPC;
	e->eax = eax;
	e->ebx = ebx;
	e->ecx = ecx;
	e->edx = edx;
	return 0;
}

static const struct kvm_cpuid_entry2 *host_find(const struct kvm_cpuid_entry2 *host, size_t n,
						uint32_t fn, uint32_t idx)
{
	for (size_t i = 0; i < n; i++)
		if (host[i].function == fn && host[i].index == idx)
			return &host[i];
	return NULL;
}

/*
 * The cache hierarchy to describe: the host's leaf 4 subleaves, else its
 * 0x8000_001D subleaves (same EAX[9:0]/EBX/ECX/EDX layout), else a generic
 * 32K+32K L1, 1 MiB L2, 16 MiB L3 with 64-byte lines.
 */
static void caches_collect(struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *host, size_t n)
{
	static const uint32_t leaves[] = {CPUID_LEAF_CACHE_PARAM, CPUID_LEAF_AMD_CACHE};
	static const struct cache_desc dflt[] = {
	    {0x121, 7u << 22 | 63, 63, 0},     /* L1d: 8-way, 64 sets */
	    {0x122, 7u << 22 | 63, 63, 0},     /* L1i */
	    {0x143, 15u << 22 | 63, 1023, 0},  /* L2: 16-way, 1024 sets */
	    {0x163, 15u << 22 | 63, 16383, 0}, /* L3: 16-way, 16384 sets */
	};

	for (size_t l = 0; l < 2 && !c->n_caches; l++) {
		for (uint32_t i = 0; i < MAX_CACHES; i++) {
			const struct kvm_cpuid_entry2 *e = host_find(host, n, leaves[l], i);

			if (!e || !(e->eax & CPUID_CACHE_TYPE_MASK))
				break;
			c->caches[c->n_caches++] = (struct cache_desc){
			    e->eax & CPUID_CACHE_KEEP_EAX, e->ebx, e->ecx, e->edx};
		}
	}
	if (!c->n_caches) {
		memcpy(c->caches, dflt, sizeof(dflt));
		c->n_caches = sizeof(dflt) / sizeof(dflt[0]);
	}
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Sharing field value for a cache of the given level, for this vendor. */
static uint32_t cache_sharing(const struct cpuid_ctx *c, uint32_t level)
{
	const struct arch_topology *t = c->t;
	uint32_t v;

	if (c->vendor == ARCH_VENDOR_INTEL) /* addressable IDs - 1 */
		v = level <= 2 ? (1u << c->w.smt_bits) - 1 : (1u << c->w.pkg_shift) - 1;
	else /* logical processors sharing - 1 */
		v = level <= 2 ? t->threads - 1 : t->cores * t->threads - 1;
	return min_u32(v, CPUID_CACHE_SHARE_MAX) << CPUID_CACHE_SHARE_SHIFT;
}

static int build_caches(struct cpuid_ctx *c)
{
	uint32_t leaf =
	    c->vendor == ARCH_VENDOR_INTEL ? CPUID_LEAF_CACHE_PARAM : CPUID_LEAF_AMD_CACHE;
	uint32_t cores = min_u32((1u << c->w.core_bits) - 1, CPUID_4_CORES_MAX);
	size_t i;
	int r;

	for (i = 0; i < c->n_caches; i++) {
		const struct cache_desc *d = &c->caches[i];
		uint32_t level = (d->eax >> CPUID_CACHE_LEVEL_SHIFT) & 7;
		uint32_t eax = d->eax | cache_sharing(c, level);

		uint32_t edx = d->edx;

		if (c->vendor == ARCH_VENDOR_INTEL)
			eax |= cores << CPUID_4_CORES_SHIFT;
		else
			edx &= 3; /* AMD defines only WBINVD and CacheInclusive */
		r = put(c, leaf, (uint32_t)i, eax, d->ebx, d->ecx, edx);
		if (r)
			return r;
	}
	/* Type 0 terminates the list. */
	return put(c, leaf, (uint32_t)i, 0, 0, 0, 0);
}

/* Leaf 0xB or 0x1F: SMT level, core level (up to the package), invalid. */
static int build_ext_topo(struct cpuid_ctx *c, uint32_t leaf)
{
	const struct arch_topology *t = c->t;
	int r;

	r = put(c, leaf, 0, c->w.smt_bits, t->threads, 0 | CPUID_TOPO_TYPE_SMT << 8, c->apic_id);
	if (!r)
		r = put(c, leaf, 1, c->w.pkg_shift, t->threads * t->cores,
			1 | CPUID_TOPO_TYPE_CORE << 8, c->apic_id);
	if (!r)
		r = put(c, leaf, 2, 0, 0, 2 | CPUID_TOPO_TYPE_INVALID << 8, c->apic_id);
	return r;
}

static void set_vendor(uint32_t *ebx, uint32_t *ecx, uint32_t *edx, enum arch_cpu_vendor v)
{
	*ebx = v == ARCH_VENDOR_INTEL ? CPUID_INTEL_EBX : CPUID_AMD_EBX;
	*ecx = v == ARCH_VENDOR_INTEL ? CPUID_INTEL_ECX : CPUID_AMD_ECX;
	*edx = v == ARCH_VENDOR_INTEL ? CPUID_INTEL_EDX : CPUID_AMD_EDX;
}

static int build_basic(struct cpuid_ctx *c)
{
	uint32_t lp = c->t->cores * c->t->threads, nlp;
	struct kvm_cpuid_entry2 *e0 = get(c, CPUID_LEAF_VENDOR, 0, 0);
	struct kvm_cpuid_entry2 *e1 = get(c, CPUID_LEAF_FEATURES, 0, 0);
	uint32_t need =
	    c->vendor == ARCH_VENDOR_INTEL ? CPUID_LEAF_EXT_TOPO_V2 : CPUID_LEAF_EXT_TOPO;

	if (!e0 || !e1)
		return -ENOSPC;
	if (e0->eax < need)
		e0->eax = need;
	set_vendor(&e0->ebx, &e0->ecx, &e0->edx, c->vendor);

	if (c->vendor == ARCH_VENDOR_INTEL)
		nlp = c->w.pkg_shift >= 8 ? 0xff : 1u << c->w.pkg_shift;
	else
		nlp = min_u32(lp, 0xff);
	if (!(e1->ebx & 0xff00))
		e1->ebx |= 8u << CPUID_1_EBX_CLFLUSH_SHIFT; /* 64-byte lines */
	e1->ebx = (e1->ebx & 0xffff) | nlp << CPUID_1_EBX_NLP_SHIFT |
		  (c->apic_id & 0xff) << CPUID_1_EBX_APIC_SHIFT;
	e1->ecx |= CPUID_1_ECX_HYPERVISOR;
	if (lp > 1)
		e1->edx |= CPUID_1_EDX_HTT;
	else
		e1->edx &= ~CPUID_1_EDX_HTT;
	if (c->vendor == ARCH_VENDOR_INTEL) {
		struct kvm_cpuid_entry2 *e2 = get(c, CPUID_LEAF_CACHE_DESC, 0, 0);

		if (!e2)
			return -ENOSPC;
		/* One iteration; descriptor 0xFF: "use leaf 4". */
		if (!e2->eax && !e2->ebx && !e2->ecx && !e2->edx)
			e2->eax = 0x0000ff01;
	}
	return build_ext_topo(c, CPUID_LEAF_EXT_TOPO);
}

/* Strip the extended range down to what Intel defines (SDM Table 3-8). */
static int build_ext_intel(struct cpuid_ctx *c)
{
	struct kvm_cpuid_entry2 *e;

	e = get(c, CPUID_LEAF_EXT_MAX, 0, 0);
	if (!e)
		return -ENOSPC;
	e->eax = CPUID_LEAF_SIZES;
	e->ebx = e->ecx = e->edx = 0;
	e = get(c, CPUID_LEAF_EXT_FEAT, 0, 0);
	if (!e)
		return -ENOSPC;
	e->eax = e->ebx = 0;
	e->ecx &= CPUID_80000001_ECX_INTEL;
	e->edx &= CPUID_80000001_EDX_INTEL;
	if ((e = find(c, CPUID_LEAF_L1_AMD, 0)))
		e->eax = e->ebx = e->ecx = e->edx = 0;
	if ((e = find(c, CPUID_LEAF_L2L3, 0))) {
		e->eax = e->ebx = e->edx = 0;
		e->ecx &= ~0xf00u; /* Intel: bits 11:8 reserved */
	}
	if ((e = find(c, CPUID_LEAF_APM, 0))) {
		e->eax = e->ebx = e->ecx = 0;
		e->edx &= CPUID_80000007_EDX_INTEL;
	}
	if ((e = find(c, CPUID_LEAF_SIZES, 0))) {
		e->eax &= 0xffff;
		e->ebx &= CPUID_80000008_EBX_INTEL;
		e->ecx = e->edx = 0;
	}
	return build_caches(c);
}

/*
 * 0x8000_0006 EDX for an AMD presentation when the host has none (an Intel
 * host): L3 size in 512 KiB units [31:18], associativity [15:12] in the
 * APM's encoding (9h: "see Fn8000_001D" for counts without a code), line
 * size [7:0]. Linux only
 * checks it is non-zero before using 0x8000_001D for the LLC.
 */
static uint32_t amd_l3_info(const struct cpuid_ctx *c)
{
	static const struct {
		uint32_t ways, code;
	} enc[] = {{1, 1},    {2, 2},	 {4, 4},    {8, 6},    {16, 8},
		   {32, 0xa}, {48, 0xb}, {64, 0xc}, {96, 0xd}, {128, 0xe}};

	for (size_t i = 0; i < c->n_caches; i++) {
		const struct cache_desc *d = &c->caches[i];
		uint64_t ways = (d->ebx >> 22) + 1, parts = ((d->ebx >> 12) & 0x3ff) + 1;
		uint64_t line = (d->ebx & 0xfff) + 1, sets = (uint64_t)d->ecx + 1;
		uint32_t code = 0x9;

		if (((d->eax >> CPUID_CACHE_LEVEL_SHIFT) & 7) != 3)
			continue;
		for (size_t k = 0; k < sizeof(enc) / sizeof(enc[0]); k++)
			if (enc[k].ways == ways)
				code = enc[k].code;
		return (uint32_t)((ways * parts * line * sets) >> 19) << 18 | code << 12 |
		       (uint32_t)(line & 0xff);
	}
	return 0;
}

static int build_ext_amd(struct cpuid_ctx *c)
{
	const struct arch_topology *t = c->t;
	uint32_t lp = t->cores * t->threads;
	struct kvm_cpuid_entry2 *e, *e1 = find(c, CPUID_LEAF_FEATURES, 0);

	e = get(c, CPUID_LEAF_EXT_MAX, 0, 0);
	if (!e)
		return -ENOSPC;
	if (e->eax < CPUID_LEAF_AMD_TOPO)
		e->eax = CPUID_LEAF_AMD_TOPO;
	set_vendor(&e->ebx, &e->ecx, &e->edx, ARCH_VENDOR_AMD);

	e = get(c, CPUID_LEAF_EXT_FEAT, 0, 0);
	if (!e)
		return -ENOSPC;
	if (!e->eax && e1)
		e->eax = e1->eax; /* AMD mirrors the family signature here */
	e->ecx |= CPUID_80000001_ECX_TOPOEXT;
	if (lp > 1)
		e->ecx |= CPUID_80000001_ECX_CMP_LEGACY;
	else
		e->ecx &= ~CPUID_80000001_ECX_CMP_LEGACY;

	e = get(c, CPUID_LEAF_L2L3, 0, 0);
	if (!e)
		return -ENOSPC;
	if (!e->edx)
		e->edx = amd_l3_info(c);

	e = get(c, CPUID_LEAF_SIZES, 0, 0);
	if (!e)
		return -ENOSPC;
	e->ecx = (e->ecx & ~0xf0ffu) | c->w.pkg_shift << CPUID_80000008_ECX_APICSZ_SHIFT |
		 min_u32(lp - 1, CPUID_80000008_ECX_NC_MASK);

	e = get(c, CPUID_LEAF_AMD_TOPO, 0, 0);
	if (!e)
		return -ENOSPC;
	e->eax = c->apic_id;
	e->ebx = (t->threads - 1) << 8 | (c->core & 0xff);
	e->ecx = c->pkg & 0xff; /* NodeId, one node per package: NodesPerProcessor 0 */
	e->edx = 0;
	return build_caches(c);
}

/* Leaves rebuilt from scratch, or not presented for this vendor. */
static int dropped(const struct cpuid_ctx *c, uint32_t fn)
{
	switch (fn) {
	case CPUID_LEAF_CACHE_PARAM:
	case CPUID_LEAF_EXT_TOPO:
	case CPUID_LEAF_EXT_TOPO_V2:
	case CPUID_LEAF_AMD_CACHE:
	case CPUID_LEAF_AMD_TOPO:
	case CPUID_LEAF_AMD_EXTTOPO:
		return 1;
	default:
		break;
	}
	return c->vendor == ARCH_VENDOR_INTEL && fn > CPUID_LEAF_SIZES &&
	       fn <= CPUID_LEAF_EXT_MAX + 0xffff;
}

void arch_cpuid_host_extras(struct kvm_cpuid_entry2 *host, size_t n_host, bool tsc_deadline,
			    const char *brand)
{
	for (size_t i = 0; i < n_host; i++) {
		struct kvm_cpuid_entry2 *e = &host[i];
		uint32_t fn = e->function;

		if (fn == CPUID_LEAF_FEATURES && tsc_deadline)
			e->ecx |= CPUID_1_ECX_TSC_DEADLINE;
		if (fn >= CPUID_LEAF_BRAND0 && fn <= CPUID_LEAF_BRAND2 && brand && brand[0] &&
		    !e->eax && !e->ebx && !e->ecx && !e->edx) {
			const char *p = brand + 16 * (fn - CPUID_LEAF_BRAND0);

			memcpy(&e->eax, p, 4);
			memcpy(&e->ebx, p + 4, 4);
			memcpy(&e->ecx, p + 8, 4);
			memcpy(&e->edx, p + 12, 4);
		}
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct kvm_cpuid_entry2 *x = a, *y = b;

	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return 0;
}

static int topo_valid(const struct arch_topology *t)
{
	if (!t->sockets || !t->cores || !t->threads)
		return 0;
	if (t->cores > 256 || t->threads > 256 || t->sockets > 256)
		return 0;
	return 1;
}

int arch_cpu_vendor_of(uint32_t ebx, uint32_t edx, uint32_t ecx)
{
	if (ebx == CPUID_INTEL_EBX && edx == CPUID_INTEL_EDX && ecx == CPUID_INTEL_ECX)
		return ARCH_VENDOR_INTEL;
	if ((ebx == CPUID_AMD_EBX && edx == CPUID_AMD_EDX && ecx == CPUID_AMD_ECX) ||
	    (ebx == CPUID_HYGON_EBX && edx == CPUID_HYGON_EDX && ecx == CPUID_HYGON_ECX))
		return ARCH_VENDOR_AMD;
	return -1;
}

/* The host's vendor, from its leaf 0: Intel unless it is one of AMD's kind. */
enum arch_cpu_vendor arch_cpuid_host_vendor(const struct kvm_cpuid_entry2 *host, size_t n_host)
{
	for (size_t i = 0; host && i < n_host; i++)
		if (host[i].function == CPUID_LEAF_VENDOR)
			return arch_cpu_vendor_of(host[i].ebx, host[i].edx, host[i].ecx) ==
				       ARCH_VENDOR_AMD
				   ? ARCH_VENDOR_AMD
				   : ARCH_VENDOR_INTEL;
	return ARCH_VENDOR_INTEL;
}

int arch_cpuid_build(const struct arch_topology *t, enum arch_cpu_vendor vendor, uint32_t apic_id,
		     const struct kvm_cpuid_entry2 *host, size_t n_host,
		     struct kvm_cpuid_entry2 *out, size_t cap, size_t *n)
{
	struct cpuid_ctx c = {.t = t, .vendor = vendor, .apic_id = apic_id, .out = out, .cap = cap};
	int r;

	if (!t || !topo_valid(t) || (vendor != ARCH_VENDOR_INTEL && vendor != ARCH_VENDOR_AMD) ||
	    (!host && n_host) || !out)
		return -EINVAL;
	arch_topo_widths(t, &c.w);
	if (c.w.pkg_shift > 15)
		return -EINVAL;
	arch_topo_decompose(t, apic_id, &c.pkg, &c.core, &c.thread);
	if (c.pkg >= t->sockets || c.core >= t->cores || c.thread >= t->threads)
		return -EINVAL;
	caches_collect(&c, host, n_host);

	for (size_t i = 0; i < n_host; i++) {
		if (dropped(&c, host[i].function) || find(&c, host[i].function, host[i].index))
			continue;
		if (c.n >= cap)
			return -ENOSPC;
		out[c.n++] = host[i];
		if (host[i].function == CPUID_LEAF_KVM_FEAT &&
		    vendor != arch_cpuid_host_vendor(host, n_host))
			out[c.n - 1].eax &= ~CPUID_KVM_FEAT_HYPERCALLS;
	}
	r = build_basic(&c);
	if (!r && vendor == ARCH_VENDOR_INTEL)
		r = build_ext_topo(&c, CPUID_LEAF_EXT_TOPO_V2);
	if (!r)
		r = vendor == ARCH_VENDOR_INTEL ? build_ext_intel(&c) : build_ext_amd(&c);
	if (r)
		return r;
	qsort(out, c.n, sizeof(*out), cmp_entry);
	*n = c.n;
	return 0;
}
