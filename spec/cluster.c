/* SPDX-License-Identifier: MIT */
/*
 * cluster.c - read the inputs (files, directories, stdin, text) and
 * classify every object: the "cluster" resolution looks things up in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec/resolve.h"
#include "spec/schema.h"

#define SPEC_MAX_INPUT (64u << 20)

void cluster_init(struct cluster *c)
{
	memset(c, 0, sizeof(*c));
	arena_init(&c->a);
	diag_init(&c->d, &c->a);
	yaml_doc_list_init(&c->docs);
	c->tail = &c->objs;
}

void cluster_free(struct cluster *c)
{
	arena_free(&c->a);
	memset(c, 0, sizeof(*c));
}

static const char *api_group(struct arena *a, const char *api, const char **version)
{
	const char *slash = api ? strchr(api, '/') : NULL;

	if (!slash) {
		*version = api ? api : "";
		return "";
	}
	*version = slash + 1;
	return arena_strndup(a, api, (size_t)(slash - api));
}

static bool is_alpha(const char *version)
{
	return strncmp(version, "v1alpha", 7) == 0;
}

struct kind_map {
	const char *kind;
	enum obj_kind k;
	bool cluster_scoped;
};

static const struct kind_map instancetype_kinds[] = {
    {"VirtualMachineInstancetype", OBJ_IT, false},
    {"VirtualMachineClusterInstancetype", OBJ_CIT, true},
    {"VirtualMachinePreference", OBJ_PREF, false},
    {"VirtualMachineClusterPreference", OBJ_CPREF, true},
    {"VirtualMachineFlavor", OBJ_IT, false},
    {"VirtualMachineClusterFlavor", OBJ_CIT, true},
    {NULL, 0, false},
};

/* A kind of instancetype.kubevirt.io or (its predecessor) flavor.kubevirt.io
 * (group and version: api's); the deprecated versions and group warned
 * about. */
static enum obj_kind classify_instancetype(struct cluster *c, struct node *root, const char *api,
					   const char *group, const char *version, const char *kind,
					   bool *cluster_scoped)
{
	const struct kind_map *km;

	for (km = instancetype_kinds; km->kind; km++) {
		if (strcmp(km->kind, kind) != 0)
			continue;
		if (strstr(km->kind, "Flavor") && strcmp(group, "flavor.kubevirt.io") != 0)
			break;
		*cluster_scoped = km->cluster_scoped;
		if (strcmp(group, "flavor.kubevirt.io") == 0)
			diag_warn(&c->d, root, NULL,
				  "%s %s is the deprecated predecessor of "
				  "instancetype.kubevirt.io/v1beta1; resolved with the "
				  "v1beta1 rules",
				  api, kind);
		else if (is_alpha(version))
			diag_warn(&c->d, root, NULL,
				  "%s is deprecated (no longer served since KubeVirt v1.6); "
				  "read as instancetype.kubevirt.io/v1beta1",
				  api);
		return km->k;
	}
	return OBJ_OTHER;
}

/* A kind of kubevirt.io (or no group): the VM, and the seed-era and
 * deprecated inputs, warned about (*legacy: decoded as such). */
static enum obj_kind classify_kubevirt(struct cluster *c, struct node *root, const char *api,
				       const char *kind, bool *legacy)
{
	struct node *spec = node_get(root, "spec");

	if (strcmp(kind, "VirtualMachine") == 0) {
		if (!node_get(spec, "template") && node_get(spec, "domain")) {
			diag_warn(
			    &c->d, root, NULL,
			    "%s VirtualMachine with spec.domain is a seed-era form (deprecated): "
			    "resolved as a VirtualMachineInstance (presets apply, instancetypes do "
			    "not)",
			    api ? api : "kubevirt.io");
			*legacy = true;
			return OBJ_VMI;
		}
		return OBJ_VM;
	}
	if (strcmp(kind, "VirtualMachineInstance") == 0) {
		diag_warn(&c->d, root, NULL,
			  "a bare VirtualMachineInstance is deprecated as input: presets apply, "
			  "instancetypes and preferences do not");
		return OBJ_VMI;
	}
	if (strcmp(kind, "VirtualMachineInstancePreset") == 0) {
		diag_warn(&c->d, root, NULL,
			  "VirtualMachineInstancePreset is deprecated since KubeVirt v0.57; "
			  "use instancetypes and preferences");
		/* decoded without required fields: presets are commonly written
		 * without the domain.devices the CRD demands */
		*legacy = true;
		return OBJ_PRESET;
	}
	if (strcmp(kind, "VirtualMachinePreset") == 0) {
		diag_warn(&c->d, root, NULL,
			  "%s VirtualMachinePreset is a seed-era form (deprecated): "
			  "applied as a VirtualMachineInstancePreset",
			  api ? api : "kubevirt.io");
		*legacy = true;
		return OBJ_PRESET;
	}
	return OBJ_OTHER;
}

