/* SPDX-License-Identifier: MIT */
/*
 * resolve_match.c - the VM's instancetype / preference matchers
 * (docs/resolution.md): validation (§3.1), inferFromVolume (§5), kind
 * resolution and lookup (§3.2, §4.1), matcher annotations (§11) and
 * revision capture (§4.2-4.3).
 */
#include <errno.h>
#include <string.h>

#include "spec/resolve.h"

static const char *mpath(struct resolver *r, const struct matcher *mt, const char *sub)
{
	return sub ? arena_printf(r->a, "spec.%s.%s", mt->field, sub)
		   : arena_printf(r->a, "spec.%s", mt->field);
}

static bool is_it(const struct matcher *mt)
{
	return mt->field[0] == 'i';
}

int match_validate(struct resolver *r, struct matcher *mt)
{
	struct node *m = mt->m;
	const char *name, *ifv, *kind, *pol;
	unsigned int before = r->d->n_err;

	if (!m)
		return 0;
	name = node_sval(node_get(m, "name"));
	ifv = node_sval(node_get(m, "inferFromVolume"));
	kind = node_sval(node_get(m, "kind"));
	pol = node_sval(node_get(m, "inferFromVolumeFailurePolicy"));
	if ((!name || !*name) && (!ifv || !*ifv))
		diag_err(r->d, m, mpath(r, mt, NULL),
			 "Either Name or InferFromVolume should be provided within the %sMatcher",
			 mt->Field);
	if (ifv && *ifv && name && *name)
		diag_err(r->d, node_get(m, "name"), mpath(r, mt, "name"),
			 "Name already set, should be cleared before setting inferFromVolume");
	if (ifv && *ifv && kind && *kind)
		diag_err(r->d, node_get(m, "kind"), mpath(r, mt, "kind"),
			 "Kind already set, should be cleared before setting inferFromVolume");
	if (pol && strcmp(pol, "Ignore") != 0 && strcmp(pol, "Reject") != 0)
		diag_err(r->d, node_get(m, "inferFromVolumeFailurePolicy"),
			 mpath(r, mt, "inferFromVolumeFailurePolicy"),
			 "Invalid value '%s' for InferFromVolumeFailurePolicy", pol);
	return r->d->n_err != before ? -EINVAL : 0;
}

/* ---- inferFromVolume ------------------------------------------------ */

struct infer {
	struct resolver *r;
	struct matcher *mt;
	const char *name_label, *kind_label;
	const struct node *labels; /* labels holding the name label */
	const char *fail;	   /* ignorable failure */
	const char *fatal;	   /* non-ignorable failure */
};

static bool has_name_label(struct infer *in, const struct node *labels)
{
	if (node_sval(node_get(labels, in->name_label))) {
		in->labels = labels;
		return true;
	}
	return false;
}

static void from_pvc(struct infer *in, const char *ns, const char *name)
{
	const struct object *o = cluster_find(in->r->cl, OBJ_PVC, ns, name);

	if (!o) {
		in->fatal = arena_printf(in->r->a, "persistentvolumeclaims \"%s\" not found", name);
		return;
	}
	in->labels = node_path(o->root, "metadata.labels");
}

static void from_source(struct infer *in, const struct node *src, const char *what)
{
	struct resolver *r = in->r;
	const struct node *pvc = node_get(src, "pvc"), *snap = node_get(src, "snapshot");
	const char *ns;

	if (pvc) {
		ns = node_sval(node_get(pvc, "namespace"));
		from_pvc(in, ns && *ns ? ns : r->ns, resolve_str(node_get(pvc, "name")));
	} else if (snap) {
		in->fatal =
		    arena_printf(r->a, "volumesnapshots.snapshot.storage.k8s.io \"%s\" not found",
				 resolve_str(node_get(snap, "name")));
	} else {
		in->fail = arena_printf(r->a, "unable to infer defaults from %s", what);
	}
}

