/* SPDX-License-Identifier: MIT */
/*
 * resolve_preset.c - legacy VirtualMachineInstancePresets
 * (docs/resolution.md §14, §18): exclusion annotation (both spellings),
 * label selection, preset vs preset conflicts, per-section merge into the
 * VMI, applied annotation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spec/emit.h"
#include "spec/resolve.h"

static const char *const exclude_keys[] = {
    "virtualmachineinstancepresets.admission.kubevirt.io/exclude",
    "virtualmachinepresets.admission.kubevirt.io/exclude",
};

/* 1 match, 0 no match, -EINVAL invalid selector (reported) */
static int selector_matches(struct resolver *r, const struct object *p, const struct node *labels)
{
	const struct node *sel = node_path(p->root, "spec.selector");
	const struct node *ml = node_get(sel, "matchLabels"),
			  *me = node_get(sel, "matchExpressions");
	const struct node *e = NULL, *vals;
	const char *key, *op, *v;
	unsigned int i, j;
	bool in;

	for (i = 0; node_is_map(ml) && i < ml->n; i++) {
		v = node_sval(node_get(labels, ml->kv[i].key));
		if (!v || !node_text(ml->kv[i].val) || strcmp(v, node_text(ml->kv[i].val)) != 0)
			return 0;
	}
	for (i = 0; node_is_seq(me) && i < me->n; i++) {
		e = me->items[i];
		key = resolve_str(node_get(e, "key"));
		op = resolve_str(node_get(e, "operator"));
		vals = node_get(e, "values");
		v = node_sval(node_get(labels, key));
		for (in = false, j = 0; v && node_is_seq(vals) && j < vals->n; j++)
			in |=
			    node_text(vals->items[j]) && strcmp(node_text(vals->items[j]), v) == 0;
		if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
			if (!node_is_seq(vals) || !vals->n)
				goto invalid;
			if ((strcmp(op, "In") == 0) != in)
				return 0;
		} else if (strcmp(op, "Exists") == 0) {
			if (!v)
				return 0;
		} else if (strcmp(op, "DoesNotExist") == 0) {
			if (v)
				return 0;
		} else {
			goto invalid;
		}
	}
	return 1;
invalid:
	diag_err(r->d, e, "spec.selector.matchExpressions",
		 "invalid selector of preset \"%s\": operator \"%s\"%s", p->name,
		 resolve_str(node_get(e, "operator")),
		 node_is_seq(node_get(e, "values")) ? "" : " needs values");
	return -EINVAL;
}

static const char *const sections[] = {"cpu",	   "firmware",	       "clock",
				       "features", "devices.watchdog", "ioThreadsPolicy"};

static int cmp_name(const void *a, const void *b)
{
	const struct object *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int conflicts(struct resolver *r, const struct object *a, const struct object *b)
{
	const struct node *da = node_path(a->root, "spec.domain"),
			  *db = node_path(b->root, "spec.domain");
	const struct node *ra = node_path(da, "resources.requests"),
			  *rb = node_path(db, "resources.requests");
	const struct node *x, *y;
	unsigned int i, n = 0;

	for (i = 0; node_is_map(ra) && i < ra->n; i++) {
		y = node_get(rb, ra->kv[i].key);
		if (y && !node_equal(ra->kv[i].val, y)) {
			diag_err(
			    r->d, ra->kv[i].val, NULL,
			    "VirtualMachinePresets cannot be applied due to conflicts: presets "
			    "'%s' and '%s' conflict: spec.resources.requests[%s]: %s != %s",
			    a->name, b->name, ra->kv[i].key, emit_json_text(r->a, ra->kv[i].val),
			    emit_json_text(r->a, y));
			n++;
		}
	}
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		x = node_path(da, sections[i]);
		y = node_path(db, sections[i]);
		if (!node_is_null(x) && !node_is_null(y) && !node_equal(x, y)) {
			diag_err(
			    r->d, x, NULL,
			    "VirtualMachinePresets cannot be applied due to conflicts: presets "
			    "'%s' and '%s' conflict: spec.%s: %s != %s",
			    a->name, b->name, sections[i], emit_json_text(r->a, x),
			    emit_json_text(r->a, y));
			n++;
		}
	}
	return n ? -EINVAL : 0;
}

struct merge {
	struct resolver *r;
	const struct object *p;
	const char *origin;
	bool applied;
	const char *skipped[8];
	unsigned int n_skipped;
};

/* copy the preset's section when the VMI has none; equal counts as applied */
static void merge_section(struct merge *m, struct node *dst, const char *key,
			  const struct node *src, const char *what)
{
	const struct node *cur = node_get(dst, key);

	if (node_is_null(src))
		return;
	if (node_is_null(cur)) {
		node_set(m->r->a, dst, key, resolve_copy(m->r, src, m->origin));
		m->applied = true;
	} else if (node_equal(cur, src)) {
		m->applied = true;
	} else if (m->n_skipped < 8) {
		m->skipped[m->n_skipped++] =
		    arena_printf(m->r->a, "spec.%s: %s != %s", what, emit_json_text(m->r->a, cur),
				 emit_json_text(m->r->a, src));
	}
}

