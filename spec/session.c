/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spec/config.h"
#include "spec/emit.h"
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

/* ---- spec_resolve_print ------------------------------------------------ */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --bench N: N resolutions in this process (parse once / parse each time) */
static int bench(struct session *s, const struct spec_options *o, long n, FILE *out)
{
	double t0, t1, t2;
	long i;
	struct session s2;
	int ret = 0;

	t0 = now();
	for (i = 0; i < n && !ret; i++)
		ret = session_resolve(s, o->vm_name);
	t1 = now();
	for (i = 0; i < n && !ret; i++) {
		session_init(&s2);
		ret = session_load(&s2, o->files, o->n_files, o->manifest);
		if (!ret)
			ret = session_resolve(&s2, o->vm_name);
		session_free(&s2);
	}
	t2 = now();
	if (ret)
		return ret;
	fprintf(out, "resolve_only_per_s %.0f\nparse_and_resolve_per_s %.0f\n",
		(double)n / (t1 - t0), (double)n / (t2 - t1));
	return 0;
}

/* the vm_config of a resolution: checked only (print == false) or printed */
static int config_out(struct session *s, const struct spec_options *o, bool print, FILE *out)
{
	struct vm_config cfg;
	int ret;

	vm_config_init(&cfg);
	ret = config_from_resolution(&s->r, o, &cfg);
	if (ret == 0 && print)
		ret = config_emit_json(out, &cfg);
	vm_config_release(&cfg);
	return ret;
}

static int output(struct session *s, const struct spec_options *o,
		  const struct spec_print_options *p, FILE *out)
{
	const struct node *doc;

	if (p->explain)
		return emit_explain(out, &s->r);
	if (p->format == SPEC_FORMAT_CONFIG)
		return config_out(s, o, true, out);
	doc = p->list ? session_list(s) : s->r.vmi;
	return p->format == SPEC_FORMAT_YAML ? emit_yaml(out, doc) : emit_json(out, doc);
}

int spec_resolve_print(const struct spec_options *o, const struct spec_print_options *p, FILE *out)
{
	struct session s;
	int ret;

	session_init(&s);
	ret = session_load(&s, o->files, o->n_files, o->manifest);
	if (!ret)
		ret = session_resolve(&s, o->vm_name);
	if (!ret && p->bench)
		ret = bench(&s, o, p->bench, out);
	else if (!ret) {
		/* validate -o config before printing anything */
		if (p->format == SPEC_FORMAT_CONFIG && !p->explain)
			ret = config_out(&s, o, false, out);
		session_report(&s, stderr);
		if (!ret)
			ret = output(&s, o, p, out);
		if (!ret && fflush(out))
			ret = -EIO;
	} else {
		session_report(&s, stderr);
	}
	session_free(&s);
	return ret;
}
