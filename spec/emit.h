/* SPDX-License-Identifier: MIT */
/*
 * emit.h - serializers of node trees and of the resolution result:
 * JSON (json-c), YAML (block style, quoting whatever would not read back
 * as the same string), and the human --explain report.
 */
#ifndef VMLET_SPEC_EMIT_H
#define VMLET_SPEC_EMIT_H

#include <stdio.h>

#include "spec/node.h"

struct json_object;
struct resolver;

/* A json-c object for n (NULL for null); caller json_object_put()s it. */
struct json_object *emit_json_value(const struct node *n);
/* Compact one-line JSON text of n, in arena a (for messages). */
char *emit_json_text(struct arena *a, const struct node *n);
/* Pretty JSON document + newline. 0 or -errno. */
int emit_json(FILE *f, const struct node *n);
/* Pretty JSON of a json-c object (empty {} and [] kept on one line). */
int emit_json_object(FILE *f, struct json_object *o);
/* YAML document (no leading "---") */
int emit_yaml(FILE *f, const struct node *n);
/* --explain: which object set every resolved field of the VMI. */
int emit_explain(FILE *f, const struct resolver *r);

#endif /* VMLET_SPEC_EMIT_H */
