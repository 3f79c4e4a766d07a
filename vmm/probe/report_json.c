/* SPDX-License-Identifier: MIT */
/*
 * report_json.c - `vmlet probe -o json`: both sides of the report as one
 * JSON object, written with vmm/util/json_out.h (report.h).
 */
#include <errno.h>

#include "vmm/util/json_out.h"
#include "vmm/probe/report.h"

static struct json_object *json_u32_list(const uint32_t *v, uint32_t n)
{
	struct json_object *a = json_object_new_array();

	for (uint32_t i = 0; a && i < n; i++)
		if (json_out_append(a, json_object_new_int64(v[i]))) {
			json_object_put(a);
			return NULL;
		}
	return a;
}

static struct json_object *json_vcpus(const struct probe_report *r, bool guest)
{
	struct json_object *a = json_object_new_array();
	int e = 0;

	for (uint32_t i = 0; a && !e && i < r->n_vcpus; i++) {
		const struct probe_vcpu *v = &r->vcpus[i];
		struct json_object *o = json_object_new_object();

		e = json_out_add_u64(o, "apicId", v->apic_id);
		e = e ?: json_out_add_u64(o, "package", v->package);
		e = e ?: json_out_add_u64(o, "core", v->core);
		e = e ?: json_out_add_u64(o, "thread", v->thread);
		if (guest)
			e = e ?: json_out_add_u64(o, "lapicId", v->lapic_id);
		e = e ? (json_object_put(o), e) : json_out_append(a, o);
	}
	if (e) {
		json_object_put(a);
		return NULL;
	}
	return a;
}

/* What only the guest's side has. */
static int json_guest(struct json_object *o, const struct probe_report *r)
{
	int e = json_out_add_str(o, "topoSource", r->topo_source);

	e = e
		?: json_out_add(o, "acpiBadChecksum",
				json_out_str_array(r->bad_tables[0], sizeof(r->bad_tables[0]),
						   r->n_bad_tables));
	e = e ?: json_out_add_u64(o, "tscAps", r->tsc_aps);
	e = e ?: json_out_add_u64(o, "tscProbe", r->tsc_probe);
	e = e ?: json_out_add(o, "missingApicIds", json_u32_list(r->missing, r->n_missing));
	return e
		   ?: json_out_add(
			  o, "errors",
			  json_out_str_array(r->errors[0], sizeof(r->errors[0]), r->n_errors));
}

static struct json_object *json_side(const struct probe_report *r, bool guest,
				     const struct probe_report *names)
{
	struct json_object *o = json_object_new_object();
	int e = json_out_add_str(o, "vendor", r->vendor_id);

	e = e ?: json_out_add_str(o, "brand", r->brand);
	e = e ?: json_out_add_bool(o, "tscDeadline", r->tsc_deadline);
	e = e ?: json_out_add(o, "vcpus", json_vcpus(r, guest));
	e = e ?: json_out_add_u64(o, "sockets", r->sockets);
	e = e ?: json_out_add_u64(o, "coresPerSocket", r->cores_per_socket);
	e = e ?: json_out_add_u64(o, "threadsPerCore", r->threads_per_core);
	e = e ?: json_out_add_u64(o, "smtShift", r->smt_shift);
	e = e ?: json_out_add_u64(o, "pkgShift", r->pkg_shift);
	e = e ?: json_out_add_u64(o, "memoryBytes", r->memory_bytes);
	e = e
		?: json_out_add(
		       o, "acpiTables",
		       json_out_str_array(r->tables[0], sizeof(r->tables[0]), r->n_tables));
	e = e ?: json_out_add(o, "madtApicIds", json_u32_list(r->madt_apic_ids, r->n_madt));
	if (guest)
		e = e ?: json_guest(o, r);
	e = e ?: probe_report_pci_json(o, r, names);
	e = e ?: probe_report_net_json(o, r, names, guest);
	e = e ?: probe_report_efi_json(o, r);
	if (e) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int probe_report_print_json(FILE *f, const struct probe_report *exp, const struct probe_report *got,
			    bool match)
{
	struct json_object *o = json_object_new_object();
	int e = json_out_add(o, "expected", json_side(exp, false, NULL));

	e = e ?: json_out_add(o, "guest", json_side(got, true, exp));
	e = e ?: json_out_add_bool(o, "match", match);
	e = e ?: json_out_write(f, o);
	if (!e && fputc('\n', f) == EOF)
		e = -EIO;
	json_object_put(o);
	return e;
}