static void from_dv_spec(struct infer *in, const struct node *spec)
{
	struct resolver *r = in->r;
	const struct node *ref = node_get(spec, "sourceRef");
	const struct object *ds;
	const char *ns, *kind;

	if (node_get(spec, "source") &&
	    (node_path(spec, "source.pvc") || node_path(spec, "source.snapshot"))) {
		from_source(in, node_get(spec, "source"), "DataVolumeSpec");
		return;
	}
	if (!ref) {
		in->fail =
		    "unable to infer defaults from DataVolumeSpec as DataVolumeSource is not "
		    "supported";
		return;
	}
	kind = resolve_str(node_get(ref, "kind"));
	if (strcmp(kind, "DataSource") != 0) {
		in->fail = arena_printf(r->a,
					"unable to infer defaults from DataVolumeSpec as SourceRef "
					"Kind %s is not supported",
					kind);
		return;
	}
	ns = node_sval(node_get(ref, "namespace"));
	ds =
	    cluster_find(r->cl, OBJ_DS, ns && *ns ? ns : r->ns, resolve_str(node_get(ref, "name")));
	if (!ds) {
		in->fatal = arena_printf(r->a, "datasources.cdi.kubevirt.io \"%s\" not found",
					 resolve_str(node_get(ref, "name")));
		return;
	}
	if (has_name_label(in, node_path(ds->root, "metadata.labels")))
		return;
	if (node_path(ds->root, "spec.source.pvc") || node_path(ds->root, "spec.source.snapshot"))
		from_source(in, node_path(ds->root, "spec.source"), "DataSource");
	else
		in->fail = "unable to infer defaults from DataSource that doesn't provide "
			   "DataVolumeSourcePVC or DataVolumeSourceSnapshot";
}

static void from_datavolume(struct infer *in, const char *name)
{
	struct resolver *r = in->r;
	const struct node *tmpls = node_path(r->vm, "spec.dataVolumeTemplates");
	const struct object *dv;
	unsigned int i;

	for (i = 0; node_is_seq(tmpls) && i < tmpls->n; i++) {
		if (strcmp(resolve_str(node_path(tmpls->items[i], "metadata.name")), name) == 0) {
			from_dv_spec(in, node_get(tmpls->items[i], "spec"));
			return;
		}
	}
	dv = cluster_find(r->cl, OBJ_DV, r->ns, name);
	if (!dv) {
		from_pvc(in, r->ns, name);
		return;
	}
	if (has_name_label(in, node_path(dv->root, "metadata.labels")))
		return;
	from_dv_spec(in, node_get(dv->root, "spec"));
}

static struct node *find_volume(struct resolver *r, const char *name)
{
	struct node *vols = node_path(r->vm, "spec.template.spec.volumes");
	unsigned int i;

	for (i = 0; node_is_seq(vols) && i < vols->n; i++)
		if (strcmp(resolve_str(node_get(vols->items[i], "name")), name) == 0)
			return vols->items[i];
	return NULL;
}

