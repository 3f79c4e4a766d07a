/* SPDX-License-Identifier: MIT */
/*
 * admit_affinity.c - validateSpecAffinity and
 * validateSpecTopologySpreadConstraints of vmi-create-admitter.go (spec/admit.h),
 * Kubernetes' pod validation copied by KubeVirt into validate-k8s-utils.go:
 * node affinity (terms, operators, weights), pod (anti-)affinity terms
 * (label selectors, namespaces, topology keys), topology spread constraints.
 * KubeVirt's message is a Kubernetes field.Error ("PATH: Invalid value: V:
 * detail"), PATH as KubeVirt builds it (the affinity's fields hang directly
 * off spec.template.spec there); the path printed first is the field's.
 */
#include <stdio.h>
#include <string.h>

#include "spec/admit.h"

/* Kubernetes field errors */
#define E_INVALID   "Invalid value"
#define E_REQUIRED  "Required value"
#define E_FORBIDDEN "Forbidden"

struct apath {
	const char *kv; /* KubeVirt's path, in the message */
	const char *at; /* the field's path, before the message */
};

/* p + ".field" */
static struct apath sub(const struct admit *a, struct apath p, const char *field)
{
	return (struct apath){arena_printf(a->r->a, "%s%s", p.kv, field),
			      arena_printf(a->r->a, "%s%s", p.at, field)};
}

/* p + ".field[i]" */
static struct apath subi(const struct admit *a, struct apath p, const char *field, unsigned int i)
{
	return (struct apath){arena_printf(a->r->a, "%s%s[%u]", p.kv, field, i),
			      arena_printf(a->r->a, "%s%s[%u]", p.at, field, i)};
}

static void ferr(const struct admit *a, const struct node *at, struct apath p, const char *type,
		 const char *value, const char *detail)
{
	admit_err(a, at, p.at, "%s: %s%s%s%s%s", p.kv, type, value ? ": " : "", value ? value : "",
		  detail ? ": " : "", detail ? detail : "");
}

static const char *quoted(const struct admit *a, const char *s)
{
	return arena_printf(a->r->a, "\"%s\"", s);
}

static bool qname_char_ok(const char *s, size_t n, bool label_value)
{
	size_t i;

	if (n == 0)
		return label_value;
	for (i = 0; i < n; i++) {
		bool alnum = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			     (s[i] >= '0' && s[i] <= '9');

		if (!alnum && ((i == 0 || i + 1 == n) || !strchr("-_.", s[i])))
			return false;
	}
	return true;
}

#define QNAME_RE                                                                                   \
	"must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "   \
	"an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "  \
	"validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

/* ValidateLabelName (IsQualifiedName): one cause per problem */
static void label_name(const struct admit *a, const struct node *at, struct apath p, const char *s)
{
	const char *slash = strchr(s, '/'), *name = slash ? slash + 1 : s, *m[2];
	const char *v = quoted(a, s);
	unsigned int n, i;

	if (slash && strchr(name, '/')) {
		ferr(a, at, p, E_INVALID, v,
		     "a qualified name " QNAME_RE " with an optional DNS subdomain prefix and '/' "
		     "(e.g. 'example.com/MyName')");
		return;
	}
	if (slash && slash == s)
		ferr(a, at, p, E_INVALID, v, "prefix part must be non-empty");
	else if (slash) {
		n = admit_dns1123_subdomain(arena_strndup(a->r->a, s, (size_t)(slash - s)), m);
		for (i = 0; i < n; i++)
			ferr(a, at, p, E_INVALID, v, arena_printf(a->r->a, "prefix part %s", m[i]));
	}
	if (!*name)
		ferr(a, at, p, E_INVALID, v, "name part must be non-empty");
	else if (strlen(name) > 63)
		ferr(a, at, p, E_INVALID, v, "name part must be no more than 63 characters");
	if (!qname_char_ok(name, strlen(name), false))
		ferr(a, at, p, E_INVALID, v, "name part " QNAME_RE);
}

