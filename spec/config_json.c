/* SPDX-License-Identifier: MIT */
/* config_json.c - struct vm_config as JSON (`vmlet resolve -o config`). */
#include <json-c/json.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "spec/config.h"
#include "spec/emit.h"

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_bool(struct json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

static const char *const boot_names[] = {"none", "kernel", "efi", "bios"};
static const char *const source_names[] = {
    "containerDisk",	    "hostDisk",	 "persistentVolumeClaim",
    "dataVolume",	    "emptyDisk", "cloudInitNoCloud",
    "cloudInitConfigDrive", "other",	 "none"};
static const char *const device_names[] = {"disk", "cdrom", "lun"};
static const char *const cache_names[] = {NULL, "none", "writethrough", "writeback"};
static const char *const binding_names[] = {NULL,    "bridge", "masquerade", "passt",
					    "sriov", "slirp",  "macvtap",    "plugin"};

static const char *const error_policy_names[] = {"stop", "report", "ignore", "enospace"};

static struct json_object *disk_json(const struct vm_disk *d)
{
	struct json_object *o = json_object_new_object();

	add_str(o, "name", d->name);
	add_str(o, "device", device_names[d->device]);
	add_str(o, "bus", d->bus);
	add_str(o, "source", source_names[d->source]);
	add_str(o, "path", d->path);
	if (d->source == VM_DISK_CONTAINERDISK) {
		add_str(o, "image", d->image);
		add_str(o, "imagePath", d->image_path);
	}
	if (d->source == VM_DISK_HOSTDISK)
		add_str(o, "hostDiskType", d->create_missing ? "DiskOrCreate" : "Disk");
	add_bool(o, "readOnly", d->read_only);
	if (d->device == VM_DEV_CDROM)
		add_str(o, "tray", d->tray_open ? "open" : "closed");
	add_bool(o, "shareable", d->shareable);
	add_str(o, "errorPolicy", error_policy_names[d->error_policy]);
	add_str(o, "serial", d->serial);
	add_str(o, "cache", cache_names[d->cache]);
	add_str(o, "io", d->io);
	add_u64(o, "bootOrder", d->boot_order);
	add_u64(o, "capacity", d->capacity);
	add_u64(o, "logicalBlockSize", d->logical_block_size);
	add_u64(o, "physicalBlockSize", d->physical_block_size);
	add_bool(o, "dedicatedIOThread", d->dedicated_io_thread);
	if (d->source == VM_DISK_CLOUDINIT_NOCLOUD || d->source == VM_DISK_CLOUDINIT_CONFIGDRIVE) {
		add_str(o, "userData", d->user_data);
		add_str(o, "networkData", d->network_data);
		add_str(o, "instanceId", d->meta_instance_id);
		if (d->source == VM_DISK_CLOUDINIT_CONFIGDRIVE)
			add_str(o, "uuid", d->meta_uuid);
		add_str(o, "hostname", d->meta_hostname);
		add_str(o, "instanceType", d->meta_instance_type);
	}
	return o;
}

/* the credentials without their secrets (files vmm/ reads) */
static struct json_object *creds_json(const struct vm_config *c)
{
	static const char *const methods[] = {[VM_CRED_AGENT] = "qemuGuestAgent",
					      [VM_CRED_NOCLOUD] = "noCloud",
					      [VM_CRED_CONFIG_DRIVE] = "configDrive"};
	struct json_object *arr = json_object_new_array(), *o, *users;

	for (unsigned int i = 0; i < c->n_access_creds; i++) {
		const struct vm_access_cred *ac = &c->access_creds[i];

		o = json_object_new_object();
		add_str(o, "type", ac->type == VM_CRED_SSH_KEY ? "sshPublicKey" : "userPassword");
		add_str(o, "propagationMethod", methods[ac->method]);
		add_str(o, "secretName", ac->secret);
		if (ac->n_users) {
			users = json_object_new_array();
			for (unsigned int j = 0; j < ac->n_users; j++)
				json_object_array_add(users, json_object_new_string(ac->users[j]));
			json_object_object_add(o, "users", users);
		}
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *nic_json(const struct vm_nic *n)
{
	struct json_object *o = json_object_new_object(), *ports, *p;
	char mac[18];
	unsigned int i;

	add_str(o, "name", n->name);
	add_str(o, "model", n->model);
	if (n->mac_set) {
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", n->mac[0], n->mac[1],
			 n->mac[2], n->mac[3], n->mac[4], n->mac[5]);
		add_str(o, "mac", mac);
	} else {
		add_str(o, "mac", NULL);
	}
	add_str(o, "binding",
		n->binding == VM_BIND_PLUGIN ? n->binding_plugin : binding_names[n->binding]);
	add_str(o, "networkType", n->network_type);
	add_str(o, "networkName", n->network_name);
	ports = json_object_new_array();
	for (i = 0; i < n->n_ports; i++) {
		p = json_object_new_object();
		add_str(p, "name", n->ports[i].name);
		add_str(p, "protocol", n->ports[i].protocol);
		add_u64(p, "port", n->ports[i].port);
		json_object_array_add(ports, p);
	}
	json_object_object_add(o, "ports", ports);
	return o;
}

/* The enlightenments on, by KubeVirt's names (QEMU's hv-* each). */
static struct json_object *hyperv_json(const struct vm_hyperv *h)
{
	const struct {
		const char *name;
		bool on;
	} f[] = {{"relaxed", h->relaxed},
		 {"vapic", h->vapic},
		 {"spinlocks", h->spinlocks},
		 {"vpindex", h->vpindex},
		 {"runtime", h->runtime},
		 {"synic", h->synic},
		 {"synictimer", h->synictimer},
		 {"synictimer.direct", h->synictimer_direct},
		 {"reset", h->reset},
		 {"frequencies", h->frequencies},
		 {"reenlightenment", h->reenlightenment},
		 {"tlbflush", h->tlbflush},
		 {"tlbflush.direct", h->tlbflush_direct},
		 {"tlbflush.extended", h->tlbflush_extended},
		 {"ipi", h->ipi},
		 {"evmcs", h->evmcs},
		 {"time", h->time}};
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].on)
			json_object_array_add(arr, json_object_new_string(f[i].name));
	json_object_object_add(o, "features", arr);
	add_u64(o, "spinlockRetries", h->spinlocks ? h->spinlock_retries : 0);
	add_str(o, "vendorId", h->vendor_id[0] ? h->vendor_id : NULL);
	add_bool(o, "passthrough", h->passthrough);
	return o;
}