int match_infer(struct resolver *r, struct matcher *mt)
{
	struct infer in = {.r = r, .mt = mt};
	const char *ifv = mt->m ? node_sval(node_get(mt->m, "inferFromVolume")) : NULL;
	bool ignore = mt->m && strcmp(resolve_str(node_get(mt->m, "inferFromVolumeFailurePolicy")),
				      "Ignore") == 0;
	struct node *vol, *nm, *spec = node_get(r->vm, "spec");
	const char *name, *kind;

	if (!ifv || !*ifv)
		return 0;
	in.name_label = is_it(mt) ? "instancetype.kubevirt.io/default-instancetype"
				  : "instancetype.kubevirt.io/default-preference";
	in.kind_label = is_it(mt) ? "instancetype.kubevirt.io/default-instancetype-kind"
				  : "instancetype.kubevirt.io/default-preference-kind";
	vol = find_volume(r, ifv);
	if (!vol)
		in.fatal = arena_printf(r->a, "unable to find volume %s to infer defaults", ifv);
	else if (node_get(vol, "persistentVolumeClaim"))
		from_pvc(&in, r->ns,
			 resolve_str(node_path(vol, "persistentVolumeClaim.claimName")));
	else if (node_get(vol, "dataVolume"))
		from_datavolume(&in, resolve_str(node_path(vol, "dataVolume.name")));
	else
		in.fail = arena_printf(
		    r->a, "unable to infer defaults from volume %s as type is not supported", ifv);
	if (!in.fatal && !in.fail && !node_sval(node_get(in.labels, in.name_label)))
		in.fail = arena_printf(r->a, "unable to find required %s label on the volume",
				       in.name_label);
	if (in.fatal || (in.fail && !ignore)) {
		diag_err(r->d, node_get(mt->m, "inferFromVolume"), mpath(r, mt, "inferFromVolume"),
			 "%s", in.fatal ? in.fatal : in.fail);
		return -EINVAL;
	}
	if (in.fail) {
		diag_warn(r->d, node_get(mt->m, "inferFromVolume"), mpath(r, mt, "inferFromVolume"),
			  "%s; inferFromVolumeFailurePolicy is Ignore: the VM has no %s", in.fail,
			  mt->field);
		node_del(spec, mt->field);
		mt->m = NULL;
		return 0;
	}
	name = node_sval(node_get(in.labels, in.name_label));
	kind = node_sval(node_get(in.labels, in.kind_label));
	nm = node_map(r->a);
	node_set(r->a, nm, "name", node_str(r->a, name));
	if (kind && *kind)
		node_set(r->a, nm, "kind", node_str(r->a, kind));
	node_set_origin(nm, arena_printf(r->a, "inferred from volume %s", ifv));
	nm->file = mt->m->file;
	nm->line = mt->m->line;
	nm->col = mt->m->col;
	node_set(r->a, spec, mt->field, nm);
	mt->m = nm;
	if (ignore && is_it(mt))
		node_del(node_path(r->vm, "spec.template.spec.domain"), "memory");
	return 0;
}

/* ---- lookup --------------------------------------------------------- */

static bool kind_is(const char *lk, const char *base)
{
	size_t l = strlen(base);

	return strncmp(lk, base, l) == 0 && (lk[l] == 0 || (lk[l] == 's' && lk[l + 1] == 0));
}

/* kind -> object kind; false for an unexpected kind */
static bool resolve_kind(struct resolver *r, const struct matcher *mt, enum obj_kind *k)
{
	const char *lk = resolve_lower(r->a, mt->kind);

	if (is_it(mt)) {
		if (!*lk || kind_is(lk, "virtualmachineclusterinstancetype"))
			*k = OBJ_CIT;
		else if (kind_is(lk, "virtualmachineinstancetype"))
			*k = OBJ_IT;
		else
			return false;
	} else {
		if (!*lk || kind_is(lk, "virtualmachineclusterpreference"))
			*k = OBJ_CPREF;
		else if (kind_is(lk, "virtualmachinepreference"))
			*k = OBJ_PREF;
		else
			return false;
	}
	return true;
}

static const char *resource_of(enum obj_kind k)
{
	switch (k) {
	case OBJ_IT:
		return "virtualmachineinstancetypes";
	case OBJ_CIT:
		return "virtualmachineclusterinstancetypes";
	case OBJ_PREF:
		return "virtualmachinepreferences";
	default:
		return "virtualmachineclusterpreferences";
	}
}

static const char *v1beta1_kind(enum obj_kind k)
{
	switch (k) {
	case OBJ_IT:
		return "VirtualMachineInstancetype";
	case OBJ_CIT:
		return "VirtualMachineClusterInstancetype";
	case OBJ_PREF:
		return "VirtualMachinePreference";
	default:
		return "VirtualMachineClusterPreference";
	}
}

