/* SPDX-License-Identifier: MIT */
/*
 * report.c - the probe guest's report (format: firmware/abi.h):
 * parsing (untrusted text, every field bounded), the expected report of a
 * configuration, comparison, JSON and text output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/probe/report.h"

/* ---- parsing ------------------------------------------------------------ */

/* A decimal u64 without sign, spaces or trailing garbage. */
static int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || n > 20)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -EBADMSG;
	*out = v;
	return 0;
}

static int parse_u32(const char *s, size_t n, uint32_t *out)
{
	uint64_t v;
	int err = parse_u64(s, n, UINT32_MAX, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* Split v[0..n) at single spaces; calls fn for each word. */
typedef int (*word_fn)(struct probe_report *r, const char *w, size_t n, void *ctx);

static int for_each_word(struct probe_report *r, const char *v, size_t n, word_fn fn, void *ctx)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;
		int err;

		while (j < n && v[j] != ' ')
			j++;
		err = fn(r, v + i, j - i, ctx);
		if (err)
			return err;
		i = j + 1;
		if (j < n && i == n)
			return -EBADMSG; /* trailing space */
	}
	return 0;
}

static bool printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

static int add_table(struct probe_report *r, const char *w, size_t n, void *bad)
{
	char(*list)[5] = bad ? r->bad_tables : r->tables;
	uint32_t *cnt = bad ? &r->n_bad_tables : &r->n_tables;

	if (n != 4 || !printable(w, n) || *cnt >= PROBE_MAX_TABLES)
		return -EBADMSG;
	memcpy(list[*cnt], w, 4);
	list[*cnt][4] = '\0';
	(*cnt)++;
	return 0;
}

static int add_madt(struct probe_report *r, const char *w, size_t n, void *ctx)
{
	(void)ctx;
	if (r->n_madt >= PROBE_MAX_VCPUS)
		return -EBADMSG;
	return parse_u32(w, n, &r->madt_apic_ids[r->n_madt++]);
}

static int parse_vcpu(struct probe_report *r, const char *v, size_t n)
{
	uint32_t f[5];
	size_t i = 0;

	if (r->n_vcpus >= PROBE_MAX_VCPUS)
		return -EBADMSG;
	for (int k = 0; k < 5; k++) {
		size_t j = i;

		while (j < n && v[j] != ' ')
			j++;
		if (parse_u32(v + i, j - i, &f[k]))
			return -EBADMSG;
		if ((k < 4) != (j < n))
			return -EBADMSG; /* exactly five fields */
		i = j + 1;
	}
	r->vcpus[r->n_vcpus++] = (struct probe_vcpu){f[0], f[1], f[2], f[3], f[4]};
	return 0;
}

/* The vendor a reported 12-character vendor string names, or -1. */
static int vendor_of(const char *id)
{
	uint32_t r[3];

	if (strlen(id) != sizeof(r))
		return -1;
	memcpy(r, id, sizeof(r));
	return arch_cpu_vendor_of(r[0], r[1], r[2]);
}