static struct json_object *cpu_json(const struct vm_config *c)
{
	struct json_object *cpu = json_object_new_object();

	add_u64(cpu, "sockets", c->sockets);
	add_u64(cpu, "cores", c->cores);
	add_u64(cpu, "threads", c->threads);
	add_u64(cpu, "vcpus", vm_config_vcpus(c));
	add_u64(cpu, "maxSockets", c->max_sockets);
	add_str(cpu, "model", c->cpu_model);
	add_bool(cpu, "dedicatedCpuPlacement", c->dedicated_cpu_placement);
	add_bool(cpu, "isolateEmulatorThread", c->isolate_emulator_thread);
	add_u64(cpu, "limitMillis", c->cpu_limit_millis);
	return cpu;
}

static struct json_object *memory_json(const struct vm_config *c)
{
	struct json_object *mem = json_object_new_object();

	add_u64(mem, "bytes", c->memory_bytes);
	add_u64(mem, "hugepageSize", c->hugepage_size);
	add_u64(mem, "maxGuestBytes", c->max_guest_bytes);
	return mem;
}

static struct json_object *firmware_json(const struct vm_config *c)
{
	struct json_object *fw = json_object_new_object();

	add_str(fw, "boot", boot_names[c->boot]);
	add_str(fw, "kernel", c->kernel_path);
	add_str(fw, "initrd", c->initrd_path);
	add_str(fw, "cmdline", c->cmdline);
	add_bool(fw, "secureBoot", c->efi_secure_boot);
	add_bool(fw, "efiPersistent", c->efi_persistent);
	add_bool(fw, "biosUseSerial", c->bios_use_serial);
	add_bool(fw, "biosDefault", c->bios_default);
	add_str(fw, "uuid", c->firmware_uuid);
	add_str(fw, "serial", c->firmware_serial);
	return fw;
}

