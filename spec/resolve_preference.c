/* SPDX-License-Identifier: MIT */
/*
 * resolve_preference.c - what a VirtualMachinePreferenceSpec says: the
 * CPU topology it prefers (docs/resolution.md §7), applying it (§8):
 * preferred values fill only what the VM left unset (with KubeVirt's few
 * exceptions), then the preference requirements (§10).
 */
#include <errno.h>
#include <string.h>

#include "spec/resolve.h"

/* ---- CPU topology (resolution.md §7) ---------------------------------- */

const char *preference_cpu_topology(const struct node *pref_spec)
{
	const char *t = node_sval(node_path(pref_spec, "cpu.preferredCPUTopology"));

	if (!t || !*t)
		return "sockets";
	if (strcmp(t, "preferSockets") == 0)
		return "sockets";
	if (strcmp(t, "preferCores") == 0)
		return "cores";
	if (strcmp(t, "preferThreads") == 0)
		return "threads";
	if (strcmp(t, "preferSpread") == 0)
		return "spread";
	if (strcmp(t, "preferAny") == 0)
		return "any";
	return t;
}

uint32_t preference_spread_ratio(const struct node *pref_spec)
{
	const struct node *n = node_path(pref_spec, "cpu.spreadOptions.ratio");
	long long v;

	if (!node_is_null(n))
		return node_ival(n, 0, UINT32_MAX, &v) == 0 ? (uint32_t)v : 0;
	n = node_get(pref_spec, "preferSpreadSocketToCoreRatio");
	if (node_ival(n, 1, UINT32_MAX, &v) == 0)
		return (uint32_t)v;
	return 2;
}

const char *preference_spread_across(const struct node *pref_spec)
{
	const char *a = node_sval(node_path(pref_spec, "cpu.spreadOptions.across"));

	return a && *a ? a : "SocketsCores";
}

void preference_topology(const struct node *pref_spec, uint32_t guest, uint32_t out[3])
{
	const char *t = preference_cpu_topology(pref_spec), *across;
	uint32_t ratio;

	out[0] = out[1] = out[2] = 1;
	if (guest == 1)
		return;
	if (strcmp(t, "sockets") == 0 || strcmp(t, "any") == 0) {
		out[0] = guest;
	} else if (strcmp(t, "cores") == 0) {
		out[1] = guest;
	} else if (strcmp(t, "threads") == 0) {
		out[2] = guest;
	} else if (strcmp(t, "spread") == 0) {
		ratio = preference_spread_ratio(pref_spec);
		across = preference_spread_across(pref_spec);
		if (ratio == 0)
			return;
		if (strcmp(across, "SocketsCores") == 0) {
			out[0] = guest / ratio;
			out[1] = ratio;
		} else if (strcmp(across, "CoresThreads") == 0) {
			out[1] = guest / ratio;
			out[2] = ratio;
		} else if (strcmp(across, "SocketsCoresThreads") == 0) {
			out[0] = guest / 2 / ratio;
			out[1] = ratio;
			out[2] = 2;
		}
	}
}

/* ---- applying (resolution.md §8) --------------------------------------- */

struct papply {
	struct resolver *r;
	const struct node *p; /* preference spec */
	const char *origin;
};

/* dst[key] = copy of src when dst[key] is unset */
static void fill(struct papply *pa, struct node *dst, const char *key, const struct node *src)
{
	if (node_is_null(src) || !node_is_null(node_get(dst, key)))
		return;
	node_set(pa->r->a, dst, key, resolve_copy(pa->r, src, pa->origin));
}

/* same, but "" also counts as unset (string fields) */
static void fill_str(struct papply *pa, struct node *dst, const char *key, const struct node *src)
{
	if (!node_sval(src) || !*node_sval(src) || *resolve_str(node_get(dst, key)))
		return;
	node_set(pa->r->a, dst, key, resolve_copy(pa->r, src, pa->origin));
}

static void overwrite(struct papply *pa, struct node *dst, const char *key, const struct node *src)
{
	if (node_is_null(src))
		return;
	node_set(pa->r->a, dst, key, resolve_copy(pa->r, src, pa->origin));
}

/* a node made for a preference field: carry the field's location */
static struct node *made(struct papply *pa, struct node *n, const struct node *field)
{
	n->origin = pa->origin;
	if (field) {
		n->file = field->file;
		n->line = field->line;
		n->col = field->col;
	}
	return n;
}

static const char *const autoattach[][2] = {
    {"preferredAutoattachGraphicsDevice", "autoattachGraphicsDevice"},
    {"preferredAutoattachMemBalloon", "autoattachMemBalloon"},
    {"preferredAutoattachPodInterface", "autoattachPodInterface"},
    {"preferredAutoattachSerialConsole", "autoattachSerialConsole"},
    {"preferredAutoattachInputDevice", "autoattachInputDevice"},
};

