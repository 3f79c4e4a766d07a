// SPDX-License-Identifier: MIT
/*
 * config_volume.c - volume kinds whose KubeVirt semantics need more than
 * a field copy (config.h): hostDisk's type.
 */
#include <errno.h>
#include <string.h>

#include "spec/config.h"

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
