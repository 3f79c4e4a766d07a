/* SPDX-License-Identifier: MIT */
/*
 * The cost of loading and resolving large manifests (issue 28, finding
 * 10): key comparisons grow linearly with the keys of one map, counted
 * with node_key_compares() (no clocks). Before maps were indexed, 80,000
 * keys took 40 s: every key was compared with every earlier one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "spec/load.h"
#include "spec/spec.h"
#include "tests/lib/test.h"

/* A VM with n labels on the VM and n on its template. */
static char *big_labels(unsigned int n, size_t *len)
{
	size_t cap = 256 + (size_t)n * 48, off = 0;
	char *s = malloc(cap);
	unsigned int i;

	if (!s)
		abort();
	off += (size_t)snprintf(s + off, cap - off,
				"apiVersion: kubevirt.io/v1\n"
				"kind: VirtualMachine\n"
				"metadata:\n  name: big\n  labels:\n");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(s + off, cap - off, "    k%07u: v\n", i);
	off += (size_t)snprintf(s + off, cap - off,
				"spec:\n  runStrategy: Always\n  template:\n"
				"    metadata:\n      labels:\n");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(s + off, cap - off, "        t%07u: v\n", i);
	snprintf(s + off, cap - off,
		 "    spec:\n      domain:\n        memory: {guest: 64Mi}\n        devices: {}\n");
	*len = strlen(s);
	return s;
}

static void quiet(void *ctx, const struct spec_message *m)
{
	const char **first = ctx;

	if (!m->warning && !*first)
		*first = strdup(m->msg);
}

/* A VM with n volumes (emptyDisks) and no disks: resolution gives each a
 * default disk, looking every volume's name up among the disks. */
static char *big_volumes(unsigned int n)
{
	size_t cap = 512 + (size_t)n * 64, off = 0;
	char *s = malloc(cap);
	unsigned int i;

	if (!s)
		abort();
	off += (size_t)snprintf(s + off, cap - off,
				"apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n"
				"metadata: {name: vols}\nspec:\n  runStrategy: Once\n  template:\n"
				"    spec:\n      domain:\n        memory: {guest: 64Mi}\n"
				"        devices: {}\n      volumes:\n");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(s + off, cap - off,
					"      - {name: v%06u, emptyDisk: {capacity: 1Mi}}\n", i);
	return s;
}

/* Key comparisons of one `vmlet resolve -o json` (or -o config) of text
 * (0 on error). */
static unsigned long resolve_cost_as(const char *text, enum spec_format f, int *ret, char **err)
{
	struct spec_options o = {.manifest = text, .report = quiet, .report_ctx = err};
	struct spec_print_options p = {.format = f};
	FILE *out = fopen("/dev/null", "w");
	unsigned long before = node_key_compares();

	*err = NULL;
	*ret = spec_resolve_print(&o, &p, out);
	fclose(out);
	return node_key_compares() - before;
}

static unsigned long resolve_cost(const char *text, int *ret, char **err)
{
	return resolve_cost_as(text, SPEC_FORMAT_JSON, ret, err);
}

/* Default disks for 2,000 and 20,000 volumes: linear (each volume's name
 * was compared with every disk's: 100x for 10x the volumes). -o config
 * refuses lists vmlet cannot run before doing per-item work. */
static void test_many_volumes(void)
{
	unsigned long small, large;
	char *text, *err;
	int ret;

	text = big_volumes(2000);
	small = resolve_cost(text, &ret, &err);
	CHECK(ret == 0);
	free(text);
	free(err);
	text = big_volumes(20000);
	large = resolve_cost(text, &ret, &err);
	CHECK(ret == 0);
	printf("  key comparisons: 2,000 volumes %lu, 20,000 volumes %lu\n", small, large);
	CHECK(large < 20 * small);
	free(err);
	/* refused (the message goes to stderr), and no dearer than -o json */
	CHECK(resolve_cost_as(text, SPEC_FORMAT_CONFIG, &ret, &err) < 2 * large);
	CHECK(ret != 0);
	free(text);
	free(err);
}

static void test_resolve_linear(void)
{
	unsigned long small, large;
	size_t len;
	char *text, *err;
	int ret;

	text = big_labels(3000, &len);
	small = resolve_cost(text, &ret, &err);
	CHECK(ret == 0);
	free(text);
	free(err);
	text = big_labels(30000, &len);
	large = resolve_cost(text, &ret, &err);
	CHECK(ret == 0);
	free(text);
	free(err);
	printf("  key comparisons: 6,000 labels %lu, 60,000 labels %lu\n", small, large);
	/* linear: about 10x; comparing each key with the others: 100x */
	CHECK(large < 20 * small);
	CHECK(large < 60000ul * 20);
}

/* 300,000 keys in one map: loaded with a few comparisons per key; twice
 * as many exceed the loader's node limit and are refused, cheaply too. */
static void test_load_300k(void)
{
	struct arena a;
	struct diag d;
	struct doc_list l;
	unsigned long before;
	size_t len;
	char *text;
	int ret;

	for (unsigned int n = 150000; n <= 300000; n += 150000) {
		text = big_labels(n, &len);
		arena_init(&a);
		diag_init(&d, &a);
		yaml_doc_list_init(&l);
		before = node_key_compares();
		ret = yaml_load(&a, &d, "big.yaml", text, len, &l);
		printf("  %u + %u labels: %d, %lu key comparisons\n", n, n, ret,
		       node_key_compares() - before);
		CHECK(node_key_compares() - before < 4ul * 2 * n);
		if (n == 150000) {
			CHECK(ret == 0);
			CHECK(node_path(l.head->root, "metadata.labels")->n == n);
			CHECK(node_get(node_path(l.head->root, "metadata.labels"), "k0149999"));
		} else {
			CHECK(ret == -EINVAL); /* "document too large" */
		}
		arena_free(&a);
		free(text);
	}
}

int main(void)
{
	TEST_RUN(test_resolve_linear);
	TEST_RUN(test_many_volumes);
	TEST_RUN(test_load_300k);
	return test_summary();
}