static enum obj_kind classify(struct cluster *c, struct node *root, bool *cluster_scoped,
			      bool *legacy)
{
	const char *api = node_sval(node_get(root, "apiVersion"));
	const char *kind = node_sval(node_get(root, "kind"));
	const char *version, *group = api_group(&c->a, api, &version);

	*cluster_scoped = false;
	*legacy = is_alpha(version) || strcmp(group, "flavor.kubevirt.io") == 0;
	if (!kind)
		return OBJ_OTHER;
	if (strcmp(group, "instancetype.kubevirt.io") == 0 ||
	    strcmp(group, "flavor.kubevirt.io") == 0)
		return classify_instancetype(c, root, api, group, version, kind, cluster_scoped);
	if (strcmp(kind, "ControllerRevision") == 0)
		return OBJ_REVISION;
	if (strcmp(kind, "PersistentVolumeClaim") == 0)
		return OBJ_PVC;
	if (strcmp(kind, "DataVolume") == 0)
		return OBJ_DV;
	if (strcmp(kind, "DataSource") == 0)
		return OBJ_DS;
	if (*group && strcmp(group, "kubevirt.io") != 0)
		return OBJ_OTHER;
	return classify_kubevirt(c, root, api, kind, legacy);
}

static bool manifest_name(const char *n);

/* The schema type each kind decodes as. Seed-era forms use their
 * successor's: a v1alpha1 VirtualMachine with spec.domain the
 * VirtualMachineInstance, VirtualMachinePreset the
 * VirtualMachineInstancePreset, flavor.kubevirt.io and
 * instancetype.kubevirt.io/v1alpha1|2 objects the v1beta1 kinds (a
 * superset of their fields). */
static const char *schema_of(const struct object *o)
{
	switch (o->kind) {
	case OBJ_VM:
		return SCHEMA_T_VM;
	case OBJ_VMI:
		return SCHEMA_T_VMI;
	case OBJ_IT:
		return SCHEMA_T_IT;
	case OBJ_CIT:
		return SCHEMA_T_CIT;
	case OBJ_PREF:
		return SCHEMA_T_PREF;
	case OBJ_CPREF:
		return SCHEMA_T_CPREF;
	case OBJ_PRESET:
		return SCHEMA_T_PRESET;
	case OBJ_REVISION:
		return SCHEMA_T_REVISION;
	case OBJ_PVC:
		return SCHEMA_T_PVC;
	case OBJ_DV:
		return SCHEMA_T_DV;
	case OBJ_DS:
		return SCHEMA_T_DS;
	default:
		return NULL;
	}
}

/* The object a ControllerRevision holds, when it is one resolution may
 * read (an instancetype.kubevirt.io/v1beta1 instancetype or preference):
 * its schema type, else NULL (resolution reports what it cannot use). */
static const char *revision_data_schema(const struct node *data)
{
	static const char *const kinds[][2] = {
	    {"VirtualMachineInstancetype", SCHEMA_T_IT},
	    {"VirtualMachineClusterInstancetype", SCHEMA_T_CIT},
	    {"VirtualMachinePreference", SCHEMA_T_PREF},
	    {"VirtualMachineClusterPreference", SCHEMA_T_CPREF},
	};
	const char *kind = node_sval(node_get(data, "kind"));

	if (!kind || strcmp(resolve_str(node_get(data, "apiVersion")),
			    "instancetype.kubevirt.io/v1beta1") != 0)
		return NULL;
	for (unsigned int i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i][0]) == 0)
			return kinds[i][1];
	return NULL;
}

