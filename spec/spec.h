/* SPDX-License-Identifier: MIT */
/*
 * spec.h - the public face of spec/: KubeVirt manifests in, a plain
 * struct vm_config out. This is the only spec/ header vmm/ may include.
 *
 * "The cluster" is every object in every input: a VirtualMachine (or a
 * seed-era VirtualMachineInstance / kubevirt.io/v1alpha1 VirtualMachine),
 * instancetypes, preferences, presets, ControllerRevisions, PVCs,
 * DataVolumes and DataSources. Resolution follows
 * ../shared/spec/kubevirt-semantics.md.
 *
 * Errors are printed by the library itself on stderr, one per line, as
 *   FILE:LINE:COL: FIELD.PATH: message
 * (warnings as "FILE:LINE:COL: warning: ..."), and nothing is left
 * allocated in *cfg when a call fails.
 */
#ifndef VMLET_SPEC_H
#define VMLET_SPEC_H

#include "vmm/vm_config.h"

/* Default root under which containerDisk images are looked up. */
#define SPEC_DEFAULT_DISK_ROOT "/disk"

/* One error or warning of a resolution (spec_options.report). */
struct spec_message {
	const char *file; /* NULL: no location */
	unsigned int line, col;
	const char *path; /* the field's path, NULL = none */
	const char *msg;
	bool warning;
};

struct spec_options {
	/* -f arguments: a file, a directory (every *.yaml, *.yml, *.json in
	 * it, sorted, not recursive) or "-" for stdin. */
	const char *const *files;
	unsigned int n_files;
	/* Manifest text used when n_files == 0. When it is NULL too, the
	 * environment variable VMLET_MANIFEST is used; no input at all is
	 * an error (-EINVAL). */
	const char *manifest;
	/* --vm NAME: which VirtualMachine; NULL = the only one. */
	const char *vm_name;
	/* --volume NAME=PATH overrides of the host path backing a volume. */
	const char *const *volume_overrides;
	unsigned int n_volume_overrides;
	/* Root directory of containerDisk images and kernelBoot files;
	 * NULL = SPEC_DEFAULT_DISK_ROOT. A containerDisk volume NAME maps to
	 *   ROOT/<containerDisk.path>           when path is set, else
	 *   the first *.img|*.qcow2|*.raw|*.iso file (sorted) in ROOT/NAME/,
	 *   else the first such file in ROOT/, else ROOT/NAME.img.
	 * kernelBoot.container.{kernelPath,initrdPath} map to ROOT/<path>.
	 * persistentVolumeClaim / dataVolume volumes map to KubeVirt's pod
	 * path /var/run/kubevirt-private/vmi-disks/NAME/disk.img, hostDisk to
	 * its own path. --volume overrides all of these. */
	const char *disk_root;
	/* Called for each error and warning, in order, instead of printing
	 * them on stderr (NULL: print them as described above). */
	void (*report)(void *ctx, const struct spec_message *m);
	void *report_ctx;
};

/*
 * Resolve the manifests into *cfg (vm_config_init() is applied first).
 * Returns 0, or -EINVAL for a resolution/validation error (already
 * printed), -ENOENT/-EIO... when an input cannot be read, -ENOMEM.
 * On success *cfg is owned by the caller: free it with vm_config_release().
 */
int spec_resolve_config(const struct spec_options *o, struct vm_config *cfg);

#endif /* VMLET_SPEC_H */
