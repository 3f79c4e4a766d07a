/* SPDX-License-Identifier: MIT */
/* topo.c - Linux's CPUID topology parsing, reimplemented from its rules. */
#include "firmware/probe/topo.h"

enum { DOM_SMT, DOM_CORE, DOM_MODULE, DOM_TILE, DOM_DIE, DOM_DIEGRP, DOM_PKG, DOM_MAX };

struct scan {
	uint32_t shift[DOM_MAX], ncpus[DOM_MAX];
	uint32_t apic_id;
};

static uint32_t count_order(uint32_t n)
{
	uint32_t o = 0;

	while (o < 32 && n > 1 && (1ull << o) < n)
		o++;
	return o;
}

static uint32_t low_mask(uint32_t bits)
{
	return bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
}

/* Set a domain and propagate it to every level above (Linux: set_dom). */
static void set_dom(struct scan *s, int dom, uint32_t shift, uint32_t n)
{
	for (int d = dom; d < DOM_MAX; d++) {
		s->shift[d] = shift;
		s->ncpus[d] = n;
	}
}

static void update_dom(struct scan *s, int dom, uint32_t shift, uint32_t n)
{
	s->shift[dom] = shift;
	s->ncpus[dom] = n;
}

enum ext_kind { EXT_B, EXT_1F, EXT_26 };

/* Leaf 0xB / 0x1F / 0x8000_0026 subleaves: level type -> Linux domain. */
static bool parse_ext(struct scan *s, const struct topo_leaf *sub, int nsub, enum ext_kind kind)
{
	static const int map_b_1f[] = {0,	 DOM_SMT, DOM_CORE,  DOM_MODULE,
				       DOM_TILE, DOM_DIE, DOM_DIEGRP};
	/* AMD: 1 core (threads), 2 complex, 3 die (CCD), 4 socket */
	static const int map_26[] = {0, DOM_SMT, DOM_CORE, DOM_TILE, DOM_DIE};
	const int *map = kind == EXT_26 ? map_26 : map_b_1f;
	uint32_t maxtype = kind == EXT_B ? 3 : kind == EXT_1F ? 7 : 5;
	int i, last = 0;

	for (i = 0; i < nsub; i++) {
		uint32_t type = sub[i].c >> 8 & 0xff, nproc = sub[i].b & 0xffff;
		int dom;

		if (!nproc || !type)
			break;
		if (type >= maxtype) {
			dom = last + 1;
		} else {
			dom = map[type];
			last = dom;
		}
		if (dom >= DOM_MAX)
			dom = DOM_MAX - 1;
		if (!i)
			s->apic_id = sub[i].d;
		set_dom(s, dom, sub[i].a & 0x1f, nproc);
	}
	if (!i)
		return false;
	if (!s->shift[DOM_SMT] && s->ncpus[DOM_SMT] > 1)
		update_dom(s, DOM_SMT, count_order(s->ncpus[DOM_SMT]), s->ncpus[DOM_SMT]);
	return true;
}

static bool parse_ext_any(struct scan *s, const struct topo_cpuid *c, const char **src,
			  const char *src_1f, const char *src_26, const char *src_b)
{
	uint32_t max = c->l0.a;

	uint32_t emax = (c->e0.a & 0xffff0000u) == 0x80000000u ? c->e0.a : 0;

	if (max >= 0x1f && parse_ext(s, c->l1f, TOPO_LEAF_1F_SUBS, EXT_1F)) {
		*src = src_1f;
		return true;
	}
	if (emax >= 0x80000026 && parse_ext(s, c->e26, TOPO_LEAF_26_SUBS, EXT_26)) {
		*src = src_26;
		return true;
	}
	if (max >= 0xb && parse_ext(s, c->lb, TOPO_LEAF_B_SUBS, EXT_B)) {
		*src = src_b;
		return true;
	}
	return false;
}