/* the object stored in a ControllerRevision, NULL with an error */
static struct node *revision_object(struct resolver *r, struct matcher *mt, const struct object *cr,
				    const struct node *at, const char *path)
{
	struct node *data = node_get(cr->root, "data");
	const char *api = node_sval(node_get(data, "apiVersion"));
	const char *kind = resolve_str(node_get(data, "kind"));
	bool ok;

	if (is_it(mt))
		ok = !strcmp(kind, "VirtualMachineInstancetype") ||
		     !strcmp(kind, "VirtualMachineClusterInstancetype");
	else
		ok = !strcmp(kind, "VirtualMachinePreference") ||
		     !strcmp(kind, "VirtualMachineClusterPreference");
	if (!node_is_map(data) || (api && strcmp(api, "instancetype.kubevirt.io/v1beta1") != 0) ||
	    !ok) {
		diag_err(r->d, at, path,
			 "failed to decode object in ControllerRevision: %s \"%s\" holds %s %s, "
			 "not a v1beta1 %s",
			 "controllerrevisions.apps", cr->name, api ? api : "(no apiVersion)",
			 *kind ? kind : "(no kind)", mt->field);
		return NULL;
	}
	return data;
}

/* a kind for comparison: lower case, singular, "" = the cluster kind */
static const char *norm_kind(struct resolver *r, const struct matcher *mt, const char *kind)
{
	char *lk = resolve_lower(r->a, kind);
	size_t l = strlen(lk);

	if (!l)
		return is_it(mt) ? "virtualmachineclusterinstancetype"
				 : "virtualmachineclusterpreference";
	if (lk[l - 1] == 's')
		lk[l - 1] = 0;
	return lk;
}

/* the revision the VM's status records for this matcher (its
 * controllerRevisionRef), when it is of the same object (name, kind and
 * the revision's object-name label); else NULL */
static const struct object *match_status_revision(struct resolver *r, struct matcher *mt,
						  struct node *status_ref)
{
	const char *sref = node_sval(node_path(status_ref, "controllerRevisionRef.name"));
	struct node *labels;
	const struct object *cr;

	if (!sref || !*sref || strcmp(resolve_str(node_get(status_ref, "name")), mt->name) != 0 ||
	    strcmp(norm_kind(r, mt, node_sval(node_get(status_ref, "kind"))),
		   norm_kind(r, mt, mt->kind)) != 0)
		return NULL;
	cr = cluster_find(r->cl, OBJ_REVISION, r->ns, sref);
	if (!cr)
		return NULL;
	labels = node_path(cr->root, "metadata.labels");
	if (strcmp(resolve_str(labels ? node_get(labels, "instancetype.kubevirt.io/object-name")
				      : NULL),
		   mt->name) != 0)
		return NULL;
	return cr;
}

/* the object the matcher names, found by name (cluster-wide for the
 * cluster kinds); a flavor.kubevirt.io object is stored under its
 * v1beta1 kind. 0 or -EINVAL (reported) */
static int match_by_name(struct resolver *r, struct matcher *mt, enum obj_kind k)
{
	const struct object *o = cluster_find(r->cl, k, mt->cluster ? "" : r->ns, mt->name);

	if (!o) {
		diag_err(r->d, node_get(mt->m, "name") ? node_get(mt->m, "name") : mt->m,
			 mpath(r, mt, "name"), "%s.instancetype.kubevirt.io \"%s\" not found",
			 resource_of(k), mt->name);
		return -EINVAL;
	}
	mt->obj = o->root;
	if (strcmp(resolve_str(node_get(o->root, "kind")), v1beta1_kind(k)) != 0) {
		mt->obj = node_copy(r->a, o->root, NULL);
		node_set(r->a, mt->obj, "apiVersion",
			 node_str(r->a, "instancetype.kubevirt.io/v1beta1"));
		node_set(r->a, mt->obj, "kind", node_str(r->a, v1beta1_kind(k)));
	}
	return 0;
}

