/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spec/resolve.h"

void session_init(struct session *s)
{
	memset(s, 0, sizeof(*s));
	cluster_init(&s->cl);
	arena_init(&s->a);
	diag_init(&s->d, &s->a);
}

int session_load(struct session *s, const char *const *files, unsigned int n_files,
		 const char *manifest)
{
	unsigned int i;
	int ret;

	const char *name = "<manifest>";

	if (n_files == 0) {
		if (!manifest) {
			manifest = getenv("VMLET_MANIFEST");
			name = "$VMLET_MANIFEST";
		}
		if (!manifest) {
			diag_err_loc(&s->cl.d, NULL, 0, 0, NULL,
				     "no input: give -f FILE|DIR|- or set VMLET_MANIFEST");
			return -EINVAL;
		}
		return cluster_add_text(&s->cl, name, manifest, strlen(manifest));
	}
	for (i = 0; i < n_files; i++) {
		ret = cluster_add_path(&s->cl, files[i]);
		if (ret)
			return ret;
	}
	return 0;
}

int session_resolve(struct session *s, const char *vm_name)
{
	const struct object *vm;

	arena_free(&s->a);
	arena_init(&s->a);
	diag_init(&s->d, &s->a);
	memset(&s->r, 0, sizeof(s->r));
	vm = cluster_pick_vm(&s->cl, vm_name, &s->d);
	if (!vm)
		return -EINVAL;
	return resolve_run(&s->r, &s->a, &s->d, &s->cl, vm);
}

struct node *session_list(struct session *s)
{
	struct arena *a = &s->a;
	struct node *l = node_map(a), *items;
	unsigned int i;

	node_set(a, l, "apiVersion", node_str(a, "v1"));
	node_set(a, l, "kind", node_str(a, "List"));
	items = node_set(a, l, "items", node_seq(a));
	if (s->r.vm)
		node_push(a, items, s->r.vm);
	if (s->r.vmi)
		node_push(a, items, s->r.vmi);
	for (i = 0; s->r.revs && i < s->r.revs->n; i++)
		node_push(a, items, s->r.revs->items[i]);
	node_set(a, l, "metadata", node_map(a));
	return l;
}

void session_report(const struct session *s, FILE *f)
{
	diag_print(&s->cl.d, f);
	diag_print(&s->d, f);
}

void session_free(struct session *s)
{
	arena_free(&s->a);
	cluster_free(&s->cl);
}
