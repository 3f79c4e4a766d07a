/* SPDX-License-Identifier: MIT */
/*
 * admit_volumes.c - KubeVirt's volume rules (spec/admit.h): validateVolumes
 * and validateKernelBoot of vmi-create-admitter.go, ValidateContainerDisks
 * and ValidatePath of pkg/storage/admitters/disks.go. Feature-gate rules
 * (hostDisk, downwardMetrics) are cluster settings and not checked.
 */
#include <string.h>

#include "spec/admit.h"

#define CLOUD_INIT_MAX 2048 /* cloudInitUserMaxLen, cloudInitNetworkMaxLen */

static const char *const sources[] = {
    "persistentVolumeClaim",
    "sysprep",
    "cloudInitNoCloud",
    "cloudInitConfigDrive",
    "containerDisk",
    "ephemeral",
    "emptyDisk",
    "hostDisk",
    "dataVolume",
    "configMap",
    "secret",
    "downwardAPI",
    "serviceAccount",
    "downwardMetrics",
    "memoryDump",
    "containerPath",
};

static int b64_val(char c)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(tab, c) : NULL;

	return p ? (int)(p - tab) : -1;
}

/* Go's base64.StdEncoding.DecodeString: padded, '\r' and '\n' skipped.
 * The decoded length, or -1 when s is not valid. */
static long b64_len(const char *s)
{
	long len = 0;
	unsigned int q = 0, pad = 0;

	for (; *s; s++) {
		if (*s == '\r' || *s == '\n')
			continue;
		if (*s == '=') {
			if (q < 2 || ++pad + q > 4)
				return -1;
			continue;
		}
		if (pad || b64_val(*s) < 0)
			return -1;
		if (++q == 4) {
			len += 3;
			q = 0;
		}
	}
	if (pad) {
		if (q + pad != 4)
			return -1;
		len += q - 1;
	} else if (q) {
		return -1;
	}
	return len;
}

struct ci_part {
	const char *plain, *b64, *ref; /* field names */
	const char *what;	       /* "userdata" / "networkdata" */
	const char *one;	       /* "userdatasource" / "networkdata source" */
	const char *ref_name;	       /* the SecretRef's Go name */
};

/* One half (user or network data) of a cloud-init source: the number of
 * sources set; errors for bad base64, two sources, too much data. */
static unsigned int check_ci_part(const struct admit *a, const struct node *src, const char *path,
				  const char *type, const struct ci_part *p)
{
	const struct node *b = node_get(src, p->b64), *pl = node_get(src, p->plain);
	unsigned int n = 0;
	long len = 0;

	if (*resolve_str(node_get(node_get(src, p->ref), "name")))
		n++;
	if (*resolve_str(b)) {
		n++;
		len = b64_len(resolve_str(b));
		if (len < 0)
			admit_err(a, b, arena_printf(a->r->a, "%s.%s", path, p->b64),
				  "%s.%s.%s is not a valid base64 value.",
				  arena_printf(a->r->a, "%s.%s", path, p->b64), type, p->b64);
	}
	if (*resolve_str(pl)) {
		n++;
		len = (long)strlen(resolve_str(pl));
	}
	if (n > 1)
		admit_err(a, src, path, "%s must have only one %s set.", path, p->one);
	if (len > CLOUD_INIT_MAX)
		admit_err(a, src, path,
			  "%s %s exceeds %d byte limit. Should use %s for larger data.", path,
			  p->what, CLOUD_INIT_MAX, p->ref_name);
	return n;
}

