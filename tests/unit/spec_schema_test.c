/* SPDX-License-Identifier: MIT */
/* spec/schema.c (the table generated from KubeVirt's swagger.json: lookups
 * and the walk) and spec/schema_decode.c (strict decoding against it). */
#include <errno.h>
#include <stdlib.h>

#include "spec/load.h"
#include "spec/resolve.h"
#include "spec/schema.h"
#include "tests/lib/test.h"

static void test_table_sorted(void)
{
	const struct schema_type *t;
	unsigned int i, j;

	CHECK(schema_n_types > 100);
	for (i = 0; i < schema_n_types; i++) {
		t = &schema_types[i];
		if (i)
			CHECK(strcmp(schema_types[i - 1].name, t->name) < 0);
		for (j = 1; j < t->n; j++)
			CHECK(strcmp(schema_fields[t->first + j - 1].key,
				     schema_fields[t->first + j].key) < 0);
		CHECK(schema_type(t->name) == t);
	}
	CHECK(schema_type("v1.NoSuchType") == NULL);
}

static void test_lookup(void)
{
	static const char *const roots[] = {
	    SCHEMA_T_VM,  SCHEMA_T_VM_SPEC, SCHEMA_T_VMI,  SCHEMA_T_VMI_SPEC, SCHEMA_T_PRESET,
	    SCHEMA_T_IT,  SCHEMA_T_CIT,	    SCHEMA_T_PREF, SCHEMA_T_CPREF,    SCHEMA_T_REVISION,
	    SCHEMA_T_PVC, SCHEMA_T_DV,	    SCHEMA_T_DS};
	const struct schema_val *v;
	const char *const *e;
	const char *dev = "spec.template.spec.domain.devices.";
	char path[256];

	for (unsigned int i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		CHECK(schema_type(roots[i]) != NULL);
	snprintf(path, sizeof(path), "%snetworkInterfaceMultiqueue", dev);
	v = schema_lookup(SCHEMA_T_VM, path);
	CHECK(v && v->kind == SK_BOOL);
	snprintf(path, sizeof(path), "%snetworkInterfaceMultiQueue", dev);
	CHECK(schema_lookup(SCHEMA_T_VM, path) == NULL);
	v = schema_lookup(SCHEMA_T_PREF, "spec.devices.preferredNetworkInterfaceMultiQueue");
	CHECK(v && v->kind == SK_BOOL);
	v = schema_lookup(SCHEMA_T_VM, "spec.template.spec.domain.cpu.cores");
	CHECK(v && v->kind == SK_UINT32);
	CHECK(schema_lookup(SCHEMA_T_VM, "spec.template.spec.domain.cpu.socket") == NULL);
	v = schema_lookup(SCHEMA_T_VMI, "spec.domain.memory.guest");
	CHECK(v && v->kind == SK_QUANTITY);
	v = schema_lookup(SCHEMA_T_VMI, "spec.domain.devices.disks");
	CHECK(v && v->kind == SK_ARRAY && schema_val_item(v)->kind == SK_OBJECT);
	/* array elements: implicit, [] or [N] */
	CHECK(schema_lookup(SCHEMA_T_VMI, "spec.domain.devices.disks.disk.bus") != NULL);
	CHECK(schema_lookup(SCHEMA_T_VMI, "spec.domain.devices.disks[].disk.bus") != NULL);
	CHECK(schema_lookup(SCHEMA_T_VMI, "spec.domain.devices.disks[3].disk.bus") != NULL);
	CHECK(schema_lookup(SCHEMA_T_VMI, "spec.domain.devices.disks[3") == NULL);
	CHECK(schema_lookup(SCHEMA_T_VMI, "spec.domain.cpu[0]") == NULL);
	CHECK(schema_lookup(SCHEMA_T_VMI, "spec..domain") == NULL);
	v = schema_lookup(SCHEMA_T_VMI, "spec.volumes.containerDisk.imagePullPolicy");
	e = schema_val_enum(v);
	CHECK(e && e[0] && e[1] && e[2] && !e[3]);
	CHECK(e && strcmp(e[1], "IfNotPresent") == 0);
	v = schema_lookup(SCHEMA_T_VM, "metadata.labels");
	CHECK(v && v->kind == SK_MAP && schema_val_item(v)->kind == SK_STRING);
	v = schema_lookup(SCHEMA_T_IT, "spec.cpu.guest");
	CHECK(v && v->kind == SK_UINT32);
	CHECK(schema_field(schema_type("v1.Disk"), "name")->flags & SCHEMA_REQUIRED);
	CHECK(!(schema_field(schema_type("v1.Disk"), "cache")->flags & SCHEMA_REQUIRED));
	CHECK(schema_field(schema_type("v1.DomainSpec"), "clock")->flags & SCHEMA_PRESERVE_UNKNOWN);
}

struct seen {
	unsigned int n;
	bool model, volume_name, status;
};

static int visit(const char *path, const struct schema_field *f, void *arg)
{
	struct seen *s = arg;

	s->n++;
	s->model |= strcmp(path, "template.spec.domain.cpu.model") == 0 && f->val &&
		    schema_field_val(f)->kind == SK_STRING;
	s->volume_name |= strcmp(path, "template.spec.volumes[].name") == 0;
	if (strcmp(path, "template.spec.domain.cpu") == 0)
		return 1; /* not into cpu: model must not be seen */
	return strcmp(path, "template.spec.volumes[].name") == 0 ? 7 : 0;
}

static void test_walk(void)
{
	struct seen s = {0};

	CHECK(schema_walk("v1.Nope", visit, &s) == -ENOENT);
	CHECK(schema_walk(SCHEMA_T_VM_SPEC, visit, &s) == 7);
	CHECK(s.volume_name && !s.model && s.n > 100);
}

static int count(const char *path, const struct schema_field *f, void *arg)
{
	(void)path;
	(void)f;
	++*(unsigned int *)arg;
	return 0;
}

/* decode one YAML document against a type; errors collected in d */
struct decoded {
	struct arena a;
	struct diag d;
	struct doc_list l;
	int ret;
};

static struct node *decode(struct decoded *x, const char *type, bool legacy, const char *text)
{
	arena_init(&x->a);
	diag_init(&x->d, &x->a);
	yaml_doc_list_init(&x->l);
	if (yaml_load(&x->a, &x->d, "t.yaml", text, strlen(text), &x->l) || !x->l.head) {
		x->ret = -EIO;
		return NULL;
	}
	x->ret = schema_decode(&x->d, x->l.head->root, type, NULL, NULL, legacy);
	diag_print(&x->d, stdout);
	return x->l.head->root;
}

static bool said(const struct decoded *x, unsigned int line, unsigned int col, const char *path,
		 const char *msg)
{
	for (const struct diag_msg *m = x->d.head; m; m = m->next)
		if (m->line == line && m->col == col && m->path && strcmp(m->path, path) == 0 &&
		    strstr(m->msg, msg))
			return true;
	return false;
}

static void test_decode(void)
{
	struct decoded x;
	struct node *root;
	unsigned int n = 0;

	CHECK(schema_walk(SCHEMA_T_VM, count, &n) == 0 && n > 500);
	root = decode(&x, SCHEMA_T_VM, false,
		      "kind: VirtualMachine\nspec:\n  template:\n    metadata:\n"
		      "      labels: {a: b}\n      extra: 1\n    spec:\n      domain:\n"
		      "        cpu: {cores: -1, socket: 2}\n        clock: {timezon: UTC}\n"
		      "        devices:\n          disks:\n          - disk: {bus: virtio}\n"
		      "          rng: {x: 1}\n      volumes:\n      - name: v\n"
		      "        containerDisk: {image: i, imagePullPolicy: Sometimes}\n");
	CHECK(x.ret == -EINVAL);
	CHECK(x.d.n_err == 5 && x.d.n_warn == 2);
	CHECK(said(&x, 9, 22, "spec.template.spec.domain.cpu.cores", "between 0 and 4294967295"));
	CHECK(said(&x, 9, 26, "spec.template.spec.domain.cpu.socket", "unknown field \"socket\""));
	CHECK(said(&x, 13, 13, "spec.template.spec.domain.devices.disks[0].name", "Required"));
	CHECK(said(&x, 14, 17, "spec.template.spec.domain.devices.rng.x", "unknown field"));
	CHECK(said(&x, 17, 52, "spec.template.spec.volumes[0].containerDisk.imagePullPolicy",
		   "unsupported value \"Sometimes\""));
	/* preserved unknown fields: a warning, and gone from the tree */
	CHECK(said(&x, 6, 7, "spec.template.metadata.extra", "ignored"));
	CHECK(said(&x, 10, 17, "spec.template.spec.domain.clock.timezon", "ignored"));
	CHECK(node_path(root, "spec.template.metadata.extra") == NULL);
	CHECK(node_path(root, "spec.template.metadata.labels.a") != NULL);
	CHECK(node_path(root, "spec.template.spec.domain.clock.timezon") == NULL);
	arena_free(&x.a);

	/* seed-era: required fields not enforced; spec.flavor read as a matcher */
	decode(&x, SCHEMA_T_VMI, true, "spec:\n  domain:\n    cpu: {cores: 2}\n");
	CHECK(x.ret == 0 && x.d.n_err == 0);
	arena_free(&x.a);
	decode(&x, SCHEMA_T_VMI, false, "spec:\n  domain:\n    cpu: {cores: 2}\n");
	CHECK(x.ret == -EINVAL && said(&x, 3, 5, "spec.domain.devices", "Required value"));
	arena_free(&x.a);
	decode(&x, SCHEMA_T_VM, false,
	       "spec:\n  flavor: {name: f, kind: VirtualMachineFlavor}\n  template:\n"
	       "    spec:\n      domain:\n        devices: {}\n");
	CHECK(x.ret == 0);
	arena_free(&x.a);
	decode(&x, SCHEMA_T_VM, false,
	       "spec:\n  flavor: {nme: f}\n  template:\n    spec:\n      domain:\n"
	       "        devices: {}\n");
	CHECK(x.ret == -EINVAL && said(&x, 2, 12, "spec.flavor.nme", "unknown field"));
	arena_free(&x.a);
	decode(&x, SCHEMA_T_VM, false,
	       "spec:\n  flavor: small\n  template:\n    spec:\n      domain:\n"
	       "        devices: {}\n        cpu:\n          socket:\n");
	CHECK(x.ret == -EINVAL && x.d.n_err == 2);
	CHECK(said(&x, 2, 11, "spec.flavor", "must be an object"));
	CHECK(said(&x, 8, 11, "spec.template.spec.domain.cpu.socket", "unknown field")); /* null */
	arena_free(&x.a);

	/* types: quantities, int-or-string, maps of strings, null everywhere */
	decode(&x, SCHEMA_T_IT, false,
	       "metadata:\n  annotations: {a: 1}\n  creationTimestamp: null\n"
	       "spec:\n  cpu: {guest: 2, model: null}\n  memory: {guest: 1.5Gi}\n"
	       "  nodeSelector: {k: v}\n");
	CHECK(x.ret == -EINVAL && x.d.n_err == 1);
	CHECK(said(&x, 2, 20, "metadata.annotations.a", "must be a string"));
	arena_free(&x.a);
	decode(&x, SCHEMA_T_IT, false, "spec:\n  cpu: {guest: 2}\n  memory: {guest: 4GB}\n");
	CHECK(x.ret == -EINVAL && said(&x, 3, 19, "spec.memory.guest", "quantity"));
	arena_free(&x.a);
	CHECK(schema_decode(NULL, NULL, "v1.Nope", NULL, NULL, false) == -ENOENT);
}

int main(void)
{
	TEST_RUN(test_table_sorted);
	TEST_RUN(test_lookup);
	TEST_RUN(test_walk);
	TEST_RUN(test_decode);
	return test_summary();
}
