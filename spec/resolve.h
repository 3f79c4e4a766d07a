/* SPDX-License-Identifier: MIT */
/*
 * resolve.h - internal interface of the resolver (spec/resolve*.c).
 *
 * A cluster is every object of every input, classified. A resolver takes
 * the cluster and one VirtualMachine (or seed-era VMI-shaped object) and
 * builds, in its own arena, the VirtualMachineInstance KubeVirt would
 * create, the VirtualMachine after admission and sync, and the
 * ControllerRevisions captured - all as node trees, each value stamped
 * with the object that set it (node.origin) for --explain.
 */
#ifndef VMLET_SPEC_RESOLVE_H
#define VMLET_SPEC_RESOLVE_H

#include <stdbool.h>

#include "spec/diag.h"
#include "spec/load.h"
#include "spec/node.h"
#include "spec/quantity.h"

enum obj_kind {
	OBJ_OTHER = 0,
	OBJ_VM,	      /* kubevirt.io VirtualMachine with spec.template */
	OBJ_VMI,      /* VirtualMachineInstance or v1alpha VM with spec.domain */
	OBJ_IT,	      /* VirtualMachineInstancetype (or Flavor) */
	OBJ_CIT,      /* VirtualMachineClusterInstancetype (or ClusterFlavor) */
	OBJ_PREF,     /* VirtualMachinePreference */
	OBJ_CPREF,    /* VirtualMachineClusterPreference */
	OBJ_PRESET,   /* VirtualMachineInstancePreset / v1alpha1 VirtualMachinePreset */
	OBJ_REVISION, /* apps/v1 ControllerRevision */
	OBJ_PVC,
	OBJ_DV,
	OBJ_DS,
};

struct object {
	enum obj_kind kind;
	struct node *root;
	const char *name;
	const char *ns; /* "" for cluster-scoped objects */
	bool legacy;	/* seed-era / deprecated API form */
	struct object *next;
};

struct cluster {
	struct arena a;
	struct diag d; /* load errors and deprecation warnings */
	struct doc_list docs;
	struct object *objs, **tail;
	unsigned int n_vms; /* OBJ_VM + OBJ_VMI */
	/* each text cluster_add_text() is given, before it is parsed (NULL:
	 * none): spec_options.input */
	void (*on_text)(void *ctx, const char *text, size_t len);
	void *on_text_ctx;
};

void cluster_init(struct cluster *c);
void cluster_free(struct cluster *c);
/* Parse and classify one buffer / one -f path. 0 or -errno. */
int cluster_add_text(struct cluster *c, const char *file, const char *text, size_t len);
int cluster_add_path(struct cluster *c, const char *path);
/* Find by kind, namespace ("" for cluster scope) and name. */
const struct object *cluster_find(const struct cluster *c, enum obj_kind k, const char *ns,
				  const char *name);
/* The VM to resolve: by name, or the only one. NULL with an error in *d. */
const struct object *cluster_pick_vm(const struct cluster *c, const char *name, struct diag *d);

struct matcher {
	const char *field; /* "instancetype" / "preference" */
	const char *Field; /* "Instancetype" / "Preference" (messages) */
	struct node *m;	   /* spec.<field> of the working VM, NULL = none */
	const char *name;
	const char *kind;     /* as written (may be NULL) */
	bool cluster;	      /* cluster-scoped kind */
	struct node *obj;     /* the object used (live or from a revision) */
	struct node *spec;    /* obj.spec */
	const char *origin;   /* "instancetype NAME" */
	const char *revision; /* controllerRevisionRef.name after sync */
};

struct resolver {
	struct arena *a;
	struct diag *d;
	const struct cluster *cl;
	const struct object *src; /* the VM (or VMI-shaped object) */
	struct node *vm;	  /* the VM after admission and sync (copy) */
	struct node *vmi;	  /* the VirtualMachineInstance */
	struct node *revs;	  /* ControllerRevisions captured (seq) */
	const char *name, *ns;
	const char *vm_origin; /* "VM NAME" */
	struct matcher it, pref;
	bool vmi_only; /* seed-era VMI form: presets only */
	/* after a successful resolve_run(): the VMI's effective topology
	 * (sockets, cores, threads; resolution.md §0.2), computed once for
	 * the vm_config and --explain */
	uint32_t topology[3];
};