static void check_cloud_init(const struct admit *a, const struct node *v, unsigned int i)
{
	static const struct ci_part user = {"userData", "userDataBase64", "secretRef",
					    "userdata", "userdatasource", "UserDataSecretRef"};
	static const struct ci_part net = {"networkData",	   "networkDataBase64",
					   "networkDataSecretRef", "networkdata",
					   "networkdata source",   "NetworkDataSecretRef"};
	const char *type = "cloudInitNoCloud", *path;
	const struct node *src = node_get(v, type);
	unsigned int n;

	if (node_is_null(src)) {
		type = "cloudInitConfigDrive";
		src = node_get(v, type);
	}
	if (node_is_null(src))
		return;
	path = admit_path(a, "volumes[%u].%s", i, type);
	n = check_ci_part(a, src, path, type, &user);
	n += check_ci_part(a, src, path, type, &net);
	if (n == 0)
		admit_err(a, src, path,
			  "%s must have at least one userdatasource or one networkdatasource set.",
			  path);
}

static void check_host_disk(const struct admit *a, const struct node *v, unsigned int i)
{
	const struct node *hd = node_get(v, "hostDisk"), *tn = node_get(hd, "type");
	const char *t = resolve_str(tn);
	struct quantity cap;

	if (node_is_null(hd))
		return;
	if (!*resolve_str(node_get(hd, "path")))
		admit_err(a, hd, admit_path(a, "volumes[%u].hostDisk.path", i),
			  "%s is required for hostDisk volume",
			  admit_path(a, "volumes[%u].hostDisk.path", i));
	if (strcmp(t, "Disk") && strcmp(t, "DiskOrCreate"))
		admit_err(a, tn ? tn : hd, admit_path(a, "volumes[%u].hostDisk.type", i),
			  "%s has invalid value '%s', allowed are 'Disk' or 'DiskOrCreate'",
			  admit_path(a, "volumes[%u].hostDisk.type", i), t);
	if (strcmp(t, "Disk") == 0 && resolve_qty(node_get(hd, "capacity"), &cap) && cap.nanos)
		admit_err(a, node_get(hd, "capacity"),
			  admit_path(a, "volumes[%u].hostDisk.capacity", i),
			  "%s is allowed to pass only with %s equal to 'DiskOrCreate'",
			  admit_path(a, "volumes[%u].hostDisk.capacity", i),
			  admit_path(a, "volumes[%u].hostDisk.type", i));
}

/* configMap.name, secret.secretName, serviceAccount.serviceAccountName */
static void check_required_names(const struct admit *a, const struct node *v, unsigned int i)
{
	static const char *const req[][2] = {{"configMap", "name"},
					     {"secret", "secretName"},
					     {"serviceAccount", "serviceAccountName"}};
	const struct node *s;
	const char *path;
	unsigned int k;

	for (k = 0; k < 3; k++) {
		s = node_get(v, req[k][0]);
		if (node_is_null(s) || *resolve_str(node_get(s, req[k][1])))
			continue;
		path = admit_path(a, "volumes[%u].%s.%s", i, req[k][0], req[k][1]);
		admit_err(a, s, path, "%s is a required field", path);
	}
}

static void check_volume(const struct admit *a, const struct node *v, unsigned int i,
			 const struct admit_ix *ix, unsigned int count[3])
{
	const struct node *dv = node_get(v, "dataVolume"), *cd = node_get(v, "containerDisk");
	const char *vp = admit_path(a, "volumes"), *msg;
	unsigned int k, n = 0;

	if (ix->first[i] != i)
		admit_err(a, node_get(v, "name"), admit_path(a, "volumes[%u].name", i),
			  "%s[%u] and %s[%u] must not have the same Name.", vp, i, vp,
			  ix->first[i]);
	for (k = 0; k < sizeof(sources) / sizeof(sources[0]); k++)
		n += !node_is_null(node_get(v, sources[k]));
	if (!node_is_null(dv) && !*resolve_str(node_get(dv, "name")))
		admit_err(a, dv, admit_path(a, "volumes[%u].name", i),
			  "DataVolume 'name' must be set");
	if (n != 1)
		admit_err(a, v, admit_path(a, "volumes[%u]", i),
			  "%s[%u] must have exactly one source type set", vp, i);
	check_cloud_init(a, v, i);
	check_host_disk(a, v, i);
	check_required_names(a, v, i);
	count[0] += !node_is_null(node_get(v, "serviceAccount"));
	count[1] += !node_is_null(node_get(v, "downwardMetrics"));
	count[2] += !node_is_null(node_get(v, "memoryDump"));
	msg = admit_path_rule(resolve_str(node_get(cd, "path")));
	if (*resolve_str(node_get(cd, "path")) && msg)
		admit_err(a, node_get(cd, "path"), admit_path(a, "volumes[%u].containerDisk", i),
			  "%s %s", admit_path(a, "volumes[%u].containerDisk", i), msg);
}