void preference_early(struct resolver *r)
{
	struct papply pa = {.r = r, .p = r->pref.spec, .origin = r->pref.origin};
	struct node *tspec = node_path(r->vm, "spec.template.spec"), *dvts, *s;
	const struct node *sc = node_path(pa.p, "volumes.preferredStorageClassName");
	unsigned int i;

	if (!pa.p || !node_is_map(tspec))
		return;
	fill_str(&pa, tspec, "architecture", node_get(pa.p, "preferredArchitecture"));
	if (node_sval(node_path(pa.p, "machine.preferredMachineType")) &&
	    *node_sval(node_path(pa.p, "machine.preferredMachineType")))
		fill_str(&pa, node_get_map(r->a, node_get_map(r->a, tspec, "domain"), "machine"),
			 "type", node_path(pa.p, "machine.preferredMachineType"));
	dvts = node_path(r->vm, "spec.dataVolumeTemplates");
	for (i = 0; node_sval(sc) && node_is_seq(dvts) && i < dvts->n; i++) {
		s = node_path(dvts->items[i], "spec.pvc");
		if (node_is_map(s))
			fill_str(&pa, s, "storageClassName", sc);
		s = node_path(dvts->items[i], "spec.storage");
		if (node_is_map(s))
			fill_str(&pa, s, "storageClassName", sc);
	}
}

void preference_autoattach(struct resolver *r)
{
	struct papply pa = {.r = r, .p = r->pref.spec, .origin = r->pref.origin};
	const struct node *pd = node_get(pa.p, "devices");
	struct node *devs;
	unsigned int i;

	if (!node_is_map(pd))
		return;
	devs = node_get_map(r->a, resolve_vmi_domain(r), "devices");
	for (i = 0; i < 5; i++)
		fill(&pa, devs, autoattach[i][1], node_get(pd, autoattach[i][0]));
}

static void apply_cpu_features(struct papply *pa)
{
	const struct node *pf = node_path(pa->p, "cpu.preferredCPUFeatures");
	struct node *cpu, *feats;
	unsigned int i, j;
	bool have;

	if (!node_is_seq(pf) || !pf->n)
		return;
	cpu = node_get_map(pa->r->a, resolve_vmi_domain(pa->r), "cpu");
	feats = node_get(cpu, "features");
	if (!node_is_seq(feats))
		feats = node_set(pa->r->a, cpu, "features", node_seq(pa->r->a));
	for (i = 0; i < pf->n; i++) {
		const char *name = resolve_str(node_get(pf->items[i], "name"));

		for (have = false, j = 0; j < feats->n && !have; j++)
			have = strcmp(resolve_str(node_get(feats->items[j], "name")), name) == 0;
		if (!have)
			node_push(pa->r->a, feats, resolve_copy(pa->r, pf->items[i], pa->origin));
	}
}

static bool has_binding(const struct node *iface)
{
	static const char *const b[] = {"bridge",  "masquerade", "sriov",	 "slirp",
					"macvtap", "passt",	 "passtBinding", "binding"};
	unsigned int i;

	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		if (!node_is_null(node_get(iface, b[i])))
			return true;
	return false;
}

static bool is_pod_network(struct resolver *r, const char *name)
{
	const struct node *nets = node_get(resolve_vmi_spec(r), "networks");
	unsigned int i;

	for (i = 0; node_is_seq(nets) && i < nets->n; i++)
		if (strcmp(resolve_str(node_get(nets->items[i], "name")), name) == 0)
			return !node_is_null(node_get(nets->items[i], "pod"));
	return false;
}

static void apply_disks(struct papply *pa, const struct node *pd, struct node *devs)
{
	struct resolver *r = pa->r;
	struct node *disks = node_get(devs, "disks"), *d, *t;
	unsigned int i;

	for (i = 0; node_is_seq(disks) && i < disks->n; i++) {
		d = disks->items[i];
		if (!node_is_map(d))
			continue;
		if (node_is_null(node_get(d, "disk")) && node_is_null(node_get(d, "cdrom")) &&
		    node_is_null(node_get(d, "lun")))
			node_set(r->a, d, "disk", made(pa, node_map(r->a), pd));
		if (node_is_map(t = node_get(d, "disk"))) {
			fill_str(pa, t, "bus", node_get(pd, "preferredDiskBus"));
			fill(pa, d, "blockSize", node_get(pd, "preferredDiskBlockSize"));
			fill_str(pa, d, "cache", node_get(pd, "preferredDiskCache"));
			fill_str(pa, d, "io", node_get(pd, "preferredDiskIO"));
			if (strcmp(resolve_str(node_get(t, "bus")), "virtio") == 0)
				fill(pa, d, "dedicatedIOThread",
				     node_get(pd, "preferredDiskDedicatedIoThread"));
		} else if (node_is_map(t = node_get(d, "cdrom"))) {
			fill_str(pa, t, "bus", node_get(pd, "preferredCdromBus"));
		} else if (node_is_map(t = node_get(d, "lun"))) {
			fill_str(pa, t, "bus", node_get(pd, "preferredLunBus"));
		}
	}
}

