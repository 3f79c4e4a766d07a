/* SPDX-License-Identifier: MIT */
/*
 * config.c - the resolved VirtualMachineInstance -> struct vm_config:
 * the plain guest configuration the VMM runs, with volumes mapped to host
 * paths (spec.h documents the mapping), and its JSON form (-o config).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spec/config.h"
#include "spec/fields.h"

#define PVC_DIR "/var/run/kubevirt-private/vmi-disks"

static char *xstrdup(const char *s)
{
	char *p;

	if (!s)
		return NULL;
	p = strdup(s);
	if (!p)
		spec_oom();
	return p;
}

static char *dup_str(const struct node *n)
{
	const char *s = node_sval(n);

	return s && *s ? xstrdup(s) : NULL;
}

static uint64_t bytes_of(const struct node *n)
{
	struct quantity q;
	int64_t v;

	if (!resolve_qty(n, &q))
		return 0;
	v = qty_value(&q);
	return v > 0 ? (uint64_t)v : 0;
}

/* A CPU quantity in millicores, rounded up ("500m" 500, "2" 2000). */
static uint64_t millis_of(const struct node *n)
{
	struct quantity q;

	if (!resolve_qty(n, &q) || q.nanos <= 0)
		return 0;
	return (uint64_t)((q.nanos + 999999) / 1000000);
}

static uint32_t u32(const struct node *n)
{
	long long v;

	return node_ival(n, 0, UINT32_MAX, &v) == 0 ? (uint32_t)v : 0;
}

static const struct node *find_named(const struct node *seq, const char *name)
{
	unsigned int i;

	for (i = 0; node_is_seq(seq) && i < seq->n; i++)
		if (strcmp(resolve_str(node_get(seq->items[i], "name")), name) == 0)
			return seq->items[i];
	return NULL;
}

