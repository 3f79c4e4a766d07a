/* SPDX-License-Identifier: MIT */
/*
 * resolve_instancetype.c - applying a VirtualMachineInstancetypeSpec to the
 * VMI (docs/resolution.md §6): every instancetype-owned field, conflicts
 * collected in KubeVirt's order, and the CPU topology the preference picks
 * for the instancetype's vCPUs (§7, preference_topology()).
 */
#include <errno.h>
#include <string.h>

#include "spec/resolve.h"

static uint32_t it_guest(const struct node *it_spec)
{
	long long v;

	return node_ival(node_path(it_spec, "cpu.guest"), 0, UINT32_MAX, &v) == 0 ? (uint32_t)v : 0;
}

int instancetype_check_spread(struct resolver *r)
{
	const struct node *ps = r->pref.spec;
	const char *across;
	uint32_t n, ratio;

	if (!r->it.spec || strcmp(preference_cpu_topology(ps), "spread") != 0)
		return 0;
	n = it_guest(r->it.spec);
	ratio = preference_spread_ratio(ps);
	across = preference_spread_across(ps);
	if (ratio == 0)
		return 0; /* rejected by the preference admission */
	if (strcmp(across, "SocketsCores") == 0 && n % ratio)
		diag_err(r->d, node_path(r->it.spec, "cpu.guest"), "instancetype.spec.cpu.guest",
			 "%u vCPUs provided by the instance type are not divisible by the "
			 "Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio "
			 "of %u provided by the preference",
			 n, ratio);
	else if (strcmp(across, "CoresThreads") == 0 && n % ratio)
		diag_err(r->d, node_path(r->it.spec, "cpu.guest"), "instancetype.spec.cpu.guest",
			 "%u vCPUs provided by the instance type are not divisible by the number "
			 "of threads per core %u",
			 n, ratio);
	else if (strcmp(across, "SocketsCoresThreads") == 0 && (n % 2 || (n / 2) % ratio))
		diag_err(r->d, node_path(r->it.spec, "cpu.guest"), "instancetype.spec.cpu.guest",
			 "%u vCPUs provided by the instance type are not divisible by the number "
			 "of threads per core 2 and Spec.PreferSpreadSocketToCoreRatio or "
			 "Spec.CPU.PreferSpreadOptions.Ratio of %u",
			 n, ratio);
	else
		return 0;
	return -EINVAL;
}

struct apply {
	struct resolver *r;
	const struct node *it;	 /* instancetype spec */
	struct node *spec, *dom; /* VMI spec and domain */
	const char *origin;
	int conflicts;
};

static void conflict(struct apply *ap, const struct node *at, const char *suffix)
{
	struct resolver *r = ap->r;
	const char *path = suffix[0] == 'a' && strncmp(suffix, "annotations.", 12) == 0
			       ? suffix
			       : arena_printf(r->a, "spec.template.spec.%s", suffix);

	diag_err(r->d, at, path, "VM field(s) %s conflicts with selected instance type %s", path,
		 r->it.name);
	ap->conflicts++;
}

static struct node *put(struct apply *ap, struct node *m, const char *key, const struct node *src)
{
	return node_set(ap->r->a, m, key, resolve_copy(ap->r, src, ap->origin));
}

static void apply_scheduling(struct apply *ap)
{
	const struct node *ns = node_get(ap->it, "nodeSelector");
	const char *sn = node_sval(node_get(ap->it, "schedulerName"));

	if (!node_is_null(ns)) {
		if (!node_is_null(node_get(ap->spec, "nodeSelector")))
			conflict(ap, node_get(ap->spec, "nodeSelector"), "nodeSelector");
		else
			put(ap, ap->spec, "nodeSelector", ns);
	}
	if (sn && *sn) {
		if (*resolve_str(node_get(ap->spec, "schedulerName")))
			conflict(ap, node_get(ap->spec, "schedulerName"), "schedulerName");
		else
			put(ap, ap->spec, "schedulerName", node_get(ap->it, "schedulerName"));
	}
}

static bool nonzero(const struct node *n)
{
	long long v;

	return n && node_ival(n, 0, UINT32_MAX, &v) == 0 && v != 0;
}

