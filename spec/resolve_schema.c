/* SPDX-License-Identifier: MIT */
/*
 * resolve_schema.c - decoding checks: the types KubeVirt's API schema
 * gives the fields resolution reads (a string where a uint32 belongs, a
 * negative count, a malformed quantity are all rejected with the field's
 * path), required fields, and the admission rules of instancetype and
 * preference objects (docs/resolution.md §1, §12, §7.4).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "spec/resolve.h"

enum sty {
	T_ANY = 0,
	T_MAP, /* map; sub = fields */
	T_SEQ, /* seq of maps; sub = element fields */
	T_STR,
	T_BOOL,
	T_U32,
	T_I32,
	T_I64,
	T_QTY,
	T_STRMAP, /* map of strings */
	T_QTYMAP, /* map of quantities */
};

struct field {
	const char *key;
	enum sty t;
	const struct field *sub;
	bool required;
};

#define END                                                                                        \
	{                                                                                          \
		NULL, T_ANY, NULL, false                                                           \
	}

static const struct field feature_state[] = {{"enabled", T_BOOL, NULL, false}, END};
static const struct field matcher[] = {
    {"name", T_STR, NULL, false},
    {"kind", T_STR, NULL, false},
    {"revisionName", T_STR, NULL, false},
    {"inferFromVolume", T_STR, NULL, false},
    {"inferFromVolumeFailurePolicy", T_STR, NULL, false},
    END,
};
static const struct field metadata[] = {
    {"name", T_STR, NULL, false},
    {"namespace", T_STR, NULL, false},
    {"uid", T_STR, NULL, false},
    {"labels", T_STRMAP, NULL, false},
    {"annotations", T_STRMAP, NULL, false},
    END,
};
static const struct field cpu_feature[] = {
    {"name", T_STR, NULL, true}, {"policy", T_STR, NULL, false}, END};
static const struct field vmi_cpu[] = {
    {"sockets", T_U32, NULL, false},
    {"cores", T_U32, NULL, false},
    {"threads", T_U32, NULL, false},
    {"maxSockets", T_U32, NULL, false},
    {"model", T_STR, NULL, false},
    {"dedicatedCpuPlacement", T_BOOL, NULL, false},
    {"isolateEmulatorThread", T_BOOL, NULL, false},
    {"features", T_SEQ, cpu_feature, false},
    {"numa", T_MAP, NULL, false},
    {"realtime", T_MAP, NULL, false},
    END,
};
static const struct field hugepages[] = {{"pageSize", T_QTY, NULL, false}, END};
static const struct field vmi_memory[] = {
    {"guest", T_QTY, NULL, false},
    {"maxGuest", T_QTY, NULL, false},
    {"hugepages", T_MAP, hugepages, false},
    END,
};
static const struct field resources[] = {
    {"requests", T_QTYMAP, NULL, false},
    {"limits", T_QTYMAP, NULL, false},
    END,
};
static const struct field disk_target[] = {
    {"bus", T_STR, NULL, false}, {"readonly", T_BOOL, NULL, false}, END};
static const struct field block_size_custom[] = {
    {"logical", T_U32, NULL, false}, {"physical", T_U32, NULL, false}, END};
static const struct field block_size[] = {{"custom", T_MAP, block_size_custom, false}, END};
static const struct field disk[] = {
    {"name", T_STR, NULL, true},
    {"disk", T_MAP, disk_target, false},
    {"cdrom", T_MAP, disk_target, false},
    {"lun", T_MAP, disk_target, false},
    {"bootOrder", T_U32, NULL, false},
    {"serial", T_STR, NULL, false},
    {"cache", T_STR, NULL, false},
    {"io", T_STR, NULL, false},
    {"dedicatedIOThread", T_BOOL, NULL, false},
    {"blockSize", T_MAP, block_size, false},
    END,
};
static const struct field port[] = {
    {"name", T_STR, NULL, false},
    {"protocol", T_STR, NULL, false},
    {"port", T_I32, NULL, true},
    END,
};
static const struct field binding_plugin[] = {{"name", T_STR, NULL, false}, END};
static const struct field iface[] = {
    {"name", T_STR, NULL, true},
    {"model", T_STR, NULL, false},
    {"macAddress", T_STR, NULL, false},
    {"bootOrder", T_U32, NULL, false},
    {"ports", T_SEQ, port, false},
    {"bridge", T_MAP, NULL, false},
    {"masquerade", T_MAP, NULL, false},
    {"sriov", T_MAP, NULL, false},
    {"slirp", T_MAP, NULL, false},
    {"macvtap", T_MAP, NULL, false},
    {"passt", T_MAP, NULL, false},
    {"passtBinding", T_MAP, NULL, false},
    {"binding", T_MAP, binding_plugin, false},
    END,
};
static const struct field input[] = {
    {"name", T_STR, NULL, true}, {"bus", T_STR, NULL, false}, {"type", T_STR, NULL, false}, END};