static void apply_devices(struct papply *pa)
{
	struct resolver *r = pa->r;
	const struct node *pd = node_get(pa->p, "devices"), *pm;
	struct node *devs, *seq, *it, *v;
	unsigned int i;

	if (!node_is_map(pd))
		return;
	devs = node_get_map(r->a, resolve_vmi_domain(r), "devices");
	for (i = 0; i < 5; i++)
		fill(pa, devs, autoattach[i][1], node_get(pd, autoattach[i][0]));
	fill(pa, devs, "useVirtioTransitional", node_get(pd, "preferredUseVirtioTransitional"));
	fill(pa, devs, "blockMultiQueue", node_get(pd, "preferredBlockMultiQueue"));
	fill(pa, devs, "networkInterfaceMultiqueue",
	     node_get(pd, "preferredNetworkInterfaceMultiQueue"));
	overwrite(pa, devs, "disableHotplug", node_get(pd, "preferredDisableHotplug"));
	if (node_is_map(node_get(devs, "sound")))
		fill_str(pa, node_get(devs, "sound"), "model", node_get(pd, "preferredSoundModel"));
	fill(pa, devs, "rng", node_get(pd, "preferredRng"));
	fill(pa, devs, "tpm", node_get(pd, "preferredTPM"));
	if (*resolve_str(node_get(pd, "preferredVideoType")))
		fill_str(pa, node_get_map(r->a, devs, "video"), "type",
			 node_get(pd, "preferredVideoType"));
	pm = node_get(pd, "preferredPanicDeviceModel");
	if (*resolve_str(pm)) {
		seq = node_get(devs, "panicDevices");
		if (!node_is_seq(seq) || !seq->n) {
			seq = node_set(r->a, devs, "panicDevices", node_seq(r->a));
			v = made(pa, node_map(r->a), pm);
			node_push(r->a, seq, v);
		}
		for (i = 0; i < seq->n; i++)
			if (node_is_map(seq->items[i]))
				fill(pa, seq->items[i], "model", pm);
	}
	seq = node_get(devs, "inputs");
	for (i = 0; node_is_seq(seq) && i < seq->n; i++) {
		fill_str(pa, seq->items[i], "bus", node_get(pd, "preferredInputBus"));
		fill_str(pa, seq->items[i], "type", node_get(pd, "preferredInputType"));
	}
	seq = node_get(devs, "interfaces");
	for (i = 0; node_is_seq(seq) && i < seq->n; i++) {
		it = seq->items[i];
		if (!node_is_map(it))
			continue;
		fill_str(pa, it, "model", node_get(pd, "preferredInterfaceModel"));
		if (!node_is_null(node_get(pd, "preferredInterfaceMasquerade")) &&
		    !has_binding(it) && is_pod_network(r, resolve_str(node_get(it, "name"))))
			node_set(
			    r->a, it, "masquerade",
			    made(pa, node_map(r->a), node_get(pd, "preferredInterfaceMasquerade")));
	}
	apply_disks(pa, pd, devs);
}

static void apply_features(struct papply *pa)
{
	struct resolver *r = pa->r;
	const struct node *pf = node_get(pa->p, "features"), *ph;
	struct node *f, *hv;
	unsigned int i;

	if (!node_is_map(pf))
		return;
	f = node_get_map(r->a, resolve_vmi_domain(r), "features");
	overwrite(pa, f, "acpi", node_get(pf, "preferredAcpi"));
	fill(pa, f, "apic", node_get(pf, "preferredApic"));
	fill(pa, f, "kvm", node_get(pf, "preferredKvm"));
	fill(pa, f, "pvspinlock", node_get(pf, "preferredPvspinlock"));
	fill(pa, f, "smm", node_get(pf, "preferredSmm"));
	ph = node_get(pf, "preferredHyperv");
	if (!node_is_map(ph))
		return;
	hv = node_get_map(r->a, f, "hyperv");
	for (i = 0; i < ph->n; i++)
		fill(pa, hv, ph->kv[i].key, ph->kv[i].val);
}

