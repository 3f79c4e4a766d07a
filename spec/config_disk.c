// SPDX-License-Identifier: MIT
/*
 * config_disk.c - the resolved VMI's disks -> vm_config.disks (config.h):
 * each disk's kind, bus and own fields, and where its data is: the volume
 * it names (containerDisk, hostDisk, a claim, emptyDisk, a cloud-init
 * seed), or a --volume NAME=PATH override (spec.h documents the mapping).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/config.h"

#define PVC_DIR "/var/run/kubevirt-private/vmi-disks"

/* --volume NAME=PATH: PATH for volume name, or NULL */
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

int config_check_overrides(const struct resolver *r, const struct spec_options *o,
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
		if (!config_find_named(vols, name)) {
			diag_err_loc(r->d, NULL, 0, 0, NULL, "--volume %s: the VM has no volume %s",
				     o->volume_overrides[i], name);
			ret = -EINVAL;
		}
		free(name);
	}
	return ret;
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
		return config_strdup(node_sval(node_get(ci, key)));
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
		*out = config_dup_str(node_get(t, "bus"));
		return 0;
	}
	if (!strcmp(arch, "arm64") || !strcmp(arch, "s390x")) {
		*out = config_strdup("virtio");
		return 0;
	}
	*out = config_strdup("sata");
	if (!node_bval(node_get(t, "readonly"), false))
		return 0;
	diag_err(r->d, t,
		 arena_printf(r->a, "%sdomain.devices.disks[%u].disk.bus",
			      r->vmi_only ? "spec." : "spec.template.spec.", idx),
		 "sata hard-disks do not support read-only. (a disk without a bus is SATA on "
		 "amd64, as in KubeVirt: set bus: virtio for a read-only disk)");
	return -EINVAL;
}

/* Disk d's kind (disk, cdrom, lun), its read-only flag and its bus. */
static int disk_kind(const struct resolver *r, const struct node *d, unsigned int idx,
		     struct vm_disk *out)
{
	const struct node *t;

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
		if (!(out->bus = config_dup_str(node_get(t, "bus"))))
			out->bus = config_strdup("sata");
	} else if (out->device == VM_DEV_LUN) {
		out->bus = config_strdup("virtio");
	} else if (disk_bus(r, t, idx, &out->bus)) {
		return -EINVAL;
	}
	return 0;
}

/* The fields of disk d itself: serial, cache, errorPolicy, boot order... */
static int disk_fields(const struct resolver *r, const struct node *d, unsigned int idx,
		       struct vm_disk *out)
{
	out->serial = config_dup_str(node_get(d, "serial"));
	out->shareable = node_bval(node_get(d, "shareable"), false);
	if (error_policy_of(r, d, idx, &out->error_policy))
		return -EINVAL;
	out->cache = cache_of(resolve_str(node_get(d, "cache")));
	out->io = config_dup_str(node_get(d, "io"));
	out->boot_order = config_u32(node_get(d, "bootOrder"));
	out->logical_block_size = config_u32(node_path(d, "blockSize.custom.logical"));
	out->physical_block_size = config_u32(node_path(d, "blockSize.custom.physical"));
	out->dedicated_io_thread = node_bval(node_get(d, "dedicatedIOThread"), false);
	return 0;
}

/* containerDisk t of volume name: the override ov, or its file under root
 * (none with an image store: the VMM pulls it) */
static int disk_container(const struct resolver *r, const struct spec_options *o, const char *root,
			  const struct node *vols, const char *name, const struct node *t,
			  const char *ov, struct vm_disk *out)
{
	out->source = VM_DISK_CONTAINERDISK;
	out->image = config_dup_str(node_get(t, "image"));
	out->image_path = config_dup_str(node_get(t, "path"));
	if (ov)
		out->path = config_strdup(ov);
	else if (!o->image_store && !(out->path = config_container_disk(r, root, vols, name, t)))
		return -EINVAL;
	else if (!o->image_store)
		out->root = config_strdup(root); /* opened beneath it (vmm/util/file.h) */
	return 0;
}

/* persistentVolumeClaim or dataVolume v: where virt-launcher mounts it */
static void disk_claim(const struct node *v, const char *name, const char *ov, struct vm_disk *out)
{
	out->source = node_get(v, "dataVolume") ? VM_DISK_DATAVOLUME : VM_DISK_PVC;
	/* KubeVirt mounts a readOnly claim read-only in the pod: the guest
	 * cannot write it whatever the disk says */
	if (node_bval(node_path(v, "persistentVolumeClaim.readOnly"), false))
		out->read_only = true;
	if (ov)
		out->path = config_strdup(ov);
	else if (asprintf(&out->path, PVC_DIR "/%s/disk.img", name) < 0)
		spec_oom();
	else
		out->root = config_strdup(PVC_DIR);
}