static const char * override(const struct spec_options *o, const char *name)
{
	size_t l = strlen(name);
	unsigned int i;

	for (i = 0; i < o->n_volume_overrides; i++)
		if (strncmp(o->volume_overrides[i], name, l) == 0 &&
		    o->volume_overrides[i][l] == '=')
			return o->volume_overrides[i] + l + 1;
	return NULL;
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* decoded, NUL-terminated; NULL when s is not base64 */
static char *b64_decode(const char *s)
{
	size_t l = strlen(s), n = 0;
	char *out = malloc(l / 4 * 3 + 4);
	unsigned int acc = 0, bits = 0;
	int v;

	if (!out)
		spec_oom();
	for (; *s; s++) {
		if (*s == '=' || *s == '\n' || *s == '\r' || *s == ' ')
			continue;
		v = b64val((unsigned char)*s);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[n] = 0;
	return out;
}

static char *payload(const struct resolver *r, const struct node *ci, const char *key,
		     const char *key64)
{
	const struct node *b = node_get(ci, key64);
	char *s;

	if (*resolve_str(node_get(ci, key)))
		return xstrdup(node_sval(node_get(ci, key)));
	if (!*resolve_str(b))
		return NULL;
	s = b64_decode(node_sval(b));
	if (!s)
		diag_err(r->d, b, key64, "not valid base64");
	return s;
}

static enum vm_cache_mode cache_of(const char *c)
{
	if (strcmp(c, "none") == 0)
		return VM_CACHE_NONE;
	if (strcmp(c, "writethrough") == 0)
		return VM_CACHE_WRITETHROUGH;
	if (strcmp(c, "writeback") == 0)
		return VM_CACHE_WRITEBACK; /* anything else: refused at admission */
	return VM_CACHE_DEFAULT;
}

static const char *const error_policies[] = {"stop", "report", "ignore", "enospace"};

/* errorPolicy: KubeVirt's values (unset = stop); anything else is an error. */
static int error_policy_of(const struct resolver *r, const struct node *d, unsigned int idx,
			   enum vm_error_policy *out)
{
	const struct node *n = node_get(d, "errorPolicy");
	const char *v = resolve_str(n);

	*out = VM_ERROR_STOP;
	if (!*v)
		return 0;
	for (unsigned int i = 0; i < sizeof(error_policies) / sizeof(error_policies[0]); i++)
		if (!strcmp(v, error_policies[i])) {
			*out = (enum vm_error_policy)i;
			return 0;
		}
	diag_err(r->d, n,
		 arena_printf(r->a, "%sdomain.devices.disks[%u].errorPolicy",
			      r->vmi_only ? "spec." : "spec.template.spec.", idx),
		 "errorPolicy \"%s\" is not supported (allowed values: stop, report, ignore, "
		 "enospace)",
		 v);
	return -EINVAL;
}

/* A disk's bus. KubeVirt's VMI mutating webhook gives a disk without one
 * the architecture's default (pkg/defaults/amd64.go: SATA on amd64, the
 * default architecture; virtio on arm64 and s390x), which resolution leaves
 * unset (docs/resolution.md); its validating webhook then refuses a
 * read-only SATA disk, as spec/admit_disks.c does one that names the bus. */
static int disk_bus(const struct resolver *r, const struct node *t, unsigned int idx, char **out)
{
	const char *arch = resolve_str(node_path(r->vmi, "spec.architecture"));

	if (*resolve_str(node_get(t, "bus"))) {
		*out = dup_str(node_get(t, "bus"));
		return 0;
	}
	if (!strcmp(arch, "arm64") || !strcmp(arch, "s390x")) {
		*out = xstrdup("virtio");
		return 0;
	}
	*out = xstrdup("sata");
	if (!node_bval(node_get(t, "readonly"), false))
		return 0;
	diag_err(r->d, t,
		 arena_printf(r->a, "%sdomain.devices.disks[%u].disk.bus",
			      r->vmi_only ? "spec." : "spec.template.spec.", idx),
		 "sata hard-disks do not support read-only. (a disk without a bus is SATA on "
		 "amd64, as in KubeVirt: set bus: virtio for a read-only disk)");
	return -EINVAL;
}

static int map_disk(const struct resolver *r, const struct spec_options *o, const char *root,
		    const struct node *d, unsigned int idx, const struct node *vols,
		    struct vm_disk *out)
{
	const char *name = resolve_str(node_get(d, "name")), *ov;
	const struct node *v = find_named(vols, name), *t, *ci;

	out->name = xstrdup(name);
	if ((t = node_get(d, "cdrom")) && node_is_map(t)) {
		out->device = VM_DEV_CDROM;
		out->read_only = node_bval(node_get(t, "readonly"), true);
		out->tray_open = strcmp(resolve_str(node_get(t, "tray")), "open") == 0;
	} else if ((t = node_get(d, "lun")) && node_is_map(t)) {
		out->device = VM_DEV_LUN;
		out->read_only = node_bval(node_get(t, "readonly"), false);
	} else {
		t = node_get(d, "disk");
		out->device = VM_DEV_DISK;
		out->read_only = node_bval(node_get(t, "readonly"), false);
	}
	/* a CD-ROM without a bus is on SATA, as KubeVirt's amd64 default
	 * (pkg/defaults/amd64.go), a disk as disk_bus() says; a LUN is refused
	 * by the field table (docs/fields.md) before this runs, the VMM
	 * refuses it too */
	if (out->device == VM_DEV_CDROM) {
		if (!(out->bus = dup_str(node_get(t, "bus"))))
			out->bus = xstrdup("sata");
	} else if (out->device == VM_DEV_LUN) {
		out->bus = xstrdup("virtio");
	} else if (disk_bus(r, t, idx, &out->bus)) {
		return -EINVAL;
	}
	out->serial = dup_str(node_get(d, "serial"));
	out->shareable = node_bval(node_get(d, "shareable"), false);
	if (error_policy_of(r, d, idx, &out->error_policy))
		return -EINVAL;
	out->cache = cache_of(resolve_str(node_get(d, "cache")));
	out->io = dup_str(node_get(d, "io"));
	out->boot_order = u32(node_get(d, "bootOrder"));
	out->logical_block_size = u32(node_path(d, "blockSize.custom.logical"));
	out->physical_block_size = u32(node_path(d, "blockSize.custom.physical"));
	out->dedicated_io_thread = node_bval(node_get(d, "dedicatedIOThread"), false);
	ov = override(o, name);
	out->operator_path = ov != NULL;
	if (!v) {
		/* a CD-ROM without a volume is an empty drive (KubeVirt admits
		 * it with the DeclarativeHotplugVolumes gate) */
		out->source = out->device == VM_DEV_CDROM && !ov ? VM_DISK_NONE : VM_DISK_OTHER;
		out->path = ov ? xstrdup(ov) : NULL;
		return 0;
	}
	if ((t = node_get(v, "containerDisk"))) {
		out->source = VM_DISK_CONTAINERDISK;
		out->image = dup_str(node_get(t, "image"));
		out->image_path = dup_str(node_get(t, "path"));
		if (ov)
			out->path = xstrdup(ov);
		else if (!o->image_store &&
			 !(out->path = config_container_disk(r, root, vols, name, t)))
			return -EINVAL;
		else if (!o->image_store)
			out->root = xstrdup(root); /* opened beneath it (vmm/util/file.h) */
	} else if ((t = node_get(v, "hostDisk"))) {
		out->source = VM_DISK_HOSTDISK;
		out->path = xstrdup(ov ? ov : node_sval(node_get(t, "path")));
		out->capacity = bytes_of(node_get(t, "capacity"));
		if (config_host_disk(r, vols, v, out))
			return -EINVAL;
	} else if (node_get(v, "persistentVolumeClaim") || node_get(v, "dataVolume")) {
		out->source = node_get(v, "dataVolume") ? VM_DISK_DATAVOLUME : VM_DISK_PVC;
		/* KubeVirt mounts a readOnly claim read-only in the pod: the
		 * guest cannot write it whatever the disk says */
		if (node_bval(node_path(v, "persistentVolumeClaim.readOnly"), false))
			out->read_only = true;
		if (ov)
			out->path = xstrdup(ov);
		else if (asprintf(&out->path, PVC_DIR "/%s/disk.img", name) < 0)
			spec_oom();
		else
			out->root = xstrdup(PVC_DIR);
	} else if ((t = node_get(v, "emptyDisk"))) {
		out->source = VM_DISK_EMPTYDISK;
		out->capacity = bytes_of(node_get(t, "capacity"));
		out->path = ov ? xstrdup(ov) : NULL;
	} else if ((ci = node_get(v, "cloudInitNoCloud")) ||
		   (ci = node_get(v, "cloudInitConfigDrive"))) {
		out->source = node_get(v, "cloudInitNoCloud") ? VM_DISK_CLOUDINIT_NOCLOUD
							      : VM_DISK_CLOUDINIT_CONFIGDRIVE;
		out->path = ov ? xstrdup(ov) : NULL;
		out->user_data = payload(r, ci, "userData", "userDataBase64");
		out->network_data = payload(r, ci, "networkData", "networkDataBase64");
		/* secretRef, networkDataSecretRef: warned by their rows of
		 * docs/fields.md (spec/fields.c), once */
		/* meta-data: config_cloud_init_meta(), once the firmware UUID is known */
	} else {
		out->source = VM_DISK_OTHER;
		out->path = ov ? xstrdup(ov) : NULL;
	}
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int v[6], i;
	char sep[5], end;

	if (sscanf(s, "%2x%c%2x%c%2x%c%2x%c%2x%c%2x%c", &v[0], &sep[0], &v[1], &sep[1], &v[2],
		   &sep[2], &v[3], &sep[3], &v[4], &sep[4], &v[5], &end) != 11 ||
	    strlen(s) != 17)
		return -EINVAL;
	for (i = 0; i < 5; i++)
		if (sep[i] != ':' && sep[i] != '-')
			return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

static int map_nic(const struct resolver *r, const struct node *ifc, const struct node *nets,
		   struct vm_nic *out)
{
	static const struct {
		const char *key;
		enum vm_binding b;
	} binds[] = {{"bridge", VM_BIND_BRIDGE},  {"masquerade", VM_BIND_MASQUERADE},
		     {"passt", VM_BIND_PASST},	  {"passtBinding", VM_BIND_PASST},
		     {"sriov", VM_BIND_SRIOV},	  {"slirp", VM_BIND_SLIRP},
		     {"macvtap", VM_BIND_MACVTAP}};
	const char *name = resolve_str(node_get(ifc, "name"));
	const struct node *net = find_named(nets, name), *ports = node_get(ifc, "ports");
	const char *mac = node_sval(node_get(ifc, "macAddress"));
	unsigned int i;
	long long p;

	out->name = xstrdup(name);
	out->model = dup_str(node_get(ifc, "model"));
	for (i = 0; i < sizeof(binds) / sizeof(binds[0]); i++)
		if (!node_is_null(node_get(ifc, binds[i].key)))
			out->binding = binds[i].b;
	if (!node_is_null(node_get(ifc, "binding"))) {
		out->binding = VM_BIND_PLUGIN;
		out->binding_plugin = dup_str(node_path(ifc, "binding.name"));
	}
	if (mac && *mac) {
		if (parse_mac(mac, out->mac)) {
			diag_err(r->d, node_get(ifc, "macAddress"), "macAddress",
				 "interface %s: invalid MAC address \"%s\"", name, mac);
			return -EINVAL;
		}
		out->mac_set = true;
	}
	if (net && !node_is_null(node_get(net, "pod")))
		out->network_type = xstrdup("pod");
	else if (net && !node_is_null(node_get(net, "multus"))) {
		out->network_type = xstrdup("multus");
		out->network_name = dup_str(node_path(net, "multus.networkName"));
	}
	if (node_is_seq(ports) && ports->n) {
		out->ports = calloc(ports->n, sizeof(*out->ports));
		if (!out->ports)
			spec_oom();
		for (i = 0; i < ports->n; i++) {
			out->ports[i].name = dup_str(node_get(ports->items[i], "name"));
			out->ports[i].protocol = dup_str(node_get(ports->items[i], "protocol"));
			if (!out->ports[i].protocol)
				out->ports[i].protocol = xstrdup("TCP");
			if (node_ival(node_get(ports->items[i], "port"), 1, 65535, &p) == 0)
				out->ports[i].port = (uint16_t)p;
			out->n_ports++;
		}
	}
	return 0;
}

static void map_firmware(const struct node *dom, const char *root, struct vm_config *cfg)
{
	const struct node *fw = node_get(dom, "firmware"), *kb = node_get(fw, "kernelBoot");
	const struct node *efi = node_path(fw, "bootloader.efi");
	const char *k = node_sval(node_path(kb, "container.kernelPath"));
	const char *i = node_sval(node_path(kb, "container.initrdPath"));

	if (k && *k) {
		cfg->boot = VM_BOOT_KERNEL;
		cfg->kernel_path = config_join(root, k);
		cfg->kernel_root = xstrdup(root);
		cfg->initrd_path = i && *i ? config_join(root, i) : NULL;
		cfg->initrd_root = cfg->initrd_path ? xstrdup(root) : NULL;
		cfg->cmdline = dup_str(node_get(kb, "kernelArgs"));
	} else if (node_is_map(efi)) {
		cfg->boot = VM_BOOT_EFI;
	} else {
		/* bootloader.bios, or no bootloader: KubeVirt's default is BIOS */
		cfg->boot = VM_BOOT_BIOS;
		cfg->bios_default = !node_is_map(node_path(fw, "bootloader.bios"));
		cfg->bios_use_serial = node_bval(node_path(fw, "bootloader.bios.useSerial"), false);
	}
	if (node_is_map(efi)) {
		cfg->efi_secure_boot = node_bval(node_get(efi, "secureBoot"), true);
		cfg->efi_persistent = node_bval(node_get(efi, "persistent"), false);
	}
	cfg->firmware_uuid = dup_str(node_get(fw, "uuid"));
	cfg->firmware_serial = dup_str(node_get(fw, "serial"));
}

/* clock.utc.offsetSeconds / clock.timezone (the VMM checks the zone) */
static void map_clock(const struct resolver *r, const struct node *clock, struct vm_config *cfg)
{
	const struct node *off = node_path(clock, "utc.offsetSeconds");
	long long v;

	/* KubeVirt's converter (converter/compute/clock.go) takes utc when
	 * it is there, even as {}, and the timezone only without it */
	if (node_is_null(node_get(clock, "utc")))
		cfg->rtc_timezone = dup_str(node_get(clock, "timezone"));
	if (!off)
		return;
	/* a year either way is more than any time zone: the RTC's century
	 * arithmetic stays sane */
	if (node_ival(off, -366LL * 86400, 366LL * 86400, &v))
		diag_err(r->d, off,
			 arena_printf(r->a, "%sdomain.clock.utc.offsetSeconds",
				      r->vmi_only ? "spec." : "spec.template.spec."),
			 "an offset of at most a year either way, in seconds");
	else
		cfg->rtc_offset_seconds = v;
}

static int check_overrides(const struct resolver *r, const struct spec_options *o,
			   const struct node *vols)
{
	unsigned int i;
	const char *eq;
	char *name;
	int ret = 0;

	for (i = 0; i < o->n_volume_overrides; i++) {
		eq = strchr(o->volume_overrides[i], '=');
		if (!eq || eq == o->volume_overrides[i] || !eq[1]) {
			diag_err_loc(r->d, NULL, 0, 0, NULL, "--volume wants NAME=PATH, got '%s'",
				     o->volume_overrides[i]);
			ret = -EINVAL;
			continue;
		}
		name = strndup(o->volume_overrides[i], (size_t)(eq - o->volume_overrides[i]));
		if (!name)
			spec_oom();
		if (!find_named(vols, name)) {
			diag_err_loc(r->d, NULL, 0, 0, NULL, "--volume %s: the VM has no volume %s",
				     o->volume_overrides[i], name);
			ret = -EINVAL;
		}
		free(name);
	}
	return ret;
}

static const char *run_strategy(const struct resolver *r)
{
	const struct node *spec = node_get(r->vm, "spec");
	const struct node *running = node_get(spec, "running");

	if (*resolve_str(node_get(spec, "runStrategy")))
		return node_sval(node_get(spec, "runStrategy"));
	if (running && running->type == N_BOOL)
		return node_bval(running, false) ? "Always" : "Halted";
	return NULL;
}

/* Two containerDisk volumes on one host file would share one image's
 * writes and locks (KubeVirt gives each its own copy): an error. */
static int shared_container_disk(const struct resolver *r, const struct vm_config *cfg,
				 const struct node *disks)
{
	for (unsigned int i = 0; i < cfg->n_disks; i++)
		for (unsigned int j = 0; j < i; j++) {
			const struct vm_disk *a = &cfg->disks[j], *b = &cfg->disks[i];

			if (a->source != VM_DISK_CONTAINERDISK ||
			    b->source != VM_DISK_CONTAINERDISK || !a->path || !b->path ||
			    strcmp(a->path, b->path))
				continue;
			diag_err(r->d, disks->items[i], NULL,
				 "containerDisk volumes %s and %s both map to %s: give each its "
				 "own image (ROOT/NAME/, containerDisk.path or --volume)",
				 a->name, b->name, a->path);
			return -EINVAL;
		}
	return 0;
}

/*
 * The memory balloon as virt-launcher gives it (pkg/virt-launcher/virtwrap:
 * manager.go isFreePageReportingEnabled, converter/compute/balloon.go):
 * attached unless autoattachMemBalloon is false; free page reporting
 * unless the VMI is "high performance" (IsHighPerformanceVMI: dedicated
 * CPUs, realtime, hugepages) or carries the opt-out annotation. (The
 * cluster-wide virtualMachineOptions.disableFreePageReporting is not in a
 * VM's manifests.)
 */
static void map_balloon(const struct resolver *r, const struct node *dom, const struct node *devs,
			struct vm_config *cfg)
{
	const struct node *an = node_path(r->vmi, "metadata.annotations");
	const struct node *cpu = node_get(dom, "cpu");

	cfg->mem_balloon = node_bval(node_get(devs, "autoattachMemBalloon"), true);
	cfg->free_page_reporting =
	    cfg->mem_balloon && !node_bval(node_get(cpu, "dedicatedCpuPlacement"), false) &&
	    node_is_null(node_get(cpu, "realtime")) &&
	    node_is_null(node_path(dom, "memory.hugepages")) &&
	    strcmp(resolve_str(node_get(an, "kubevirt.io/free-page-reporting-disabled")), "true");
}

/*
 * KubeVirt's virt-controller allocates each VMI with autoattachVSOCK a CID
 * >= 3 unique on its node (status.VSOCKCID). vmlet's vsock needs no
 * node-wide uniqueness (each VM's device has its own Unix socket, no
 * kernel vsock), so the CID is a pure function of the VM's identity:
 * 3 + FNV-1a("namespace/name") mod (2^31 - 3), stable across runs and
 * restarts, in the range every guest's 32-bit CID field takes.
 */
uint64_t spec_vsock_cid(const char *ns, const char *name)
{
	uint32_t h = 2166136261u;
	const char *parts[3] = {ns ? ns : "", "/", name ? name : ""};

	for (unsigned int i = 0; i < 3; i++)
		for (const char *s = parts[i]; *s; s++)
			h = (h ^ (uint8_t)*s) * 16777619u;
	return 3 + (uint64_t)h % (0x7fffffffu - 3);
}

/*
 * vmlet runs at most a few dozen disks and NICs (its PCI bus has 32 slots,
 * its AHCI controller 6 ports), so a list longer than CONFIG_MAX_ITEMS
 * can never run; refusing it here, before any per-item work, also bounds
 * what the lookups by name below cost on an untrusted manifest (resolve -o
 * json, KubeVirt's VMI, has no such bound: its steps are linear).
 */
#define CONFIG_MAX_ITEMS 256

static int check_list_sizes(const struct resolver *r, const struct node *spec)
{
	static const char *const lists[] = {"volumes", "networks", "domain.devices.disks",
					    "domain.devices.interfaces",
					    "domain.devices.filesystems"};
	const char *pfx = r->vmi_only ? "spec." : "spec.template.spec.";
	const struct node *seq;
	int ret = 0;

	for (unsigned int i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		seq = node_path(spec, lists[i]);
		if (!node_is_seq(seq) || seq->n <= CONFIG_MAX_ITEMS)
			continue;
		diag_err(r->d, seq, arena_printf(r->a, "%s%s", pfx, lists[i]),
			 "%u items: vmlet runs at most %u (its PCI bus has 32 slots)", seq->n,
			 CONFIG_MAX_ITEMS);
		ret = -EINVAL;
	}
	return ret;
}

int config_from_resolution(const struct resolver *r, const struct spec_options *o,
			   struct vm_config *cfg)
{
	const struct node *spec = node_get(r->vmi, "spec"), *dom = node_get(spec, "domain");
	const struct node *cpu = node_get(dom, "cpu"), *devs = node_get(dom, "devices");
	const struct node *vols = node_get(spec, "volumes"), *seq;
	const char *root = o && o->disk_root ? o->disk_root : SPEC_DEFAULT_DISK_ROOT;
	struct spec_options none = {0};
	unsigned int i;
	long long g;
	int ret;

	if (!o)
		o = &none;
	if (check_list_sizes(r, spec))
		return -EINVAL;
	ret = check_overrides(r, o, vols);
	if (!ret)
		ret = fields_check(r);
	if (ret)
		return ret;
	cfg->name = xstrdup(r->name);
	cfg->namespace = xstrdup(r->ns);
	cfg->uid = dup_str(node_path(r->src->root, "metadata.uid"));
	cfg->hostname = dup_str(node_get(spec, "hostname"));
	if (!cfg->hostname)
		cfg->hostname = xstrdup(r->name);
	cfg->run_strategy = r->vm ? xstrdup(run_strategy(r)) : NULL;
	cfg->sockets = r->topology[0], cfg->cores = r->topology[1], cfg->threads = r->topology[2];
	cfg->max_sockets = u32(node_get(cpu, "maxSockets"));
	cfg->cpu_model = dup_str(node_get(cpu, "model"));
	cfg->dedicated_cpu_placement = node_bval(node_get(cpu, "dedicatedCpuPlacement"), false);
	cfg->isolate_emulator_thread = cfg->dedicated_cpu_placement &&
				       node_bval(node_get(cpu, "isolateEmulatorThread"), false);
	cfg->cpu_limit_millis = millis_of(node_path(dom, "resources.limits.cpu"));
	if (resolve_effective_memory(spec))
		cfg->memory_bytes = bytes_of(resolve_effective_memory(spec));
	cfg->hugepage_size = bytes_of(node_path(dom, "memory.hugepages.pageSize"));
	cfg->max_guest_bytes = bytes_of(node_path(dom, "memory.maxGuest"));
	map_firmware(dom, root, cfg);
	if (!cfg->firmware_uuid && config_firmware_uuid(cfg))
		return -EIO;
	cfg->acpi = node_bval(node_path(dom, "features.acpi.enabled"), true);
	cfg->smm = node_is_map(node_path(dom, "features.smm")) &&
		   node_bval(node_path(dom, "features.smm.enabled"), true);
	cfg->machine_type = dup_str(node_path(dom, "machine.type"));
	cfg->architecture = dup_str(node_get(spec, "architecture"));
	seq = node_get(devs, "disks");
	if (node_is_seq(seq) && seq->n) {
		cfg->disks = calloc(seq->n, sizeof(*cfg->disks));
		if (!cfg->disks)
			spec_oom();
		for (i = 0; i < seq->n; i++) {
			cfg->n_disks++; /* released with cfg even if map_disk fails */
			if (map_disk(r, o, root, seq->items[i], i, vols, &cfg->disks[i]))
				return -EINVAL;
		}
		if (shared_container_disk(r, cfg, seq))
			return -EINVAL;
		config_cloud_init_meta(r, cfg);
	}
	seq = node_get(devs, "interfaces");
	if (node_is_seq(seq) && seq->n) {
		cfg->nics = calloc(seq->n, sizeof(*cfg->nics));
		if (!cfg->nics)
			spec_oom();
		for (i = 0; i < seq->n; i++) {
			cfg->n_nics++;
			if (map_nic(r, seq->items[i], node_get(spec, "networks"), &cfg->nics[i]))
				return -EINVAL;
		}
	}
	cfg->rng = !node_is_null(node_get(devs, "rng"));
	/* tpm: {} is a TPM; enabled: false none (KubeVirt's TPMDevice) */
	cfg->tpm =
	    node_is_map(node_get(devs, "tpm")) && node_bval(node_path(devs, "tpm.enabled"), true);
	cfg->tpm_persistent = cfg->tpm && node_bval(node_path(devs, "tpm.persistent"), false);
	map_balloon(r, dom, devs, cfg);
	/* KubeVirt's converter (compute/channels.go) gives every VMI the
	 * guest-agent channel, whatever its devices say */
	strcpy(cfg->channels[cfg->n_channels++], VM_CHANNEL_GUEST_AGENT);
	if (config_access(r, spec, cfg))
		return -EINVAL;
	cfg->autoattach_serial_console = node_bval(node_get(devs, "autoattachSerialConsole"), true);
	if (node_bval(node_get(devs, "autoattachVSOCK"), false))
		cfg->vsock_cid = spec_vsock_cid(cfg->namespace, cfg->name);
	cfg->block_multi_queue = node_bval(node_get(devs, "blockMultiQueue"), false);
	cfg->net_multi_queue = node_bval(node_get(devs, "networkInterfaceMultiqueue"), false);
	if (node_ival(node_get(spec, "terminationGracePeriodSeconds"), INT64_MIN, INT64_MAX, &g) ==
	    0)
		cfg->termination_grace_seconds = g;
	cfg->start_paused = !strcmp(resolve_str(node_get(spec, "startStrategy")), "Paused");
	map_clock(r, node_get(dom, "clock"), cfg);
	config_hyperv(r, dom, cfg);
	return r->d->n_err ? -EINVAL : 0;
}

/* ---- library entry point -------------------------------------------- */

static void report_each(const struct session *s, const struct spec_options *o)
{
	const struct diag *ds[] = {&s->cl.d, &s->d};
	const struct diag_msg *m;
	struct spec_message sm;
	unsigned int i;

	for (i = 0; i < 2; i++)
		for (m = ds[i]->head; m; m = m->next) {
			sm = (struct spec_message){m->file, m->line, m->col,
						   m->path, m->msg,  m->warning};
			o->report(o->report_ctx, &sm);
		}
}

int spec_resolve_config(const struct spec_options *o, struct vm_config *cfg)
{
	struct session s;
	int ret;

	vm_config_init(cfg);
	session_init(&s);
	ret = session_load(&s, o->files, o->n_files, o->manifest);
	if (!ret)
		ret = session_resolve(&s, o->vm_name);
	if (!ret)
		ret = config_from_resolution(&s.r, o, cfg);
	if (o->report)
		report_each(&s, o);
	else
		session_report(&s, stderr);
	session_free(&s);
	if (ret)
		vm_config_release(cfg);
	return ret;
}