static void apply_cpu(struct apply *ap)
{
	struct resolver *r = ap->r;
	const struct node *itc = node_get(ap->it, "cpu"), *guest = node_get(itc, "guest");
	struct node *cpu = node_get(ap->dom, "cpu"), *res = node_get(ap->dom, "resources");
	static const char *const topo_keys[] = {"sockets", "cores", "threads"};
	static const char *const keys[][2] = {
	    {"numa", "numa"},
	    {"realtime", "realtime"},
	};
	int before = ap->conflicts;
	const char *topo_origin;
	uint32_t t[3];
	unsigned int i;
	struct node *v;

	if (!node_is_null(node_path(res, "requests.cpu")))
		conflict(ap, node_path(res, "requests.cpu"), "domain.resources.requests.cpu");
	if (!node_is_null(node_path(res, "limits.cpu")))
		conflict(ap, node_path(res, "limits.cpu"), "domain.resources.limits.cpu");
	for (i = 0; i < 3; i++)
		if (nonzero(node_get(cpu, topo_keys[i])))
			conflict(ap, node_get(cpu, topo_keys[i]),
				 arena_printf(r->a, "domain.cpu.%s", topo_keys[i]));
	if (*resolve_str(node_get(cpu, "model")) && !node_is_null(node_get(itc, "model")))
		conflict(ap, node_get(cpu, "model"), "domain.cpu.model");
	if (node_bval(node_get(cpu, "dedicatedCpuPlacement"), false) &&
	    !node_is_null(node_get(itc, "dedicatedCPUPlacement")))
		conflict(ap, node_get(cpu, "dedicatedCpuPlacement"),
			 "domain.cpu.dedicatedCPUPlacement");
	if (node_bval(node_get(cpu, "isolateEmulatorThread"), false) &&
	    !node_is_null(node_get(itc, "isolateEmulatorThread")))
		conflict(ap, node_get(cpu, "isolateEmulatorThread"),
			 "domain.cpu.isolateEmulatorThread");
	for (i = 0; i < 2; i++)
		if (!node_is_null(node_get(cpu, keys[i][0])) &&
		    !node_is_null(node_get(itc, keys[i][1])))
			conflict(ap, node_get(cpu, keys[i][0]),
				 arena_printf(r->a, "domain.cpu.%s", keys[i][0]));
	if (ap->conflicts != before)
		return;
	cpu = node_get_map(r->a, ap->dom, "cpu");
	preference_topology(r->pref.spec, it_guest(ap->it), t);
	topo_origin = ap->origin;
	if (!node_is_null(node_path(r->pref.spec, "cpu.preferredCPUTopology")))
		topo_origin = arena_printf(r->a, "%s + %s (%s)", ap->origin, r->pref.origin,
					   preference_cpu_topology(r->pref.spec));
	for (i = 0; i < 3; i++) {
		v = node_set(r->a, cpu, topo_keys[i], node_int(r->a, t[i]));
		v->origin = topo_origin;
		if (guest) {
			v->file = guest->file;
			v->line = guest->line;
			v->col = guest->col;
		}
	}
	if (!node_is_null(node_get(itc, "model")))
		put(ap, cpu, "model", node_get(itc, "model"));
	if (!node_is_null(node_get(itc, "dedicatedCPUPlacement")))
		put(ap, cpu, "dedicatedCpuPlacement", node_get(itc, "dedicatedCPUPlacement"));
	if (!node_is_null(node_get(itc, "isolateEmulatorThread")))
		put(ap, cpu, "isolateEmulatorThread", node_get(itc, "isolateEmulatorThread"));
	for (i = 0; i < 2; i++)
		if (!node_is_null(node_get(itc, keys[i][1])))
			put(ap, cpu, keys[i][0], node_get(itc, keys[i][1]));
	if (!node_is_null(node_get(itc, "maxSockets")))
		put(ap, cpu, "maxSockets", node_get(itc, "maxSockets"));
}

/* ⌊float32(guest) × float32(1 − float32(p)/100)⌋, as Go computes it */
static struct node *overcommit(struct apply *ap, const struct node *guest, long long pct)
{
	struct quantity q;
	volatile float g, f, prod;
	char buf[64];

	if (!resolve_qty(guest, &q))
		return NULL;
	g = (float)qty_value(&q);
	f = (float)(1.0f - (float)pct / 100.0f);
	prod = g * f;
	q = qty_from_int((int64_t)prod, q.format);
	qty_format(&q, buf, sizeof(buf));
	return node_str(ap->r->a, buf);
}

