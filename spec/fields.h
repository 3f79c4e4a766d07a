/* SPDX-License-Identifier: MIT */
/*
 * fields.h - what vmlet does with each field of a VirtualMachine
 * (docs/fields.md, turned into field_rules[] by scripts/gen-fields at build
 * time) and the check that applies it to a resolution: a warning for each
 * field vmlet runs differently, an error for each it refuses.
 */
#ifndef VMLET_SPEC_FIELDS_H
#define VMLET_SPEC_FIELDS_H

#include <stdbool.h>

#include "spec/resolve.h"

enum field_treatment {
	FIELD_IMPLEMENTED = 0,
	FIELD_DIFFERENTLY, /* warn: text says what vmlet does instead */
	FIELD_REFUSED,	   /* error: text says why */
	FIELD_PARENT,	   /* decided by the enclosing field's row */
};

struct field_rule {
	const char *path;   /* "spec.template.spec.domain.cpu.model"; list items [] */
	const char *key;    /* condition on this field of the value; NULL: the value */
	bool negate;	    /* != instead of = */
	const char *values; /* "|a|b|" or NULL: no condition */
	enum field_treatment treatment;
	const char *text; /* "%v" stands for the value compared */
};

/* Sorted by path (strcmp); a field's rows in table order. */
extern const struct field_rule field_rules[];
extern const unsigned int field_n_rules;

/* The first rule of path, or NULL when the table has none. */
const struct field_rule *fields_find(const char *path);

/*
 * Apply the table to r's VirtualMachine spec (without its template) and
 * its VirtualMachineInstance spec. Diagnostics go to r->d; returns 0, or -EINVAL
 * when a field is refused.
 */
int fields_check(const struct resolver *r);

/*
 * The VMI's annotations KubeVirt reads to change the domain or the
 * virt-launcher pod (kubevirt.io/disablePCIHole64, ignitiondata, hook
 * sidecars, CRI-O's cpu-load-balancing.crio.io and friends...): a warning
 * where vmlet does something else, an error where the guest would miss
 * what it was given (fields_annot.c). 0 or -EINVAL.
 */
int fields_check_annotations(const struct resolver *r);

#endif /* VMLET_SPEC_FIELDS_H */