static void label_value(const struct admit *a, const struct node *at, struct apath p, const char *s)
{
	if (strlen(s) > 63)
		ferr(a, at, p, E_INVALID, quoted(a, s), "must be no more than 63 characters");
	if (!qname_char_ok(s, strlen(s), true))
		ferr(a, at, p, E_INVALID, quoted(a, s),
		     "a valid label must be an empty string or consist of alphanumeric characters, "
		     "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
		     "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
		     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
}

/* the operator's rule on values (In/NotIn need some, Exists/DoesNotExist
 * none; node selectors also have Gt/Lt with exactly one) */
static void requirement(const struct admit *a, const struct node *r, struct apath p, bool node)
{
	const char *op = resolve_str(node_get(r, "operator"));
	const struct node *vals = node_get(r, "values");
	unsigned int n = node_is_seq(vals) ? vals->n : 0, i;

	if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
		if (!n)
			ferr(a, r, sub(a, p, ".values"), E_REQUIRED, NULL,
			     "must be specified when `operator` is 'In' or 'NotIn'");
	} else if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
		if (n)
			ferr(a, vals, sub(a, p, ".values"), E_FORBIDDEN, NULL,
			     "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
	} else if (node && (!strcmp(op, "Gt") || !strcmp(op, "Lt"))) {
		if (n != 1)
			ferr(a, r, sub(a, p, ".values"), E_REQUIRED, NULL,
			     "must be specified single value when `operator` is 'Lt' or 'Gt'");
	} else {
		ferr(a, node_get(r, "operator"), sub(a, p, ".operator"), E_INVALID, quoted(a, op),
		     "not a valid selector operator");
	}
	label_name(a, node_get(r, "key"), sub(a, p, ".key"), resolve_str(node_get(r, "key")));
	for (i = 0; !node && i < n; i++)
		label_value(a, vals->items[i], subi(a, p, ".values", i),
			    resolve_str(vals->items[i]));
}

static void label_selector(const struct admit *a, const struct node *ls, struct apath p)
{
	const struct node *ml = node_get(ls, "matchLabels"), *me = node_get(ls, "matchExpressions");
	struct apath mp = sub(a, p, ".matchLabels");
	unsigned int i;

	for (i = 0; node_is_map(ml) && i < ml->n; i++) {
		label_name(a, ml->kv[i].val, mp, ml->kv[i].key);
		label_value(a, ml->kv[i].val, mp, resolve_str(ml->kv[i].val));
	}
	for (i = 0; node_is_seq(me) && i < me->n; i++)
		requirement(a, me->items[i], subi(a, p, ".matchExpressions", i), false);
}

/* ValidateNodeFieldSelectorRequirement: only metadata.name, In/NotIn with
 * one value, a DNS subdomain */
static void field_requirement(const struct admit *a, const struct node *r, struct apath p)
{
	const char *op = resolve_str(node_get(r, "operator")), *key, *m[2];
	const struct node *vals = node_get(r, "values");
	unsigned int n = node_is_seq(vals) ? vals->n : 0, i, k, nm;

	if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
		if (n != 1)
			ferr(a, r, sub(a, p, ".values"), E_REQUIRED, NULL,
			     "must be only one value when `operator` is 'In' or 'NotIn' for node "
			     "field "
			     "selector");
	} else {
		ferr(a, node_get(r, "operator"), sub(a, p, ".operator"), E_INVALID, quoted(a, op),
		     "not a valid selector operator");
	}
	key = resolve_str(node_get(r, "key"));
	if (strcmp(key, "metadata.name")) {
		ferr(a, node_get(r, "key"), sub(a, p, ".key"), E_INVALID, quoted(a, key),
		     "not a valid field selector key");
		return;
	}
	for (i = 0; i < n; i++)
		for (nm = admit_dns1123_subdomain(resolve_str(vals->items[i]), m), k = 0; k < nm;
		     k++)
			ferr(a, vals->items[i], subi(a, p, ".values", i), E_INVALID,
			     quoted(a, resolve_str(vals->items[i])), m[k]);
}

