/* SPDX-License-Identifier: MIT */
/*
 * CPUID tables (arch/x86_64/cpuid.c) against hand-written golden data
 * (tests/data/arch/cpuid-*.txt, see the README there) and against the way
 * Linux derives package/core/thread from them.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "tests/lib/test.h"

#define DATA_DIR  "tests/data/arch"
#define MAX_ENT	  256
#define MAX_VCPUS 512

struct table {
	struct kvm_cpuid_entry2 e[MAX_ENT];
	size_t n;
};

static struct table host_intel, host_amd;

static int load_host(const char *name, struct table *t)
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

static const struct kvm_cpuid_entry2 *lookup(const struct kvm_cpuid_entry2 *e, size_t n,
					     uint32_t fn, uint32_t idx)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].function == fn && e[i].index == idx)
			return &e[i];
	return NULL;
}

/* What the guest's CPUID instruction returns: zeros for absent entries. */
static struct kvm_cpuid_entry2 q(const struct kvm_cpuid_entry2 *e, size_t n, uint32_t fn,
				 uint32_t idx)
{
	const struct kvm_cpuid_entry2 *p = lookup(e, n, fn, idx);
	struct kvm_cpuid_entry2 z;

	memset(&z, 0, sizeof(z));
	return p ? *p : z;
}

static uint32_t count_order(uint32_t n) /* Linux get_count_order() */
{
	uint32_t o = 0;

	while ((1ull << o) < n)
		o++;
	return o;
}

struct derived {
	uint32_t apic, smt_shift, pkg_shift;
};

/* Linux topology_ext.c parse_topology_leaf(): walk the levels. */
static int parse_ext_leaf(const struct kvm_cpuid_entry2 *e, size_t n, uint32_t leaf,
			  struct derived *d)
{
	int found = 0;

	d->smt_shift = d->pkg_shift = 0;
	for (uint32_t sub = 0; sub < 8; sub++) {
		struct kvm_cpuid_entry2 s = q(e, n, leaf, sub);
		uint32_t type = (s.ecx >> 8) & 0xff;

		if (!(s.ebx & 0xffff) || !type)
			break;
		if (!sub)
			d->apic = s.edx;
		if (type == 1)
			d->smt_shift = s.eax & 0x1f;
		d->pkg_shift = s.eax & 0x1f;
		found = 1;
	}
	return found;
}

/* Linux >= 6.9: which extended leaf the kernel would parse, on either vendor. */
static int derive_ext(const struct kvm_cpuid_entry2 *e, size_t n, struct derived *d)
{
	uint32_t max = q(e, n, 0, 0).eax, ext = q(e, n, 0x80000000, 0).eax;

	if (max >= 0x1f && parse_ext_leaf(e, n, 0x1f, d))
		return 1;
	if (ext >= 0x80000026 && parse_ext_leaf(e, n, 0x80000026, d))
		return 2;
	return max >= 0xb && parse_ext_leaf(e, n, 0xb, d) ? 3 : 0;
}

/* Linux topology_amd.c without leaf 0xB: 0x8000_0008 then 0x8000_001E. */
static void derive_amd_legacy(const struct kvm_cpuid_entry2 *e, size_t n, struct derived *d)
{
	struct kvm_cpuid_entry2 s8 = q(e, n, 0x80000008, 0), s1e = q(e, n, 0x8000001e, 0);

	d->pkg_shift = (s8.ecx >> 12) & 0xf;
	if (!d->pkg_shift)
		d->pkg_shift = count_order((s8.ecx & 0xff) + 1);
	d->smt_shift = count_order(((s1e.ebx >> 8) & 0xff) + 1);
	d->apic = s1e.eax;
}

/* Linux topology_common.c parse_legacy(): leaf 1 EBX[23:16] + leaf 4. */
static void derive_intel_legacy(const struct kvm_cpuid_entry2 *e, size_t n, struct derived *d)
{
	struct kvm_cpuid_entry2 l1 = q(e, n, 1, 0), l4 = q(e, n, 4, 0);
	uint32_t cores = (l4.eax & 0x1f) ? (l4.eax >> 26) + 1 : 1;
	uint32_t core_shift = count_order(cores), smt = 0;

	if (l1.edx & (1u << 28))
		smt = count_order((l1.ebx >> 16) & 0xff) - core_shift;
	d->smt_shift = smt;
	d->pkg_shift = core_shift + smt;
	d->apic = l1.ebx >> 24;
}