static int parse_string(const char *v, size_t n, char *out, size_t cap, bool truncate)
{
	if (n >= cap) {
		if (!truncate)
			return -EBADMSG;
		n = cap - 1;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = v[i] >= ' ' && v[i] < 0x7f ? v[i] : '?';
	out[n] = '\0';
	return 0;
}

static int parse_scalar(struct probe_report *r, const char *k, const char *v, size_t n,
			uint32_t *n_vcpus_line)
{
	static const struct {
		const char *key;
		size_t off;
	} u32_keys[] = {
	    {"smtShift", offsetof(struct probe_report, smt_shift)},
	    {"pkgShift", offsetof(struct probe_report, pkg_shift)},
	    {"sockets", offsetof(struct probe_report, sockets)},
	    {"coresPerSocket", offsetof(struct probe_report, cores_per_socket)},
	    {"threadsPerCore", offsetof(struct probe_report, threads_per_core)},
	    {"tscDeadline", offsetof(struct probe_report, tsc_deadline)},
	};

	for (size_t i = 0; i < sizeof(u32_keys) / sizeof(u32_keys[0]); i++)
		if (!strcmp(k, u32_keys[i].key))
			return parse_u32(v, n, (uint32_t *)((char *)r + u32_keys[i].off));
	if (!strcmp(k, "vcpus"))
		return parse_u32(v, n, n_vcpus_line);
	if (!strcmp(k, "memoryBytes"))
		return parse_u64(v, n, UINT64_MAX, &r->memory_bytes);
	if (!strcmp(k, "tscAps"))
		return parse_u64(v, n, UINT64_MAX, &r->tsc_aps);
	if (!strcmp(k, "tscProbe"))
		return parse_u64(v, n, UINT64_MAX, &r->tsc_probe);
	if (!strcmp(k, "vendor")) {
		int err = parse_string(v, n, r->vendor_id, sizeof(r->vendor_id), false);

		r->vendor = err ? -1 : vendor_of(r->vendor_id);
		return err;
	}
	if (!strcmp(k, "brand"))
		return parse_string(v, n, r->brand, sizeof(r->brand), false);
	if (!strcmp(k, "topoSource"))
		return printable(v, n)
			   ? parse_string(v, n, r->topo_source, sizeof(r->topo_source), false)
			   : -EBADMSG;
	return 1; /* not a scalar key */
}

static int parse_line(struct probe_report *r, const char *line, size_t n, uint32_t *n_vcpus_line)
{
	const char *eq = memchr(line, '=', n);
	char key[32];
	size_t kn, vn;
	const char *v;
	int err;

	if (!eq || eq == line || (size_t)(eq - line) >= sizeof(key))
		return -EBADMSG;
	kn = (size_t)(eq - line);
	memcpy(key, line, kn);
	key[kn] = '\0';
	v = eq + 1;
	vn = n - kn - 1;
	err = parse_scalar(r, key, v, vn, n_vcpus_line);
	if (err <= 0)
		return err;
	if (!strcmp(key, "vcpu"))
		return parse_vcpu(r, v, vn);
	if (!strcmp(key, "vcpuMissing")) {
		if (r->n_missing >= PROBE_MAX_VCPUS)
			return -EBADMSG;
		return parse_u32(v, vn, &r->missing[r->n_missing++]);
	}
	if (!strcmp(key, "acpiTables"))
		return for_each_word(r, v, vn, add_table, NULL);
	if (!strcmp(key, "acpiBadChecksum"))
		return for_each_word(r, v, vn, add_table, r);
	if (!strcmp(key, "madtApicIds"))
		return for_each_word(r, v, vn, add_madt, NULL);
	if (!strcmp(key, "error")) {
		if (r->n_errors >= PROBE_MAX_ERRORS)
			return 0; /* keep the first ones */
		return parse_string(v, vn, r->errors[r->n_errors++], sizeof(r->errors[0]), true);
	}
	if (!strcmp(key, "nic") || !strcmp(key, "nic6"))
		return probe_report_net_line(r, key, v, vn);
	err = probe_report_efi_line(r, key, v, vn);
	if (err <= 0)
		return err;
	return probe_report_pci_line(r, key, v, vn); /* else ignored (a newer probe) */
}

/* Next line of text[*pos..len): start and length without "\r\n". */
static bool next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*line = text + *pos;
	nl = memchr(*line, '\n', len - *pos);
	*n = nl ? (size_t)(nl - *line) : len - *pos;
	*pos += *n + (nl ? 1 : 0);
	if (*n && (*line)[*n - 1] == '\r')
		(*n)--;
	return true;
}

static int parse_begin(struct probe_report *r, const char *line, size_t n)
{
	size_t bl = strlen(FW_ABI_PROBE_BEGIN);
	uint32_t ver;

	if (n < bl || memcmp(line, FW_ABI_PROBE_BEGIN, bl))
		return 1;
	if (parse_u32(line + bl, n - bl, &ver))
		return -EBADMSG;
	r->abi_version = (int)(ver > 1000 ? 1000 : ver);
	return ver == FW_ABI_VERSION ? 0 : -EPROTO;
}

