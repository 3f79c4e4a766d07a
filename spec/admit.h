/* SPDX-License-Identifier: MIT */
/*
 * admit.h - KubeVirt's validating webhooks for a VirtualMachine and the
 * VirtualMachineInstance it creates (docs/resolution.md §19), run on the
 * resolved VMI spec after instancetype, preference and KubeVirt's defaults
 * (default disks and pod network), as KubeVirt's VM admitter does:
 *
 *   admit_disks.c    pkg/storage/admitters/disks.go and the disk/volume
 *                    parts of vmi-create-admitter.go (validateBootOrder,
 *                    validateVolumes, validateKernelBoot), the path rule
 *   admit_net.c      pkg/network/admitter/ (validator.go and what it calls)
 *   admit_compute.c  memory, CPU and bootloader rules of
 *                    ValidateVirtualMachineInstanceSpec, vms-admitter.go's
 *                    run strategy, and vmlet's bounds on absurd values
 *   admit_spec.c     the rest of the VMI spec (hostname, ACPI, probes,
 *                    access credentials, DNS, ...)
 *   admit_devices.c  devices (GPU displays, sound, video, panic),
 *                    launchSecurity, Hyper-V (webhooks/amd64.go, hyperv.go)
 *   admit_arch.c     each architecture's settings (webhooks/amd64.go,
 *                    arm64.go, s390x.go)
 *   admit_affinity.c affinity and topology spread constraints
 *                    (validate-k8s-utils.go, Kubernetes' rules)
 *
 * Every rule adds its error to the resolver's diag at the value that
 * caused it, with KubeVirt's field path and message; all causes are
 * reported together. Rules that need a live cluster (feature gates,
 * objects KubeVirt fetches) are not here: §19 lists them.
 */
#ifndef VMLET_SPEC_ADMIT_H
#define VMLET_SPEC_ADMIT_H

#include <stdbool.h>

#include "spec/resolve.h"

struct admit {
	struct resolver *r;
	struct node *spec;     /* the VMI spec (resolve_vmi_spec) */
	struct node *dom;      /* its domain */
	const char *pfx;       /* "spec.template.spec" (VM) or "spec" (VMI form) */
	const struct node *vm; /* the VM after admission; NULL for the VMI form */
};

/* "PFX.SUFFIX" (SUFFIX printf-formatted) in the resolver's arena. */
const char *admit_path(const struct admit *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* An error at node at (NULL: the object) on path. */
void admit_err(const struct admit *a, const struct node *at, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Kubernetes' IsDNS1123Label / IsDNS1123Subdomain: the problems of s in
 * apimachinery's wording (too long, bad characters) into msg, their
 * number returned (0: valid). */
unsigned int admit_dns1123_label(const char *s, const char *msg[2]);
unsigned int admit_dns1123_subdomain(const char *s, const char *msg[2]);
/* KubeVirt's ValidatePath (storage/admitters/disks.go): "" or a message
 * ending the sentence that starts with the field path; NULL when valid. */
const char *admit_path_rule(const char *path);
/* An index of the maps of a sequence by the string at key (e.g. "name",
 * or a dotted path: "dataVolume.name"),
 * built in O(n log n) so that untrusted manifests with many entries cost
 * no quadratic time: first[i] is the index of the first entry whose key
 * equals entry i's (i itself when it is the first). */
struct admit_entry {
	const char *key;
	unsigned int idx;
	const struct node *n;
};
struct admit_ix {
	struct admit_entry *e; /* sorted by key, then index */
	unsigned int *first;
	unsigned int n;
};
void admit_index(const struct admit *a, const struct node *seq, const char *key,
		 struct admit_ix *ix);
/* Sort entries by key, then index. */
void admit_sort(struct admit_entry *e, unsigned int n);
/* The first entry (lowest index) with that key, NULL when none. */
const struct node *admit_lookup(const struct admit_ix *ix, const char *key);

/* Run every rule on the resolver's result: 0, or -EINVAL with the errors in
 * r->d (resolve_validate.c calls it in pipeline step 14). */
int admit_run(struct resolver *r);

/* The first map of seq whose "name" is name (a linear scan: for one
 * lookup), NULL when none. */
const struct node *admit_lookup_seq(const struct admit *a, const struct node *seq,
				    const char *name);

void admit_disks(const struct admit *a);
void admit_volumes(const struct admit *a);
void admit_net(const struct admit *a);
void admit_compute(const struct admit *a);
void admit_spec(const struct admit *a);
void admit_devices(const struct admit *a);
void admit_arch(const struct admit *a);
void admit_affinity(const struct admit *a);

#endif /* VMLET_SPEC_ADMIT_H */
