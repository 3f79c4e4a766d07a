/* SPDX-License-Identifier: MIT */
/*
 * The probe report (vmm/probe/report.c): parsing good, garbage and
 * truncated reports, the expected report of a configuration, comparison,
 * JSON. Also the probe guest's own topology derivation
 * (firmware/probe/topo.c, compiled here for the host) fed with the CPUID
 * tables arch_cpuid_build() makes: what the guest will derive must equal
 * what probe_report_expected() predicts, for both vendors.
 */
#include <errno.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "arch/arch.h"
#include "tests/lib/test.h"
#include "vmm/probe/report.h"

#include "firmware/probe/topo.c"

/* Serial output of the probe under QEMU microvm -smp 2,2,2 (Intel, 0xB). */
static const char good_222[] = "qboot noise\r\n"
			       "\n"
			       "VMLET-PROBE-BEGIN v1\n"
			       "memoryBytes=133823488\n"
			       "memmapEntries=7\n"
			       "acpiTables=RSDP XSDT FACP APIC DSDT\n"
			       "madtApicIds=0 1 2 3 4 5 6 7\n"
			       "s5SlpTyp=5\n"
			       "acpiPowerOff=sleep-control-mem 0xfea00200\n"
			       "vendor=GenuineIntel\n"
			       "topoSource=intel-b\n"
			       "smtShift=1\n"
			       "pkgShift=2\n"
			       "vcpus=8\n"
			       "vcpu=0 0 0 0 0\n"
			       "vcpu=1 0 0 1 1\n"
			       "vcpu=2 0 1 0 2\n"
			       "vcpu=3 0 1 1 3\n"
			       "vcpu=4 1 0 0 4\n"
			       "vcpu=5 1 0 1 5\n"
			       "vcpu=6 1 1 0 6\n"
			       "vcpu=7 1 1 1 7\n"
			       "sockets=2\n"
			       "coresPerSocket=2\n"
			       "threadsPerCore=2\n"
			       "tscProbe=14572924\n"
			       "VMLET-PROBE-END\r\n"
			       "trailing noise";

static struct probe_report *new_report(void)
{
	struct probe_report *r = calloc(1, sizeof(*r));

	if (!r)
		abort();
	return r;
}

static int parse_str(const char *s, struct probe_report *r)
{
	return probe_report_parse(s, strlen(s), r);
}

static void test_parse_good(void)
{
	struct probe_report *r = new_report();

	CHECK_EQ_U64(parse_str(good_222, r), 0);
	CHECK_EQ_U64(r->abi_version, 1);
	CHECK_STR(r->vendor_id, "GenuineIntel");
	CHECK_EQ_U64(r->vendor, ARCH_VENDOR_INTEL);
	CHECK_STR(r->topo_source, "intel-b");
	CHECK_EQ_U64(r->n_vcpus, 8);
	CHECK_EQ_U64(r->vcpus[6].apic_id, 6);
	CHECK_EQ_U64(r->vcpus[6].package, 1);
	CHECK_EQ_U64(r->vcpus[6].core, 1);
	CHECK_EQ_U64(r->vcpus[6].thread, 0);
	CHECK_EQ_U64(r->vcpus[6].lapic_id, 6);
	CHECK_EQ_U64(r->sockets, 2);
	CHECK_EQ_U64(r->cores_per_socket, 2);
	CHECK_EQ_U64(r->threads_per_core, 2);
	CHECK_EQ_U64(r->memory_bytes, 133823488);
	CHECK_EQ_U64(r->n_tables, 5);
	CHECK_STR(r->tables[3], "APIC");
	CHECK_EQ_U64(r->n_madt, 8);
	CHECK_EQ_U64(r->madt_apic_ids[7], 7);
	CHECK_EQ_U64(r->n_bad_tables + r->n_errors + r->n_missing, 0);
	CHECK_EQ_U64(r->tsc_probe, 14572924);
	CHECK_EQ_U64(r->tsc_aps, 0);
	free(r);
}