static const struct field gpu[] = {
    {"name", T_STR, NULL, true}, {"deviceName", T_STR, NULL, false}, END};
static const struct field devices[] = {
    {"disks", T_SEQ, disk, false},
    {"interfaces", T_SEQ, iface, false},
    {"inputs", T_SEQ, input, false},
    {"gpus", T_SEQ, gpu, false},
    {"hostDevices", T_SEQ, gpu, false},
    {"autoattachPodInterface", T_BOOL, NULL, false},
    {"autoattachGraphicsDevice", T_BOOL, NULL, false},
    {"autoattachMemBalloon", T_BOOL, NULL, false},
    {"autoattachSerialConsole", T_BOOL, NULL, false},
    {"autoattachInputDevice", T_BOOL, NULL, false},
    {"autoattachVSOCK", T_BOOL, NULL, false},
    {"disableHotplug", T_BOOL, NULL, false},
    {"useVirtioTransitional", T_BOOL, NULL, false},
    {"blockMultiQueue", T_BOOL, NULL, false},
    {"networkInterfaceMultiQueue", T_BOOL, NULL, false},
    {"rng", T_MAP, NULL, false},
    {"tpm", T_MAP, NULL, false},
    {"sound", T_MAP, NULL, false},
    {"video", T_MAP, NULL, false},
    {"panicDevices", T_SEQ, NULL, false},
    END,
};
static const struct field efi[] = {
    {"secureBoot", T_BOOL, NULL, false}, {"persistent", T_BOOL, NULL, false}, END};
static const struct field bios[] = {{"useSerial", T_BOOL, NULL, false}, END};
static const struct field bootloader[] = {
    {"efi", T_MAP, efi, false}, {"bios", T_MAP, bios, false}, END};
static const struct field kb_container[] = {
    {"image", T_STR, NULL, false},
    {"kernelPath", T_STR, NULL, false},
    {"initrdPath", T_STR, NULL, false},
    END,
};
static const struct field kernel_boot[] = {
    {"kernelArgs", T_STR, NULL, false}, {"container", T_MAP, kb_container, false}, END};
static const struct field firmware[] = {
    {"bootloader", T_MAP, bootloader, false},
    {"kernelBoot", T_MAP, kernel_boot, false},
    {"uuid", T_STR, NULL, false},
    {"serial", T_STR, NULL, false},
    END,
};
static const struct field features[] = {
    {"acpi", T_MAP, feature_state, false},
    {"apic", T_MAP, NULL, false},
    {"smm", T_MAP, feature_state, false},
    {"pvspinlock", T_MAP, feature_state, false},
    {"kvm", T_MAP, NULL, false},
    {"hyperv", T_MAP, NULL, false},
    END,
};
static const struct field machine[] = {{"type", T_STR, NULL, false}, END};
static const struct field io_threads[] = {{"supplementalPoolThreadCount", T_U32, NULL, false}, END};
static const struct field domain[] = {
    {"cpu", T_MAP, vmi_cpu, false},	     {"memory", T_MAP, vmi_memory, false},
    {"resources", T_MAP, resources, false},  {"devices", T_MAP, devices, false},
    {"firmware", T_MAP, firmware, false},    {"features", T_MAP, features, false},
    {"machine", T_MAP, machine, false},	     {"clock", T_MAP, NULL, false},
    {"ioThreadsPolicy", T_STR, NULL, false}, {"ioThreads", T_MAP, io_threads, false},
    {"launchSecurity", T_MAP, NULL, false},  END,
};
static const struct field cloud_init[] = {
    {"userData", T_STR, NULL, false},
    {"userDataBase64", T_STR, NULL, false},
    {"networkData", T_STR, NULL, false},
    {"networkDataBase64", T_STR, NULL, false},
    END,
};
static const struct field volume[] = {
    {"name", T_STR, NULL, true},
    {"containerDisk", T_MAP, NULL, false},
    {"persistentVolumeClaim", T_MAP, NULL, false},
    {"dataVolume", T_MAP, NULL, false},
    {"hostDisk", T_MAP, NULL, false},
    {"emptyDisk", T_MAP, NULL, false},
    {"cloudInitNoCloud", T_MAP, cloud_init, false},
    {"cloudInitConfigDrive", T_MAP, cloud_init, false},
    END,
};
static const struct field network[] = {
    {"name", T_STR, NULL, true}, {"pod", T_MAP, NULL, false}, {"multus", T_MAP, NULL, false}, END};