/* validateKernelBoot. KubeVirt admits an initrdPath without a kernelPath
 * (QEMU then refuses to start: "-initrd only allowed with -kernel"); vmlet
 * refuses it here rather than drop the initrd (resolution.md §17). */
static void check_kernel_boot(const struct admit *a)
{
	const struct node *kb = node_path(a->dom, "firmware.kernelBoot"), *c, *n;
	const char *fp = admit_path(a, "domain.firmware.kernelBoot"), *msg;
	static const char *const paths[] = {"kernelPath", "initrdPath"};
	unsigned int k;

	if (node_is_null(kb))
		return;
	c = node_get(kb, "container");
	if (node_is_null(c)) {
		if (*resolve_str(node_get(kb, "kernelArgs")))
			admit_err(a, node_get(kb, "kernelArgs"),
				  arena_printf(a->r->a, "%s.kernelArgs", fp),
				  "kernel arguments cannot be provided without an external kernel");
		return;
	}
	if (!*resolve_str(node_get(c, "image")))
		admit_err(a, c, arena_printf(a->r->a, "%s.container.image", fp),
			  "%s.container must be defined with an image", fp);
	if (!*resolve_str(node_get(c, "kernelPath")) && !*resolve_str(node_get(c, "initrdPath")))
		admit_err(a, c, arena_printf(a->r->a, "%s.container", fp),
			  "%s.container must be defined with at least one of the following: "
			  "kernelPath, initrdPath",
			  fp);
	else if (!*resolve_str(node_get(c, "kernelPath")))
		admit_err(a, node_get(c, "initrdPath"),
			  arena_printf(a->r->a, "%s.container.initrdPath", fp),
			  "an initrd cannot be provided without a kernel: %s.container.kernelPath "
			  "is not set",
			  fp);
	for (k = 0; k < 2; k++) {
		n = node_get(c, paths[k]);
		msg = *resolve_str(n) ? admit_path_rule(resolve_str(n)) : NULL;
		if (msg)
			admit_err(a, n, arena_printf(a->r->a, "%s.container.%s", fp, paths[k]),
				  "%s.container.%s %s", fp, paths[k], msg);
	}
}

/* validateDataVolume of storage/admitters/data-volume-template.go: the
 * first problem of one template, NULL when none; *at and *field say where */