int probe_report_parse(const char *text, size_t len, struct probe_report *r)
{
	uint32_t n_vcpus_line = UINT32_MAX;
	size_t pos = 0, n;
	const char *line;
	int err = 1;

	memset(r, 0, sizeof(*r));
	r->vendor = -1;
	while (err > 0 && next_line(text, len, &pos, &line, &n))
		err = parse_begin(r, line, n);
	if (err)
		return err > 0 ? -ENOENT : err;
	while (next_line(text, len, &pos, &line, &n)) {
		if (n == strlen(FW_ABI_PROBE_END) && !memcmp(line, FW_ABI_PROBE_END, n)) {
			if (n_vcpus_line != UINT32_MAX && n_vcpus_line != r->n_vcpus)
				return -EBADMSG;
			return 0;
		}
		if (n > FW_ABI_MAX_LINE)
			return -EBADMSG;
		err = parse_line(r, line, n, &n_vcpus_line);
		if (err)
			return err;
	}
	return -EBADMSG; /* truncated: no END line */
}

/* ---- expected ----------------------------------------------------------- */

void probe_report_expect_cpu(struct probe_report *r, bool tsc_deadline, const char *brand)
{
	r->tsc_deadline = tsc_deadline;
	fw_abi_brand(r->brand, brand);
}

int probe_report_expected(const struct vm_config *cfg, int vendor, uint64_t ram_visible_bytes,
			  struct probe_report *r)
{
	static const char *const tables[] = {"RSDP", "XSDT", "FACP", "DSDT", "APIC"};
	struct arch_topology t = {cfg->sockets, cfg->cores, cfg->threads};
	struct arch_apic_widths w;
	uint64_t n = arch_topo_vcpus(&t);

	memset(r, 0, sizeof(*r));
	if (!t.sockets || !t.cores || !t.threads || n > PROBE_MAX_VCPUS ||
	    (vendor != ARCH_VENDOR_INTEL && vendor != ARCH_VENDOR_AMD))
		return -EINVAL;
	r->abi_version = FW_ABI_VERSION;
	r->vendor = vendor;
	strcpy(r->vendor_id, vendor == ARCH_VENDOR_AMD ? "AuthenticAMD" : "GenuineIntel");
	arch_topo_widths(&t, &w);
	r->smt_shift = w.smt_bits;
	r->pkg_shift = w.pkg_shift;
	r->n_vcpus = r->n_madt = (uint32_t)n;
	for (uint32_t i = 0; i < n; i++) {
		struct probe_vcpu *v = &r->vcpus[i];

		v->apic_id = v->lapic_id = r->madt_apic_ids[i] = arch_topo_apic_id(&t, i);
		arch_topo_decompose(&t, v->apic_id, &v->package, &v->core, &v->thread);
	}
	r->sockets = t.sockets;
	r->cores_per_socket = t.cores;
	r->threads_per_core = t.threads;
	r->memory_bytes = ram_visible_bytes;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		strcpy(r->tables[r->n_tables++], tables[i]);
	probe_report_pci_expected(cfg, r);
	probe_report_net_expected(cfg, r);
	probe_report_efi_expected(cfg, r);
	return 0;
}

/* ---- comparison --------------------------------------------------------- */