static void check_derived(const struct derived *d, const struct arch_topology *t, uint32_t i,
			  uint32_t apic, const char *how)
{
	uint32_t thr = d->apic & ((1u << d->smt_shift) - 1);
	uint32_t core = (d->apic & ((1u << d->pkg_shift) - 1)) >> d->smt_shift;
	uint32_t pkg = d->apic >> d->pkg_shift;

	if (d->apic != apic || thr != i % t->threads || core != (i / t->threads) % t->cores ||
	    pkg != i / (t->threads * t->cores))
		test_fail(__FILE__, __LINE__,
			  "%s: %u/%u/%u vcpu %u: apic %u (want %u) pkg %u core %u thread %u", how,
			  t->sockets, t->cores, t->threads, i, d->apic, apic, pkg, core, thr);
}

struct golden {
	struct arch_topology t;
	uint32_t apic[MAX_VCPUS];
	uint32_t n_apic;
	char *lines; /* the check lines, NUL-separated */
	size_t len;
};

static int parse_apic_list(struct golden *g, char *s)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		unsigned a, b;
		int k = sscanf(tok, "%u-%u", &a, &b);

		if (k == 1)
			b = a;
		else if (k != 2)
			return -1;
		for (unsigned v = a; v <= b && g->n_apic < MAX_VCPUS; v++)
			g->apic[g->n_apic++] = v;
	}
	return 0;
}

static int load_golden(const char *path, struct golden *g)
{
	size_t len;
	char *buf = test_read_file(path, &len), *line, *save = NULL, *out;

	if (!buf)
		return -1;
	memset(g, 0, sizeof(*g));
	g->lines = out = calloc(1, len + 1);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = 0;
		if (!strncmp(line, "topology ", 9)) {
			sscanf(line + 9, "%u %u %u", &g->t.sockets, &g->t.cores, &g->t.threads);
		} else if (!strncmp(line, "apic ", 5)) {
			if (parse_apic_list(g, line + 5))
				return -1;
		} else if (strspn(line, " \t") != strlen(line)) {
			strcpy(out, line);
			out += strlen(line) + 1;
		}
	}
	g->len = (size_t)(out - g->lines);
	free(buf);
	return 0;
}

static uint32_t sym_value(const char *v, uint32_t apic, const struct arch_topology *t, int *ok)
{
	uint32_t pkg, core, thr;
	char *end;
	unsigned long x;

	arch_topo_decompose(t, apic, &pkg, &core, &thr);
	*ok = 1;
	if (!strcmp(v, "apic"))
		return apic;
	if (!strcmp(v, "apic8"))
		return apic & 0xff;
	if (!strcmp(v, "core"))
		return core;
	if (!strcmp(v, "pkg"))
		return pkg;
	x = strtoul(v, &end, 0);
	*ok = *end == 0;
	return (uint32_t)x;
}

static int vendor_applies(const char *v, enum arch_cpu_vendor vendor)
{
	return !strcmp(v, "both") || (!strcmp(v, "intel") && vendor == ARCH_VENDOR_INTEL) ||
	       (!strcmp(v, "amd") && vendor == ARCH_VENDOR_AMD);
}

static void check_line(const char *line, const struct kvm_cpuid_entry2 *e, size_t n,
		       enum arch_cpu_vendor vendor, uint32_t apic, const struct golden *g,
		       const char *file)
{
	char ven[16], reg[8], val[32];
	unsigned leaf, sub, hi, lo;
	const struct kvm_cpuid_entry2 *p;
	uint32_t r, want, mask;
	int ok, k;

	k = sscanf(line, "%15s %x %u %7s %u:%u %31s", ven, &leaf, &sub, reg, &hi, &lo, val);
	if (!vendor_applies(ven, vendor))
		return;
	p = lookup(e, n, leaf, sub);
	if (k == 4 && !strcmp(reg, "absent")) {
		if (p)
			test_fail(file, 0, "%s: leaf %#x.%u present (vendor %d)", line, leaf, sub,
				  vendor);
		return;
	}
	if (k != 7 || hi > 31 || lo > hi) {
		test_fail(file, 0, "bad golden line: %s", line);
		return;
	}
	want = sym_value(val, apic, &g->t, &ok);
	if (!ok || !p || !strchr("abcd", reg[1]) || reg[0] != 'e') {
		test_fail(file, 0, "%s: %s", line, p ? "bad value" : "leaf missing");
		return;
	}
	r = reg[1] == 'a' ? p->eax : reg[1] == 'b' ? p->ebx : reg[1] == 'c' ? p->ecx : p->edx;
	mask = hi - lo == 31 ? 0xffffffffu : (1u << (hi - lo + 1)) - 1;
	if (((r >> lo) & mask) != want)
		test_fail(file, 0, "%s: vendor %s apic %u: got %#x want %#x", line,
			  vendor ? "amd" : "intel", apic, (r >> lo) & mask, want);
}

