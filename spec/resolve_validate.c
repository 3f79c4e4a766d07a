/* SPDX-License-Identifier: MIT */
/*
 * resolve_validate.c - the VM/VMI validation KubeVirt runs on the applied
 * result (docs/resolution.md §2 step 14, §8.6, §13): secure boot needs SMM,
 * maxSockets, the maxGuest rules, the machine type of the architecture and
 * one binding per interface; then KubeVirt's admission webhooks
 * (spec/admit.h). All causes are reported together.
 */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "spec/admit.h"
#include "spec/resolve.h"

static const char *P(struct resolver *r, const char *suffix)
{
	return arena_printf(r->a, "%s%s", r->vmi_only ? "spec." : "spec.template.spec.", suffix);
}

static bool feature_on(const struct node *f)
{
	return node_is_map(f) && node_bval(node_get(f, "enabled"), true);
}

static void check_secure_boot(struct resolver *r, const struct node *dom)
{
	const struct node *efi = node_path(dom, "firmware.bootloader.efi");

	if (node_is_null(efi) || !node_bval(node_get(efi, "secureBoot"), true))
		return;
	if (feature_on(node_path(dom, "features.smm")))
		return;
	if (!node_is_null(node_path(dom, "launchSecurity.tdx")))
		return;
	diag_err(r->d, efi, P(r, "domain"),
		 "%s has EFI SecureBoot enabled. SecureBoot requires SMM, which is currently "
		 "disabled.",
		 P(r, "domain"));
}

static void check_max_sockets(struct resolver *r, const struct node *dom)
{
	const struct node *cpu = node_get(dom, "cpu");
	long long s = 0, m = 0;

	if (node_ival(node_get(cpu, "sockets"), 0, UINT32_MAX, &s) ||
	    node_ival(node_get(cpu, "maxSockets"), 0, UINT32_MAX, &m))
		return;
	if (s && m && s > m)
		diag_err(r->d, node_get(cpu, "sockets"), P(r, "domain.cpu.sockets"),
			 "Number of sockets in CPU topology is greater than the maximum sockets "
			 "allowed (%lld > maxSockets %lld)",
			 s, m);
}

static const char *max_guest_problem(struct resolver *r, const struct node *spec,
				     const struct node *dom)
{
	struct quantity guest, max, one_g;
	const struct node *g = resolve_effective_memory(spec);
	const char *arch = resolve_str(node_get(spec, "architecture"));
	struct quantity page;
	int64_t align = 2 << 20;

	if (!resolve_qty(node_path(dom, "memory.maxGuest"), &max))
		return NULL;
	if (!node_is_null(node_path(dom, "cpu.realtime")))
		return "Memory hotplug is not compatible with realtime VMs";
	if (!node_is_null(node_path(dom, "cpu.numa.guestMappingPassthrough")))
		return "Memory hotplug is not compatible with guest mapping passthrough";
	if (!node_is_null(node_get(dom, "launchSecurity")))
		return "Memory hotplug is not compatible with encrypted VMs";
	if (!g || !resolve_qty(g, &guest))
		return "Guest memory must be set when maxGuest is set";
	if (qty_cmp(&guest, &max) > 0)
		return "Guest memory is greater than the configured maxGuest memory";
	if (resolve_qty(node_path(dom, "memory.hugepages.pageSize"), &page) &&
	    qty_value(&page) == (1ll << 30))
		align = 1ll << 30;
	if (!qty_is_int(&guest) || qty_value(&guest) % align)
		return arena_printf(r->a, "Guest memory must be %s aligned",
				    align == (1ll << 30) ? "1Gi" : "2Mi");
	if (!qty_is_int(&max) || qty_value(&max) % align)
		return arena_printf(r->a, "MaxGuest must be %s aligned",
				    align == (1ll << 30) ? "1Gi" : "2Mi");
	if (*arch && strcmp(arch, "amd64") != 0)
		return "Memory hotplug is only available for x86_64 VMs";
	one_g = qty_from_int(1ll << 30, QTY_BINARY_SI);
	if (qty_cmp(&guest, &one_g) < 0)
		return "Memory size must be at least 1Gi to support memory hotplug";
	return NULL;
}