static void apply_memory(struct apply *ap)
{
	struct resolver *r = ap->r;
	const struct node *itm = node_get(ap->it, "memory");
	struct node *mem = node_get(ap->dom, "memory"), *res = node_get(ap->dom, "resources"), *v;
	long long pct = 0;

	if (!node_is_null(node_get(mem, "guest")))
		return conflict(ap, node_get(mem, "guest"), "domain.memory.guest");
	if (!node_is_null(node_get(itm, "hugepages")) && !node_is_null(node_get(mem, "hugepages")))
		return conflict(ap, node_get(mem, "hugepages"), "domain.memory.hugepages");
	if (!node_is_null(node_get(itm, "maxGuest")) && !node_is_null(node_get(mem, "maxGuest")))
		return conflict(ap, node_get(mem, "maxGuest"), "domain.memory.maxGuest");
	if (!node_is_null(node_path(res, "requests.memory")))
		return conflict(ap, node_path(res, "requests.memory"),
				"domain.resources.requests.memory");
	if (!node_is_null(node_path(res, "limits.memory")))
		return conflict(ap, node_path(res, "limits.memory"),
				"domain.resources.limits.memory");
	mem = node_get_map(r->a, ap->dom, "memory");
	put(ap, mem, "guest", node_get(itm, "guest"));
	if (!node_is_null(node_get(itm, "hugepages")))
		put(ap, mem, "hugepages", node_get(itm, "hugepages"));
	if (!node_is_null(node_get(itm, "maxGuest")))
		put(ap, mem, "maxGuest", node_get(itm, "maxGuest"));
	if (node_ival(node_get(itm, "overcommitPercent"), 1, 100, &pct) == 0) {
		v = overcommit(ap, node_get(itm, "guest"), pct);
		if (!v)
			return;
		v->origin = ap->origin;
		res = node_get_map(r->a, ap->dom, "resources");
		node_set(r->a, node_get_map(r->a, res, "requests"), "memory", v);
	}
}

static void apply_misc(struct apply *ap)
{
	struct resolver *r = ap->r;
	const struct node *n = node_path(ap->it, "ioThreads.supplementalPoolThreadCount");
	struct node *devs;
	static const char *const devkeys[] = {"gpus", "hostDevices"};
	unsigned int i;

	if (!node_is_null(n)) {
		if (!node_is_null(node_path(ap->dom, "ioThreads.supplementalPoolThreadCount")))
			conflict(ap, node_path(ap->dom, "ioThreads.supplementalPoolThreadCount"),
				 "domain.ioThreads.supplementalPoolThreadCount");
		else
			put(ap, node_get_map(r->a, ap->dom, "ioThreads"),
			    "supplementalPoolThreadCount", n);
	}
	if (!node_is_null(node_get(ap->it, "ioThreadsPolicy"))) {
		if (!node_is_null(node_get(ap->dom, "ioThreadsPolicy")))
			conflict(ap, node_get(ap->dom, "ioThreadsPolicy"),
				 "domain.ioThreadsPolicy");
		else
			put(ap, ap->dom, "ioThreadsPolicy", node_get(ap->it, "ioThreadsPolicy"));
	}
	if (!node_is_null(node_get(ap->it, "launchSecurity"))) {
		if (!node_is_null(node_get(ap->dom, "launchSecurity")))
			conflict(ap, node_get(ap->dom, "launchSecurity"), "domain.launchSecurity");
		else
			put(ap, ap->dom, "launchSecurity", node_get(ap->it, "launchSecurity"));
	}
	for (i = 0; i < 2; i++) {
		n = node_get(ap->it, devkeys[i]);
		if (!node_is_seq(n) || !n->n)
			continue;
		devs = node_get(ap->dom, "devices");
		if (node_is_seq(node_get(devs, devkeys[i])) && node_get(devs, devkeys[i])->n)
			conflict(ap, node_get(devs, devkeys[i]),
				 arena_printf(r->a, "domain.devices.%s", devkeys[i]));
		else
			put(ap, node_get_map(r->a, ap->dom, "devices"), devkeys[i], n);
	}
}

static void apply_annotations(struct apply *ap)
{
	struct resolver *r = ap->r;
	const struct node *an = node_get(ap->it, "annotations");
	struct node *md = node_get_map(r->a, r->vmi, "metadata"), *vm_an, *cur;
	unsigned int i;

	if (!node_is_map(an) || !an->n)
		return;
	vm_an = node_get_map(r->a, md, "annotations");
	for (i = 0; i < an->n; i++) {
		cur = node_get(vm_an, an->kv[i].key);
		if (cur && !node_equal(cur, an->kv[i].val))
			conflict(ap, cur, arena_printf(r->a, "annotations.%s", an->kv[i].key));
		else if (!cur)
			put(ap, vm_an, an->kv[i].key, an->kv[i].val);
	}
}

int instancetype_apply(struct resolver *r)
{
	struct apply ap = {.r = r, .it = r->it.spec, .origin = r->it.origin};

	if (!r->it.spec)
		return 0;
	ap.spec = resolve_vmi_spec(r);
	ap.dom = resolve_vmi_domain(r);
	apply_scheduling(&ap);
	apply_cpu(&ap);
	apply_memory(&ap);
	apply_misc(&ap);
	apply_annotations(&ap);
	return ap.conflicts ? -EINVAL : 0;
}