/* Replace the first occurrence of from in good_222 by to; parse it. */
static int parse_edited(const char *from, const char *to, struct probe_report *r)
{
	char buf[4096];
	const char *at = strstr(good_222, from);

	if (!at)
		return 12345;
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - good_222), good_222, to,
		 at + strlen(from));
	return parse_str(buf, r);
}

static void test_parse_bad(void)
{
	struct probe_report *r = new_report();
	char big[FW_ABI_MAX_LINE + 64];

	CHECK_EQ_U64(parse_str("", r), (uint64_t)-ENOENT);
	CHECK_EQ_U64(parse_str("garbage\n\x01\x02\xff\nmore", r), (uint64_t)-ENOENT);
	CHECK_EQ_U64(parse_str("xVMLET-PROBE-BEGIN v1\nVMLET-PROBE-END\n", r), (uint64_t)-ENOENT);
	CHECK_EQ_U64(parse_str("VMLET-PROBE-BEGIN v2\nVMLET-PROBE-END\n", r), (uint64_t)-EPROTO);
	CHECK_EQ_U64(r->abi_version, 2);
	CHECK_EQ_U64(parse_str("VMLET-PROBE-BEGIN vx\n", r), (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_str("VMLET-PROBE-BEGIN v1\nVMLET-PROBE-END\n", r), 0);
	CHECK_EQ_U64(r->n_vcpus, 0);
	/* truncated at every position: never 0 unless the END line survived */
	for (size_t n = 0; n < sizeof(good_222) - 1; n++) {
		int err = probe_report_parse(good_222, n, r);
		const char *end = strstr(good_222, "VMLET-PROBE-END");

		if (n < (size_t)(end - good_222) + strlen("VMLET-PROBE-END"))
			CHECK(err < 0);
		CHECK(r->n_vcpus <= 8);
	}
	CHECK_EQ_U64(parse_edited("vcpu=3 0 1 1 3", "vcpu=3 0 1 1", r), (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("vcpu=3 0 1 1 3", "vcpu=3 0 1 1 3 9", r), (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("vcpu=3 0 1 1 3", "vcpu=3 0 -1 1 3", r), (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("vcpu=3 0 1 1 3", "vcpu=4294967296 0 1 1 3", r),
		     (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("vcpus=8", "vcpus=9", r), (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("memoryBytes=133823488", "memoryBytes=99999999999999999999", r),
		     (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("memoryBytes=133823488", "memoryBytes=12a", r),
		     (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("acpiTables=RSDP", "acpiTables=RSDPX", r), (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("APIC DSDT", "APIC  DSDT", r), (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("0 1 2 3 4 5 6 7", "0 1 2 3 4 5 6 7 ", r), (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("vendor=GenuineIntel", "vendor=GenuineIntelXYZ", r),
		     (uint64_t)-EBADMSG);
	CHECK_EQ_U64(parse_edited("s5SlpTyp=5", "no equals sign", r), (uint64_t)-EBADMSG);
	/* unknown keys are ignored, error lines are kept (bounded, sanitized) */
	CHECK_EQ_U64(parse_edited("s5SlpTyp=5", "futureKey=whatever 1 2", r), 0);
	CHECK_EQ_U64(parse_edited("s5SlpTyp=5", "error=no \"MADT\"\x01", r), 0);
	CHECK_EQ_U64(r->n_errors, 1);
	CHECK_STR(r->errors[0], "no \"MADT\"?");
	/* an over-long line */
	memset(big, 'x', sizeof(big));
	memcpy(big, "error=", 6);
	big[sizeof(big) - 1] = '\0';
	CHECK_EQ_U64(parse_edited("s5SlpTyp=5", big, r), (uint64_t)-EBADMSG);
	free(r);
}

/* Random bytes and random edits of a good report never crash the parser
 * (run under ASan/UBSan too) and never produce out-of-range counts. */
static void test_parse_fuzz(void)
{
	struct probe_report *r = new_report();
	char buf[sizeof(good_222)];
	unsigned seed = 12345;

	for (int iter = 0; iter < 20000; iter++) {
		memcpy(buf, good_222, sizeof(buf));
		for (int k = 0; k < 1 + iter % 4; k++) {
			seed = seed * 1103515245 + 12345;
			buf[(seed >> 8) % (sizeof(buf) - 1)] = (char)(seed >> 20);
		}
		probe_report_parse(buf, sizeof(buf) - 1, r);
		CHECK(r->n_vcpus <= PROBE_MAX_VCPUS && r->n_tables <= PROBE_MAX_TABLES &&
		      r->n_madt <= PROBE_MAX_VCPUS && r->n_errors <= PROBE_MAX_ERRORS);
		CHECK(strlen(r->vendor_id) < sizeof(r->vendor_id));
	}
	free(r);
}

static void make_cfg(struct vm_config *cfg, uint32_t s, uint32_t c, uint32_t t)
{
	vm_config_init(cfg);
	cfg->sockets = s;
	cfg->cores = c;
	cfg->threads = t;
}

static void test_expected_and_compare(void)
{
	struct probe_report *exp = new_report(), *got = new_report();
	struct vm_config cfg;
	char *text = NULL;
	size_t len = 0;
	FILE *diff;

	make_cfg(&cfg, 2, 2, 2);
	CHECK_EQ_U64(probe_report_expected(&cfg, ARCH_VENDOR_INTEL, 133823488, exp), 0);
	CHECK_EQ_U64(exp->n_vcpus, 8);
	CHECK_EQ_U64(parse_str(good_222, got), 0);
	CHECK(probe_report_compare(exp, got, NULL));

	/* one core id off, memory off, a table missing, a vCPU missing */
	got->vcpus[2].core = 0;
	got->memory_bytes -= 4096;
	strcpy(got->tables[1], "RSDT");
	got->missing[got->n_missing++] = 9;
	diff = open_memstream(&text, &len);
	CHECK(!probe_report_compare(exp, got, diff));
	fclose(diff);
	CHECK(strstr(text, "vcpu apicId 2: expected package 0 core 1 thread 0, guest package 0 "
			   "core 0 thread 0"));
	CHECK(strstr(text, "memoryBytes: expected 133823488, guest 133819392"));
	CHECK(strstr(text, "acpiTables: XSDT missing"));
	CHECK(strstr(text, "vcpu apicId 9: in the MADT but did not start"));
	free(text);

	/* a BIOS in between may keep a little RAM (memory_slack), never add */
	CHECK_EQ_U64(parse_str(good_222, got), 0);
	exp->memory_slack = 1 << 20;
	got->memory_bytes -= 16384;
	CHECK(probe_report_compare(exp, got, NULL));
	got->memory_bytes -= 1 << 20;
	CHECK(!probe_report_compare(exp, got, NULL));
	got->memory_bytes = exp->memory_bytes + 4096;
	CHECK(!probe_report_compare(exp, got, NULL));
	exp->memory_slack = 0;

	/* the CPU facts: TSC-deadline bit and brand string (padded as CPUID) */
	{
		char brand[48] = "   Intel(R) Xeon(R) CPU @ 2.20GHz";

		CHECK_EQ_U64(parse_str(good_222, got), 0);
		probe_report_expect_cpu(exp, true, brand);
		CHECK_EQ_U64(exp->tsc_deadline, 1);
		CHECK(!strcmp(exp->brand, "Intel(R) Xeon(R) CPU @ 2.20GHz"));
		CHECK(!probe_report_compare(exp, got, NULL)); /* the guest said nothing */
		CHECK_EQ_U64(parse_str("VMLET-PROBE-BEGIN v1\ntscDeadline=1\n"
				       "brand=Intel(R) Xeon(R) CPU @ 2.20GHz\nVMLET-PROBE-END\n",
				       got),
			     0);
		CHECK_EQ_U64(got->tsc_deadline, 1);
		CHECK(!strcmp(got->brand, exp->brand));
		memset(brand, 0, sizeof(brand));
		probe_report_expect_cpu(exp, false, brand);
		CHECK(!strcmp(exp->brand, "-") && !exp->tsc_deadline);
		CHECK_EQ_U64(probe_report_expected(&cfg, ARCH_VENDOR_INTEL, 133823488, exp), 0);
	}

	/* another vendor, another topology */
	CHECK_EQ_U64(parse_str(good_222, got), 0);
	CHECK_EQ_U64(probe_report_expected(&cfg, ARCH_VENDOR_AMD, 133823488, exp), 0);
	CHECK(!probe_report_compare(exp, got, NULL));
	make_cfg(&cfg, 1, 3, 1);
	CHECK_EQ_U64(probe_report_expected(&cfg, ARCH_VENDOR_INTEL, 133823488, exp), 0);
	CHECK(!probe_report_compare(exp, got, NULL));
	/* non-power-of-two: sparse APIC IDs from arch/ */
	make_cfg(&cfg, 2, 3, 2);
	CHECK_EQ_U64(probe_report_expected(&cfg, ARCH_VENDOR_AMD, 1, exp), 0);
	CHECK_EQ_U64(exp->n_vcpus, 12);
	CHECK_EQ_U64(exp->vcpus[6].apic_id, 8);
	CHECK_EQ_U64(exp->vcpus[6].package, 1);
	CHECK_EQ_U64(exp->madt_apic_ids[11], 13);
	make_cfg(&cfg, 0, 1, 1);
	CHECK_EQ_U64(probe_report_expected(&cfg, ARCH_VENDOR_AMD, 1, exp), (uint64_t)-EINVAL);
	make_cfg(&cfg, 64, 16, 2);
	CHECK_EQ_U64(probe_report_expected(&cfg, ARCH_VENDOR_AMD, 1, exp), (uint64_t)-EINVAL);
	free(exp);
	free(got);
}

static void test_json(void)
{
	struct probe_report *exp = new_report(), *got = new_report();
	struct json_object *o, *g, *v;
	struct vm_config cfg;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	make_cfg(&cfg, 2, 2, 2);
	CHECK_EQ_U64(probe_report_expected(&cfg, ARCH_VENDOR_INTEL, 133823488, exp), 0);
	CHECK_EQ_U64(parse_edited("s5SlpTyp=5", "error=say \"hi\" \\", got), 0);
	f = open_memstream(&text, &len);
	probe_report_print_json(f, exp, got, false);
	fclose(f);
	o = json_tokener_parse(text);
	CHECK(o != NULL);
	if (o) {
		CHECK(json_object_object_get_ex(o, "match", &v) && !json_object_get_boolean(v));
		CHECK(json_object_object_get_ex(o, "guest", &g));
		CHECK(json_object_object_get_ex(g, "vcpus", &v) &&
		      json_object_array_length(v) == 8);
		v = json_object_array_get_idx(v, 5);
		CHECK(v && json_object_get_int(json_object_object_get(v, "apicId")) == 5);
		CHECK(v && json_object_get_int(json_object_object_get(v, "package")) == 1);
		CHECK(v && json_object_get_int(json_object_object_get(v, "core")) == 0);
		CHECK(v && json_object_get_int(json_object_object_get(v, "thread")) == 1);
		CHECK(json_object_object_get_ex(g, "memoryBytes", &v) &&
		      json_object_get_int64(v) == 133823488);
		CHECK(json_object_object_get_ex(g, "tscProbe", &v) &&
		      json_object_get_int64(v) == 14572924);
		CHECK(json_object_object_get_ex(g, "errors", &v) &&
		      !strcmp(json_object_get_string(json_object_array_get_idx(v, 0)),
			      "say \"hi\" \\"));
		CHECK(json_object_object_get_ex(o, "expected", &g));
		CHECK(json_object_object_get_ex(g, "madtApicIds", &v) &&
		      json_object_array_length(v) == 8);
		CHECK(json_object_object_get_ex(g, "acpiTables", &v) &&
		      json_object_array_length(v) == 5);
		CHECK(json_object_object_get_ex(g, "threadsPerCore", &v) &&
		      json_object_get_int(v) == 2);
		json_object_put(o);
	}
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	probe_report_print_text(f, exp, got, true);
	fclose(f);
	CHECK(strstr(text, "match: yes"));
	CHECK(strstr(text, "GenuineIntel"));
	free(text);
	free(exp);
	free(got);
}

/* ---- the guest's derivation against arch/'s CPUID tables -------------- */

static struct kvm_cpuid_entry2 host_tab[256];
static size_t n_host;

static int load_host(const char *path)
{
	char *buf = test_read_file(path, NULL), *line, *save = NULL;

	if (!buf)
		return -1;
	n_host = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct kvm_cpuid_entry2 *e = &host_tab[n_host];

		if (line[0] == '#' || n_host >= 256)
			continue;
		memset(e, 0, sizeof(*e));
		if (sscanf(line, "%x %x %x %x %x %x %x", &e->function, &e->index, &e->flags,
			   &e->eax, &e->ebx, &e->ecx, &e->edx) == 7)
			n_host++;
	}
	free(buf);
	return 0;
}

/* The CPUID instruction over a KVM table: zeros where there is no entry
 * (and the subleaf ignored for functions without the INDEX flag). */
static void leaf(const struct kvm_cpuid_entry2 *e, size_t n, uint32_t fn, uint32_t idx,
		 struct topo_leaf *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (e[i].function == fn &&
		    (e[i].index == idx || !(e[i].flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX))) {
			*out = (struct topo_leaf){e[i].eax, e[i].ebx, e[i].ecx, e[i].edx};
			return;
		}
}

/* What firmware/probe/main.c collect() reads. */
static void guest_view(const struct kvm_cpuid_entry2 *e, size_t n, struct topo_cpuid *c)
{
	memset(c, 0, sizeof(*c));
	leaf(e, n, 0, 0, &c->l0);
	leaf(e, n, 1, 0, &c->l1);
	if (c->l0.a >= 4)
		leaf(e, n, 4, 0, &c->l4);
	for (uint32_t i = 0; c->l0.a >= 0xb && i < TOPO_LEAF_B_SUBS; i++)
		leaf(e, n, 0xb, i, &c->lb[i]);
	for (uint32_t i = 0; c->l0.a >= 0x1f && i < TOPO_LEAF_1F_SUBS; i++)
		leaf(e, n, 0x1f, i, &c->l1f[i]);
	leaf(e, n, 0x80000000, 0, &c->e0);
	leaf(e, n, 0x80000001, 0, &c->e1);
	leaf(e, n, 0x80000008, 0, &c->e8);
	leaf(e, n, 0x8000001e, 0, &c->e1e);
	for (uint32_t i = 0; (c->e0.a & 0xffff0000u) == 0x80000000u && c->e0.a >= 0x80000026 &&
			     i < TOPO_LEAF_26_SUBS;
	     i++)
		leaf(e, n, 0x80000026, i, &c->e26[i]);
}

static void check_derivation(const char *host_file, enum arch_cpu_vendor vendor)
{
	static const uint32_t topos[][3] = {
	    {1, 1, 1},	{2, 1, 1}, {1, 2, 1}, {1, 1, 2},  {2, 2, 2},
	    {3, 1, 1},	{1, 3, 1}, {1, 1, 3}, {2, 3, 2},  {4, 2, 1},
	    {1, 16, 2}, {1, 5, 3}, {4, 8, 2}, {2, 16, 2}, {4, 100, 1},
	};
	static struct kvm_cpuid_entry2 out[256];
	struct probe_report *exp = new_report();
	struct vm_config cfg;

	if (load_host(host_file)) {
		free(exp);
		SKIP("no host CPUID table");
	}
	for (size_t k = 0; k < sizeof(topos) / sizeof(topos[0]); k++) {
		struct arch_topology t = {topos[k][0], topos[k][1], topos[k][2]};

		make_cfg(&cfg, t.sockets, t.cores, t.threads);
		CHECK_EQ_U64(probe_report_expected(&cfg, (int)vendor, 1, exp), 0);
		for (uint32_t i = 0; i < exp->n_vcpus; i++) {
			const struct probe_vcpu *e = &exp->vcpus[i];
			struct topo_cpuid c;
			struct topo_ids ids;
			size_t n = 0;

			CHECK_EQ_U64(arch_cpuid_build(&t, vendor, e->apic_id, host_tab, n_host, out,
						      256, &n),
				     0);
			guest_view(out, n, &c);
			topo_derive(&c, &ids);
			if (ids.apic_id != e->apic_id || ids.package != e->package ||
			    ids.core != e->core || ids.thread != e->thread ||
			    ids.smt_shift != exp->smt_shift || ids.pkg_shift != exp->pkg_shift)
				test_fail(
				    __FILE__, __LINE__,
				    "%s vendor %d %u/%u/%u apic %u: guest derives %u/%u/%u/%u "
				    "shifts %u/%u via %s, expected %u/%u/%u shifts %u/%u",
				    host_file, vendor, t.sockets, t.cores, t.threads, e->apic_id,
				    ids.apic_id, ids.package, ids.core, ids.thread, ids.smt_shift,
				    ids.pkg_shift, ids.source, e->package, e->core, e->thread,
				    exp->smt_shift, exp->pkg_shift);
		}
	}
	free(exp);
}

static void test_guest_derivation_intel(void)
{
	check_derivation("tests/data/arch/host-kvm-intel.txt", ARCH_VENDOR_INTEL);
	check_derivation("tests/data/arch/host-kvm-amd.txt", ARCH_VENDOR_INTEL);
}

static void test_guest_derivation_amd(void)
{
	check_derivation("tests/data/arch/host-kvm-amd.txt", ARCH_VENDOR_AMD);
	check_derivation("tests/data/arch/host-kvm-intel.txt", ARCH_VENDOR_AMD);
}

/* What topo_derive() made of hand-made leaves, every field at once. */
static void check_ids(int line, const struct topo_ids *got, const char *source, uint32_t apic_id,
		      uint32_t smt_shift, uint32_t pkg_shift, uint32_t package, uint32_t core,
		      uint32_t thread)
{
	if (!got->source || strcmp(got->source, source) || got->apic_id != apic_id ||
	    got->smt_shift != smt_shift || got->pkg_shift != pkg_shift || got->package != package ||
	    got->core != core || got->thread != thread)
		test_fail(__FILE__, line,
			  "derived %s apic 0x%x shifts %u/%u ids %u/%u/%u, expected %s apic 0x%x "
			  "shifts %u/%u ids %u/%u/%u",
			  got->source ? got->source : "(null)", got->apic_id, got->smt_shift,
			  got->pkg_shift, got->package, got->core, got->thread, source, apic_id,
			  smt_shift, pkg_shift, package, core, thread);
}
#define CHECK_IDS(ids, ...) check_ids(__LINE__, &(ids), __VA_ARGS__)

/* The legacy paths of the derivation, on hand-made leaves. */
static void test_guest_derivation_legacy(void)
{
	struct topo_cpuid c;
	struct topo_ids ids;

	/* Intel without 0xB: leaf 1 12 logical (HTT), leaf 4 6 cores: 1 SMT bit,
	 * pkg shift 4; APIC 0x13 = package 1, core 1, thread 1 */
	memset(&c, 0, sizeof(c));
	c.l0 = (struct topo_leaf){0xa, 0x756e6547, 0x6c65746e, 0x49656e69};
	c.l1 = (struct topo_leaf){0x50650, 0x13 << 24 | 12 << 16, 0, 1u << 28};
	c.l4 = (struct topo_leaf){5u << 26 | 0x21, 0, 0, 0};
	topo_derive(&c, &ids);
	CHECK_IDS(ids, "intel-legacy", 0x13, 1, 4, 1, 1, 1);
	/* AMD family 0x17 without 0xB: 0x80000008 NC 11 (12 threads, size 0 ->
	 * 4 bits), 0x8000001E 2 threads per core, APIC ID from its EAX */
	memset(&c, 0, sizeof(c));
	c.l0 = (struct topo_leaf){0xa, 0x68747541, 0x444d4163, 0x69746e65};
	c.l1 = (struct topo_leaf){0x800f12, 0, 0, 0};
	c.e0 = (struct topo_leaf){0x8000001f, 0, 0, 0};
	c.e1 = (struct topo_leaf){0, 0, 1u << 22, 0};
	c.e8 = (struct topo_leaf){0, 0, 11, 0};
	c.e1e = (struct topo_leaf){0x1b, 1u << 8, 0, 0};
	topo_derive(&c, &ids);
	CHECK_IDS(ids, "amd-80000008", 0x1b, 1, 4, 1, 5, 1);
}

/* The probe embedded in vmlet (scripts/gen-blobs.sh) is an ELF that
 * vmlet's own PVH loader accepts, with its entry at the 32-bit code. */
extern const uint8_t fw_probe_start[], fw_probe_end[];

static void test_embedded_probe_loads(void)
{
	size_t len = (size_t)((uintptr_t)fw_probe_end - (uintptr_t)fw_probe_start);
	size_t mem_size = 16u << 20;
	uint8_t *mem;
	uint32_t entry = 0;

	if (!len)
		SKIP("probe not built into this binary");
	mem = calloc(1, mem_size);
	if (!mem)
		abort();
	CHECK_EQ_U64(arch_pvh_load(mem, mem_size, fw_probe_start, len, &entry), 0);
	CHECK(entry >= ARCH_HIGH_LOAD_GPA && entry < ARCH_HIGH_LOAD_GPA + len);
	if (entry >= ARCH_HIGH_LOAD_GPA && entry < mem_size - 2)
		CHECK(mem[entry] == 0xfa && mem[entry + 1] == 0xfc); /* cli; cld */
	free(mem);
}

/* AMD leaf 0x8000_0026 comes before 0xB (Linux cpu_parse_topology_ext) */
static void test_guest_derivation_80000026(void)
{
	struct topo_cpuid c;
	struct topo_ids ids;

	memset(&c, 0, sizeof(c));
	c.l0 = (struct topo_leaf){0xd, 0x68747541, 0x444d4163, 0x69746e65};
	c.l1 = (struct topo_leaf){0xa00f11, 0, 0, 0};
	c.lb[0] = (struct topo_leaf){1, 2, 0x100, 53}; /* 0xB says pkg shift 2 */
	c.lb[1] = (struct topo_leaf){2, 4, 0x201, 53};
	c.e0 = (struct topo_leaf){0x80000026, 0, 0, 0};
	c.e1 = (struct topo_leaf){0, 0, 1u << 22, 0};
	c.e1e = (struct topo_leaf){53, 1u << 8, 0, 0};
	c.e26[0] = (struct topo_leaf){1, 2, 0x100, 53};	 /* core: 2 threads */
	c.e26[1] = (struct topo_leaf){4, 16, 0x201, 53}; /* complex */
	c.e26[2] = (struct topo_leaf){5, 32, 0x302, 53}; /* die */
	c.e26[3] = (struct topo_leaf){6, 64, 0x403, 53}; /* socket */
	topo_derive(&c, &ids);
	CHECK_IDS(ids, "amd-80000026", 53, 1, 6, 0, 26, 1);
	c.e0.a = 0x80000008; /* without it: leaf 0xB */
	topo_derive(&c, &ids);
	CHECK_IDS(ids, "amd-b", 53, 1, 2, 13, 0, 1);
}

int main(void)
{
	TEST_RUN(test_parse_good);
	TEST_RUN(test_parse_bad);
	TEST_RUN(test_parse_fuzz);
	TEST_RUN(test_expected_and_compare);
	TEST_RUN(test_json);
	TEST_RUN(test_guest_derivation_intel);
	TEST_RUN(test_guest_derivation_amd);
	TEST_RUN(test_guest_derivation_legacy);
	TEST_RUN(test_guest_derivation_80000026);
	TEST_RUN(test_embedded_probe_loads);
	return test_summary();
}