static void apply_firmware(struct papply *pa)
{
	struct resolver *r = pa->r;
	const struct node *pf = node_get(pa->p, "firmware");
	struct node *bl, *efi, *bios;

	if (!node_is_map(pf))
		return;
	bl =
	    node_get_map(r->a, node_get_map(r->a, resolve_vmi_domain(r), "firmware"), "bootloader");
	if (node_bval(node_get(pf, "preferredUseBios"), false) &&
	    node_is_null(node_get(bl, "bios")) && node_is_null(node_get(bl, "efi")))
		node_set(r->a, bl, "bios",
			 made(pa, node_map(r->a), node_get(pf, "preferredUseBios")));
	bios = node_get(bl, "bios");
	if (node_is_map(bios))
		fill(pa, bios, "useSerial", node_get(pf, "preferredUseBiosSerial"));
	if (node_is_null(node_get(bl, "efi")) && node_is_null(node_get(bl, "bios")) &&
	    !node_is_null(node_get(pf, "preferredEfi"))) {
		fill(pa, bl, "efi", node_get(pf, "preferredEfi"));
		return;
	}
	if (node_bval(node_get(pf, "preferredUseEfi"), false) &&
	    node_is_null(node_get(bl, "efi")) && node_is_null(node_get(bl, "bios")))
		node_set(r->a, bl, "efi",
			 made(pa, node_map(r->a), node_get(pf, "preferredUseEfi")));
	efi = node_get(bl, "efi");
	if (node_is_map(efi))
		fill(pa, efi, "secureBoot", node_get(pf, "preferredUseSecureBoot"));
}

static void apply_clock(struct papply *pa)
{
	struct resolver *r = pa->r;
	const struct node *pc = node_get(pa->p, "clock"), *off;
	struct node *clock;

	if (!node_is_map(pc))
		return;
	clock = node_get_map(r->a, resolve_vmi_domain(r), "clock");
	off = node_get(pc, "preferredClockOffset");
	if (node_is_map(off) && node_is_null(node_get(clock, "utc")) &&
	    node_is_null(node_get(clock, "timezone"))) {
		fill(pa, clock, "utc", node_get(off, "utc"));
		fill(pa, clock, "timezone", node_get(off, "timezone"));
	}
	fill(pa, clock, "timer", node_get(pc, "preferredTimer"));
}

void preference_apply(struct resolver *r)
{
	struct papply pa = {.r = r, .p = r->pref.spec, .origin = r->pref.origin};
	struct node *spec = resolve_vmi_spec(r), *an;
	const struct node *pan;
	unsigned int i;

	if (!pa.p)
		return;
	apply_cpu_features(&pa);
	apply_devices(&pa);
	apply_features(&pa);
	apply_firmware(&pa);
	if (*resolve_str(node_path(pa.p, "machine.preferredMachineType")))
		fill_str(&pa, node_get_map(r->a, resolve_vmi_domain(r), "machine"), "type",
			 node_path(pa.p, "machine.preferredMachineType"));
	apply_clock(&pa);
	fill_str(&pa, spec, "subdomain", node_get(pa.p, "preferredSubdomain"));
	fill(&pa, spec, "terminationGracePeriodSeconds",
	     node_get(pa.p, "preferredTerminationGracePeriodSeconds"));
	fill_str(&pa, spec, "architecture", node_get(pa.p, "preferredArchitecture"));
	pan = node_get(pa.p, "annotations");
	if (node_is_map(pan) && pan->n) {
		an = node_get_map(r->a, node_get_map(r->a, r->vmi, "metadata"), "annotations");
		for (i = 0; i < pan->n; i++)
			fill(&pa, an, pan->kv[i].key, pan->kv[i].val);
	}
	fill(&pa, resolve_vmi_domain(r), "launchSecurity",
	     node_get(pa.p, "preferredLaunchSecurity"));
}

/* ---- requirements (resolution.md §10) ---------------------------------- */

static uint32_t raw_u32(const struct node *n)
{
	long long v;

	return node_ival(n, 0, UINT32_MAX, &v) == 0 ? (uint32_t)v : 0;
}

