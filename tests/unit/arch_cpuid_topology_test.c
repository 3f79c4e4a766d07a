/* SPDX-License-Identifier: MIT */
/*
 * CPUID tables (arch/x86_64/cpuid.c) against hand-written golden data
 * (tests/data/arch/cpuid-*.txt, see the README there) and against the way
 * Linux derives package/core/thread from them (the extended topology
 * leaves, AMD's 0x8000_0008 + 0x8000_001E, Intel's leaf 1 + 4, and the
 * cache leaves' sharing), for every vCPU of every golden topology, both
 * vendors, on both hosts (arch_cpuid_hosts.h).
 */
#include <dirent.h>

#include "tests/unit/arch_cpuid_hosts.h"

#define MAX_VCPUS 512

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
int main(void)
{
	if (cpuid_hosts_load())
		return 1;
	TEST_RUN(test_golden);
	return test_summary();
}
