/* SPDX-License-Identifier: MIT */
/*
 * explain.c - `vmlet resolve --explain`: every resolved field of the VMI
 * with the object that set it (the VM, an instancetype, a preference, a
 * preset, or a default) and where in which file.
 */
#include <errno.h>
#include <string.h>

#include "spec/emit.h"
#include "spec/resolve.h"
#include "vmm/vm_config.h"

struct row {
	const char *path, *value, *origin, *where;
};

struct rows {
	struct arena *a;
	struct row *v;
	unsigned int n, cap;
};

static void add(struct rows *rs, const char *path, const struct node *n, const char *origin)
{
	struct row *r;
	const char *val;
	struct row *nv;

	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		nv = arena_alloc(rs->a, rs->cap * sizeof(*nv));
		if (rs->n)
			memcpy(nv, rs->v, rs->n * sizeof(*nv));
		rs->v = nv;
	}
	r = &rs->v[rs->n++];
	if (node_is_null(n))
		val = "null";
	else if (n->type == N_MAP)
		val = "{}";
	else if (n->type == N_SEQ)
		val = "[]";
	else
		val = n->str;
	if (strlen(val) > 40 || strchr(val, '\n')) {
		char *t = arena_strndup(rs->a, val, 37);
		char *nl = strchr(t, '\n');

		if (nl)
			*nl = 0;
		val = arena_printf(rs->a, "%s...", t);
	} else if (n && n->type == N_STR) {
		val = arena_printf(rs->a, "\"%s\"", val);
	}
	r->path = path;
	r->value = val;
	r->origin = origin ? origin : "default";
	r->where = n && n->file ? arena_printf(rs->a, "%s:%u", n->file, n->line) : "";
}

static void walk(struct rows *rs, const char *path, const struct node *n, const char *origin)
{
	unsigned int i;
	const char *name;

	if (n && n->origin)
		origin = n->origin;
	if (!n)
		return;
	if ((n->type != N_MAP && n->type != N_SEQ) || !n->n) {
		add(rs, path, n, origin);
		return;
	}
	for (i = 0; i < n->n; i++) {
		if (n->type == N_MAP) {
			/* the name of a named list item is already in its path */
			if (strcmp(n->kv[i].key, "name") == 0 && path[strlen(path) - 1] == ']' &&
			    n->kv[i].val && n->kv[i].val->type == N_STR && n->n > 1)
				continue;
			walk(rs,
			     arena_printf(rs->a, "%s%s%s", path, *path ? "." : "", n->kv[i].key),
			     n->kv[i].val, origin);
		} else {
			name = node_sval(node_get(n->items[i], "name"));
			walk(rs,
			     name ? arena_printf(rs->a, "%s[%s]", path, name)
				  : arena_printf(rs->a, "%s[%u]", path, i),
			     n->items[i], origin);
		}
	}
}

static unsigned int width(const struct rows *rs, size_t off, unsigned int cap)
{
	unsigned int i, w = 0, l;

	for (i = 0; i < rs->n; i++) {
		l = (unsigned int)strlen(*(const char *const *)((const char *)&rs->v[i] + off));
		if (l > w)
			w = l;
	}
	return w > cap ? cap : w;
}

/* "fields set: 3 by VM x, 5 by instancetype y, ..." in order of appearance */
static void summary(FILE *f, const struct rows *rs)
{
	unsigned int i, j, n;
	bool seen;

	fputs("\n  fields set:", f);
	for (i = 0; i < rs->n; i++) {
		for (seen = false, j = 0; j < i && !seen; j++)
			seen = strcmp(rs->v[j].origin, rs->v[i].origin) == 0;
		if (seen)
			continue;
		for (n = 0, j = i; j < rs->n; j++)
			n += strcmp(rs->v[j].origin, rs->v[i].origin) == 0;
		fprintf(f, "%s %u by %s", i ? "," : "", n, rs->v[i].origin);
	}
	fputc('\n', f);
}

int emit_explain(FILE *f, const struct resolver *r)
{
	struct rows rs = {.a = r->a};
	const struct node *md = node_get(r->vmi, "metadata"), *spec = node_get(r->vmi, "spec");
	const struct node *mem = resolve_effective_memory(spec);
	const uint32_t *t = r->topology;
	const struct vm_config topo = {.sockets = t[0], .cores = t[1], .threads = t[2]};
	unsigned int wp, wv, wo, i;

	walk(&rs, "metadata.labels", node_get(md, "labels"), r->vm_origin);
	walk(&rs, "metadata.annotations", node_get(md, "annotations"), r->vm_origin);
	walk(&rs, "spec", spec, r->vm_origin);
	wp = width(&rs, offsetof(struct row, path), 60);
	wv = width(&rs, offsetof(struct row, value), 40);
	wo = width(&rs, offsetof(struct row, origin), 72);
	fprintf(f, "VirtualMachineInstance %s/%s", r->ns, r->name);
	if (r->it.origin || r->pref.origin)
		fprintf(f, " from %s%s%s%s%s", r->vm_origin, r->it.origin ? ", " : "",
			r->it.origin ? r->it.origin : "", r->pref.origin ? ", " : "",
			r->pref.origin ? r->pref.origin : "");
	fputs("\n\n", f);
	fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wp, "FIELD", wv, "VALUE", wo, "SET BY", "FROM");
	for (i = 0; i < rs.n; i++)
		fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wp, rs.v[i].path, wv, rs.v[i].value, wo,
			rs.v[i].origin, rs.v[i].where);
	summary(f, &rs);
	fprintf(f, "  effective: %llu vCPU (%u socket%s x %u core%s x %u thread%s), memory %s\n",
		(unsigned long long)vm_config_vcpus(&topo), t[0], t[0] == 1 ? "" : "s", t[1],
		t[1] == 1 ? "" : "s", t[2], t[2] == 1 ? "" : "s",
		node_text(mem) ? node_text(mem) : "unset");
	return ferror(f) ? -EIO : 0;
}
