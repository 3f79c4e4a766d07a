/* SPDX-License-Identifier: MIT */
/*
 * fields.c - apply docs/fields.md (field_rules[]) to a resolution: walk the
 * VirtualMachine's spec (its template comes in as the resolved VMI) and the
 * VirtualMachineInstance's spec, and for every field that is set, the first
 * of its rules whose condition holds decides: a warning (differently), an
 * error (refused) or nothing. Fields the table has no row for are not
 * walked into: they are inside a field of a Kubernetes type (one row), or
 * unknown (the schema check reports those).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/fields.h"

#define PATH_MAX_LEN 512

struct fwalk {
	const struct resolver *r;
	char schema[PATH_MAX_LEN]; /* table path: list items as [] */
	char msg[PATH_MAX_LEN];	   /* the user's path: list items as [i] */
	int err;
};

static int rule_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct field_rule *)elem)->path);
}

const struct field_rule *fields_find(const char *path)
{
	const struct field_rule *f =
	    bsearch(path, field_rules, field_n_rules, sizeof(*field_rules), rule_cmp);

	while (f && f > field_rules && !strcmp(f[-1].path, path))
		f--;
	return f;
}

/* Set: not null, not an empty list or string (an empty map is set). */
static bool is_set(const struct node *n)
{
	if (node_is_null(n) || (node_is_seq(n) && !n->n))
		return false;
	return !(n->type == N_STR && (!n->str || !*n->str));
}

/* v is one of "|a|b|" */
static bool in_values(const char *values, const char *v)
{
	size_t l = strlen(v);
	const char *p;

	if (!l)
		return strstr(values, "||") != NULL;
	for (p = values; (p = strstr(p, v)); p++)
		if (p > values && p[-1] == '|' && p[l] == '|')
			return true;
	return false;
}

/* The rule's text with each %v replaced by v. */
static const char *expand(const struct fwalk *w, const char *text, const char *v)
{
	char buf[1024];
	size_t n = 0, l;

	for (; *text && n + 1 < sizeof(buf); text++) {
		if (text[0] == '%' && text[1] == 'v') {
			l = strlen(v);
			if (l > sizeof(buf) - 1 - n)
				l = sizeof(buf) - 1 - n;
			memcpy(buf + n, v, l);
			n += l;
			text++;
			continue;
		}
		buf[n++] = *text;
	}
	buf[n] = 0;
	return arena_strdup(w->r->a, buf);
}

static void apply(struct fwalk *w, const struct field_rule *f, const struct node *n)
{
	const struct node *t;
	const char *v;

	if (!is_set(n))
		return;
	for (; f < field_rules + field_n_rules && !strcmp(f->path, w->schema); f++) {
		t = f->key ? node_get(n, f->key) : n;
		v = node_text(t) ? node_text(t) : "";
		if (f->values && in_values(f->values, v) == f->negate)
			continue;
		if (f->treatment == FIELD_DIFFERENTLY) {
			diag_warn(w->r->d, n, w->msg, "%s", expand(w, f->text, v));
		} else if (f->treatment == FIELD_REFUSED) {
			diag_err(w->r->d, n, w->msg, "%s", expand(w, f->text, v));
			w->err = -EINVAL;
		}
		return;
	}
}

/* Append ".key" (key) or "[]" / "[index]" (key NULL) to the paths; false
 * (nothing appended) when too long. */
static bool push(struct fwalk *w, const char *key, unsigned int index)
{
	size_t sl = strlen(w->schema), ml = strlen(w->msg);
	int a, b;

	if (!key) {
		a = snprintf(w->schema + sl, sizeof(w->schema) - sl, "[]");
		b = snprintf(w->msg + ml, sizeof(w->msg) - ml, "[%u]", index);
	} else {
		a = snprintf(w->schema + sl, sizeof(w->schema) - sl, ".%s", key);
		b = snprintf(w->msg + ml, sizeof(w->msg) - ml, ".%s", key);
	}
	if (a < 0 || b < 0 || (size_t)a >= sizeof(w->schema) - sl ||
	    (size_t)b >= sizeof(w->msg) - ml) {
		w->schema[sl] = 0;
		w->msg[ml] = 0;
		return false;
	}
	return true;
}

static void walk_map(struct fwalk *w, const struct node *m, const char *skip);

static void walk_value(struct fwalk *w, const struct node *v)
{
	size_t sl = strlen(w->schema), ml = strlen(w->msg);
	unsigned int i;

	if (node_is_map(v)) {
		walk_map(w, v, NULL);
		return;
	}
	for (i = 0; node_is_seq(v) && i < v->n; i++) {
		if (!push(w, NULL, i))
			return;
		if (node_is_map(v->items[i]))
			walk_map(w, v->items[i], NULL);
		w->schema[sl] = 0;
		w->msg[ml] = 0;
	}
}

static void walk_map(struct fwalk *w, const struct node *m, const char *skip)
{
	size_t sl = strlen(w->schema), ml = strlen(w->msg);
	const struct field_rule *f;
	unsigned int i;

	for (i = 0; node_is_map(m) && i < m->n; i++) {
		if (skip && !strcmp(m->kv[i].key, skip))
			continue;
		if (!push(w, m->kv[i].key, 0))
			continue;
		f = fields_find(w->schema);
		if (f) {
			apply(w, f, m->kv[i].val);
			walk_value(w, m->kv[i].val);
		}
		w->schema[sl] = 0;
		w->msg[ml] = 0;
	}
}

int fields_check(const struct resolver *r)
{
	struct fwalk w = {.r = r};
	const struct node *spec = node_get(r->vmi, "spec");

	if (r->vm && !r->vmi_only) {
		strcpy(w.schema, "spec");
		strcpy(w.msg, "spec");
		walk_map(&w, node_get(r->vm, "spec"), "template");
	}
	strcpy(w.schema, "spec.template.spec");
	strcpy(w.msg, r->vmi_only ? "spec" : "spec.template.spec");
	walk_map(&w, spec, NULL);
	if (fields_check_annotations(r))
		w.err = -EINVAL;
	return w.err;
}