static void parse_legacy(struct scan *s, const struct topo_cpuid *c)
{
	uint32_t nproc_shift = count_order(c->l1.b >> 16 & 0xff);
	uint32_t cores = 1, core_shift, smt_shift = 0;

	if (c->l0.a >= 4 && (c->l4.a & 0x1f))
		cores = (c->l4.a >> 26) + 1;
	core_shift = count_order(cores);
	if (c->l1.d & (1u << 28)) { /* HTT */
		if (nproc_shift >= core_shift)
			smt_shift = nproc_shift - core_shift;
		core_shift += smt_shift;
		cores <<= smt_shift;
	}
	set_dom(s, DOM_SMT, smt_shift, 1u << smt_shift);
	set_dom(s, DOM_CORE, core_shift, cores);
}

static uint32_t family(const struct topo_cpuid *c)
{
	uint32_t f = c->l1.a >> 8 & 0xf;

	return f == 0xf ? f + (c->l1.a >> 20 & 0xff) : f;
}

static void parse_amd(struct scan *s, const struct topo_cpuid *c, const char **src)
{
	uint32_t emax = (c->e0.a & 0xffff0000u) == 0x80000000u ? c->e0.a : 0;
	bool topoext = emax >= 0x80000001 && (c->e1.c & (1u << 22));
	bool has_ext = parse_ext_any(s, c, src, "amd-1f", "amd-80000026", "amd-b");

	if (!has_ext) {
		uint32_t nthreads, sft;

		if (emax < 0x80000008) {
			*src = "amd-none";
			return;
		}
		nthreads = (c->e8.c & 0xff) + 1;
		sft = c->e8.c >> 12 & 0xf;
		if (!sft)
			sft = count_order(nthreads);
		update_dom(s, DOM_SMT, 0, 1);
		set_dom(s, DOM_CORE, sft, nthreads);
		*src = "amd-80000008";
	}
	if (topoext && emax >= 0x8000001e) {
		s->apic_id = c->e1e.a;
		if (!has_ext && family(c) >= 0x17) {
			uint32_t n = (c->e1e.b >> 8 & 0xff) + 1;

			update_dom(s, DOM_SMT, count_order(n), n);
		}
	}
}

static bool eq12(const char *a, const char *b)
{
	for (int i = 0; i < 12; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

enum topo_vendor topo_vendor(const struct topo_cpuid *c, char vendor[13])
{
	const uint32_t regs[3] = {c->l0.b, c->l0.d, c->l0.c};

	for (int i = 0; i < 12; i++) {
		char ch = (char)(regs[i / 4] >> (8 * (i % 4)));

		vendor[i] = ch > 0x20 && ch < 0x7f ? ch : '_';
	}
	vendor[12] = '\0';
	if (eq12(vendor, "GenuineIntel"))
		return TOPO_VENDOR_INTEL;
	if (eq12(vendor, "AuthenticAMD") || eq12(vendor, "HygonGenuine"))
		return TOPO_VENDOR_AMD;
	return TOPO_VENDOR_OTHER;
}

void topo_derive(const struct topo_cpuid *c, struct topo_ids *out)
{
	struct scan s = {.apic_id = c->l1.b >> 24};
	const char *src = "none";
	char vendor[13];

	switch (topo_vendor(c, vendor)) {
	case TOPO_VENDOR_AMD:
		parse_amd(&s, c, &src);
		break;
	default:
		if (!parse_ext_any(&s, c, &src, "intel-1f", "intel-80000026", "intel-b")) {
			parse_legacy(&s, c);
			src = "intel-legacy";
		}
		break;
	}
	out->apic_id = s.apic_id;
	out->smt_shift = s.shift[DOM_SMT];
	out->pkg_shift = s.shift[DOM_PKG];
	out->source = src;
	out->package = out->pkg_shift >= 32 ? 0 : s.apic_id >> out->pkg_shift;
	out->core = (s.apic_id & low_mask(out->pkg_shift)) >> (out->smt_shift & 31);
	if (out->smt_shift >= 32)
		out->core = 0;
	out->thread = s.apic_id & low_mask(out->smt_shift);
}