static void node_selector_term(const struct admit *a, const struct node *t, struct apath p)
{
	const struct node *me = node_get(t, "matchExpressions"), *mf = node_get(t, "matchFields");
	unsigned int i;

	for (i = 0; node_is_seq(me) && i < me->n; i++)
		requirement(a, me->items[i], subi(a, p, ".matchExpressions", i), true);
	for (i = 0; node_is_seq(mf) && i < mf->n; i++)
		field_requirement(a, mf->items[i], subi(a, p, ".matchFields", i));
}

static void weight(const struct admit *a, const struct node *t, struct apath p)
{
	long long w = 0;

	node_ival(node_get(t, "weight"), -2147483648LL, 2147483647LL, &w);
	if (w <= 0 || w > 100)
		ferr(a, node_get(t, "weight") ? node_get(t, "weight") : t, sub(a, p, ".weight"),
		     E_INVALID, arena_printf(a->r->a, "%lld", w), "must be in the range 1-100");
}

static void node_affinity(const struct admit *a, const struct node *na, struct apath p)
{
	const struct node *req = node_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
	const struct node *pref = node_get(na, "preferredDuringSchedulingIgnoredDuringExecution");
	const struct node *terms = node_get(req, "nodeSelectorTerms");
	struct apath rp = sub(a, p, ".requiredDuringSchedulingIgnoredDuringExecution");
	struct apath pp = sub(a, p, ".preferredDuringSchedulingIgnoredDuringExecution");
	unsigned int i;

	if (!node_is_null(req) && node_empty(terms))
		ferr(a, req, sub(a, rp, ".nodeSelectorTerms"), E_REQUIRED, NULL,
		     "must have at least one node selector term");
	for (i = 0; !node_is_null(req) && node_is_seq(terms) && i < terms->n; i++)
		node_selector_term(a, terms->items[i], subi(a, rp, ".nodeSelectorTerms", i));
	for (i = 0; node_is_seq(pref) && i < pref->n; i++) {
		weight(a, pref->items[i], subi(a, pp, "", i));
		node_selector_term(a, node_get(pref->items[i], "preference"),
				   sub(a, subi(a, pp, "", i), ".preference"));
	}
}

static void pod_affinity_term(const struct admit *a, const struct node *t, struct apath p)
{
	const struct node *ns = node_get(t, "namespaces"), *tk = node_get(t, "topologyKey");
	const char *m[2];
	unsigned int i, k, n;

	label_selector(a, node_get(t, "labelSelector"), sub(a, p, ".labelSelector"));
	label_selector(a, node_get(t, "namespaceSelector"), sub(a, p, ".namespaceSelector"));
	for (i = 0; node_is_seq(ns) && i < ns->n; i++)
		for (n = admit_dns1123_label(resolve_str(ns->items[i]), m), k = 0; k < n; k++)
			ferr(a, ns->items[i], sub(a, p, ".namespace"), E_INVALID,
			     quoted(a, resolve_str(ns->items[i])), m[k]);
	if (!*resolve_str(tk))
		ferr(a, tk ? tk : t, sub(a, p, ".topologyKey"), E_REQUIRED, NULL,
		     "can not be empty");
	label_name(a, tk ? tk : t, sub(a, p, ".topologyKey"), resolve_str(tk));
}

/* podAffinity and podAntiAffinity */
static void pod_affinity(const struct admit *a, const struct node *pa, struct apath p)
{
	const struct node *req = node_get(pa, "requiredDuringSchedulingIgnoredDuringExecution");
	const struct node *pref = node_get(pa, "preferredDuringSchedulingIgnoredDuringExecution");
	struct apath rp = sub(a, p, ".requiredDuringSchedulingIgnoredDuringExecution");
	struct apath pp = sub(a, p, ".preferredDuringSchedulingIgnoredDuringExecution");
	unsigned int i;

	for (i = 0; node_is_seq(req) && i < req->n; i++)
		pod_affinity_term(a, req->items[i], subi(a, rp, "", i));
	for (i = 0; node_is_seq(pref) && i < pref->n; i++) {
		weight(a, pref->items[i], subi(a, pp, "", i));
		pod_affinity_term(a, node_get(pref->items[i], "podAffinityTerm"),
				  sub(a, subi(a, pp, "", i), ".podAffinityTerm"));
	}
}

