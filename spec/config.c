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

char *config_strdup(const char *s)
{
	char *p;

	if (!s)
		return NULL;
	p = strdup(s);
	if (!p)
		spec_oom();
	return p;
}

char *config_dup_str(const struct node *n)
{
	const char *s = node_sval(n);

	return s && *s ? config_strdup(s) : NULL;
}

uint64_t config_bytes(const struct node *n)
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

uint32_t config_u32(const struct node *n)
{
	long long v;

	return node_ival(n, 0, UINT32_MAX, &v) == 0 ? (uint32_t)v : 0;
}

const struct node *config_find_named(const struct node *seq, const char *name)
{
	unsigned int i;

	for (i = 0; node_is_seq(seq) && i < seq->n; i++)
		if (strcmp(resolve_str(node_get(seq->items[i], "name")), name) == 0)
			return seq->items[i];
	return NULL;
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
	const struct node *net = config_find_named(nets, name), *ports = node_get(ifc, "ports");
	const char *mac = node_sval(node_get(ifc, "macAddress"));
	unsigned int i;
	long long p;

	out->name = config_strdup(name);
	out->model = config_dup_str(node_get(ifc, "model"));
	for (i = 0; i < sizeof(binds) / sizeof(binds[0]); i++)
		if (!node_is_null(node_get(ifc, binds[i].key)))
			out->binding = binds[i].b;
	if (!node_is_null(node_get(ifc, "binding"))) {
		out->binding = VM_BIND_PLUGIN;
		out->binding_plugin = config_dup_str(node_path(ifc, "binding.name"));
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
		out->network_type = config_strdup("pod");
	else if (net && !node_is_null(node_get(net, "multus"))) {
		out->network_type = config_strdup("multus");
		out->network_name = config_dup_str(node_path(net, "multus.networkName"));
	}
	if (node_is_seq(ports) && ports->n) {
		out->ports = calloc(ports->n, sizeof(*out->ports));
		if (!out->ports)
			spec_oom();
		for (i = 0; i < ports->n; i++) {
			out->ports[i].name = config_dup_str(node_get(ports->items[i], "name"));
			out->ports[i].protocol =
			    config_dup_str(node_get(ports->items[i], "protocol"));
			if (!out->ports[i].protocol)
				out->ports[i].protocol = config_strdup("TCP");
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
		cfg->kernel_root = config_strdup(root);
		cfg->initrd_path = i && *i ? config_join(root, i) : NULL;
		cfg->initrd_root = cfg->initrd_path ? config_strdup(root) : NULL;
		cfg->cmdline = config_dup_str(node_get(kb, "kernelArgs"));
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
	cfg->firmware_uuid = config_dup_str(node_get(fw, "uuid"));
	cfg->firmware_serial = config_dup_str(node_get(fw, "serial"));
}

/* clock.utc.offsetSeconds / clock.timezone (the VMM checks the zone) */
static void map_clock(const struct resolver *r, const struct node *clock, struct vm_config *cfg)
{
	const struct node *off = node_path(clock, "utc.offsetSeconds");
	long long v;

	/* KubeVirt's converter (converter/compute/clock.go) takes utc when
	 * it is there, even as {}, and the timezone only without it */
	if (node_is_null(node_get(clock, "utc")))
		cfg->rtc_timezone = config_dup_str(node_get(clock, "timezone"));
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

/* Who the VM is: name, namespace, uid, hostname, runStrategy. */
static void map_identity(const struct resolver *r, const struct node *spec, struct vm_config *cfg)
{
	cfg->name = config_strdup(r->name);
	cfg->namespace = config_strdup(r->ns);
	cfg->uid = config_dup_str(node_path(r->src->root, "metadata.uid"));
	cfg->hostname = config_dup_str(node_get(spec, "hostname"));
	if (!cfg->hostname)
		cfg->hostname = config_strdup(r->name);
	cfg->run_strategy = r->vm ? config_strdup(run_strategy(r)) : NULL;
}

/* The vCPUs (the resolved topology, model, placement, limit) and memory. */
static void map_cpu_memory(const struct resolver *r, const struct node *spec, struct vm_config *cfg)
{
	const struct node *dom = node_get(spec, "domain"), *cpu = node_get(dom, "cpu");

	cfg->sockets = r->topology[0], cfg->cores = r->topology[1], cfg->threads = r->topology[2];
	cfg->max_sockets = config_u32(node_get(cpu, "maxSockets"));
	cfg->cpu_model = config_dup_str(node_get(cpu, "model"));
	cfg->dedicated_cpu_placement = node_bval(node_get(cpu, "dedicatedCpuPlacement"), false);
	cfg->isolate_emulator_thread = cfg->dedicated_cpu_placement &&
				       node_bval(node_get(cpu, "isolateEmulatorThread"), false);
	cfg->cpu_limit_millis = millis_of(node_path(dom, "resources.limits.cpu"));
	if (resolve_effective_memory(spec))
		cfg->memory_bytes = config_bytes(resolve_effective_memory(spec));
	cfg->hugepage_size = config_bytes(node_path(dom, "memory.hugepages.pageSize"));
	cfg->max_guest_bytes = config_bytes(node_path(dom, "memory.maxGuest"));
}

/* The firmware, its UUID, and the machine's ACPI, SMM, type, architecture. */
static int map_machine(const struct node *spec, const char *root, struct vm_config *cfg)
{
	const struct node *dom = node_get(spec, "domain");

	map_firmware(dom, root, cfg);
	if (!cfg->firmware_uuid && config_firmware_uuid(cfg))
		return -EIO;
	cfg->acpi = node_bval(node_path(dom, "features.acpi.enabled"), true);
	cfg->smm = node_is_map(node_path(dom, "features.smm")) &&
		   node_bval(node_path(dom, "features.smm.enabled"), true);
	cfg->machine_type = config_dup_str(node_path(dom, "machine.type"));
	cfg->architecture = config_dup_str(node_get(spec, "architecture"));
	return 0;
}

static int map_nics(const struct resolver *r, const struct node *spec, struct vm_config *cfg)
{
	const struct node *seq = node_path(spec, "domain.devices.interfaces");

	if (!node_is_seq(seq) || !seq->n)
		return 0;
	cfg->nics = calloc(seq->n, sizeof(*cfg->nics));
	if (!cfg->nics)
		spec_oom();
	for (unsigned int i = 0; i < seq->n; i++) {
		cfg->n_nics++;
		if (map_nic(r, seq->items[i], node_get(spec, "networks"), &cfg->nics[i]))
			return -EINVAL;
	}
	return 0;
}

/* The other devices: rng, TPM, balloon, channels, console, vsock, queues. */
static void map_devices(const struct resolver *r, const struct node *dom, struct vm_config *cfg)
{
	const struct node *devs = node_get(dom, "devices");

	cfg->rng = !node_is_null(node_get(devs, "rng"));
	/* tpm: {} is a TPM; enabled: false none (KubeVirt's TPMDevice) */
	cfg->tpm =
	    node_is_map(node_get(devs, "tpm")) && node_bval(node_path(devs, "tpm.enabled"), true);
	cfg->tpm_persistent = cfg->tpm && node_bval(node_path(devs, "tpm.persistent"), false);
	map_balloon(r, dom, devs, cfg);
	/* KubeVirt's converter (compute/channels.go) gives every VMI the
	 * guest-agent channel, whatever its devices say */
	strcpy(cfg->channels[cfg->n_channels++], VM_CHANNEL_GUEST_AGENT);
	cfg->autoattach_serial_console = node_bval(node_get(devs, "autoattachSerialConsole"), true);
	if (node_bval(node_get(devs, "autoattachVSOCK"), false))
		cfg->vsock_cid = spec_vsock_cid(cfg->namespace, cfg->name);
	cfg->block_multi_queue = node_bval(node_get(devs, "blockMultiQueue"), false);
	cfg->net_multi_queue = node_bval(node_get(devs, "networkInterfaceMultiqueue"), false);
}

int config_from_resolution(const struct resolver *r, const struct spec_options *o,
			   struct vm_config *cfg)
{
	const struct node *spec = node_get(r->vmi, "spec"), *dom = node_get(spec, "domain");
	const char *root = o && o->disk_root ? o->disk_root : SPEC_DEFAULT_DISK_ROOT;
	struct spec_options none = {0};
	long long g;
	int ret;

	if (!o)
		o = &none;
	if (check_list_sizes(r, spec))
		return -EINVAL;
	ret = config_check_overrides(r, o, node_get(spec, "volumes"));
	if (!ret)
		ret = fields_check(r);
	if (ret)
		return ret;
	map_identity(r, spec, cfg);
	map_cpu_memory(r, spec, cfg);
	if (map_machine(spec, root, cfg))
		return -EIO;
	if (config_disks(r, o, root, spec, cfg) || map_nics(r, spec, cfg))
		return -EINVAL;
	map_devices(r, dom, cfg);
	if (config_access(r, spec, cfg))
		return -EINVAL;
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
	s.cl.on_text = o->input;
	s.cl.on_text_ctx = o->input_ctx;
	if (o->n_texts && !o->n_files) {
		ret = 0;
		for (unsigned int i = 0; i < o->n_texts && !ret; i++)
			ret = cluster_add_text(&s.cl, o->texts[i].name, o->texts[i].text,
					       o->texts[i].len);
	} else {
		ret = session_load(&s, o->files, o->n_files, o->manifest);
	}
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