int match_find(struct resolver *r, struct matcher *mt)
{
	enum obj_kind k;
	const struct object *cr;
	const char *rev;
	struct node *status_ref;

	if (!mt->m)
		return 0;
	mt->name = resolve_str(node_get(mt->m, "name"));
	mt->kind = node_sval(node_get(mt->m, "kind"));
	if (!resolve_kind(r, mt, &k)) {
		diag_err(r->d, node_get(mt->m, "kind"), mpath(r, mt, "kind"),
			 "got unexpected kind in %sMatcher: %s", mt->Field, mt->kind);
		return -EINVAL;
	}
	mt->cluster = k == OBJ_CIT || k == OBJ_CPREF;
	mt->origin = arena_printf(r->a, "%s %s", mt->field, mt->name);
	rev = node_sval(node_get(mt->m, "revisionName"));
	status_ref = node_path(r->vm, arena_printf(r->a, "status.%sRef", mt->field));
	if (rev && *rev) {
		cr = cluster_find(r->cl, OBJ_REVISION, r->ns, rev);
		if (!cr) {
			diag_err(r->d, node_get(mt->m, "revisionName"),
				 mpath(r, mt, "revisionName"),
				 "controllerrevisions.apps \"%s\" not found", rev);
			return -EINVAL;
		}
		mt->obj = revision_object(r, mt, cr, node_get(mt->m, "revisionName"),
					  mpath(r, mt, "revisionName"));
		if (!mt->obj)
			return -EINVAL;
		mt->revision = rev;
	} else if ((cr = match_status_revision(r, mt, status_ref))) {
		mt->obj = revision_object(
		    r, mt, cr, node_path(status_ref, "controllerRevisionRef.name"),
		    arena_printf(r->a, "status.%sRef.controllerRevisionRef.name", mt->field));
		if (!mt->obj)
			return -EINVAL;
		mt->revision = node_sval(node_path(status_ref, "controllerRevisionRef.name"));
	} else if (match_by_name(r, mt, k)) {
		return -EINVAL;
	}
	if (is_it(mt) ? admit_instancetype(r, mt->obj) : admit_preference(r, mt->obj))
		return -EINVAL;
	mt->spec = node_get(mt->obj, "spec");
	return 0;
}

/* an annotation made from a matcher: where the matcher names the object */
static void stamp(struct node *n, const struct matcher *mt)
{
	const struct node *at = node_get(mt->m, "name") ? node_get(mt->m, "name") : mt->m;

	n->origin = mt->origin;
	n->file = at->file;
	n->line = at->line;
	n->col = at->col;
}

void match_annotate(struct resolver *r)
{
	struct node *md = node_get_map(r->a, r->vmi, "metadata");
	struct node *an;
	const char *key;

	if (r->it.m && r->it.spec) {
		an = node_get_map(r->a, md, "annotations");
		key = r->it.cluster ? "kubevirt.io/cluster-instancetype-name"
				    : "kubevirt.io/instancetype-name";
		stamp(node_set(r->a, an, key, node_str(r->a, r->it.name)), &r->it);
	}
	if (r->pref.m && r->pref.spec) {
		an = node_get_map(r->a, md, "annotations");
		key = r->pref.cluster ? "kubevirt.io/cluster-preference-name"
				      : "kubevirt.io/preference-name";
		stamp(node_set(r->a, an, key, node_str(r->a, r->pref.name)), &r->pref);
	}
}

/* ---- revisions ------------------------------------------------------ */

static struct node *make_revision(struct resolver *r, struct matcher *mt, const char *name)
{
	struct arena *a = r->a;
	struct node *cr = node_map(a), *md, *labels, *owner, *data, *dmd;
	const struct node *omd = node_get(mt->obj, "metadata");
	const char *gen = node_text(node_get(omd, "generation"));
	const char *kind = resolve_str(node_get(mt->obj, "kind"));

