/* SPDX-License-Identifier: MIT */
/*
 * load.h - reading manifests into node trees.
 *
 * yaml_load (spec/yaml.c, the only user of libyaml) parses one buffer of
 * multi-document YAML or JSON. Plain scalars are typed like Kubernetes'
 * YAML reader does (null, bool incl. yes/no/on/off, int, float), quoted
 * ones are strings; anchors, aliases and "<<" merge keys are expanded.
 * Every document whose root is not null must be a map. Limits: nesting
 * depth 200, 1,000,000 nodes per buffer (alias bombs fail cleanly).
 */
#ifndef VMLET_SPEC_LOAD_H
#define VMLET_SPEC_LOAD_H

#include <stddef.h>

#include "spec/diag.h"
#include "spec/node.h"

struct doc {
	struct node *root;
	struct doc *next;
};

struct doc_list {
	struct doc *head, **tail;
	unsigned int n;
};

void yaml_doc_list_init(struct doc_list *l);

/* Parse buf[0..len) named file (kept by pointer: must outlive the arena
 * use) and append its documents to l. Returns 0 or -EINVAL with the error
 * (file:line:col of the problem) recorded in d. */
int yaml_load(struct arena *a, struct diag *d, const char *file, const char *buf, size_t len,
	      struct doc_list *l);

/* The type a plain (unquoted) YAML scalar resolves to; a string that
 * does not resolve to N_STR must be quoted when emitted. */
enum node_type yaml_plain_type(const char *s);

#endif /* VMLET_SPEC_LOAD_H */