static void check_caches(const struct kvm_cpuid_entry2 *e, size_t n, enum arch_cpu_vendor v,
			 const struct arch_topology *t, uint32_t apic)
{
	uint32_t leaf = v == ARCH_VENDOR_INTEL ? 4 : 0x8000001d, pkg, core, thr;
	struct arch_apic_widths w;

	arch_topo_widths(t, &w);
	arch_topo_decompose(t, apic, &pkg, &core, &thr);
	for (uint32_t sub = 0; sub < 8; sub++) {
		struct kvm_cpuid_entry2 c = q(e, n, leaf, sub);
		uint32_t level = (c.eax >> 5) & 7, share = ((c.eax >> 14) & 0xfff) + 1;
		uint32_t id = apic >> count_order(share);

		if (!(c.eax & 0x1f))
			break;
		/* APM "ShareId = LocalApicId >> log2(NumSharingCache+1)"; SDM alike. */
		if (level == 3)
			CHECK_EQ_U64(id, pkg);
		else
			CHECK_EQ_U64(id, apic >> w.smt_bits); /* one core */
	}
}

static void run_golden(const char *file)
{
	struct golden g;
	const struct table *hosts[2] = {&host_intel, &host_amd};
	static struct kvm_cpuid_entry2 out[MAX_ENT];

	if (load_golden(file, &g)) {
		test_fail(file, 0, "cannot read golden file");
		return;
	}
	CHECK_EQ_U64(g.n_apic, arch_topo_vcpus(&g.t));
	for (uint32_t i = 0; i < g.n_apic; i++)
		CHECK_EQ_U64(arch_topo_apic_id(&g.t, i), g.apic[i]);
	for (int h = 0; h < 2; h++) {
		for (int v = 0; v < 2; v++) {
			for (uint32_t i = 0; i < g.n_apic; i++) {
				struct derived d;
				size_t n = 0;
				int r =
				    arch_cpuid_build(&g.t, (enum arch_cpu_vendor)v, g.apic[i],
						     hosts[h]->e, hosts[h]->n, out, MAX_ENT, &n);

				CHECK_EQ_U64(r, 0);
				if (r)
					return;
				for (const char *l = g.lines; l < g.lines + g.len;
				     l += strlen(l) + 1)
					check_line(l, out, n, (enum arch_cpu_vendor)v, g.apic[i],
						   &g, file);
				CHECK_EQ_U64(derive_ext(out, n, &d),
					     v == ARCH_VENDOR_INTEL ? 1 : 3);
				check_derived(&d, &g.t, i, g.apic[i], "extended leaf");
				if (v == ARCH_VENDOR_AMD) {
					derive_amd_legacy(out, n, &d);
					check_derived(&d, &g.t, i, g.apic[i], "0x80000008+1e");
				} else if (g.apic[g.n_apic - 1] < 256 && g.t.cores <= 64) {
					derive_intel_legacy(out, n, &d);
					check_derived(&d, &g.t, i, g.apic[i], "leaf 1+4");
				}
				check_caches(out, n, (enum arch_cpu_vendor)v, &g.t, g.apic[i]);
			}
		}
	}
	free(g.lines);
}

static void test_golden(void)
{
	DIR *dir = opendir(DATA_DIR);
	struct dirent *de;
	int files = 0;

	if (!dir) {
		test_fail(__FILE__, __LINE__, "cannot open %s (run from the repository root)",
			  DATA_DIR);
		return;
	}
	while ((de = readdir(dir))) {
		char path[512];

		if (strncmp(de->d_name, "cpuid-", 6))
			continue;
		snprintf(path, sizeof(path), DATA_DIR "/%s", de->d_name);
		run_golden(path);
		files++;
	}
	closedir(dir);
	CHECK(files >= 8);
}

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
	if (load_host("host-kvm-intel.txt", &host_intel) ||
	    load_host("host-kvm-amd.txt", &host_amd)) {
		printf("cannot read " DATA_DIR " (run from the repository root)\n");
		return 1;
	}
	TEST_RUN(test_golden);
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