static void spread_constraint(const struct admit *a, const struct node *tsc, unsigned int i,
			      struct apath p, bool dup)
{
	const struct node *c = tsc->items[i], *tk = node_get(c, "topologyKey");
	const struct node *wu = node_get(c, "whenUnsatisfiable");
	struct apath cp = subi(a, p, "", i);
	long long skew = 0;

	node_ival(node_get(c, "maxSkew"), -2147483648LL, 2147483647LL, &skew);
	if (skew <= 0)
		ferr(a, node_get(c, "maxSkew") ? node_get(c, "maxSkew") : c, sub(a, cp, ".maxSkew"),
		     E_INVALID, arena_printf(a->r->a, "%lld", skew), "must be greater than zero");
	if (!*resolve_str(tk))
		ferr(a, tk ? tk : c, sub(a, cp, ".topologyKey"), E_REQUIRED, NULL,
		     "can not be empty");
	else
		label_name(a, tk, sub(a, cp, ".topologyKey"), resolve_str(tk));
	if (strcmp(resolve_str(wu), "DoNotSchedule") && strcmp(resolve_str(wu), "ScheduleAnyway"))
		admit_err(a, wu ? wu : c, sub(a, cp, ".whenUnsatisfiable").at,
			  "%s: Unsupported value: \"%s\": supported values: \"DoNotSchedule\", "
			  "\"ScheduleAnyway\"",
			  sub(a, cp, ".whenUnsatisfiable").kv, resolve_str(wu));
	/* KubeVirt validates the selector at the list's path, not the item's */
	label_selector(a, node_get(c, "labelSelector"), sub(a, p, ".labelSelector"));
	if (dup)
		admit_err(a, c, sub(a, cp, ".{topologyKey, whenUnsatisfiable}").at,
			  "%s: Duplicate value: \"{%s, %s}\"",
			  sub(a, cp, ".{topologyKey, whenUnsatisfiable}").kv, resolve_str(tk),
			  resolve_str(wu));
}

/* which constraints a later one repeats ({topologyKey, whenUnsatisfiable}):
 * sorted, not pairwise */
static bool *repeated(const struct admit *a, const struct node *tsc)
{
	unsigned int n = node_is_seq(tsc) ? tsc->n : 0, i;
	struct admit_entry *e = arena_alloc(a->r->a, (n + 1) * sizeof(*e));
	bool *rep = arena_alloc(a->r->a, (n + 1) * sizeof(*rep));
	const struct node *c;

	for (i = 0; i < n; i++) {
		c = tsc->items[i];
		e[i].key = arena_printf(a->r->a, "%s%c%s", resolve_str(node_get(c, "topologyKey")),
					'\x1f', resolve_str(node_get(c, "whenUnsatisfiable")));
		e[i].idx = i;
		e[i].n = c;
		rep[i] = false;
	}
	admit_sort(e, n);
	for (i = 0; i + 1 < n; i++)
		rep[e[i].idx] = strcmp(e[i].key, e[i + 1].key) == 0;
	return rep;
}

void admit_affinity(const struct admit *a)
{
	const struct node *af = node_get(a->spec, "affinity");
	const struct node *tsc = node_get(a->spec, "topologySpreadConstraints");
	struct apath p = {a->pfx, admit_path(a, "affinity")};
	struct apath tp = {admit_path(a, "topologySpreadConstraints"),
			   admit_path(a, "topologySpreadConstraints")};
	bool *rep = repeated(a, tsc);
	unsigned int i;

	if (!node_is_null(node_get(af, "nodeAffinity")))
		node_affinity(a, node_get(af, "nodeAffinity"), sub(a, p, ".nodeAffinity"));
	if (!node_is_null(node_get(af, "podAffinity")))
		pod_affinity(a, node_get(af, "podAffinity"), sub(a, p, ".podAffinity"));
	if (!node_is_null(node_get(af, "podAntiAffinity")))
		pod_affinity(a, node_get(af, "podAntiAffinity"), sub(a, p, ".podAntiAffinity"));
	for (i = 0; node_is_seq(tsc) && i < tsc->n; i++)
		spread_constraint(a, tsc, i, tp, rep[i]);
}