static void merge_clock(struct merge *m, struct node *dom, const struct node *pc)
{
	struct node *clock = node_get(dom, "clock");
	struct node off = {.type = N_MAP}, cur_off = {.type = N_MAP};
	struct node_kv okv[2], ckv[2];
	static const char *const keys[] = {"utc", "timezone"};
	unsigned int i;

	if (!node_is_map(pc))
		return;
	if (!node_is_map(clock)) {
		merge_section(m, dom, "clock", pc, "clock");
		return;
	}
	off.kv = okv;
	cur_off.kv = ckv;
	for (i = 0; i < 2; i++) {
		if (node_get(pc, keys[i]))
			okv[off.n++] =
			    (struct node_kv){.key = keys[i], .val = node_get(pc, keys[i])};
		if (node_get(clock, keys[i]))
			ckv[cur_off.n++] =
			    (struct node_kv){.key = keys[i], .val = node_get(clock, keys[i])};
	}
	if (off.n) {
		if (!cur_off.n) {
			for (i = 0; i < off.n; i++)
				node_set(m->r->a, clock, okv[i].key,
					 resolve_copy(m->r, okv[i].val, m->origin));
			m->applied = true;
		} else if (node_equal(&off, &cur_off)) {
			m->applied = true;
		} else if (m->n_skipped < 8) {
			m->skipped[m->n_skipped++] = arena_printf(
			    m->r->a, "spec.clock.clockOffset: %s != %s",
			    emit_json_text(m->r->a, &cur_off), emit_json_text(m->r->a, &off));
		}
	}
	merge_section(m, clock, "timer", node_get(pc, "timer"), "clock.timer");
}

static void apply_one(struct resolver *r, const struct object *p)
{
	struct merge m = {.r = r, .p = p};
	const struct node *pd = node_path(p->root, "spec.domain");
	struct node *dom = resolve_vmi_domain(r), *an;
	const struct node *req = node_path(pd, "resources.requests");
	const char *kind = resolve_str(node_get(p->root, "kind"));
	unsigned int i;

	m.origin = arena_printf(r->a, "preset %s", p->name);
	if (node_is_map(req) && req->n) {
		struct node *res = node_get_map(r->a, dom, "resources");

		merge_section(&m, res, "requests", req, "resources.requests");
	}
	merge_section(&m, dom, "cpu", node_get(pd, "cpu"), "cpu");
	merge_section(&m, dom, "firmware", node_get(pd, "firmware"), "firmware");
	merge_clock(&m, dom, node_get(pd, "clock"));
	merge_section(&m, dom, "features", node_get(pd, "features"), "features");
	if (!node_is_null(node_path(pd, "devices.watchdog")))
		merge_section(&m, node_get_map(r->a, dom, "devices"), "watchdog",
			      node_path(pd, "devices.watchdog"), "devices.watchdog");
	merge_section(&m, dom, "ioThreadsPolicy", node_get(pd, "ioThreadsPolicy"),
		      "ioThreadsPolicy");
	for (i = 0; i < m.n_skipped; i++)
		diag_warn(r->d, p->root, NULL, "%s %s '%s': %s",
			  m.applied ? "Some settings were not applied for" : "Unable to apply",
			  kind, p->name, m.skipped[i]);
	if (!m.applied)
		return;
	an = node_get_map(r->a, node_get_map(r->a, r->vmi, "metadata"), "annotations");
	node_set(r->a, an, arena_printf(r->a, "virtualmachinepreset.kubevirt.io/%s", p->name),
		 node_str(r->a, "kubevirt.io/v1"))
	    ->origin = m.origin;
}

int presets_apply(struct resolver *r)
{
	const struct node *md = node_get(r->vmi, "metadata");
	const struct node *an = node_get(md, "annotations"), *labels = node_get(md, "labels");
	const struct object *o, **list;
	unsigned int n = 0, i, j;
	int ret = 0, mt;

	for (i = 0; i < 2; i++)
		if (strcmp(resolve_str(node_get(an, exclude_keys[i])), "true") == 0)
			return 0;
	for (o = r->cl->objs; o; o = o->next)
		n += o->kind == OBJ_PRESET;
	if (!n)
		return 0;
	list = arena_alloc(r->a, n * sizeof(*list));
	n = 0;
	for (o = r->cl->objs; o; o = o->next) {
		if (o->kind != OBJ_PRESET || strcmp(o->ns, r->ns) != 0)
			continue;
		mt = selector_matches(r, o, labels);
		if (mt < 0)
			return -EINVAL;
		if (mt)
			list[n++] = o;
	}
	qsort(list, n, sizeof(*list), cmp_name);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (conflicts(r, list[i], list[j]))
				ret = -EINVAL;
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		apply_one(r, list[i]);
	return 0;
}