/* Strict decoding of a classified object (spec/schema_decode.c). */
static int decode_object(struct cluster *c, const struct object *o)
{
	const char *kind = node_sval(node_get(o->root, "kind"));
	const char *what = NULL, *dt;
	struct node *data;
	int ret;

	if (o->kind != OBJ_VM && o->kind != OBJ_VMI)
		what = arena_printf(&c->a, "%s \"%s\": ", kind ? kind : "", o->name);
	ret = schema_decode(&c->d, o->root, schema_of(o), NULL, what, o->legacy);
	data = node_get(o->root, "data");
	if (o->kind == OBJ_REVISION && node_is_map(data) && (dt = revision_data_schema(data)) &&
	    schema_decode(&c->d, data, dt, "data", what, false))
		ret = -EINVAL;
	return ret;
}

/* A ConfigMap holding manifests (the way a pod gets them): every data entry
 * named *.yaml|*.yml|*.json is read as one more input, named FILE#KEY (line
 * numbers count from the start of the entry). */
static int add_configmap(struct cluster *c, const struct node *cm)
{
	const struct node *data = node_get(cm, "data");
	const char *text;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < data->n; i++) {
		text = node_sval(data->kv[i].val);
		if (!text || !manifest_name(data->kv[i].key))
			continue;
		if (cluster_add_text(c, arena_printf(&c->a, "%s#%s", cm->file, data->kv[i].key),
				     text, strlen(text)))
			ret = -EINVAL;
	}
	return ret;
}

/* Classify and decode one object; -EINVAL when it does not decode (the
 * errors are in c->d; the object is kept, so all errors are reported). */
static int add_object(struct cluster *c, struct node *root)
{
	struct node *md = node_get(root, "metadata");
	const char *kind = node_sval(node_get(root, "kind"));
	struct node *items = node_get(root, "items");
	struct object *o;
	bool cs;
	unsigned int i;
	int ret = 0;

	if (kind && strcmp(kind, "List") == 0 && node_is_seq(items)) {
		for (i = 0; i < items->n; i++)
			if (node_is_map(items->items[i]) && add_object(c, items->items[i]))
				ret = -EINVAL;
		return ret;
	}
	if (kind && strcmp(kind, "ConfigMap") == 0 && node_is_map(node_get(root, "data")))
		return add_configmap(c, root);
	o = arena_alloc(&c->a, sizeof(*o));
	o->root = root;
	o->kind = classify(c, root, &cs, &o->legacy);
	if (o->kind == OBJ_OTHER) {
		if (kind)
			diag_warn(&c->d, root, NULL, "ignoring %s %s: not used by resolution",
				  resolve_str(node_get(root, "apiVersion")), kind);
		else
			diag_warn(&c->d, root, NULL,
				  "ignoring a document without kind: not a Kubernetes object");
		return 0;
	}
	o->name = node_sval(node_get(md, "name"));
	if (!o->name)
		o->name = "";
	o->ns = cs ? "" : node_sval(node_get(md, "namespace"));
	if (!o->ns || (!cs && !*o->ns))
		o->ns = "default";
	if (o->kind == OBJ_VM || o->kind == OBJ_VMI)
		c->n_vms++;
	*c->tail = o;
	c->tail = &o->next;
	return decode_object(c, o);
}

int cluster_add_text(struct cluster *c, const char *file, const char *text, size_t len)
{
	struct doc_list l;
	struct doc *d;
	int ret;

	if (c->on_text)
		c->on_text(c->on_text_ctx, text, len);
	yaml_doc_list_init(&l);
	ret = yaml_load(&c->a, &c->d, arena_strdup(&c->a, file), text, len, &l);
	if (ret)
		return ret;
	for (d = l.head; d; d = d->next)
		if (add_object(c, d->root))
			ret = -EINVAL;
	return ret;
}

