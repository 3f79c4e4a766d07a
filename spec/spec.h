/* SPDX-License-Identifier: MIT */
/*
 * spec.h - the public face of spec/: KubeVirt manifests in, a plain
 * struct vm_config out. This is the only spec/ header vmm/ may include.
 *
 * "The cluster" is every object in every input: a VirtualMachine (or a
 * seed-era VirtualMachineInstance / kubevirt.io/v1alpha1 VirtualMachine),
 * instancetypes, preferences, presets, ControllerRevisions, PVCs,
 * DataVolumes and DataSources. Resolution follows the rules of
 * docs/resolution.md.
 *
 * Errors are printed by the library itself on stderr, one per line, as
 *   FILE:LINE:COL: FIELD.PATH: message
 * (warnings as "FILE:LINE:COL: warning: ..."), and nothing is left
 * allocated in *cfg when a call fails.
 */
#ifndef VMLET_SPEC_H
#define VMLET_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

/* One manifest text (spec_options.texts). */
struct spec_text {
	const char *name; /* for messages */
	const char *text;
	size_t len;
};

struct spec_options {
	/* -f arguments: a file, a directory (every *.yaml, *.yml, *.json in
	 * it, sorted, not recursive) or "-" for stdin. */
	const char *const *files;
	unsigned int n_files;
	/* spec_resolve_config() only: with no files, these texts in order,
	 * as if each were a file (the manifests a snapshot recorded). */
	const struct spec_text *texts;
	unsigned int n_texts;
	/* spec_resolve_config() only: called with each text the resolution
	 * reads (each file, each file of a directory, stdin, the manifest
	 * text or $VMLET_MANIFEST, or each of texts), in order, before it is
	 * parsed; NULL: none. What a snapshot records to be resolved again. */
	void (*input)(void *ctx, const char *text, size_t len);
	void *input_ctx;
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
	 * NULL = SPEC_DEFAULT_DISK_ROOT. A containerDisk volume NAME maps, as
	 * KubeVirt maps it inside the volume's image, to
	 *   with containerDisk.path P: ROOT/NAME/P when ROOT/NAME/ exists
	 *     (ROOT/NAME is the image's filesystem; for P = /disk/F, also
	 *     ROOT/NAME/F: ROOT/NAME is the image's /disk), else ROOT/P (and
	 *     ROOT/F for /disk/F);
	 *   without: the only file in ROOT/NAME/disk/, else the only
	 *     *.img|*.qcow2|*.raw|*.iso file in ROOT/NAME/, else (no ROOT/NAME/)
	 *     the only such file in ROOT when the VM has one containerDisk,
	 *     else ROOT/NAME.img (reported missing when opened).
	 * More than one candidate, or two volumes on one file, is an error
	 * naming the volumes.
	 * kernelBoot.container.{kernelPath,initrdPath} map to ROOT/<path>.
	 * persistentVolumeClaim / dataVolume volumes map to KubeVirt's pod
	 * path /var/run/kubevirt-private/vmi-disks/NAME/disk.img, hostDisk to
	 * its own path. --volume overrides all of these. */
	const char *disk_root;
	/* --image-store DIR: containerDisk volumes (without --volume) are
	 * found there by the VMM from their image reference, and get no
	 * path here (vmm/disk/image_store.h). */
	const char *image_store;
	/* Called for each error and warning, in order, instead of printing
	 * them on stderr (NULL: print them as described above). */
	void (*report)(void *ctx, const struct spec_message *m);
	void *report_ctx;
};

/*
 * Resolve the manifests into *cfg (vm_config_init() is applied first).
 * Returns 0, or -EINVAL for a resolution/validation error (already
 * printed), -ENOENT/-EIO... when an input cannot be read. Out of memory
 * ends the process (spec_oom() in spec/node.h).
 * On success *cfg is owned by the caller: free it with vm_config_release().
 */
int spec_resolve_config(const struct spec_options *o, struct vm_config *cfg);

/* cfg as `vmlet resolve -o config` prints it, in a malloc'd string
 * (*out): what a snapshot records and a restore compares. 0 or -errno. */
int spec_config_json(const struct vm_config *cfg, char **out);

/* What spec_resolve_print prints (`vmlet resolve -o FORMAT ...`). */
enum spec_format {
	SPEC_FORMAT_JSON,   /* the VirtualMachineInstance as JSON */
	SPEC_FORMAT_YAML,   /* the same as YAML */
	SPEC_FORMAT_CONFIG, /* the struct vm_config the VMM would run, as JSON */
};

struct spec_print_options {
	enum spec_format format;
	/* a v1 List instead: the VM after admission and sync, the VMI and
	 * the ControllerRevisions captured (JSON or YAML) */
	bool list;
	/* which object set every resolved field, and where (any format) */
	bool explain;
	/* > 0: resolve that many times and print the rates
	 * (resolve_only_per_s, parse_and_resolve_per_s) instead */
	long bench;
};

/*
 * Resolve the manifests and print the result on out; diagnostics go to
 * stderr. SPEC_FORMAT_CONFIG is validated before anything is printed.
 * Returns 0, or the errors of spec_resolve_config, or -EIO when out
 * cannot be written.
 */
int spec_resolve_print(const struct spec_options *o, const struct spec_print_options *p, FILE *out);

/*
 * A size in bytes as the command line spells it (--memory, --console-max):
 * decimal digits and one unit of Kubernetes' quantities up to T/Ti ("4096",
 * "512M" = 512*10^6, "1Gi" = 2^30, "10k"), plus the two spellings of
 * the command line: "K" for Ki and "B" for bytes. No sign, fraction,
 * exponent, milli or space. The suffixes are spec/quantity.c's own table,
 * so a unit means on the command line what it means in a manifest.
 * 0, or -EINVAL (any other text, or more than 2^64-1 bytes).
 */
int spec_parse_size(const char *s, uint64_t *out);

#endif /* VMLET_SPEC_H */
