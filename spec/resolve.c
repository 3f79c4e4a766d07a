/* SPDX-License-Identifier: MIT */
/*
 * resolve.c - the resolution pipeline (docs/resolution.md §2), in KubeVirt's order,
 * and helpers shared by the resolve_*.c steps.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "spec/resolve.h"

struct node *resolve_vmi_spec(struct resolver *r)
{
	return node_get_map(r->a, r->vmi, "spec");
}

struct node *resolve_vmi_domain(struct resolver *r)
{
	return node_get_map(r->a, resolve_vmi_spec(r), "domain");
}

struct node *resolve_copy(struct resolver *r, const struct node *src, const char *origin)
{
	return node_copy(r->a, src, origin);
}

const char *resolve_str(const struct node *n)
{
	const char *s = node_sval(n);

	return s ? s : "";
}

bool resolve_qty(const struct node *n, struct quantity *q)
{
	const char *t = node_text(n);

	if (!t || (n->type != N_STR && n->type != N_INT && n->type != N_FLOAT))
		return false;
	return qty_parse(t, q) == 0;
}

char *resolve_lower(struct arena *a, const char *s)
{
	char *p = arena_strdup(a, s ? s : ""), *q;

	for (q = p; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	return p;
}

static uint32_t u32_of(const struct node *n)
{
	long long v;

	return node_ival(n, 0, UINT32_MAX, &v) == 0 ? (uint32_t)v : 0;
}

void resolve_effective_topology(const struct node *spec, uint32_t out[3])
{
	const struct node *dom = node_get(spec, "domain");
	const struct node *cpu = node_get(dom, "cpu");
	const struct node *res = node_get(dom, "resources");
	struct quantity q;
	int64_t v;

	out[0] = u32_of(node_get(cpu, "sockets"));
	out[1] = u32_of(node_get(cpu, "cores"));
	out[2] = u32_of(node_get(cpu, "threads"));
	if (!out[0] && !out[1] && !out[2]) {
		out[0] = 1;
		if (resolve_qty(node_path(res, "limits.cpu"), &q) ||
		    resolve_qty(node_path(res, "requests.cpu"), &q)) {
			v = qty_value(&q);
			out[0] = v >= 1 && v <= UINT32_MAX ? (uint32_t)v : 1;
		}
		out[1] = out[2] = 1;
		return;
	}
	for (int i = 0; i < 3; i++)
		if (!out[i])
			out[i] = 1;
}

const struct node *resolve_effective_memory(const struct node *spec)
{
	const struct node *dom = node_get(spec, "domain");
	const struct node *n;

	if ((n = node_path(dom, "memory.guest")) && !node_is_null(n))
		return n;
	if ((n = node_path(dom, "resources.requests.memory")) && !node_is_null(n))
		return n;
	if ((n = node_path(dom, "resources.limits.memory")) && !node_is_null(n))
		return n;
	if ((n = node_path(dom, "memory.hugepages.pageSize")) && !node_is_null(n))
		return n;
	return NULL;
}

/* step 7: a bare disk for every volume without disk or filesystem */
/* the names of seq's items as the keys of names (a map: indexed lookups,
 * so a manifest with thousands of disks costs no scan per volume) */
static void names_of(struct resolver *r, struct node *names, const struct node *seq)
{
	const char *name;
	unsigned int i;

	for (i = 0; node_is_seq(seq) && i < seq->n; i++)
		if ((name = resolve_str(node_get(seq->items[i], "name"))) && !node_get(names, name))
			node_set(r->a, names, name, seq->items[i]);
}

static void default_disks(struct resolver *r)
{
	struct node *spec = resolve_vmi_spec(r), *devs, *disks, *names,
		    *vols = node_get(spec, "volumes");
	const char *name;
	unsigned int i;

	if (!node_is_seq(vols) || !vols->n)
		return;
	devs = node_get_map(r->a, resolve_vmi_domain(r), "devices");
	disks = node_get(devs, "disks");
	names = node_map(r->a);
	names_of(r, names, disks);
	names_of(r, names, node_get(devs, "filesystems"));
	for (i = 0; i < vols->n; i++) {
		name = node_sval(node_get(vols->items[i], "name"));
		if (!name || node_get(names, name))
			continue;
		if (!node_is_seq(disks))
			disks = node_set(r->a, devs, "disks", node_seq(r->a));
		struct node *d = node_map(r->a);
		d->origin = "default";
		node_set(r->a, d, "name", node_str(r->a, name))->origin = "default";
		node_push(r->a, disks, d);
		node_set(r->a, names, name, d);
	}
}