static const struct field vmi_spec_fields[] = {
    {"domain", T_MAP, domain, false},	   {"volumes", T_SEQ, volume, false},
    {"networks", T_SEQ, network, false},   {"terminationGracePeriodSeconds", T_I64, NULL, false},
    {"hostname", T_STR, NULL, false},	   {"subdomain", T_STR, NULL, false},
    {"architecture", T_STR, NULL, false},  {"nodeSelector", T_STRMAP, NULL, false},
    {"schedulerName", T_STR, NULL, false}, END,
};
static const struct field template_fields[] = {
    {"metadata", T_MAP, metadata, false}, {"spec", T_MAP, vmi_spec_fields, false}, END};
static const struct field vm_spec[] = {
    {"runStrategy", T_STR, NULL, false},
    {"running", T_BOOL, NULL, false},
    {"instancetype", T_MAP, matcher, false},
    {"preference", T_MAP, matcher, false},
    {"flavor", T_MAP, matcher, false},
    {"template", T_MAP, template_fields, false},
    END,
};
static const struct field ref[] = {{"name", T_STR, NULL, false}, END};
static const struct field status_ref[] = {
    {"name", T_STR, NULL, false},
    {"kind", T_STR, NULL, false},
    {"controllerRevisionRef", T_MAP, ref, false},
    END,
};
static const struct field vm_status[] = {
    {"instancetypeRef", T_MAP, status_ref, false},
    {"preferenceRef", T_MAP, status_ref, false},
    END,
};
static const struct field vm_root[] = {
    {"metadata", T_MAP, metadata, false},
    {"spec", T_MAP, vm_spec, true},
    {"status", T_MAP, vm_status, false},
    END,
};
static const struct field vmi_root[] = {
    {"metadata", T_MAP, metadata, false}, {"spec", T_MAP, vmi_spec_fields, true}, END};

/* instancetype (VirtualMachineInstancetypeSpec) */
static const struct field it_cpu[] = {
    {"guest", T_U32, NULL, true},
    {"model", T_STR, NULL, false},
    {"dedicatedCPUPlacement", T_BOOL, NULL, false},
    {"isolateEmulatorThread", T_BOOL, NULL, false},
    {"maxSockets", T_U32, NULL, false},
    {"numa", T_MAP, NULL, false},
    {"realtime", T_MAP, NULL, false},
    END,
};
static const struct field it_memory[] = {
    {"guest", T_QTY, NULL, true},
    {"hugepages", T_MAP, hugepages, false},
    {"maxGuest", T_QTY, NULL, false},
    {"overcommitPercent", T_I32, NULL, false},
    END,
};
static const struct field it_spec[] = {
    {"cpu", T_MAP, it_cpu, true},
    {"memory", T_MAP, it_memory, true},
    {"nodeSelector", T_STRMAP, NULL, false},
    {"schedulerName", T_STR, NULL, false},
    {"gpus", T_SEQ, gpu, false},
    {"hostDevices", T_SEQ, gpu, false},
    {"ioThreadsPolicy", T_STR, NULL, false},
    {"ioThreads", T_MAP, io_threads, false},
    {"launchSecurity", T_MAP, NULL, false},
    {"annotations", T_STRMAP, NULL, false},
    END,
};
static const struct field it_root[] = {
    {"metadata", T_MAP, metadata, false}, {"spec", T_MAP, it_spec, true}, END};

/* preference (VirtualMachinePreferenceSpec) */
static const struct field spread[] = {
    {"across", T_STR, NULL, false}, {"ratio", T_U32, NULL, false}, END};