/* Where the data of the disk on volume v (one of vols, named name) is. */
static int disk_source(const struct resolver *r, const struct spec_options *o, const char *root,
		       const struct node *vols, const struct node *v, const char *name,
		       const char *ov, struct vm_disk *out)
{
	const struct node *t, *ci;

	if ((t = node_get(v, "containerDisk")))
		return disk_container(r, o, root, vols, name, t, ov, out);
	if ((t = node_get(v, "hostDisk"))) {
		out->source = VM_DISK_HOSTDISK;
		out->path = config_strdup(ov ? ov : node_sval(node_get(t, "path")));
		out->capacity = config_bytes(node_get(t, "capacity"));
		return config_host_disk(r, vols, v, out) ? -EINVAL : 0;
	}
	if (node_get(v, "persistentVolumeClaim") || node_get(v, "dataVolume")) {
		disk_claim(v, name, ov, out);
		return 0;
	}
	out->path = ov ? config_strdup(ov) : NULL;
	if ((t = node_get(v, "emptyDisk"))) {
		out->source = VM_DISK_EMPTYDISK;
		out->capacity = config_bytes(node_get(t, "capacity"));
	} else if ((ci = node_get(v, "cloudInitNoCloud")) ||
		   (ci = node_get(v, "cloudInitConfigDrive"))) {
		out->source = node_get(v, "cloudInitNoCloud") ? VM_DISK_CLOUDINIT_NOCLOUD
							      : VM_DISK_CLOUDINIT_CONFIGDRIVE;
		out->user_data = payload(r, ci, "userData", "userDataBase64");
		out->network_data = payload(r, ci, "networkData", "networkDataBase64");
		/* secretRef, networkDataSecretRef: warned by their rows of
		 * docs/fields.md (spec/fields.c), once */
		/* meta-data: config_cloud_init_meta(), once the firmware UUID is known */
	} else {
		out->source = VM_DISK_OTHER;
	}
	return 0;
}

static int map_disk(const struct resolver *r, const struct spec_options *o, const char *root,
		    const struct node *d, unsigned int idx, const struct node *vols,
		    struct vm_disk *out)
{
	const char *name = resolve_str(node_get(d, "name")), *ov;
	const struct node *v = config_find_named(vols, name);

	out->name = config_strdup(name);
	if (disk_kind(r, d, idx, out) || disk_fields(r, d, idx, out))
		return -EINVAL;
	ov = override(o, name);
	out->operator_path = ov != NULL;
	if (!v) {
		/* a CD-ROM without a volume is an empty drive (KubeVirt admits
		 * it with the DeclarativeHotplugVolumes gate) */
		out->source = out->device == VM_DEV_CDROM && !ov ? VM_DISK_NONE : VM_DISK_OTHER;
		out->path = ov ? config_strdup(ov) : NULL;
		return 0;
	}
	return disk_source(r, o, root, vols, v, name, ov, out);
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

/* More SATA disks and CD-ROMs than vmlet's AHCI controller has ports: an
 * error, as `run` refuses them (KubeVirt's libvirt adds a second AHCI
 * controller for the seventh: docs/disks.md). */
static int too_many_sata(const struct resolver *r, const struct vm_config *cfg,
			 const struct node *disks)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < cfg->n_disks; i++) {
		const struct vm_disk *d = &cfg->disks[i];

		if (!d->bus || strcmp(d->bus, "sata") || ++n <= VM_MAX_SATA)
			continue;
		diag_err(r->d, disks->items[i],
			 arena_printf(r->a, "%sdomain.devices.disks[%u]",
				      r->vmi_only ? "spec." : "spec.template.spec.", i),
			 "disk '%s': more than %d SATA disks and CD-ROMs: vmlet has one AHCI "
			 "controller of %d ports where KubeVirt adds a second (docs/disks.md); "
			 "put the others on bus virtio",
			 d->name, VM_MAX_SATA, VM_MAX_SATA);
		return -EINVAL;
	}
	return 0;
}

int config_disks(const struct resolver *r, const struct spec_options *o, const char *root,
		 const struct node *spec, struct vm_config *cfg)
{
	const struct node *seq = node_path(spec, "domain.devices.disks");
	const struct node *vols = node_get(spec, "volumes");

	if (!node_is_seq(seq) || !seq->n)
		return 0;
	cfg->disks = calloc(seq->n, sizeof(*cfg->disks));
	if (!cfg->disks)
		spec_oom();
	for (unsigned int i = 0; i < seq->n; i++) {
		cfg->n_disks++; /* released with cfg even if map_disk fails */
		if (map_disk(r, o, root, seq->items[i], i, vols, &cfg->disks[i]))
			return -EINVAL;
	}
	if (shared_container_disk(r, cfg, seq) || too_many_sata(r, cfg, seq))
		return -EINVAL;
	config_cloud_init_meta(r, cfg);
	return 0;
}