/* step 9 and 10: default input device and pod network */
static void default_devices(struct resolver *r)
{
	struct node *spec = resolve_vmi_spec(r),
		    *devs = node_get_map(r->a, resolve_vmi_domain(r), "devices");
	struct node *ifaces = node_get(devs, "interfaces"), *nets = node_get(spec, "networks");
	struct node *in, *net;

	if (node_bval(node_get(devs, "autoattachInputDevice"), false) &&
	    node_empty(node_get(devs, "inputs"))) {
		in = node_map(r->a);
		in->origin = "default";
		node_set(r->a, in, "name", node_str(r->a, "default-0"))->origin = "default";
		node_push(r->a, node_set(r->a, devs, "inputs", node_seq(r->a)), in);
	}
	if (node_bval(node_get(devs, "autoattachPodInterface"), true) == false)
		return;
	if (!node_empty(ifaces) || !node_empty(nets))
		return;
	in = node_map(r->a);
	node_set(r->a, in, "name", node_str(r->a, "default"));
	node_set(r->a, in, "bridge", node_map(r->a));
	node_set_origin(in, "default");
	node_push(r->a, node_set(r->a, devs, "interfaces", node_seq(r->a)), in);
	net = node_map(r->a);
	node_set(r->a, net, "name", node_str(r->a, "default"));
	node_set(r->a, net, "pod", node_map(r->a));
	node_set_origin(net, "default");
	node_push(r->a, node_set(r->a, spec, "networks", node_seq(r->a)), net);
}

static void build_vmi(struct resolver *r, const struct node *meta, const struct node *spec)
{
	struct node *md;

	r->vmi = node_map(r->a);
	node_set(r->a, r->vmi, "apiVersion", node_str(r->a, "kubevirt.io/v1"));
	node_set(r->a, r->vmi, "kind", node_str(r->a, "VirtualMachineInstance"));
	md = node_set(r->a, r->vmi, "metadata", node_map(r->a));
	node_set(r->a, md, "name", node_str(r->a, r->name));
	node_set(r->a, md, "namespace", node_str(r->a, r->ns));
	if (node_is_map(node_get(meta, "labels")))
		node_set(r->a, md, "labels",
			 resolve_copy(r, node_get(meta, "labels"), r->vm_origin));
	if (node_is_map(node_get(meta, "annotations")))
		node_set(r->a, md, "annotations",
			 resolve_copy(r, node_get(meta, "annotations"), r->vm_origin));
	node_set(r->a, r->vmi, "spec",
		 node_is_map(spec) ? resolve_copy(r, spec, r->vm_origin) : node_map(r->a));
	node_set_origin(node_get(r->vmi, "apiVersion"), "default");
	node_set_origin(node_get(r->vmi, "kind"), "default");
	node_set_origin(md, r->vm_origin);
}

/* seed-era spec.flavor -> spec.instancetype (same kinds, renamed) */
static void convert_flavor(struct resolver *r)
{
	struct node *spec = node_get(r->vm, "spec"), *fl = node_get(spec, "flavor");
	const char *kind;
	char *lk;

	if (!fl)
		return;
	diag_warn(r->d, fl, "spec.flavor",
		  "the flavor matcher is deprecated: resolved as spec.instancetype");
	if (node_get(spec, "instancetype") || !node_is_map(fl)) {
		node_del(spec, "flavor");
		return;
	}
	kind = node_sval(node_get(fl, "kind"));
	if (kind) {
		lk = resolve_lower(r->a, kind);
		if (strcmp(lk, "virtualmachineflavor") == 0 ||
		    strcmp(lk, "virtualmachineflavors") == 0)
			node_set(r->a, fl, "kind", node_str(r->a, "VirtualMachineInstancetype"));
		else if (strcmp(lk, "virtualmachineclusterflavor") == 0 ||
			 strcmp(lk, "virtualmachineclusterflavors") == 0)
			node_set(r->a, fl, "kind",
				 node_str(r->a, "VirtualMachineClusterInstancetype"));
	}
	node_set(r->a, spec, "instancetype", fl);
	node_del(spec, "flavor");
}