static int req_cpu_vm(struct resolver *r, uint32_t need)
{
	const struct node *cpu = node_get(resolve_vmi_domain(r), "cpu");
	const char *topo = preference_cpu_topology(r->pref.spec), *as, *paths;
	const char *ps = "spec.template.spec.domain.cpu.sockets";
	const char *pc = "spec.template.spec.domain.cpu.cores";
	const char *pt = "spec.template.spec.domain.cpu.threads";
	uint32_t s = raw_u32(node_get(cpu, "sockets")), c = raw_u32(node_get(cpu, "cores"));
	uint32_t t = raw_u32(node_get(cpu, "threads")), eff[3];
	uint64_t have;

	if (!s && !c && !t) {
		resolve_effective_topology(resolve_vmi_spec(r), eff);
		s = eff[0], c = eff[1], t = eff[2];
	}
	if (strcmp(topo, "cores") == 0) {
		have = c, as = "cores", paths = pc;
	} else if (strcmp(topo, "threads") == 0) {
		have = t, as = "threads", paths = pt;
	} else if (strcmp(topo, "any") == 0) {
		have = (uint64_t)s * c * t, as = "cores, sockets and threads";
		paths = arena_printf(r->a, "%s, %s, %s", pc, ps, pt);
	} else if (strcmp(topo, "spread") == 0) {
		as = preference_spread_across(r->pref.spec);
		if (strcmp(as, "CoresThreads") == 0) {
			have = (uint64_t)c * t;
			paths = arena_printf(r->a, "%s, %s", pc, pt);
		} else if (strcmp(as, "SocketsCoresThreads") == 0) {
			have = (uint64_t)s * c * t;
			paths = arena_printf(r->a, "%s, %s, %s", ps, pc, pt);
		} else {
			have = (uint64_t)s * c;
			paths = arena_printf(r->a, "%s, %s", ps, pc);
		}
	} else {
		have = s, as = "sockets", paths = ps;
	}
	if (have >= need)
		return 0;
	diag_err(
	    r->d, cpu, paths,
	    "failure checking preference requirements: insufficient CPU resources of %llu vCPU "
	    "provided by VirtualMachine, preference requires %u vCPU provided as %s",
	    (unsigned long long)have, need, as);
	return -EINVAL;
}

static int req_memory(struct resolver *r, const struct node *need_n)
{
	struct quantity need, have = {0, QTY_BINARY_SI};
	const struct node *h;
	char a[64], b[64];

	if (!resolve_qty(need_n, &need))
		return 0;
	if (r->it.spec) {
		h = node_path(resolve_vmi_domain(r), "memory.guest");
		if (node_is_null(h))
			h = node_path(r->it.spec, "memory.guest");
	} else {
		h = resolve_effective_memory(resolve_vmi_spec(r));
	}
	if (h && !resolve_qty(h, &have))
		return 0;
	if (qty_cmp(&have, &need) >= 0)
		return 0;
	qty_format(&have, a, sizeof(a));
	qty_format(&need, b, sizeof(b));
	if (r->it.spec)
		diag_err(
		    r->d, r->it.m, "spec.instancetype",
		    "failure checking preference requirements: insufficient Memory resources of "
		    "%s provided by instance type, preference requires %s",
		    a, b);
	else
		diag_err(
		    r->d, node_get(resolve_vmi_domain(r), "memory"),
		    "spec.template.spec.domain.memory",
		    "failure checking preference requirements: insufficient Memory resources of "
		    "%s provided by VirtualMachine, preference requires %s",
		    a, b);
	return -EINVAL;
}

int preference_requirements(struct resolver *r)
{
	const struct node *req = node_get(r->pref.spec, "requirements"), *n;
	const char *arch, *want;
	uint32_t need, itg;

	if (!node_is_map(req))
		return 0;
	n = node_path(req, "cpu.guest");
	if (!node_is_null(n)) {
		need = raw_u32(n);
		if (r->it.spec) {
			itg = raw_u32(node_path(r->it.spec, "cpu.guest"));
			if (itg < need) {
				diag_err(
				    r->d, r->it.m, "spec.instancetype",
				    "failure checking preference requirements: insufficient CPU "
				    "resources of %u vCPU provided by instance type, preference "
				    "requires %u vCPU",
				    itg, need);
				return -EINVAL;
			}
		} else if (req_cpu_vm(r, need)) {
			return -EINVAL;
		}
	}
	n = node_path(req, "memory.guest");
	if (!node_is_null(n) && req_memory(r, n))
		return -EINVAL;
	want = node_sval(node_get(req, "architecture"));
	if (want && *want) {
		arch = resolve_str(node_get(resolve_vmi_spec(r), "architecture"));
		if (!*arch)
			arch = "amd64";
		if (strcmp(arch, want) != 0) {
			diag_err(r->d, node_get(resolve_vmi_spec(r), "architecture"),
				 "spec.template.spec.architecture",
				 "failure checking preference requirements: preference requires "
				 "architecture %s but %s is being requested",
				 want, arch);
			return -EINVAL;
		}
	}
	return 0;
}