static void check_machine(struct resolver *r, const struct node *spec, const struct node *dom)
{
	static const char *const amd64[] = {"q35*", "pc-q35*", NULL};
	static const char *const arm64[] = {"virt*", NULL};
	static const char *const s390x[] = {"s390-ccw-virtio*", NULL};
	const struct node *mt = node_path(dom, "machine.type");
	const char *type = resolve_str(mt), *arch = resolve_str(node_get(spec, "architecture"));
	const char *const *pat = amd64;
	char allowed[128] = "";
	unsigned int i;

	if (!*type)
		return;
	if (strcmp(arch, "arm64") == 0)
		pat = arm64;
	else if (strcmp(arch, "s390x") == 0)
		pat = s390x;
	for (i = 0; pat[i]; i++) {
		if (fnmatch(pat[i], type, 0) == 0)
			return;
		strncat(allowed, i ? " " : "", sizeof(allowed) - strlen(allowed) - 1);
		strncat(allowed, pat[i], sizeof(allowed) - strlen(allowed) - 1);
	}
	diag_err(r->d, mt, P(r, "domain.machine.type"),
		 "%s is not supported: %s (allowed values: [%s])", P(r, "domain.machine.type"),
		 type, allowed);
}

/* A non-zero memory quantity (KubeVirt's Memory().Value() != 0). */
static bool qty_nonzero(const struct node *n)
{
	struct quantity q;

	return resolve_qty(n, &q) && q.nanos != 0;
}

/* KubeVirt's VMI admission (ValidateVirtualMachineInstanceMandatoryFields,
 * after its defaults copied limits.memory to requests.memory): some memory
 * must be asked for. */
static void check_memory_requested(struct resolver *r, const struct node *dom)
{
	if (!node_is_null(node_path(dom, "memory.guest")) ||
	    !node_is_null(node_path(dom, "memory.hugepages")) ||
	    qty_nonzero(node_path(dom, "resources.requests.memory")) ||
	    qty_nonzero(node_path(dom, "resources.limits.memory")))
		return;
	diag_err(r->d, node_get(dom, "memory") ? node_get(dom, "memory") : dom,
		 P(r, "domain.memory"),
		 "no memory requested, at least one of 'spec.domain.memory.guest', "
		 "'spec.domain.memory.hugepages.size' or 'spec.domain.resources.requests.memory' "
		 "must be set");
}

static void check_bindings(struct resolver *r, const struct node *dom)
{
	static const char *const b[] = {"bridge",  "masquerade", "sriov",	 "slirp",
					"macvtap", "passt",	 "passtBinding", "binding"};
	const struct node *ifs = node_path(dom, "devices.interfaces");
	unsigned int i, j, n;

	for (i = 0; node_is_seq(ifs) && i < ifs->n; i++) {
		for (n = 0, j = 0; j < sizeof(b) / sizeof(b[0]); j++)
			n += !node_is_null(node_get(ifs->items[i], b[j]));
		if (n != 1)
			diag_err(
			    r->d, ifs->items[i],
			    arena_printf(r->a, "%sdomain.devices.interfaces[%u]",
					 r->vmi_only ? "spec." : "spec.template.spec.", i),
			    "logical %s interface must have exactly one binding method or binding "
			    "plugin",
			    resolve_str(node_get(ifs->items[i], "name")));
	}
}

int validate_result(struct resolver *r)
{
	const struct node *spec = resolve_vmi_spec(r), *dom = resolve_vmi_domain(r);
	unsigned int before = r->d->n_err;
	const char *mg;

	check_secure_boot(r, dom);
	check_max_sockets(r, dom);
	mg = max_guest_problem(r, spec, dom);
	if (mg)
		diag_err(r->d,
			 node_path(dom, "memory.guest") ? node_path(dom, "memory.guest")
							: node_path(dom, "memory.maxGuest"),
			 P(r, "domain.memory.guest"), "%s", mg);
	check_machine(r, spec, dom);
	check_memory_requested(r, dom);
	check_bindings(r, dom);
	if (r->vm && !node_is_null(node_path(r->vm, "spec.running")) &&
	    *resolve_str(node_path(r->vm, "spec.runStrategy")))
		diag_err(r->d, node_path(r->vm, "spec.running"), "spec.running",
			 "Running and RunStrategy are mutually exclusive. Note that Running is "
			 "deprecated, please use RunStrategy instead");
	admit_run(r); /* KubeVirt's VM/VMI admission webhooks (spec/admit.h) */
	return r->d->n_err != before ? -EINVAL : 0;
}