/* Quantities print in Kubernetes' canonical form ("4096Mi" -> "4Gi"), as
 * the API server stores them. */
static void canon_qty(struct arena *a, struct node *n)
{
	struct quantity q;
	char buf[64];

	if (!n || !resolve_qty(n, &q))
		return;
	qty_format(&q, buf, sizeof(buf));
	if (n->type == N_STR && strcmp(n->str, buf) == 0)
		return;
	n->type = N_STR;
	n->str = arena_strdup(a, buf);
}

static void canon_map(struct arena *a, struct node *m)
{
	unsigned int i;

	for (i = 0; node_is_map(m) && i < m->n; i++)
		canon_qty(a, m->kv[i].val);
}

static void canonical_quantities(struct resolver *r, struct node *spec)
{
	struct node *dom = node_get(spec, "domain"), *vols = node_get(spec, "volumes");
	unsigned int i;

	canon_qty(r->a, node_path(dom, "memory.guest"));
	canon_qty(r->a, node_path(dom, "memory.maxGuest"));
	canon_map(r->a, node_path(dom, "resources.requests"));
	canon_map(r->a, node_path(dom, "resources.limits"));
	for (i = 0; node_is_seq(vols) && i < vols->n; i++) {
		canon_qty(r->a, node_path(vols->items[i], "emptyDisk.capacity"));
		canon_qty(r->a, node_path(vols->items[i], "hostDisk.capacity"));
	}
}

static void matcher_init(struct resolver *r, struct matcher *mt, const char *field,
			 const char *Field)
{
	struct node *m = node_get(node_get(r->vm, "spec"), field);

	memset(mt, 0, sizeof(*mt));
	mt->field = field;
	mt->Field = Field;
	mt->m = node_is_null(m) ? NULL : m;
}

static int resolve_vmi_form(struct resolver *r)
{
	const struct node *root = r->src->root;

	build_vmi(r, node_get(root, "metadata"), node_get(root, "spec"));
	default_disks(r);
	default_devices(r);
	if (validate_result(r) || presets_apply(r))
		return -EINVAL;
	canonical_quantities(r, resolve_vmi_spec(r));
	resolve_effective_topology(resolve_vmi_spec(r), r->topology);
	return 0;
}

int resolve_run(struct resolver *r, struct arena *a, struct diag *d, const struct cluster *cl,
		const struct object *src)
{
	struct node *tmpl;

	memset(r, 0, sizeof(*r));
	r->a = a;
	r->d = d;
	r->cl = cl;
	r->src = src;
	r->name = src->name;
	r->ns = src->ns;
	r->vm_origin = arena_printf(a, "VM %s", src->name);
	r->revs = node_seq(a);
	d->fallback = src->root;
	if (src->kind == OBJ_VMI) {
		r->vmi_only = true;
		return resolve_vmi_form(r);
	}
	r->vm = resolve_copy(r, src->root, NULL);
	convert_flavor(r);
	matcher_init(r, &r->it, "instancetype", "Instancetype");
	matcher_init(r, &r->pref, "preference", "Preference");
	if (match_validate(r, &r->it) || match_validate(r, &r->pref))
		return -EINVAL;
	if (match_infer(r, &r->it) || match_infer(r, &r->pref))
		return -EINVAL;
	if (match_find(r, &r->it) || match_find(r, &r->pref))
		return -EINVAL;
	preference_early(r);
	if (instancetype_check_spread(r))
		return -EINVAL;
	tmpl = node_path(r->vm, "spec.template");
	firmware_uuid_default(r, tmpl);
	build_vmi(r, node_get(tmpl, "metadata"), node_get(tmpl, "spec"));
	default_disks(r);
	if (r->pref.spec)
		preference_autoattach(r);
	default_devices(r);
	match_annotate(r);
	if (instancetype_apply(r))
		return -EINVAL;
	preference_apply(r);
	if (preference_requirements(r))
		return -EINVAL;
	if (validate_result(r))
		return -EINVAL;
	if (presets_apply(r))
		return -EINVAL;
	if (match_sync_revision(r, &r->it) || match_sync_revision(r, &r->pref))
		return -EINVAL;
	canonical_quantities(r, resolve_vmi_spec(r));
	canonical_quantities(r, node_path(r->vm, "spec.template.spec"));
	resolve_effective_topology(resolve_vmi_spec(r), r->topology);
	return 0;
}
