/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/node.h"
#include "spec/node_index.h"

struct arena_chunk {
	struct arena_chunk *next;
	max_align_t data[];
};

#define ARENA_CHUNK 16384u

void spec_oom(void)
{
	fputs("vmlet: out of memory\n", stderr);
	abort();
}

void arena_init(struct arena *a)
{
	memset(a, 0, sizeof(*a));
}

void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(a, 0, sizeof(*a));
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c;
	size_t sz;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	if (!a->head || a->size - a->used < n) {
		sz = n > ARENA_CHUNK / 2 ? n : ARENA_CHUNK;
		c = malloc(sizeof(*c) + sz);
		if (!c)
			spec_oom();
		if (a->head && sz != ARENA_CHUNK) {
			/* a big block: keep the current chunk for small ones */
			c->next = a->head->next;
			a->head->next = c;
			a->total += n;
			p = c->data;
			memset(p, 0, n);
			return p;
		}
		c->next = a->head;
		a->head = c;
		a->used = 0;
		a->size = sz;
	}
	p = (char *)a->head->data + a->used;
	a->used += n;
	a->total += n;
	memset(p, 0, n);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char buf[256], *p;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0)
		len = 0;
	p = arena_alloc(a, (size_t)len + 1);
	if ((size_t)len < sizeof(buf)) {
		memcpy(p, buf, (size_t)len + 1);
		return p;
	}
	va_start(ap, fmt);
	vsnprintf(p, (size_t)len + 1, fmt, ap);
	va_end(ap);
	return p;
}

struct node *node_new(struct arena *a, enum node_type t)
{
	struct node *n = arena_alloc(a, sizeof(*n));

	n->type = t;
	return n;
}

struct node *node_str(struct arena *a, const char *s)
{
	struct node *n = node_new(a, N_STR);

	n->str = arena_strdup(a, s ? s : "");
	return n;
}

struct node *node_strf(struct arena *a, const char *fmt, ...)
{
	struct node *n = node_new(a, N_STR);
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n->str = arena_strdup(a, buf);
	return n;
}

struct node *node_int(struct arena *a, long long v)
{
	struct node *n = node_new(a, N_INT);

	n->str = arena_printf(a, "%lld", v);
	return n;
}

struct node *node_bool(struct arena *a, bool v)
{
	struct node *n = node_new(a, N_BOOL);

	n->str = v ? "true" : "false";
	return n;
}

struct node *node_map(struct arena *a)
{
	return node_new(a, N_MAP);
}

struct node *node_seq(struct arena *a)
{
	return node_new(a, N_SEQ);
}

struct node *node_copy(struct arena *a, const struct node *n, const char *origin)
{
	struct node *c;
	unsigned int i;

	if (!n)
		return NULL;
	c = node_new(a, n->type);
	*c = *n;
	c->kv = NULL;
	c->items = NULL;
	c->n = c->cap = 0;
	c->idx = NULL;
	if (!c->origin)
		c->origin = origin;
	if (n->type == N_MAP && n->n) {
		c->kv = arena_alloc(a, n->n * sizeof(*c->kv));
		c->cap = c->n = n->n;
		for (i = 0; i < n->n; i++) {
			c->kv[i] = n->kv[i];
			c->kv[i].val = node_copy(a, n->kv[i].val, origin);
		}
		node_index_rebuild(a, c);
	} else if (n->type == N_SEQ && n->n) {
		c->items = arena_alloc(a, n->n * sizeof(*c->items));
		c->cap = c->n = n->n;
		for (i = 0; i < n->n; i++)
			c->items[i] = node_copy(a, n->items[i], origin);
	}
	return c;
}

void node_set_origin(struct node *n, const char *origin)
{
	unsigned int i;

	if (!n)
		return;
	n->origin = origin;
	for (i = 0; i < n->n; i++)
		node_set_origin(n->type == N_MAP ? n->kv[i].val : n->items[i], origin);
}

/* The position of key in map m, or m->n. */
static unsigned int node_find(const struct node *m, const char *key)
{
	unsigned int i = node_index_find(m, key);

	if (i == NODE_INDEX_NONE)
		return m->n;
	if (i != NODE_INDEX_STALE)
		return i;
	for (i = 0; i < m->n; i++) {
		node_index_compares++;
		if (strcmp(m->kv[i].key, key) == 0)
			break;
	}
	return i;
}

unsigned long node_key_compares(void)
{
	return node_index_compares;
}

struct node *node_get(const struct node *m, const char *key)
{
	unsigned int i;