static const struct field pref_cpu[] = {
    {"preferredCPUTopology", T_STR, NULL, false},
    {"spreadOptions", T_MAP, spread, false},
    {"preferredCPUFeatures", T_SEQ, cpu_feature, false},
    END,
};
static const struct field pref_devices[] = {
    {"preferredAutoattachGraphicsDevice", T_BOOL, NULL, false},
    {"preferredAutoattachMemBalloon", T_BOOL, NULL, false},
    {"preferredAutoattachPodInterface", T_BOOL, NULL, false},
    {"preferredAutoattachSerialConsole", T_BOOL, NULL, false},
    {"preferredAutoattachInputDevice", T_BOOL, NULL, false},
    {"preferredDisableHotplug", T_BOOL, NULL, false},
    {"preferredUseVirtioTransitional", T_BOOL, NULL, false},
    {"preferredBlockMultiQueue", T_BOOL, NULL, false},
    {"preferredNetworkInterfaceMultiQueue", T_BOOL, NULL, false},
    {"preferredDiskDedicatedIoThread", T_BOOL, NULL, false},
    {"preferredDiskBus", T_STR, NULL, false},
    {"preferredCdromBus", T_STR, NULL, false},
    {"preferredLunBus", T_STR, NULL, false},
    {"preferredDiskCache", T_STR, NULL, false},
    {"preferredDiskIO", T_STR, NULL, false},
    {"preferredInterfaceModel", T_STR, NULL, false},
    {"preferredInputBus", T_STR, NULL, false},
    {"preferredInputType", T_STR, NULL, false},
    {"preferredSoundModel", T_STR, NULL, false},
    {"preferredVideoType", T_STR, NULL, false},
    {"preferredPanicDeviceModel", T_STR, NULL, false},
    {"preferredRng", T_MAP, NULL, false},
    {"preferredTPM", T_MAP, NULL, false},
    {"preferredInterfaceMasquerade", T_MAP, NULL, false},
    {"preferredDiskBlockSize", T_MAP, block_size, false},
    END,
};
static const struct field pref_features[] = {
    {"preferredAcpi", T_MAP, feature_state, false},
    {"preferredApic", T_MAP, NULL, false},
    {"preferredSmm", T_MAP, feature_state, false},
    {"preferredPvspinlock", T_MAP, feature_state, false},
    {"preferredKvm", T_MAP, NULL, false},
    {"preferredHyperv", T_MAP, NULL, false},
    END,
};
static const struct field pref_firmware[] = {
    {"preferredUseBios", T_BOOL, NULL, false}, {"preferredUseBiosSerial", T_BOOL, NULL, false},
    {"preferredUseEfi", T_BOOL, NULL, false},  {"preferredUseSecureBoot", T_BOOL, NULL, false},
    {"preferredEfi", T_MAP, efi, false},       END,
};
static const struct field req_cpu[] = {{"guest", T_U32, NULL, false}, END};
static const struct field req_mem[] = {{"guest", T_QTY, NULL, false}, END};
static const struct field requirements[] = {
    {"cpu", T_MAP, req_cpu, false},
    {"memory", T_MAP, req_mem, false},
    {"architecture", T_STR, NULL, false},
    END,
};
static const struct field pref_machine[] = {{"preferredMachineType", T_STR, NULL, false}, END};
static const struct field pref_volumes[] = {{"preferredStorageClassName", T_STR, NULL, false}, END};
static const struct field pref_clock[] = {
    {"preferredClockOffset", T_MAP, NULL, false}, {"preferredTimer", T_MAP, NULL, false}, END};
static const struct field pref_spec[] = {
    {"cpu", T_MAP, pref_cpu, false},
    {"preferSpreadSocketToCoreRatio", T_U32, NULL, false},
    {"devices", T_MAP, pref_devices, false},
    {"features", T_MAP, pref_features, false},
    {"firmware", T_MAP, pref_firmware, false},
    {"machine", T_MAP, pref_machine, false},
    {"clock", T_MAP, pref_clock, false},
    {"volumes", T_MAP, pref_volumes, false},
    {"requirements", T_MAP, requirements, false},
    {"preferredSubdomain", T_STR, NULL, false},
    {"preferredTerminationGracePeriodSeconds", T_I64, NULL, false},
    {"preferredArchitecture", T_STR, NULL, false},
    {"annotations", T_STRMAP, NULL, false},
    {"preferredLaunchSecurity", T_MAP, NULL, false},
    END,
};
static const struct field pref_root[] = {
    {"metadata", T_MAP, metadata, false}, {"spec", T_MAP, pref_spec, true}, END};

struct walk {
	struct resolver *r;
	const char *what; /* e.g. VirtualMachineClusterInstancetype "x" */
	int errors;
};