static int read_fd(int fd, char **buf, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *p = malloc(cap), *q;
	ssize_t r;

	if (!p)
		spec_oom();
	for (;;) {
		if (n == cap) {
			if (cap >= SPEC_MAX_INPUT) {
				free(p);
				return -EFBIG;
			}
			cap *= 2;
			q = realloc(p, cap);
			if (!q)
				spec_oom();
			p = q;
		}
		r = read(fd, p + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			free(p);
			return (int)r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = p;
	*len = n;
	return 0;
}

/*
 * Open a manifest file for reading whatever it is: first without blocking
 * (O_NONBLOCK: opening a device cannot hang), then read in blocking mode,
 * as cat reads it. A FIFO is opened again, blocking, so that it waits for
 * its writer (`mkfifo f; ... >f &`); a pipe (`-f <(...)`) is read as its
 * writer writes, where a non-blocking read used to fail with EAGAIN.
 */
static int open_manifest(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), fl;

	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && S_ISFIFO(st.st_mode)) {
		close(fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		fl = -errno;
		close(fd);
		return fl;
	}
	return fd;
}

static int add_file(struct cluster *c, const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	if (strcmp(path, "-") == 0) {
		ret = read_fd(0, &buf, &len);
		path = "<stdin>";
	} else {
		fd = open_manifest(path);
		if (fd < 0) {
			ret = fd;
			diag_err_loc(&c->d, NULL, 0, 0, NULL, "cannot open %s: %s", path,
				     strerror(-ret));
			return ret;
		}
		ret = read_fd(fd, &buf, &len);
		close(fd);
	}
	if (ret) {
		diag_err_loc(&c->d, NULL, 0, 0, NULL, "cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = cluster_add_text(c, path, buf, len);
	free(buf);
	return ret;
}

static bool manifest_name(const char *n)
{
	size_t l = strlen(n);

	if (n[0] == '.')
		return false;
	return (l > 5 && strcmp(n + l - 5, ".yaml") == 0) ||
	       (l > 4 && strcmp(n + l - 4, ".yml") == 0) ||
	       (l > 5 && strcmp(n + l - 5, ".json") == 0);
}

static int add_dir(struct cluster *c, const char *path)
{
	struct dirent **list = NULL;
	int n, i, ret = 0;
	char *p;

	n = scandir(path, &list, NULL, alphasort);
	if (n < 0) {
		ret = -errno;
		diag_err_loc(&c->d, NULL, 0, 0, NULL, "cannot read directory %s: %s", path,
			     strerror(-ret));
		return ret;
	}
	for (i = 0; i < n; i++) {
		if (ret == 0 && manifest_name(list[i]->d_name)) {
			p = arena_printf(&c->a, "%s%s%s", path,
					 path[strlen(path) - 1] == '/' ? "" : "/", list[i]->d_name);
			ret = add_file(c, p);
		}
		free(list[i]);
	}
	free(list);
	return ret;
}

int cluster_add_path(struct cluster *c, const char *path)
{
	struct stat st;

	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return add_dir(c, path);
	return add_file(c, path);
}

const struct object *cluster_find(const struct cluster *c, enum obj_kind k, const char *ns,
				  const char *name)
{
	const struct object *o;

	for (o = c->objs; o; o = o->next)
		if (o->kind == k && strcmp(o->name, name) == 0 && strcmp(o->ns, ns) == 0)
			return o;
	return NULL;
}

const struct object *cluster_pick_vm(const struct cluster *c, const char *name, struct diag *d)
{
	const struct object *o, *found = NULL;
	unsigned int n = 0;

	for (o = c->objs; o; o = o->next) {
		if (o->kind != OBJ_VM && o->kind != OBJ_VMI)
			continue;
		if (name && strcmp(o->name, name) != 0)
			continue;
		n++;
		if (!found)
			found = o;
	}
	if (n == 1)
		return found;
	if (n == 0 && name)
		diag_err_loc(d, NULL, 0, 0, NULL, "no VirtualMachine named \"%s\" in the input",
			     name);
	else if (n == 0)
		diag_err_loc(d, NULL, 0, 0, NULL, "no VirtualMachine in the input");
	else
		diag_err(d, found->root, NULL,
			 "%u VirtualMachines%s%s%s in the input: choose one with --vm NAME", n,
			 name ? " named \"" : "", name ? name : "", name ? "\"" : "");
	return NULL;
}
