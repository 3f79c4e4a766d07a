/* SPDX-License-Identifier: MIT */
/*
 * yaml.c - libyaml events -> node trees. The only file that sees libyaml.
 */
#include <errno.h>
#include <string.h>
#include <yaml.h>

#include "spec/load.h"

#define MAX_DEPTH 200
#define MAX_NODES 1000000u

struct anchor {
	const char *name;
	struct node *node;
	struct anchor *next;
};

struct frame {
	struct node *n;
	const char *key;	  /* pending key of a map (NULL: expecting key) */
	struct node *keynode;	  /* for duplicate-key messages */
	unsigned int kline, kcol; /* where the pending key was written */
	bool merge;		  /* pending key is "<<" */
	bool merged;		  /* a "<<" was seen: later keys may override */
};

struct loader {
	struct arena *a;
	struct diag *d;
	const char *file;
	struct frame stack[MAX_DEPTH + 1];
	int depth;
	struct anchor *anchors;
	unsigned long nodes;
	struct node *root;
};

void yaml_doc_list_init(struct doc_list *l)
{
	l->head = NULL;
	l->tail = &l->head;
	l->n = 0;
}

static bool is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static bool is_int(const char *s)
{
	const char *p = s;

	if (*p == '-' || *p == '+')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		p += 2;
		if (!*p)
			return false;
		for (; *p; p++)
			if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
			      (*p >= 'A' && *p <= 'F')))
				return false;
		return true;
	}
	if (!*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static bool is_float(const char *s)
{
	const char *p = s;
	bool digits = false;

	if (*p == '-' || *p == '+')
		p++;
	if (is_one_of(p, (const char *const[]){".inf", ".Inf", ".INF", NULL}))
		return true;
	if (is_one_of(s, (const char *const[]){".nan", ".NaN", ".NAN", NULL}))
		return true;
	while (*p >= '0' && *p <= '9') {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == 0;
}

/* The type a plain scalar resolves to (YAML 1.1 as Kubernetes reads it). */
enum node_type yaml_plain_type(const char *s)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes",
					    "YES",  "on",   "On",   "ON",  NULL};
	static const char *const falses[] = {"false", "False", "FALSE", "no",  "No",
					     "NO",    "off",   "Off",	"OFF", NULL};

	size_t len = strnlen(s, 6);

	/* fast path: most scalars are names, not one of the special words */
	if (len <= 5 && (len == 0 || strchr("~nNtTfFyYoO", s[0]))) {
		if (is_one_of(s, nulls))
			return N_NULL;
		if (is_one_of(s, trues) || is_one_of(s, falses))
			return N_BOOL;
	}
	if ((s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '+' || s[0] == '.') {
		if (is_int(s))
			return N_INT;
		if (is_float(s))
			return N_FLOAT;
	}
	return N_STR;
}

static struct node *scalar(struct loader *L, const yaml_event_t *e)
{
	const char *v = (const char *)e->data.scalar.value;
	const char *tag = (const char *)e->data.scalar.tag;
	struct node *n;
	enum node_type t;

	if (tag && strcmp(tag, YAML_STR_TAG) == 0)
		t = N_STR;
	else if (e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		t = yaml_plain_type(v);
	else
		t = N_STR;
	n = node_new(L->a, t);
	if (t == N_BOOL)
		n->str = (v[0] == 't' || v[0] == 'T' || v[0] == 'y' || v[0] == 'Y' ||
			  (v[1] == 'n' || v[1] == 'N'))
			     ? "true"
			     : "false";
	else if (t == N_NULL)
		n->str = NULL;
	else
		n->str = arena_strndup(L->a, v, e->data.scalar.length);
	return n;
}

static unsigned long count_nodes(const struct node *n, unsigned long limit)
{
	unsigned long c = 1;
	unsigned int i;

	for (i = 0; n && i < n->n && c <= limit; i++)
		c += count_nodes(n->type == N_MAP ? n->kv[i].val : n->items[i], limit - c);
	return c;
}

static void place(struct loader *L, const yaml_event_t *e, struct node *n)
{
	n->file = L->file;
	n->line = (unsigned int)e->start_mark.line + 1;
	n->col = (unsigned int)e->start_mark.column + 1;
}

static int err(struct loader *L, const yaml_event_t *e, const char *msg)
{
	diag_err_loc(L->d, L->file, (unsigned int)e->start_mark.line + 1,
		     (unsigned int)e->start_mark.column + 1, NULL, "%s", msg);
	return -EINVAL;
}

static void merge_into(struct loader *L, struct node *m, const struct node *src)
{
	unsigned int i;

	if (node_is_seq(src)) {
		for (i = 0; i < src->n; i++)
			merge_into(L, m, src->items[i]);
		return;
	}
	if (!node_is_map(src))
		return;
	for (i = 0; i < src->n; i++)
		if (!node_get(m, src->kv[i].key))
			node_set(L->a, m, src->kv[i].key, src->kv[i].val);
}

/* Record where the key just set in f's map was written. */
static void key_position(struct frame *f)
{
	struct node *m = f->n;
	unsigned int i = m->n - 1;

	if (strcmp(m->kv[i].key, f->key) != 0)
		for (i = 0; i < m->n && strcmp(m->kv[i].key, f->key) != 0; i++)
			;
	if (i < m->n) {
		m->kv[i].line = f->kline;
		m->kv[i].col = f->kcol;
	}
}

/* Attach a finished value to the container on top of the stack. */
static int attach(struct loader *L, const yaml_event_t *e, struct node *v)
{
	struct frame *f;

	if (L->depth == 0) {
		L->root = v;
		return 0;
	}
	f = &L->stack[L->depth - 1];
	if (f->n->type == N_SEQ) {
		node_push(L->a, f->n, v);
		return 0;
	}
	if (!f->key) {
		if (v->type == N_MAP || v->type == N_SEQ)
			return err(L, e, "a mapping key must be a scalar");
		f->key = v->str ? v->str : "";
		f->kline = v->line;
		f->kcol = v->col;
		f->merge = v->type == N_STR && strcmp(f->key, "<<") == 0 &&
			   e->type == YAML_SCALAR_EVENT &&
			   e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (!f->merge && !f->merged && node_get(f->n, f->key)) {
			diag_err_loc(L->d, L->file, v->line, v->col, NULL, "duplicate key \"%s\"",
				     f->key);
			return -EINVAL;
		}
		return 0;
	}
	if (f->merge) {
		merge_into(L, f->n, v);
		f->merged = true;
	} else {
		node_set(L->a, f->n, f->key, v);
		key_position(f);
	}
	f->key = NULL;
	f->merge = false;
	return 0;
}

static int remember(struct loader *L, const yaml_char_t *anchor, struct node *n)
{
	struct anchor *an;

	if (!anchor)
		return 0;
	an = arena_alloc(L->a, sizeof(*an));
	an->name = arena_strdup(L->a, (const char *)anchor);
	an->node = n;
	an->next = L->anchors;
	L->anchors = an;
	return 0;
}

static int alias(struct loader *L, const yaml_event_t *e)
{
	const char *name = (const char *)e->data.alias.anchor;
	struct anchor *an;
	unsigned long c;

	for (an = L->anchors; an; an = an->next)
		if (strcmp(an->name, name) == 0)
			break;
	if (!an)
		return err(L, e, "unknown alias");
	c = count_nodes(an->node, MAX_NODES);
	L->nodes += c;
	if (L->nodes > MAX_NODES)
		return err(L, e, "document too large (alias expansion)");
	return attach(L, e, node_copy(L->a, an->node, NULL));
}

static int event(struct loader *L, const yaml_event_t *e, struct doc_list *l)
{
	struct node *n;
	struct doc *d;

	switch (e->type) {
	case YAML_DOCUMENT_START_EVENT:
		L->root = NULL;
		L->anchors = NULL;
		return 0;
	case YAML_DOCUMENT_END_EVENT:
		if (node_is_null(L->root))
			return 0;
		if (L->root->type != N_MAP) {
			diag_err_loc(L->d, L->file, L->root->line, L->root->col, NULL,
				     "a manifest document must be an object");
			return -EINVAL;
		}
		d = arena_alloc(L->a, sizeof(*d));
		d->root = L->root;
		*l->tail = d;
		l->tail = &d->next;
		l->n++;
		return 0;
	case YAML_SCALAR_EVENT:
		if (++L->nodes > MAX_NODES)
			return err(L, e, "document too large");
		n = scalar(L, e);
		place(L, e, n);
		remember(L, e->data.scalar.anchor, n);
		return attach(L, e, n);
	case YAML_ALIAS_EVENT:
		return alias(L, e);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (L->depth >= MAX_DEPTH)
			return err(L, e, "nesting too deep");
		if (++L->nodes > MAX_NODES)
			return err(L, e, "document too large");
		n = node_new(L->a, e->type == YAML_SEQUENCE_START_EVENT ? N_SEQ : N_MAP);
		place(L, e, n);
		remember(L,
			 e->type == YAML_SEQUENCE_START_EVENT ? e->data.sequence_start.anchor
							      : e->data.mapping_start.anchor,
			 n);
		if (L->depth > 0 && L->stack[L->depth - 1].n->type == N_MAP &&
		    !L->stack[L->depth - 1].key)
			return err(L, e, "a mapping key must be a scalar");
		L->stack[L->depth].n = n;
		L->stack[L->depth].key = NULL;
		L->stack[L->depth].merge = false;
		L->stack[L->depth].merged = false;
		L->depth++;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (L->depth == 0)
			return err(L, e, "unbalanced collection");
		L->depth--;
		return attach(L, e, L->stack[L->depth].n);
	default:
		return 0;
	}
}

int yaml_load(struct arena *a, struct diag *d, const char *file, const char *buf, size_t len,
	      struct doc_list *l)
{
	struct loader L = {.a = a, .d = d, .file = file};
	yaml_parser_t p;
	yaml_event_t e;
	int ret = 0;
	bool done = false;

	if (!yaml_parser_initialize(&p))
		spec_oom(); /* it fails only when it cannot allocate */
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done && ret == 0) {
		if (!yaml_parser_parse(&p, &e)) {
			diag_err_loc(d, file, (unsigned int)p.problem_mark.line + 1,
				     (unsigned int)p.problem_mark.column + 1, NULL,
				     "invalid YAML: %s%s%s", p.problem ? p.problem : "syntax error",
				     p.context ? " " : "", p.context ? p.context : "");
			ret = -EINVAL;
			break;
		}
		done = e.type == YAML_STREAM_END_EVENT;
		ret = event(&L, &e, l);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	return ret;
}