static const char *type_text(const struct node *n)
{
	switch (n->type) {
	case N_MAP:
		return "an object";
	case N_SEQ:
		return "a list";
	case N_BOOL:
		return "a boolean";
	case N_INT:
		return "an integer";
	case N_FLOAT:
		return "a number";
	case N_STR:
		return "a string";
	default:
		return "null";
	}
}

static void bad(struct walk *w, const struct node *n, const char *path, const char *want)
{
	const char *t = node_text(n);

	if (t)
		diag_err(w->r->d, n, path, "%s%sinvalid value \"%s\" (%s): must be %s",
			 w->what ? w->what : "", w->what ? ": " : "", t, type_text(n), want);
	else
		diag_err(w->r->d, n, path, "%s%sinvalid value (%s): must be %s",
			 w->what ? w->what : "", w->what ? ": " : "", type_text(n), want);
	w->errors++;
}

static void check_map(struct walk *w, const struct node *m, const struct field *f, char *path,
		      size_t plen, size_t cap);

static void check_value(struct walk *w, const struct node *v, const struct field *f, char *path,
			size_t plen, size_t cap)
{
	long long x;
	struct quantity q;
	unsigned int i;
	size_t l;

	if (node_is_null(v))
		return;
	switch (f->t) {
	case T_ANY:
		return;
	case T_MAP:
		if (v->type != N_MAP)
			return bad(w, v, path, "an object");
		if (f->sub)
			check_map(w, v, f->sub, path, plen, cap);
		return;
	case T_SEQ:
		if (v->type != N_SEQ)
			return bad(w, v, path, "a list");
		for (i = 0; i < v->n; i++) {
			l = plen + (size_t)snprintf(path + plen, cap - plen, "[%u]", i);
			if (l >= cap)
				l = cap - 1;
			if (!node_is_map(v->items[i]) && f->sub)
				bad(w, v->items[i], path, "an object");
			else if (f->sub)
				check_map(w, v->items[i], f->sub, path, l, cap);
			path[plen] = 0;
		}
		return;
	case T_STR:
		if (v->type != N_STR)
			bad(w, v, path, "a string");
		return;
	case T_BOOL:
		if (v->type != N_BOOL)
			bad(w, v, path, "a boolean");
		return;
	case T_U32:
		if (node_ival(v, 0, 4294967295LL, &x))
			bad(w, v, path, "an integer between 0 and 4294967295");
		return;
	case T_I32:
		if (node_ival(v, -2147483648LL, 2147483647LL, &x))
			bad(w, v, path, "a 32-bit integer");
		return;
	case T_I64:
		if (node_ival(v, INT64_MIN, INT64_MAX, &x))
			bad(w, v, path, "a 64-bit integer");
		return;
	case T_QTY:
		if (!qty_of(v, &q))
			bad(w, v, path, "a quantity such as 4Gi, 512Mi or 2");
		else if (q.nanos < 0)
			bad(w, v, path, "a non-negative quantity");
		return;
	case T_STRMAP:
	case T_QTYMAP:
		if (v->type != N_MAP)
			return bad(w, v, path, "an object");
		for (i = 0; i < v->n; i++) {
			struct field sub = {v->kv[i].key, f->t == T_STRMAP ? T_STR : T_QTY, NULL,
					    false};

			snprintf(path + plen, cap - plen, ".%s", v->kv[i].key);
			check_value(w, v->kv[i].val, &sub, path, strlen(path), cap);
			path[plen] = 0;
		}
		return;
	}
}

static void check_map(struct walk *w, const struct node *m, const struct field *f, char *path,
		      size_t plen, size_t cap)
{
	const struct node *v;

	for (; f->key; f++) {
		v = node_get(m, f->key);
		if (node_is_null(v) && !f->required)
			continue;
		snprintf(path + plen, cap - plen, "%s%s", plen ? "." : "", f->key);
		if (node_is_null(v)) {
			diag_err(w->r->d, m, path, "%s%sRequired value", w->what ? w->what : "",
				 w->what ? ": " : "");
			w->errors++;
		} else {
			check_value(w, v, f, path, strlen(path), cap);
		}
		path[plen] = 0;
	}
}

static int walk_root(struct resolver *r, const struct node *obj, const struct field *root,
		     const char *what)
{
	struct walk w = {.r = r, .what = what};
	char path[512] = "";

	check_map(&w, obj, root, path, 0, sizeof(path));
	return w.errors ? -EINVAL : 0;
}