/* resolve.c: run the whole pipeline. 0 or -EINVAL (errors in r->d). */
int resolve_run(struct resolver *r, struct arena *a, struct diag *d, const struct cluster *cl,
		const struct object *src);

/* schema_decode.c: strict decoding of obj against the schema type named type
 * (spec/schema.h): unknown fields, wrong types, bad enum values and missing
 * required fields (not for legacy, seed-era forms) are errors in d, at
 * field paths under at (NULL: the object's root), each message prefixed by
 * what (may be NULL). Unknown keys where KubeVirt's CRD preserves them are
 * warned about and removed from obj. 0, -EINVAL, or -ENOENT for an unknown
 * type. */
int schema_decode(struct diag *d, struct node *obj, const char *type, const char *at,
		  const char *what, bool legacy);

/* resolve_admit.c: admission rules of the instancetype / preference used. */
int admit_instancetype(struct resolver *r, const struct node *obj);
int admit_preference(struct resolver *r, const struct node *obj);

/* resolve_match.c: matchers, lookups, revisions, inferFromVolume. */
int match_validate(struct resolver *r, struct matcher *mt);
int match_infer(struct resolver *r, struct matcher *mt);
int match_find(struct resolver *r, struct matcher *mt);
void match_annotate(struct resolver *r);
int match_sync_revision(struct resolver *r, struct matcher *mt);

/* resolve_instancetype.c */
int instancetype_check_spread(struct resolver *r);
int instancetype_apply(struct resolver *r);

/* resolve_preference.c: the CPU topology a preference spec (may be NULL)
 * prefers: preferredCPUTopology normalised ("sockets", "spread", ...), the
 * effective spread ratio and across, and sockets/cores/threads for guest
 * vCPUs under it. */
const char *preference_cpu_topology(const struct node *pref_spec);
uint32_t preference_spread_ratio(const struct node *pref_spec);
const char *preference_spread_across(const struct node *pref_spec);
void preference_topology(const struct node *pref_spec, uint32_t guest, uint32_t out[3]);
/* applying it */
void preference_early(struct resolver *r);
void preference_autoattach(struct resolver *r);
void preference_apply(struct resolver *r);
int preference_requirements(struct resolver *r);

/* resolve_validate.c: post-apply VM/VMI validation. */
int validate_result(struct resolver *r);

/* resolve_preset.c */
int presets_apply(struct resolver *r);

/* resolve_firmware.c: spec.domain.firmware.uuid of the VM's template
 * tmpl, when unset, as KubeVirt's VM controller sets it (the version 5
 * UUID of the VM's name); origin "default". */
void firmware_uuid_default(struct resolver *r, struct node *tmpl);

/* helpers shared by the resolve files (resolve.c) */
struct node *resolve_vmi_spec(struct resolver *r);
struct node *resolve_vmi_domain(struct resolver *r);
/* Copy src (may be NULL) stamped with origin. */
struct node *resolve_copy(struct resolver *r, const struct node *src, const char *origin);
/* "" when n is not a string */
const char *resolve_str(const struct node *n);
bool resolve_qty(const struct node *n, struct quantity *q);
/* lower-case copy */
char *resolve_lower(struct arena *a, const char *s);
/* effective topology (resolution.md §0.2) and guest memory of a VMI spec */
void resolve_effective_topology(const struct node *spec, uint32_t out[3]);
const struct node *resolve_effective_memory(const struct node *spec);

/* session.c: load + resolve + report, shared by the CLI, the library API,
 * the fuzzer and the benchmark. */
struct session {
	struct cluster cl;
	struct arena a; /* per resolution */
	struct diag d;
	struct resolver r;
};

void session_init(struct session *s);
/* n_files == 0: manifest text (NULL: $VMLET_MANIFEST). 0 or -errno. */
int session_load(struct session *s, const char *const *files, unsigned int n_files,
		 const char *manifest);
/* Resolve (again: the previous result is dropped). 0 or -EINVAL. */
int session_resolve(struct session *s, const char *vm_name);
/* The v1 List: VM after sync, VMI, ControllerRevisions. */
struct node *session_list(struct session *s);
/* Print load and resolution diagnostics on f. */
void session_report(const struct session *s, FILE *f);
void session_free(struct session *s);

#endif /* VMLET_SPEC_RESOLVE_H */