/* disks, interfaces (in the config's order) */
static void devices_json(struct json_object *o, const struct vm_config *c)
{
	struct json_object *arr = json_object_new_array();
	unsigned int i;

	for (i = 0; i < c->n_disks; i++)
		json_object_array_add(arr, disk_json(&c->disks[i]));
	json_object_object_add(o, "disks", arr);
	arr = json_object_new_array();
	for (i = 0; i < c->n_nics; i++)
		json_object_array_add(arr, nic_json(&c->nics[i]));
	json_object_object_add(o, "interfaces", arr);
}

int config_emit_json(FILE *f, const struct vm_config *c)
{
	struct json_object *o = json_object_new_object(), *arr;
	unsigned int i;
	int ret;

	add_str(o, "name", c->name);
	add_str(o, "namespace", c->namespace);
	add_str(o, "uid", c->uid);
	add_str(o, "hostname", c->hostname);
	add_str(o, "runStrategy", c->run_strategy);
	json_object_object_add(o, "cpu", cpu_json(c));
	json_object_object_add(o, "memory", memory_json(c));
	json_object_object_add(o, "firmware", firmware_json(c));
	add_bool(o, "acpi", c->acpi);
	add_bool(o, "smm", c->smm);
	add_bool(o, "tpm", c->tpm);
	add_bool(o, "tpmPersistent", c->tpm_persistent);
	json_object_object_add(o, "hyperv", hyperv_json(&c->hyperv));
	add_bool(o, "kvmHidden", c->kvm_hidden);
	add_str(o, "machineType", c->machine_type);
	add_str(o, "architecture", c->architecture);
	devices_json(o, c);
	add_bool(o, "rng", c->rng);
	add_bool(o, "memBalloon", c->mem_balloon);
	add_bool(o, "freePageReporting", c->free_page_reporting);
	add_bool(o, "serialConsole", c->autoattach_serial_console);
	if (c->vsock_cid) /* only with autoattachVSOCK: older outputs unchanged */
		json_object_object_add(o, "vsockCID", json_object_new_int64((int64_t)c->vsock_cid));
	arr = json_object_new_array();
	for (i = 0; i < c->n_channels; i++)
		json_object_array_add(arr, json_object_new_string(c->channels[i]));
	json_object_object_add(o, "channels", arr);
	if (c->downward_metrics)
		add_bool(o, "downwardMetrics", true);
	if (c->n_access_creds)
		json_object_object_add(o, "accessCredentials", creds_json(c));
	add_bool(o, "blockMultiQueue", c->block_multi_queue);
	add_bool(o, "netMultiQueue", c->net_multi_queue);
	json_object_object_add(o, "terminationGracePeriodSeconds",
			       json_object_new_int64(c->termination_grace_seconds));
	add_bool(o, "startPaused", c->start_paused);
	json_object_object_add(o, "rtcOffsetSeconds", json_object_new_int64(c->rtc_offset_seconds));
	add_str(o, "rtcTimezone", c->rtc_timezone);
	ret = emit_json_object(f, o);
	json_object_put(o);
	return ret;
}

int spec_config_json(const struct vm_config *cfg, char **out)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	int ret;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	ret = config_emit_json(f, cfg);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}