int schema_check_vm(struct resolver *r, const struct node *vm)
{
	return walk_root(r, vm, vm_root, NULL);
}

int schema_check_vmi(struct resolver *r, const struct node *obj)
{
	return walk_root(r, obj, vmi_root, NULL);
}

static const char *describe(struct resolver *r, const struct node *obj)
{
	return arena_printf(r->a, "%s \"%s\"", str_or_empty(node_get(obj, "kind")),
			    str_or_empty(node_path(obj, "metadata.name")));
}

int schema_check_instancetype(struct resolver *r, const struct node *obj)
{
	const char *what = describe(r, obj);
	const struct node *mem = node_path(obj, "spec.memory"), *oc;
	long long pct = 0;

	if (walk_root(r, obj, it_root, what))
		return -EINVAL;
	oc = node_get(mem, "overcommitPercent");
	if (oc && node_ival(oc, -2147483648LL, 2147483647LL, &pct) == 0) {
		if (pct < 0 || pct > 100) {
			diag_err(
			    r->d, oc, "spec.memory.overcommitPercent",
			    "%s: spec.memory.overcommitPercent must be in range between 0 and 100.",
			    what);
			return -EINVAL;
		}
		if (pct != 0 && !node_is_null(node_get(mem, "hugepages"))) {
			diag_err(
			    r->d, oc, "spec.memory.overcommitPercent",
			    "%s: spec.memory.overcommitPercent and spec.memory.hugepages should "
			    "not be requested together.",
			    what);
			return -EINVAL;
		}
	}
	if (!node_is_null(node_path(obj, "spec.launchSecurity")))
		diag_warn(r->d, node_path(obj, "spec.launchSecurity"), "spec.launchSecurity",
			  "%s: launchSecurity in an instancetype is deprecated", what);
	return 0;
}

int schema_check_preference(struct resolver *r, const struct node *obj)
{
	const char *what = describe(r, obj);
	const struct node *spec = node_get(obj, "spec");
	const struct node *topo = node_path(spec, "cpu.preferredCPUTopology");
	const struct node *across_n = node_path(spec, "cpu.spreadOptions.across");
	static const char *const known[] = {
	    "sockets",	   "cores",	    "threads",	    "spread",	 "any", "preferSockets",
	    "preferCores", "preferThreads", "preferSpread", "preferAny", NULL};
	const char *t = node_sval(topo), *across;
	unsigned int i;
	bool ok = false;

	if (walk_root(r, obj, pref_root, what))
		return -EINVAL;
	if (t && *t) {
		for (i = 0; known[i]; i++)
			ok |= strcmp(known[i], t) == 0;
		if (!ok) {
			diag_err(r->d, topo, "spec.cpu.preferredCPUTopology",
				 "%s: unknown preferredCPUTopology %s", what, t);
			return -EINVAL;
		}
		if (strncmp(t, "prefer", 6) == 0)
			diag_warn(r->d, topo, "spec.cpu.preferredCPUTopology",
				  "PreferredCPUTopology %s is deprecated for removal in a future "
				  "release, please use %s instead",
				  t, preference_cpu_topology(spec));
	}
	if (strcmp(preference_cpu_topology(spec), "spread") != 0)
		return 0;
	across = preference_spread_across(spec);
	if (strcmp(across, "SocketsCores") && strcmp(across, "CoresThreads") &&
	    strcmp(across, "SocketsCoresThreads")) {
		diag_err(r->d, across_n, "spec.cpu.spreadOptions.across",
			 "%s: across %s is not supported", what, across);
		return -EINVAL;
	}
	if (preference_spread_ratio(spec) == 0) {
		diag_err(r->d, node_path(spec, "cpu.spreadOptions.ratio"),
			 "spec.cpu.spreadOptions.ratio", "%s: a spread ratio of 0 is not supported",
			 what);
		return -EINVAL;
	}
	if (strcmp(across, "CoresThreads") == 0 && preference_spread_ratio(spec) != 2) {
		const struct node *rn = node_path(spec, "cpu.spreadOptions.ratio");

		diag_err(r->d, rn ? rn : node_get(spec, "preferSpreadSocketToCoreRatio"),
			 "spec.cpu.spreadOptions.ratio",
			 "%s: only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs "
			 "over cores and threads",
			 what);
		return -EINVAL;
	}
	return 0;
}