	node_add(a, cr, "apiVersion", node_str(a, "apps/v1"));
	node_add(a, cr, "kind", node_str(a, "ControllerRevision"));
	md = node_add(a, cr, "metadata", node_map(a));
	node_add(a, md, "name", node_str(a, name));
	node_add(a, md, "namespace", node_str(a, r->ns));
	labels = node_add(a, md, "labels", node_map(a));
	node_add(a, labels, "instancetype.kubevirt.io/object-generation",
		 node_str(a, gen ? gen : "0"));
	node_add(a, labels, "instancetype.kubevirt.io/object-kind", node_str(a, kind));
	node_add(a, labels, "instancetype.kubevirt.io/object-name", node_str(a, mt->name));
	node_add(a, labels, "instancetype.kubevirt.io/object-uid",
		 node_str(a, resolve_str(node_get(omd, "uid"))));
	node_add(a, labels, "instancetype.kubevirt.io/object-version", node_str(a, "v1beta1"));
	owner = node_map(a);
	node_add(a, owner, "apiVersion", node_str(a, "kubevirt.io/v1"));
	node_add(a, owner, "kind", node_str(a, "VirtualMachine"));
	node_add(a, owner, "name", node_str(a, r->name));
	node_add(a, owner, "uid", node_str(a, resolve_str(node_path(r->vm, "metadata.uid"))));
	node_add(a, owner, "controller", node_bool(a, true));
	node_add(a, owner, "blockOwnerDeletion", node_bool(a, true));
	node_push(a, node_add(a, md, "ownerReferences", node_seq(a)), owner);
	data = node_add(a, cr, "data", node_map(a));
	node_add(a, data, "apiVersion", node_str(a, "instancetype.kubevirt.io/v1beta1"));
	node_add(a, data, "kind", node_str(a, kind));
	dmd = node_add(a, data, "metadata", node_map(a));
	node_add(a, dmd, "name", node_str(a, mt->name));
	if (node_get(omd, "namespace") && !mt->cluster)
		node_add(a, dmd, "namespace", node_copy(a, node_get(omd, "namespace"), NULL));
	if (node_get(omd, "uid"))
		node_add(a, dmd, "uid", node_copy(a, node_get(omd, "uid"), NULL));
	if (node_get(omd, "generation"))
		node_add(a, dmd, "generation", node_copy(a, node_get(omd, "generation"), NULL));
	node_add(a, data, "spec", node_copy(a, mt->spec, NULL));
	node_add(a, cr, "revision", node_int(a, 0));
	node_set_origin(cr, "default");
	return cr;
}

int match_sync_revision(struct resolver *r, struct matcher *mt)
{
	struct node *status, *ref, *crr;
	const struct object *existing;
	const char *refkey = arena_printf(r->a, "%sRef", mt->field);
	const struct node *omd;
	const char *gen;

	if (!mt->m) {
		node_del(node_get(r->vm, "status"), refkey);
		return 0;
	}
	if (!mt->revision) {
		omd = node_get(mt->obj, "metadata");
		gen = node_text(node_get(omd, "generation"));
		mt->revision = arena_printf(r->a, "%s-%s-v1beta1-%s-%s", r->name, mt->name,
					    resolve_str(node_get(omd, "uid")), gen ? gen : "0");
		existing = cluster_find(r->cl, OBJ_REVISION, r->ns, mt->revision);
		if (existing && !node_equal(node_path(existing->root, "data.spec"), mt->spec)) {
			diag_err(r->d, existing->root, NULL,
				 "found existing ControllerRevision with unexpected data: %s",
				 mt->revision);
			return -EINVAL;
		}
		node_push(r->a, r->revs,
			  existing ? node_copy(r->a, existing->root, NULL)
				   : make_revision(r, mt, mt->revision));
	}
	status = node_get_map(r->a, r->vm, "status");
	ref = node_set(r->a, status, refkey, node_map(r->a));
	node_set(r->a, ref, "name", node_str(r->a, mt->name));
	if (mt->kind && *mt->kind)
		node_set(r->a, ref, "kind", node_str(r->a, mt->kind));
	crr = node_set(r->a, ref, "controllerRevisionRef", node_map(r->a));
	node_set(r->a, crr, "name", node_str(r->a, mt->revision));
	return 0;
}