static const char *dv_problem(const struct admit *a, const struct node *t, const char *dp,
			      const struct node **at, const char **field)
{
	const struct node *sp = node_get(t, "spec"), *src = node_get(sp, "source"), *tgt;
	unsigned int i, n = 0;
	bool ext;

	*at = t;
	*field = arena_printf(a->r->a, "%s.PVC.Storage", dp);
	if (!*resolve_str(node_path(t, "metadata.name"))) {
		*field = arena_printf(a->r->a, "%s.name", dp);
		return arena_printf(
		    a->r->a, "'name' field must not be empty for DataVolumeTemplate entry %s.",
		    *field);
	}
	if (node_is_null(node_get(sp, "pvc")) && node_is_null(node_get(sp, "storage")))
		return "Missing Data volume PVC or Storage";
	if (!node_is_null(node_get(sp, "pvc")) && !node_is_null(node_get(sp, "storage")))
		return "Duplicate storage definition, both target storage and target pvc defined";
	tgt = node_is_null(node_get(sp, "pvc")) ? node_get(sp, "storage") : node_get(sp, "pvc");
	ext = !node_is_null(node_get(tgt, "dataSourceRef")) ||
	      !node_is_null(node_get(tgt, "dataSource"));
	*field = arena_printf(a->r->a, "%s.source", dp);
	if (ext && (!node_is_null(src) || !node_is_null(node_get(sp, "sourceRef"))))
		return "External population is incompatible with Source and SourceRef";
	*field = arena_printf(a->r->a, "%s.source.sourceRef", dp);
	if (!ext && node_is_null(src) && node_is_null(node_get(sp, "sourceRef")))
		return "Data volume should have either Source, SourceRef, or be externally "
		       "populated";
	if (node_is_null(src))
		return NULL;
	*field = arena_printf(a->r->a, "%s.source", dp);
	*at = src;
	for (i = 0; node_is_map(src) && i < src->n; i++)
		n += !node_is_null(src->kv[i].val);
	return n == 0  ? "Missing dataVolume valid source"
	       : n > 1 ? "Multiple dataVolume sources"
		       : NULL;
}

/* ValidateDataVolumeTemplate (KubeVirt's field: "spec.dataVolumeTemplate[i]")
 * and the storage admitter's namespace rule */
static void check_dv_templates(const struct admit *a)
{
	const struct node *ts = node_path(a->vm, "spec.dataVolumeTemplates"), *t, *at;
	const struct node *vols = node_get(a->spec, "volumes");
	const char *dp, *msg, *field, *name, *ns, *vmns;
	struct admit_ix claims, dvs;
	unsigned int i;

	vmns = resolve_str(node_path(a->vm, "metadata.namespace"));
	if (node_is_seq(ts) && ts->n) {
		admit_index(a, vols, "persistentVolumeClaim.claimName", &claims);
		admit_index(a, vols, "dataVolume.name", &dvs);
	}
	for (i = 0; node_is_seq(ts) && i < ts->n; i++) {
		t = ts->items[i];
		dp = arena_printf(a->r->a, "spec.dataVolumeTemplate[%u]", i);
		msg = dv_problem(a, t, dp, &at, &field);
		if (msg) {
			admit_err(a, at, field, "%s", msg);
			continue;
		}
		name = resolve_str(node_path(t, "metadata.name"));
		if (!admit_lookup(&claims, name) && !admit_lookup(&dvs, name))
			admit_err(
			    a, t, dp,
			    "DataVolumeTemplate entry %s must be referenced in the VMI template's "
			    "'volumes' list",
			    dp);
		ns = resolve_str(node_path(t, "metadata.namespace"));
		if (*ns && strcmp(ns, *vmns ? vmns : "default"))
			admit_err(a, node_path(t, "metadata.namespace"),
				  arena_printf(a->r->a, "spec.dataVolumeTemplates[%u]", i),
				  "Embedded DataVolume namespace %s differs from VM namespace %s",
				  ns, *vmns ? vmns : "default");
	}
}

void admit_volumes(const struct admit *a)
{
	static const char *const what[] = {"serviceAccount", "downwardMetric", "memory dump"};
	const struct node *vols = node_get(a->spec, "volumes");
	unsigned int count[3] = {0, 0, 0}, i;
	struct admit_ix ix;

	admit_index(a, vols, "name", &ix);
	for (i = 0; node_is_seq(vols) && i < vols->n; i++)
		check_volume(a, vols->items[i], i, &ix, count);
	for (i = 0; i < 3; i++)
		if (count[i] > 1)
			admit_err(a, vols, admit_path(a, "volumes"),
				  "%s must have max one %s volume set", admit_path(a, "volumes"),
				  what[i]);
	check_kernel_boot(a);
	if (a->vm)
		check_dv_templates(a);
}
