/* SPDX-License-Identifier: MIT */
/*
 * admit.c - the entry of KubeVirt's VM/VMI admission rules (spec/admit.h,
 * docs/resolution.md §19) and the helpers the rule files share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/admit.h"

const char *admit_path(const struct admit *a, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return arena_printf(a->r->a, "%s.%s", a->pfx, buf);
}

void admit_err(const struct admit *a, const struct node *at, const char *path, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	diag_err(a->r->d, at, path, "%s", buf);
}

static bool lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n) */
static bool label_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
		return false;
	for (i = 1; i + 1 < n; i++)
		if (!lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

static bool subdomain_ok(const char *s)
{
	const char *dot;

	for (;;) {
		dot = strchr(s, '.');
		if (!label_ok(s, dot ? (size_t)(dot - s) : strlen(s)))
			return false;
		if (!dot)
			return true;
		s = dot + 1;
	}
}

#define DNS1123_LABEL_MSG                                                                          \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "   \
	"and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "   \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS1123_SUBDOMAIN_MSG                                                                      \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "  \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "      \
	"regex used for validation is "                                                            \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

unsigned int admit_dns1123_label(const char *s, const char *msg[2])
{
	unsigned int n = 0;

	if (strlen(s) > 63)
		msg[n++] = "must be no more than 63 characters";
	if (!label_ok(s, strlen(s)))
		msg[n++] = subdomain_ok(s) ? "must not contain dots" : DNS1123_LABEL_MSG;
	return n;
}

unsigned int admit_dns1123_subdomain(const char *s, const char *msg[2])
{
	unsigned int n = 0;

	if (strlen(s) > 253)
		msg[n++] = "must be no more than 253 characters";
	if (!subdomain_ok(s))
		msg[n++] = DNS1123_SUBDOMAIN_MSG;
	return n;
}

/* Go's filepath.Join("/", p) == strings.TrimSuffix(p, "/"): p is absolute
 * and has no empty, "." or ".." component, and at most one trailing '/'. */
const char *admit_path_rule(const char *p)
{
	size_t n = strlen(p);
	const char *c, *e;

	if (strcmp(p, "/") == 0)
		return "must not point to root";
	if (n && p[n - 1] == '/')
		n--;
	if (n == 0 || p[0] != '/')
		return "must be an absolute path to a file without relative components";
	for (c = p + 1; c <= p + n; c = e + 1) {
		e = memchr(c, '/', (size_t)(p + n - c));
		if (!e)
			e = p + n;
		if (e == c || (e - c == 1 && c[0] == '.') ||
		    (e - c == 2 && c[0] == '.' && c[1] == '.'))
			return "must be an absolute path to a file without relative components";
	}
	return NULL;
}

static int entry_cmp(const void *x, const void *y)
{
	const struct admit_entry *a = x, *b = y;
	int c = strcmp(a->key, b->key);

	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

void admit_sort(struct admit_entry *e, unsigned int n)
{
	qsort(e, n, sizeof(*e), entry_cmp);
}

void admit_index(const struct admit *a, const struct node *seq, const char *key,
		 struct admit_ix *ix)
{
	unsigned int i;

	ix->n = node_is_seq(seq) ? seq->n : 0;
	ix->e = arena_alloc(a->r->a, (ix->n + 1) * sizeof(*ix->e));
	ix->first = arena_alloc(a->r->a, (ix->n + 1) * sizeof(*ix->first));
	for (i = 0; i < ix->n; i++) {
		ix->e[i].key = resolve_str(node_path(seq->items[i], key));
		ix->e[i].idx = i;
		ix->e[i].n = seq->items[i];
	}
	admit_sort(ix->e, ix->n);
	for (i = 0; i < ix->n; i++)
		ix->first[ix->e[i].idx] = i && strcmp(ix->e[i - 1].key, ix->e[i].key) == 0
					      ? ix->first[ix->e[i - 1].idx]
					      : ix->e[i].idx;
}

const struct node *admit_lookup(const struct admit_ix *ix, const char *key)
{
	size_t lo = 0, hi = ix->n, mid;
	int c;

	while (lo < hi) { /* the first entry >= key */
		mid = lo + (hi - lo) / 2;
		c = strcmp(ix->e[mid].key, key);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && strcmp(ix->e[lo].key, key) == 0 ? ix->e[lo].n : NULL;
}

const struct node *admit_lookup_seq(const struct admit *a, const struct node *seq, const char *name)
{
	unsigned int i;

	(void)a;
	for (i = 0; node_is_seq(seq) && i < seq->n; i++)
		if (strcmp(resolve_str(node_get(seq->items[i], "name")), name) == 0)
			return seq->items[i];
	return NULL;
}

int admit_run(struct resolver *r)
{
	struct admit a = {
	    .r = r,
	    .spec = resolve_vmi_spec(r),
	    .dom = resolve_vmi_domain(r),
	    .pfx = r->vmi_only ? "spec" : "spec.template.spec",
	    .vm = r->vmi_only ? NULL : r->vm,
	};
	unsigned int before = r->d->n_err;

	admit_disks(&a);
	admit_volumes(&a);
	admit_net(&a);
	admit_compute(&a);
	admit_spec(&a);
	admit_devices(&a);
	admit_arch(&a);
	admit_affinity(&a);
	return r->d->n_err != before ? -EINVAL : 0;
}
