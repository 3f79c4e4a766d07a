/* SPDX-License-Identifier: MIT */
/*
 * schema_decode.c - strict decoding of every object of the cluster against
 * KubeVirt's API schema (spec/schema.h), as the API server does with
 * kubectl's default strict field validation: an unknown field, a value of
 * the wrong type, a value outside its enum or a missing required field is
 * an error naming the file, line, column and field path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "spec/resolve.h"
#include "spec/schema.h"

struct dec {
	struct diag *d;
	const char *what; /* "Kind \"name\": " for objects other than VMs */
	bool legacy;	  /* seed-era form: required fields not enforced */
	unsigned int errors;
	char path[512];
};

/* Fields of seed-era forms that current KubeVirt no longer defines, read
 * as their successors: a VM's spec.flavor is spec.instancetype (the
 * resolver renames it, so it never reaches the output). */
static const struct {
	const char *type, *key, *as;
} seed_fields[] = {
    {SCHEMA_T_VM_SPEC, "flavor", "v1.InstancetypeMatcher"},
};

static const char *type_text(const struct node *n)
{
	switch (n->type) {
	case N_MAP:
		return "an object";
	case N_SEQ:
		return "a list";
	case N_BOOL:
		return "a boolean";
	case N_INT:
		return "an integer";
	case N_FLOAT:
		return "a number";
	case N_STR:
		return "a string";
	default:
		return "null";
	}
}

static void bad(struct dec *x, const struct node *n, const char *want)
{
	const char *t = node_text(n);

	if (t)
		diag_err(x->d, n, x->path, "%sinvalid value \"%s\" (%s): must be %s", x->what, t,
			 type_text(n), want);
	else
		diag_err(x->d, n, x->path, "%sinvalid value (%s): must be %s", x->what,
			 type_text(n), want);
	x->errors++;
}

static void bad_enum(struct dec *x, const struct node *n, const char *const *vals)
{
	char list[256] = "";
	size_t l = 0;

	for (; *vals && l < sizeof(list); vals++)
		l += (size_t)snprintf(list + l, sizeof(list) - l, "%s\"%s\"", l ? ", " : "", *vals);
	diag_err(x->d, n, x->path, "%sunsupported value \"%s\": must be one of %s", x->what,
		 node_text(n), list);
	x->errors++;
}

static size_t push(struct dec *x, size_t plen, const char *fmt, const char *key, unsigned int i)
{
	int n = key ? snprintf(x->path + plen, sizeof(x->path) - plen, fmt, plen ? "." : "", key)
		    : snprintf(x->path + plen, sizeof(x->path) - plen, fmt, i);

	if (n < 0 || (size_t)n >= sizeof(x->path) - plen)
		return sizeof(x->path) - 1;
	return plen + (size_t)n;
}

static void value(struct dec *x, struct node *n, const struct schema_val *v, size_t plen);

static void integer(struct dec *x, const struct node *n, enum schema_kind k)
{
	static const long long lo[] = {
	    [SK_INT32] = INT32_MIN, [SK_INT64] = INT64_MIN, [SK_UINT32] = 0, [SK_UINT64] = 0};
	static const long long hi[] = {[SK_INT32] = INT32_MAX,
				       [SK_INT64] = INT64_MAX,
				       [SK_UINT32] = UINT32_MAX,
				       [SK_UINT64] = INT64_MAX};
	long long out;

	if (node_ival(n, lo[k], hi[k], &out))
		bad(x, n, schema_kind_text(k));
}

static void scalar(struct dec *x, const struct node *n, const struct schema_val *v)
{
	const char *const *e;
	struct quantity q;

	switch ((enum schema_kind)v->kind) {
	case SK_STRING:
	case SK_TIME:
		if (n->type != N_STR)
			return bad(x, n, schema_kind_text(v->kind));
		if (!(e = schema_val_enum(v)))
			return;
		for (const char *const *p = e; *p; p++)
			if (strcmp(*p, n->str) == 0)
				return;
		return bad_enum(x, n, e);
	case SK_BOOL:
		if (n->type != N_BOOL)
			bad(x, n, schema_kind_text(v->kind));
		return;
	case SK_INT32:
	case SK_INT64:
	case SK_UINT32:
	case SK_UINT64:
		return integer(x, n, v->kind);
	case SK_NUMBER:
		if (n->type != N_INT && n->type != N_FLOAT)
			bad(x, n, schema_kind_text(v->kind));
		return;
	case SK_QUANTITY:
		if (!resolve_qty(n, &q))
			bad(x, n, schema_kind_text(v->kind));
		else if (q.nanos < 0)
			bad(x, n, "a non-negative quantity");
		return;
	case SK_INT_OR_STRING:
		if (n->type != N_INT && n->type != N_STR)
			bad(x, n, schema_kind_text(v->kind));
		return;
	case SK_STRING_OR_NUMBER:
		if (n->type != N_INT && n->type != N_STR && n->type != N_FLOAT)
			bad(x, n, schema_kind_text(v->kind));
		return;
	default:
		return;
	}
}

