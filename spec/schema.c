/* SPDX-License-Identifier: MIT */
/*
 * schema.c - lookups in the generated schema table (spec/schema.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "spec/schema.h"

const struct schema_type *schema_type(const char *name)
{
	unsigned int lo = 0, hi = schema_n_types, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(name, schema_types[mid].name);
		if (c == 0)
			return &schema_types[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const struct schema_field *schema_field(const struct schema_type *t, const char *key)
{
	unsigned int lo = 0, hi = t ? t->n : 0, mid;
	const struct schema_field *f;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		f = &schema_fields[t->first + mid];
		c = strcmp(key, f->key);
		if (c == 0)
			return f;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const struct schema_type *schema_val_type(const struct schema_val *v)
{
	return v && v->kind == SK_OBJECT ? &schema_types[v->arg] : NULL;
}

const struct schema_val *schema_val_item(const struct schema_val *v)
{
	return v && (v->kind == SK_ARRAY || v->kind == SK_MAP) ? &schema_vals[v->arg] : NULL;
}

const char *const *schema_val_enum(const struct schema_val *v)
{
	return v && v->kind == SK_STRING && v->arg ? &schema_enum_strs[v->arg - 1] : NULL;
}

const char *schema_kind_text(enum schema_kind k)
{
	switch (k) {
	case SK_OBJECT:
		return "an object";
	case SK_ARRAY:
		return "a list";
	case SK_MAP:
		return "an object";
	case SK_STRING:
		return "a string";
	case SK_BOOL:
		return "a boolean";
	case SK_INT32:
		return "a 32-bit integer";
	case SK_INT64:
		return "a 64-bit integer";
	case SK_UINT32:
		return "an integer between 0 and 4294967295";
	case SK_UINT64:
		return "a non-negative integer";
	case SK_NUMBER:
		return "a number";
	case SK_QUANTITY:
		return "a quantity such as 4Gi, 512Mi or 2";
	case SK_INT_OR_STRING:
		return "an integer or a string";
	case SK_STRING_OR_NUMBER:
		return "a string or a number";
	case SK_TIME:
		return "a time (RFC 3339 string)";
	case SK_ANY:
		return "any value";
	}
	return "?";
}

/* the object type reached through v (an object, or arrays/maps of them) */
static const struct schema_type *object_under(const struct schema_val *v)
{
	while (v && (v->kind == SK_ARRAY || v->kind == SK_MAP))
		v = schema_val_item(v);
	return schema_val_type(v);
}

const struct schema_val *schema_lookup(const char *root, const char *path)
{
	const struct schema_type *t = schema_type(root);
	const struct schema_val *v = NULL;
	const struct schema_field *f;
	char key[128];
	size_t len;

	while (t && *path) {
		len = strcspn(path, ".[");
		if (len == 0 || len >= sizeof(key))
			return NULL;
		memcpy(key, path, len);
		key[len] = 0;
		f = schema_field(t, key);
		if (!f)
			return NULL;
		v = schema_field_val(f);
		path += len;
		while (*path == '[' && v->kind == SK_ARRAY) {
			path += strcspn(path, "]");
			if (*path != ']')
				return NULL;
			path++;
			v = schema_val_item(v);
		}
		if (*path == '[')
			return NULL;
		if (*path == '.')
			path++;
		else if (*path)
			return NULL;
		else
			return v;
		t = object_under(v);
	}
	return NULL;
}

struct walk {
	schema_walk_fn fn;
	void *arg;
	char path[1024];
	const struct schema_type *stack[64];
	unsigned int depth;
};

static int walk_type(struct walk *w, const struct schema_type *t, size_t plen)
{
	const struct schema_field *f;
	const struct schema_val *v;
	const struct schema_type *sub;
	unsigned int i, j;
	size_t l;
	int ret;

	if (w->depth == sizeof(w->stack) / sizeof(w->stack[0]))
		return 0;
	for (i = 0; i < w->depth; i++)
		if (w->stack[i] == t)
			return 0;
	w->stack[w->depth++] = t;
	for (i = 0; i < t->n; i++) {
		f = &schema_fields[t->first + i];
		l = plen + (size_t)snprintf(w->path + plen, sizeof(w->path) - plen, "%s%s",
					    plen ? "." : "", f->key);
		v = schema_field_val(f);
		for (; v->kind == SK_ARRAY; v = schema_val_item(v))
			for (j = 0; j < 2 && l + 1 < sizeof(w->path); j++)
				w->path[l++] = "[]"[j];
		w->path[l < sizeof(w->path) ? l : sizeof(w->path) - 1] = 0;
		ret = w->fn(w->path, f, w->arg);
		if (ret == 0 && (sub = object_under(schema_field_val(f))))
			ret = walk_type(w, sub, strlen(w->path));
		w->path[plen] = 0;
		if (ret != 0 && ret != 1) {
			w->depth--;
			return ret;
		}
	}
	w->depth--;
	return 0;
}

int schema_walk(const char *root, schema_walk_fn fn, void *arg)
{
	const struct schema_type *t = schema_type(root);
	struct walk w = {.fn = fn, .arg = arg};

	if (!t)
		return -ENOENT;
	return walk_type(&w, t, 0);
}
