/* SPDX-License-Identifier: MIT */
/*
 * config.h - the resolved VMI -> struct vm_config (spec_resolve_config's
 * core, also behind `vmlet resolve -o config`), and vm_config as JSON.
 */
#ifndef VMLET_SPEC_CONFIG_H
#define VMLET_SPEC_CONFIG_H

#include <stdio.h>

#include "spec/resolve.h"
#include "spec/spec.h"

/* Fill cfg (already vm_config_init'ed) from a successful resolution.
 * Errors (a bad --volume, a MAC that does not parse) go to r->d.
 * 0 or -EINVAL; cfg may be partially filled on error. */
int config_from_resolution(const struct resolver *r, const struct spec_options *o,
			   struct vm_config *cfg);
/* The mapping's helpers (config.c), for the config_*.c files: a heap copy
 * of s (NULL for NULL); of n's string (NULL when unset or empty); n as a
 * byte quantity, as an unsigned 32-bit number (0 when unset or out of
 * range); the item of seq whose name is name (NULL: none). Out of memory
 * is spec_oom(). */
char *config_strdup(const char *s);
char *config_dup_str(const struct node *n);
uint64_t config_bytes(const struct node *n);
uint32_t config_u32(const struct node *n);
const struct node *config_find_named(const struct node *seq, const char *name);
/* Each --volume NAME=PATH of o is well formed and names one of vols; else
 * an error in r->d and -EINVAL (config_disk.c). */
int config_check_overrides(const struct resolver *r, const struct spec_options *o,
			   const struct node *vols);
/* spec's domain.devices.disks into cfg->disks (with their volumes, the
 * --volume overrides of o, containerDisks under root), then their
 * cloud-init meta-data. 0 or -EINVAL (a diag) (config_disk.c). */
int config_disks(const struct resolver *r, const struct spec_options *o, const char *root,
		 const struct node *spec, struct vm_config *cfg);
/* autoattachVSOCK's guest CID for the VM namespace/name (config.c). */
uint64_t spec_vsock_cid(const char *ns, const char *name);
/* The host file of containerDisk volume name (cd: its containerDisk node;
 * vols: the VMI's volumes) under root, malloc'ed; NULL after an error in
 * r->d (ambiguous or missing images) (config_cdisk.c). */
char *config_container_disk(const struct resolver *r, const char *root, const struct node *vols,
			    const char *name, const struct node *cd);
/* hostDisk volume v (one of vols) of disk out, as KubeVirt takes it:
 * type Disk (never created: out->create_missing false) or DiskOrCreate
 * (created at its capacity when missing); any other type, and a capacity
 * with Disk, are errors in r->d with KubeVirt's messages (the
 * vmi-create-admitter's hostDisk rules). 0 or -EINVAL
 * (config_volume.c). */
int config_host_disk(const struct resolver *r, const struct node *vols, const struct node *v,
		     struct vm_disk *out);
/* A VMI without firmware.uuid (a VM has one from resolution: KubeVirt's
 * VM controller sets it): a random one, as libvirt draws for the domain
 * KubeVirt defines without one; it is the guest's SMBIOS system UUID.
 * 0 or -EIO (no randomness) (config_volume.c). */
int config_firmware_uuid(struct vm_config *cfg);
/* The meta-data of cfg's cloud-init disks as KubeVirt's virt-launcher
 * writes it (pkg/cloud-init ReadCloudInitVolumeDataSource): NoCloud
 * instance-id the firmware UUID; ConfigDrive instance_id NAME.NAMESPACE
 * and uuid the firmware UUID; hostname spec.hostname, else the VMI's name
 * up to its first dot (at most 63 characters; dns.SanitizeHostname); the
 * instance type the cluster instancetype's name, else the instancetype's
 * (annotations). After cfg->firmware_uuid is set (config_volume.c). */
void config_cloud_init_meta(const struct resolver *r, struct vm_config *cfg);
/* features.hyperv, clock.timer.hyperv and features.kvm.hidden of dom into
 * cfg->hyperv and cfg->kvm_hidden, with KubeVirt's defaults and the
 * dependencies its webhook fills in. What QEMU or libvirt would refuse
 * (a KubeVirt VM that never starts) is an error in r->d: synictimer
 * without clock.timer.hyperv, tlbflush.direct without vapic, fewer than
 * 4095 spinlock retries, a vendorid that is empty, longer than 12
 * characters or not printable (config_hyperv.c). */
void config_hyperv(const struct resolver *r, const struct node *dom, struct vm_config *cfg);
/* root/path (path's leading slashes dropped), malloc'ed. */
/* spec.accessCredentials[] into cfg->access_creds, devices.downwardMetrics
 * into its channel (config_access.c). 0 or -EINVAL (a diag). */
int config_access(const struct resolver *r, const struct node *spec, struct vm_config *cfg);

char *config_join(const char *root, const char *path);

/* The configuration as a pretty JSON document. 0 or -EIO. */
int config_emit_json(FILE *f, const struct vm_config *cfg);

#endif /* VMLET_SPEC_CONFIG_H */