	if (!m || m->type != N_MAP)
		return NULL;
	i = node_find(m, key);
	return i < m->n ? m->kv[i].val : NULL;
}

struct node *node_path(const struct node *m, const char *dotted)
{
	char key[128];
	const char *p = dotted, *dot;
	size_t len;
	const struct node *cur = m;

	while (cur && *p) {
		dot = strchr(p, '.');
		len = dot ? (size_t)(dot - p) : strlen(p);
		if (len >= sizeof(key))
			return NULL;
		memcpy(key, p, len);
		key[len] = 0;
		cur = node_get(cur, key);
		p += len + (dot ? 1 : 0);
	}
	return (struct node *)cur;
}

static void grow(struct arena *a, struct node *m, size_t elem)
{
	unsigned int cap = m->cap ? m->cap * 2 : 4;
	void *p = arena_alloc(a, cap * elem);
	void *old = m->type == N_MAP ? (void *)m->kv : (void *)m->items;

	if (m->n)
		memcpy(p, old, m->n * elem);
	if (m->type == N_MAP)
		m->kv = p;
	else
		m->items = p;
	m->cap = cap;
}

struct node *node_set(struct arena *a, struct node *m, const char *key, struct node *val)
{
	unsigned int i = node_find(m, key);

	if (i < m->n) {
		m->kv[i].val = val;
		return val;
	}
	return node_add(a, m, arena_strdup(a, key), val);
}

struct node *node_add(struct arena *a, struct node *m, const char *key, struct node *val)
{
	const struct node_kv *old = m->kv;

	if (m->n == m->cap)
		grow(a, m, sizeof(*m->kv));
	m->kv[m->n] = (struct node_kv){key, val, 0, 0};
	m->n++;
	node_index_added(a, m, old);
	return val;
}

struct node *node_get_map(struct arena *a, struct node *m, const char *key)
{
	struct node *v = node_get(m, key);

	if (v && v->type == N_MAP)
		return v;
	return node_set(a, m, key, node_map(a));
}

bool node_del(struct node *m, const char *key)
{
	unsigned int i;

	if (!m || m->type != N_MAP)
		return false;
	i = node_find(m, key);
	if (i == m->n)
		return false;
	memmove(&m->kv[i], &m->kv[i + 1], (m->n - i - 1) * sizeof(*m->kv));
	m->n--;
	if (m->idx) /* the positions moved: the table is reused, no arena needed */
		node_index_rebuild(NULL, m);
	return true;
}

void node_push(struct arena *a, struct node *seq, struct node *val)
{
	if (seq->n == seq->cap)
		grow(a, seq, sizeof(*seq->items));
	seq->items[seq->n++] = val;
}

bool node_is_map(const struct node *n)
{
	return n && n->type == N_MAP;
}

bool node_is_seq(const struct node *n)
{
	return n && n->type == N_SEQ;
}

bool node_is_null(const struct node *n)
{
	return !n || n->type == N_NULL;
}

const char *node_sval(const struct node *n)
{
	return n && n->type == N_STR ? n->str : NULL;
}

const char *node_text(const struct node *n)
{
	return n && n->type != N_MAP && n->type != N_SEQ && n->type != N_NULL ? n->str : NULL;
}

bool node_bval(const struct node *n, bool def)
{
	if (!n || n->type != N_BOOL)
		return def;
	return n->str[0] == 't';
}

int node_ival(const struct node *n, long long lo, long long hi, long long *out)
{
	long long v;
	char *end;

	if (!n || n->type != N_INT)
		return -EINVAL;
	errno = 0;
	v = strtoll(n->str, &end, 0);
	if (errno || *end)
		return -ERANGE;
	if (v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

bool node_empty(const struct node *n)
{
	if (!n || n->type == N_NULL)
		return true;
	if (n->type == N_STR)
		return n->str[0] == 0;
	if (n->type == N_MAP || n->type == N_SEQ)
		return n->n == 0;
	return false;
}

bool node_equal(const struct node *a, const struct node *b)
{
	unsigned int i;

	if (node_is_null(a) || node_is_null(b))
		return node_is_null(a) && node_is_null(b);
	if (a->type != b->type || a->n != b->n)
		return false;
	switch (a->type) {
	case N_MAP:
		for (i = 0; i < a->n; i++)
			if (!node_equal(a->kv[i].val, node_get(b, a->kv[i].key)))
				return false;
		return true;
	case N_SEQ:
		for (i = 0; i < a->n; i++)
			if (!node_equal(a->items[i], b->items[i]))
				return false;
		return true;
	default:
		return strcmp(a->str, b->str) == 0;
	}
}