static const struct schema_type *seed_field(const struct schema_type *t, const char *key)
{
	for (unsigned int i = 0; i < sizeof(seed_fields) / sizeof(seed_fields[0]); i++)
		if (strcmp(seed_fields[i].type, t->name) == 0 &&
		    strcmp(seed_fields[i].key, key) == 0)
			return schema_type(seed_fields[i].as);
	return NULL;
}

/* a key the type lacks: an error, or (where the CRD preserves unknown
 * fields) a warning and the key removed; returns true when removed */
static bool unknown(struct dec *x, struct node *m, unsigned int i, bool preserve)
{
	const struct node_kv *kv = &m->kv[i];
	struct node at = {.file = kv->val->file, .line = kv->line, .col = kv->col};
	const struct node *loc = kv->line ? &at : kv->val;

	if (!preserve) {
		diag_err(x->d, loc, x->path, "%sunknown field \"%s\"", x->what, kv->key);
		x->errors++;
		return false;
	}
	diag_warn(x->d, loc, x->path,
		  "%sunknown field \"%s\": KubeVirt keeps it here but nothing reads it; ignored",
		  x->what, kv->key);
	node_del(m, kv->key);
	return true;
}

static void object(struct dec *x, struct node *m, const struct schema_type *t, size_t plen,
		   bool preserve)
{
	const struct schema_field *f;
	const struct schema_type *seed;
	unsigned int i;
	size_t l;

	for (i = 0; i < m->n; i++) {
		l = push(x, plen, "%s%s", m->kv[i].key, 0);
		f = schema_field(t, m->kv[i].key);
		if (f && (f->flags & SCHEMA_PRESERVE_UNKNOWN) && node_is_map(m->kv[i].val))
			object(x, m->kv[i].val, schema_val_type(schema_field_val(f)), l, true);
		else if (f)
			value(x, m->kv[i].val, schema_field_val(f), l);
		else if ((seed = seed_field(t, m->kv[i].key)) && node_is_map(m->kv[i].val))
			object(x, m->kv[i].val, seed, l, false);
		else if (seed && !node_is_null(m->kv[i].val))
			bad(x, m->kv[i].val, "an object");
		else if (!seed && unknown(x, m, i, preserve))
			i--;
		x->path[plen] = 0;
	}
	if (x->legacy)
		return;
	for (i = 0; i < t->n; i++) {
		f = &schema_fields[t->first + i];
		if (!(f->flags & SCHEMA_REQUIRED) || !node_is_null(node_get(m, f->key)))
			continue;
		push(x, plen, "%s%s", f->key, 0);
		diag_err(x->d, m, x->path, "%sRequired value", x->what);
		x->errors++;
		x->path[plen] = 0;
	}
}

static void value(struct dec *x, struct node *n, const struct schema_val *v, size_t plen)
{
	const struct schema_val *item;
	unsigned int i;
	size_t l;

	if (node_is_null(n) || v->kind == SK_ANY)
		return;
	switch ((enum schema_kind)v->kind) {
	case SK_OBJECT:
		if (n->type != N_MAP)
			return bad(x, n, "an object");
		return object(x, n, schema_val_type(v), plen, false);
	case SK_ARRAY:
		if (n->type != N_SEQ)
			return bad(x, n, "a list");
		item = schema_val_item(v);
		for (i = 0; i < n->n; i++) {
			l = push(x, plen, "[%u]", NULL, i);
			value(x, n->items[i], item, l);
			x->path[plen] = 0;
		}
		return;
	case SK_MAP:
		if (n->type != N_MAP)
			return bad(x, n, "an object");
		item = schema_val_item(v);
		for (i = 0; i < n->n; i++) {
			l = push(x, plen, "%s%s", n->kv[i].key, 0);
			value(x, n->kv[i].val, item, l);
			x->path[plen] = 0;
		}
		return;
	default:
		return scalar(x, n, v);
	}
}

int schema_decode(struct diag *d, struct node *obj, const char *type, const char *at,
		  const char *what, bool legacy)
{
	struct dec x = {.d = d, .what = what ? what : "", .legacy = legacy};
	const struct schema_type *t = type ? schema_type(type) : NULL;

	if (!t)
		return -ENOENT;
	snprintf(x.path, sizeof(x.path), "%s", at ? at : "");
	object(&x, obj, t, strlen(x.path), false);
	return x.errors ? -EINVAL : 0;
}