static void note(FILE *diff, bool *match, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(FILE *diff, bool *match, const char *fmt, ...)
{
	va_list ap;

	*match = false;
	if (!diff)
		return;
	va_start(ap, fmt);
	vfprintf(diff, fmt, ap);
	va_end(ap);
	fputc('\n', diff);
}

static const struct probe_vcpu *find_vcpu(const struct probe_report *r, uint32_t apic, int *count)
{
	const struct probe_vcpu *found = NULL;

	*count = 0;
	for (uint32_t i = 0; i < r->n_vcpus; i++)
		if (r->vcpus[i].apic_id == apic) {
			found = found ? found : &r->vcpus[i];
			(*count)++;
		}
	return found;
}

static void compare_vcpus(const struct probe_report *exp, const struct probe_report *got,
			  FILE *diff, bool *match)
{
	int cnt;

	for (uint32_t i = 0; i < exp->n_vcpus; i++) {
		const struct probe_vcpu *e = &exp->vcpus[i];
		const struct probe_vcpu *g = find_vcpu(got, e->apic_id, &cnt);

		if (!g) {
			note(diff, match, "vcpu apicId %u: expected, the guest did not report it",
			     e->apic_id);
			continue;
		}
		if (cnt > 1)
			note(diff, match, "vcpu apicId %u: reported %d times", e->apic_id, cnt);
		if (g->package != e->package || g->core != e->core || g->thread != e->thread)
			note(diff, match,
			     "vcpu apicId %u: expected package %u core %u thread %u, guest "
			     "package %u core %u thread %u",
			     e->apic_id, e->package, e->core, e->thread, g->package, g->core,
			     g->thread);
		if (g->lapic_id != g->apic_id)
			note(diff, match, "vcpu apicId %u: local APIC ID register reads %u",
			     g->apic_id, g->lapic_id);
	}
	for (uint32_t i = 0; i < got->n_vcpus; i++)
		if (!find_vcpu(exp, got->vcpus[i].apic_id, &cnt))
			note(diff, match, "vcpu apicId %u: reported by the guest, not expected",
			     got->vcpus[i].apic_id);
	for (uint32_t i = 0; i < got->n_missing; i++)
		note(diff, match, "vcpu apicId %u: in the MADT but did not start", got->missing[i]);
}

static bool has_table(const struct probe_report *r, const char *sig)
{
	for (uint32_t i = 0; i < r->n_tables; i++)
		if (!strcmp(r->tables[i], sig))
			return true;
	return false;
}

static void compare_u64(FILE *diff, bool *match, const char *what, uint64_t e, uint64_t g)
{
	if (e != g)
		note(diff, match, "%s: expected %" PRIu64 ", guest %" PRIu64, what, e, g);
}

static bool memory_ok(const struct probe_report *exp, const struct probe_report *got)
{
	return got->memory_bytes <= exp->memory_bytes &&
	       exp->memory_bytes - got->memory_bytes <= exp->memory_slack;
}

bool probe_report_compare(const struct probe_report *exp, const struct probe_report *got,
			  FILE *diff)
{
	bool match = true;

	if (got->abi_version != FW_ABI_VERSION)
		note(diff, &match, "report version %d, expected %d", got->abi_version,
		     FW_ABI_VERSION);
	if (exp->vendor >= 0 && got->vendor != exp->vendor)
		note(diff, &match, "vendor: expected %s, guest %s", exp->vendor_id,
		     got->vendor_id[0] ? got->vendor_id : "(none)");
	compare_vcpus(exp, got, diff, &match);
	compare_u64(diff, &match, "tscDeadline", exp->tsc_deadline, got->tsc_deadline);
	if (strcmp(exp->brand, got->brand))
		note(diff, &match, "brand: expected '%s', guest '%s'", exp->brand, got->brand);
	compare_u64(diff, &match, "smtShift", exp->smt_shift, got->smt_shift);
	compare_u64(diff, &match, "pkgShift", exp->pkg_shift, got->pkg_shift);
	compare_u64(diff, &match, "sockets", exp->sockets, got->sockets);
	compare_u64(diff, &match, "coresPerSocket", exp->cores_per_socket, got->cores_per_socket);
	compare_u64(diff, &match, "threadsPerCore", exp->threads_per_core, got->threads_per_core);
	if (!memory_ok(exp, got))
		note(diff, &match, "memoryBytes: expected %" PRIu64 "%s, guest %" PRIu64,
		     exp->memory_bytes, exp->memory_slack ? " (or a little less)" : "",
		     got->memory_bytes);
	for (uint32_t i = 0; i < exp->n_tables; i++)
		if (!has_table(got, exp->tables[i]))
			note(diff, &match, "acpiTables: %s missing", exp->tables[i]);
	for (uint32_t i = 0; i < got->n_bad_tables; i++)
		note(diff, &match, "acpiTables: %s has a bad checksum", got->bad_tables[i]);
	if (exp->n_madt != got->n_madt ||
	    memcmp(exp->madt_apic_ids, got->madt_apic_ids, exp->n_madt * sizeof(uint32_t)))
		note(diff, &match, "madtApicIds: %u entries expected, guest has %u%s", exp->n_madt,
		     got->n_madt, exp->n_madt == got->n_madt ? " (different ids or order)" : "");
	for (uint32_t i = 0; i < got->n_errors; i++)
		note(diff, &match, "guest error: %s", got->errors[i]);
	if (!probe_report_net_compare(exp, got, diff))
		match = false;
	if (!probe_report_efi_compare(exp, got, diff))
		match = false;
	return match;
}

/* ---- output ------------------------------------------------------------- */

static void text_row(FILE *f, const char *what, uint64_t e, uint64_t g)
{
	fprintf(f, "  %-16s %-20" PRIu64 " %-20" PRIu64 "%s\n", what, e, g, e == g ? "" : "  <--");
}

static const struct probe_vcpu *vcpu_at(const struct probe_report *r, uint32_t i)
{
	return i < r->n_vcpus ? &r->vcpus[i] : NULL;
}

void probe_report_print_text(FILE *f, const struct probe_report *exp,
			     const struct probe_report *got, bool match)
{
	uint32_t n = exp->n_vcpus > got->n_vcpus ? exp->n_vcpus : got->n_vcpus;

	fprintf(f, "  %-16s %-20s %-20s\n", "", "expected", "guest");
	fprintf(f, "  %-16s %-20s %-20s\n", "vendor", exp->vendor_id, got->vendor_id);
	fprintf(f, "  %-16s %-20.20s %-20.20s\n", "brand", exp->brand, got->brand);
	if (exp->system_uuid[0])
		fprintf(f, "  %-16s %-36s\n  %-16s %-36s%s\n", "systemUuid", exp->system_uuid, "",
			got->system_uuid[0] ? got->system_uuid : "-",
			strcmp(exp->system_uuid, got->system_uuid) ? "  <--" : "");
	if (exp->bios_vendor[0])
		fprintf(f, "  %-16s %-20.20s %-20.20s%s\n", "biosVendor", exp->bios_vendor,
			got->bios_vendor[0] ? got->bios_vendor : "-",
			strcmp(exp->bios_vendor, got->bios_vendor) ? "  <--" : "");
	if (exp->tpm[0] || got->tpm[0])
		fprintf(f, "  %-16s %-20.20s %-20.20s\n", "tpm", exp->tpm[0] ? exp->tpm : "-",
			got->tpm[0] ? got->tpm : "-");
	text_row(f, "tscDeadline", exp->tsc_deadline, got->tsc_deadline);
	text_row(f, "sockets", exp->sockets, got->sockets);
	text_row(f, "coresPerSocket", exp->cores_per_socket, got->cores_per_socket);
	text_row(f, "threadsPerCore", exp->threads_per_core, got->threads_per_core);
	fprintf(f, "  %-16s %-20" PRIu64 " %-20" PRIu64 "%s\n", "memoryBytes", exp->memory_bytes,
		got->memory_bytes, memory_ok(exp, got) ? "" : "  <--");
	text_row(f, "vcpus", exp->n_vcpus, got->n_vcpus);
	text_row(f, "madt entries", exp->n_madt, got->n_madt);
	fprintf(f, "  vcpus as apicId: package/core/thread (guest in report order)\n");
	for (uint32_t i = 0; i < n; i++) {
		const struct probe_vcpu *e = vcpu_at(exp, i), *g = vcpu_at(got, i);
		char es[64] = "-", gs[64] = "-";

		if (e)
			snprintf(es, sizeof(es), "%u: %u/%u/%u", e->apic_id, e->package, e->core,
				 e->thread);
		if (g)
			snprintf(gs, sizeof(gs), "%u: %u/%u/%u", g->apic_id, g->package, g->core,
				 g->thread);
		fprintf(f, "  %-16s %-20s %-20s\n", "", es, gs);
	}
	fprintf(f, "  acpiTables      ");
	for (uint32_t i = 0; i < got->n_tables; i++)
		fprintf(f, " %s", got->tables[i]);
	fputc('\n', f);
	if (exp->note[0])
		fprintf(f, "note: %s\n", exp->note);
	fprintf(f, "match: %s\n", match ? "yes" : "no");
}
