/* SPDX-License-Identifier: MIT */
/* spec/yaml.c: YAML/JSON into located, typed node trees; limits; errors. */
#include <stdlib.h>

#include "spec/load.h"
#include "tests/lib/test.h"

struct parsed {
	struct arena a;
	struct diag d;
	struct doc_list l;
	int ret;
};

static void parse(struct parsed *p, const char *text)
{
	arena_init(&p->a);
	diag_init(&p->d, &p->a);
	yaml_doc_list_init(&p->l);
	p->ret = yaml_load(&p->a, &p->d, "t.yaml", text, strlen(text), &p->l);
}

static void test_types_and_locations(void)
{
	struct parsed p;
	struct node *r, *n;

	parse(&p, "kind: VM\n"
		  "spec:\n"
		  "  a: 42\n"
		  "  b: '42'\n"
		  "  c: true\n"
		  "  d: yes\n"
		  "  e: ~\n"
		  "  f: 1.5\n"
		  "  g: 4Gi\n"
		  "  h: -0x1f\n"
		  "  list:\n"
		  "  - x\n"
		  "  - {k: v}\n");
	CHECK(p.ret == 0);
	CHECK(p.l.n == 1);
	r = p.l.head->root;
	CHECK(node_get(node_get(r, "spec"), "a")->type == N_INT);
	CHECK(node_get(node_get(r, "spec"), "b")->type == N_STR);
	CHECK(node_get(node_get(r, "spec"), "c")->type == N_BOOL);
	CHECK(node_bval(node_path(r, "spec.d"), false));
	CHECK(node_path(r, "spec.e")->type == N_NULL);
	CHECK(node_path(r, "spec.f")->type == N_FLOAT);
	CHECK(node_path(r, "spec.g")->type == N_STR);
	CHECK(node_path(r, "spec.h")->type == N_INT);
	n = node_path(r, "spec.a");
	CHECK_EQ_U64(n->line, 3);
	CHECK_EQ_U64(n->col, 6);
	CHECK_STR(n->file, "t.yaml");
	n = node_path(r, "spec.list");
	CHECK(node_is_seq(n) && n->n == 2);
	CHECK_EQ_U64(n->items[1]->line, 13);
	CHECK_EQ_U64(n->items[1]->col, 5);
	CHECK_STR(node_sval(node_get(n->items[1], "k")), "v");
	arena_free(&p.a);
}

static void test_multi_document_and_json(void)
{
	struct parsed p;

	parse(&p, "---\na: 1\n---\n---\n{\"b\": [1, \"2\", false, null]}\n");
	CHECK(p.ret == 0);
	CHECK_EQ_U64(p.l.n, 2); /* the empty document is skipped */
	CHECK(node_path(p.l.head->next->root, "b")->items[1]->type == N_STR);
	CHECK(node_path(p.l.head->next->root, "b")->items[0]->type == N_INT);
	CHECK(node_path(p.l.head->next->root, "b")->items[3]->type == N_NULL);
	arena_free(&p.a);
}

static void test_anchors_and_merge(void)
{
	struct parsed p;
	struct node *r;

	parse(&p, "base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\ncopy: *b\n");
	CHECK(p.ret == 0);
	r = p.l.head->root;
	CHECK_STR(node_text(node_path(r, "other.x")), "1");
	CHECK_STR(node_text(node_path(r, "other.y")), "3");
	CHECK_STR(node_text(node_path(r, "copy.y")), "2");
	arena_free(&p.a);
}

static void test_errors(void)
{
	struct parsed p;

	parse(&p, "a:\n  b: {\n  c: 1\n");
	CHECK(p.ret != 0);
	CHECK(p.d.n_err == 1);
	CHECK_STR(p.d.head->file, "t.yaml");
	CHECK(p.d.head->line >= 2);
	arena_free(&p.a);

	parse(&p, "a: 1\na: 2\n");
	CHECK(p.ret != 0);
	CHECK(strstr(p.d.head->msg, "duplicate key") != NULL);
	CHECK_EQ_U64(p.d.head->line, 2);
	arena_free(&p.a);

	parse(&p, "- just\n- a list\n");
	CHECK(p.ret != 0);
	CHECK(strstr(p.d.head->msg, "must be an object") != NULL);
	arena_free(&p.a);

	parse(&p, "a: *nope\n");
	CHECK(p.ret != 0);
	arena_free(&p.a);

	parse(&p, "? [a, b]\n: c\n");
	CHECK(p.ret != 0);
	arena_free(&p.a);
}

static void test_limits(void)
{
	struct parsed p;
	char *deep = malloc(5000);
	size_t i;

	/* 1000 nested flow sequences: refused, not a stack overflow */
	for (i = 0; i < 1000; i++)
		deep[i] = '[';
	for (; i < 2000; i++)
		deep[i] = ']';
	deep[i] = 0;
	parse(&p, deep);
	CHECK(p.ret != 0);
	arena_free(&p.a);
	free(deep);

	/* a billion laughs stops at the node limit */
	parse(&p, "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		  "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
		  "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n");
	CHECK(p.ret != 0);
	CHECK(p.d.head && strstr(p.d.head->msg, "too large"));
	arena_free(&p.a);
}

static void test_node_ops(void)
{
	struct arena a;
	struct node *m, *c;

	arena_init(&a);
	m = node_map(&a);
	node_set(&a, m, "x", node_int(&a, 5));
	node_set(&a, node_get_map(&a, m, "sub"), "y", node_str(&a, "s"));
	c = node_copy(&a, m, "origin");
	CHECK(node_equal(m, c));
	CHECK_STR(node_path(c, "sub.y")->origin, "origin");
	node_set(&a, c, "x", node_int(&a, 6));
	CHECK(!node_equal(m, c));
	CHECK(node_del(c, "x"));
	CHECK(node_get(c, "x") == NULL);
	CHECK(node_empty(node_str(&a, "")));
	CHECK(!node_empty(node_int(&a, 0)));
	arena_free(&a);
}

int main(void)
{
	TEST_RUN(test_types_and_locations);
	TEST_RUN(test_multi_document_and_json);
	TEST_RUN(test_anchors_and_merge);
	TEST_RUN(test_errors);
	TEST_RUN(test_limits);
	TEST_RUN(test_node_ops);
	return test_summary();
}
