/* SPDX-License-Identifier: MIT */
/*
 * schema.h - KubeVirt's API schema (spec/schema/swagger.json) as a compact
 * read-only table: every object type reachable from the kinds vmlet reads,
 * its fields (sorted by JSON key), their value types, enums and required
 * flags. The table (schema_types, schema_fields, schema_vals,
 * schema_enum_strs) is generated at build time by scripts/gen-schema-table
 * into build/gen/schema_table.c; nothing parses JSON at run time.
 *
 * Types are named as in the swagger ("v1.CPU", "v1beta1.
 * VirtualMachineInstancetypeSpec", "k8s.io.apimachinery.pkg.apis.meta.v1.
 * ObjectMeta"), plus four kinds KubeVirt's schema does not hold, which
 * vmlet reads (SCHEMA_T_* below). A few facts the swagger cannot express
 * are folded in by the generator (see its header): which integers are
 * unsigned in KubeVirt's Go types, the enums and
 * x-kubernetes-preserve-unknown-fields of KubeVirt's CRDs.
 *
 * Pure data and lookups: no allocation, no I/O, safe from any thread.
 */
#ifndef VMLET_SPEC_SCHEMA_H
#define VMLET_SPEC_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

/* the kinds vmlet decodes, by their schema type */
#define SCHEMA_T_VM	  "v1.VirtualMachine"
#define SCHEMA_T_VM_SPEC  "v1.VirtualMachineSpec"
#define SCHEMA_T_VMI	  "v1.VirtualMachineInstance"
#define SCHEMA_T_VMI_SPEC "v1.VirtualMachineInstanceSpec"
#define SCHEMA_T_PRESET	  "v1.VirtualMachineInstancePreset"
#define SCHEMA_T_IT	  "v1beta1.VirtualMachineInstancetype"
#define SCHEMA_T_CIT	  "v1beta1.VirtualMachineClusterInstancetype"
#define SCHEMA_T_PREF	  "v1beta1.VirtualMachinePreference"
#define SCHEMA_T_CPREF	  "v1beta1.VirtualMachineClusterPreference"
/* not in KubeVirt's schema: built by the generator from the Kubernetes /
 * CDI objects' top-level shape (spec types from KubeVirt's schema where it
 * has them, free-form otherwise) */
#define SCHEMA_T_REVISION "vmlet.ControllerRevision"
#define SCHEMA_T_PVC	  "vmlet.PersistentVolumeClaim"
#define SCHEMA_T_DV	  "vmlet.DataVolume"
#define SCHEMA_T_DS	  "vmlet.DataSource"

enum schema_kind {
	SK_OBJECT = 1,	  /* a struct: arg = index into schema_types */
	SK_ARRAY,	  /* arg = index into schema_vals of the items */
	SK_MAP,		  /* any keys; arg = index into schema_vals of the values */
	SK_STRING,	  /* arg = 0 any string, else 1 + index of its enum */
	SK_BOOL,	  /* true / false */
	SK_INT32,	  /* -2^31 .. 2^31-1 */
	SK_INT64,	  /* -2^63 .. 2^63-1 */
	SK_UINT32,	  /* 0 .. 2^32-1 (Go uint32) */
	SK_UINT64,	  /* 0 .. 2^63-1 (Go uint, uint64; YAML ints end there) */
	SK_NUMBER,	  /* any number */
	SK_QUANTITY,	  /* resource.Quantity: "4Gi", 2, 0.5 */
	SK_INT_OR_STRING, /* intstr.IntOrString */
	SK_STRING_OR_NUMBER /* a string or a number */,
	SK_TIME, /* metav1.Time: an RFC 3339 string */
	SK_ANY,	 /* free-form JSON (RawExtension, FieldsV1) */
};

/* schema_field.flags */
#define SCHEMA_REQUIRED 0x1
/* x-kubernetes-preserve-unknown-fields on this field's object: the API
 * server keeps unknown keys there (nothing reads them) */
#define SCHEMA_PRESERVE_UNKNOWN 0x2

struct schema_val {
	uint8_t kind; /* enum schema_kind */
	uint16_t arg;
};

struct schema_field {
	const char *key;
	uint16_t val; /* index into schema_vals */
	uint8_t flags;
};

struct schema_type {
	const char *name;
	uint16_t first, n; /* schema_fields[first .. first + n), sorted by key */
};

/* The generated table (build/gen/schema_table.c). schema_types is sorted
 * by name; schema_enum_strs holds each enum's values followed by NULL. */
extern const struct schema_type schema_types[];
extern const unsigned int schema_n_types;
extern const struct schema_field schema_fields[];
extern const struct schema_val schema_vals[];
extern const char *const schema_enum_strs[];

/* The type of that name, NULL when the table lacks it. */
const struct schema_type *schema_type(const char *name);
/* A field of t by JSON key, NULL when t has no such field. */
const struct schema_field *schema_field(const struct schema_type *t, const char *key);
static inline const struct schema_val *schema_field_val(const struct schema_field *f)
{
	return &schema_vals[f->val];
}
/* SK_OBJECT: its type; else NULL. */
const struct schema_type *schema_val_type(const struct schema_val *v);
/* SK_ARRAY / SK_MAP: the value type of the elements; else NULL. */
const struct schema_val *schema_val_item(const struct schema_val *v);
/* SK_STRING with an enum: its NULL-terminated values; else NULL. */
const char *const *schema_val_enum(const struct schema_val *v);
/* What a value of that kind is, for messages ("a 32-bit integer"). */
const char *schema_kind_text(enum schema_kind k);

/*
 * The value type at a dotted field path under the type named root, e.g.
 * schema_lookup(SCHEMA_T_VM, "spec.template.spec.domain.cpu.model").
 * Array elements are entered implicitly ("devices.disks.bus"), "[]" or
 * "[N]" after an array key is allowed too ("devices.disks[0].bus"). NULL
 * when root is unknown or the path names no field of the schema.
 */
const struct schema_val *schema_lookup(const char *root, const char *path);

/*
 * Visit every field under the type named root, depth first in key order:
 * fn(path, field, arg) with the dotted path of the field ("spec.running",
 * array elements as "[]": "spec.template.spec.volumes[].name"). A type
 * already on the current path is not entered again (recursive types).
 * fn returns 0 to go on (and descend into the field's object), 1 to skip
 * the field's children, anything else to stop: schema_walk returns it.
 * Returns 0, or -ENOENT when root is unknown.
 */
typedef int (*schema_walk_fn)(const char *path, const struct schema_field *f, void *arg);
int schema_walk(const char *root, schema_walk_fn fn, void *arg);

#endif /* VMLET_SPEC_SCHEMA_H */
