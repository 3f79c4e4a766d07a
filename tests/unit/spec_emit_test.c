/* SPDX-License-Identifier: MIT */
/* spec/emit.c: JSON and YAML serializers read back to the same tree;
 * strings that look like other types stay strings. */
#include <stdlib.h>

#include "spec/emit.h"
#include "spec/load.h"
#include "tests/lib/test.h"

static const char *const doc = "apiVersion: v1\n"
			       "kind: Thing\n"
			       "metadata:\n"
			       "  annotations:\n"
			       "    a/b: 'true'\n"
			       "    num: '007'\n"
			       "    colon: 'x: y'\n"
			       "    hash: 'a #b'\n"
			       "    dash: '- x'\n"
			       "    empty: ''\n"
			       "    multi: \"line1\\nline2\\t\\\"q\\\"\"\n"
			       "    null: 'null'\n"
			       "    yes: 'yes'\n"
			       "    lead: ' x'\n"
			       "spec:\n"
			       "  n: 12\n"
			       "  f: 1.5\n"
			       "  b: false\n"
			       "  z: null\n"
			       "  m: {}\n"
			       "  s: []\n"
			       "  list:\n"
			       "  - 1\n"
			       "  - {a: 1, b: [x, {c: d}]}\n"
			       "  - [1, 2]\n"
			       "  - []\n";

static struct node *load(struct arena *a, const char *text, size_t len)
{
	struct diag d;
	struct doc_list l;

	diag_init(&d, a);
	yaml_doc_list_init(&l);
	if (yaml_load(a, &d, "t", text, len, &l) || !l.head)
		return NULL;
	return l.head->root;
}

static struct node *roundtrip(struct arena *a, const struct node *n, bool yaml)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct node *back;

	if (yaml)
		emit_yaml(f, n);
	else
		emit_json(f, n);
	fclose(f);
	back = load(a, buf, len);
	free(buf);
	return back;
}

static void test_roundtrip(void)
{
	struct arena a;
	struct node *n, *j, *y;

	arena_init(&a);
	n = load(&a, doc, strlen(doc));
	CHECK(n != NULL);
	j = roundtrip(&a, n, false);
	y = roundtrip(&a, n, true);
	CHECK(j && node_equal(n, j));
	CHECK(y && node_equal(n, y));
	CHECK(node_path(y, "metadata.annotations")->kv[0].val->type == N_STR);
	arena_free(&a);
}

static void test_compact_json(void)
{
	struct arena a;
	struct node *n;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	arena_init(&a);
	n = load(&a, "a: {}\nb: []\nc: 'x/y'\n", 20);
	CHECK_STR(emit_json_text(&a, n), "{\"a\":{},\"b\":[],\"c\":\"x/y\"}");
	f = open_memstream(&buf, &len);
	emit_json(f, n);
	fclose(f);
	CHECK(strstr(buf, "\"a\": {}") != NULL);
	CHECK(strstr(buf, "\"b\": []") != NULL);
	free(buf);
	arena_free(&a);
}

int main(void)
{
	TEST_RUN(test_roundtrip);
	TEST_RUN(test_compact_json);
	return test_summary();
}
