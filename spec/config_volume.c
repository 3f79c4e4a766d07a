// SPDX-License-Identifier: MIT
/*
 * config_volume.c - what KubeVirt's virt-launcher decides beyond a field
 * copy (config.h): hostDisk's type, the firmware UUID of a VMI without
 * one, and the cloud-init meta-data.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/config.h"
#include "spec/uuid.h"

/* "spec.template.spec.volumes[i].hostDisk" (or "spec.volumes[i]..." for a
 * VirtualMachineInstance), as KubeVirt's admitter names it */
static const char *host_disk_path(const struct resolver *r, const struct node *vols,
				  const struct node *v)
{
	unsigned int i;

	for (i = 0; node_is_seq(vols) && i < vols->n && vols->items[i] != v; i++)
		;
	return arena_printf(r->a, "%svolumes[%u].hostDisk",
			    r->vmi_only ? "spec." : "spec.template.spec.", i);
}

int config_host_disk(const struct resolver *r, const struct node *vols, const struct node *v,
		     struct vm_disk *out)
{
	const struct node *hd = node_get(v, "hostDisk"), *type = node_get(hd, "type");
	const char *t = resolve_str(type), *p = host_disk_path(r, vols, v);

	if (!strcmp(t, "DiskOrCreate")) {
		out->create_missing = true;
		return 0;
	}
	if (strcmp(t, "Disk")) {
		diag_err(r->d, type ? type : hd, arena_printf(r->a, "%s.type", p),
			 "%s.type has invalid value '%s', allowed are 'Disk' or 'DiskOrCreate'", p,
			 t);
		return -EINVAL;
	}
	if (out->capacity) {
		diag_err(r->d, node_get(hd, "capacity"), arena_printf(r->a, "%s.capacity", p),
			 "%s.capacity is allowed to pass only with %s.type equal to "
			 "'DiskOrCreate'",
			 p, p);
		return -EINVAL;
	}
	return 0;
}

int config_firmware_uuid(struct vm_config *cfg)
{
	char u[UUID_STR_LEN];

	if (uuid_v4(u))
		return -EIO;
	cfg->firmware_uuid = config_strdup(u);
	return 0;
}

/* NULL for an empty value */
static char *meta_dup(const char *s)
{
	return s && *s ? config_strdup(s) : NULL;
}

void config_cloud_init_meta(const struct resolver *r, struct vm_config *cfg)
{
	const struct node *an = node_path(r->vmi, "metadata.annotations");
	const char *host = resolve_str(node_path(r->vmi, "spec.hostname"));
	const char *type = resolve_str(node_get(an, "kubevirt.io/cluster-instancetype-name"));
	char name[64];
	unsigned int i;

	if (!*type)
		type = resolve_str(node_get(an, "kubevirt.io/instancetype-name"));
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(r->name, "."), r->name);
	for (i = 0; i < cfg->n_disks; i++) {
		struct vm_disk *d = &cfg->disks[i];

		if (d->source != VM_DISK_CLOUDINIT_NOCLOUD &&
		    d->source != VM_DISK_CLOUDINIT_CONFIGDRIVE)
			continue;
		d->meta_hostname = meta_dup(*host ? host : name);
		d->meta_instance_type = meta_dup(type);
		if (d->source == VM_DISK_CLOUDINIT_NOCLOUD) {
			d->meta_instance_id = meta_dup(cfg->firmware_uuid);
			continue;
		}
		if (asprintf(&d->meta_instance_id, "%s.%s", r->name, r->ns) < 0)
			spec_oom();
		d->meta_uuid = meta_dup(cfg->firmware_uuid);
	}
}
