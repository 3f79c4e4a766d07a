// SPDX-License-Identifier: MIT
/*
 * config_cdisk.c - where a containerDisk volume's image is on this host
 * (spec.h, spec_options.disk_root, documents the rules).
 *
 * KubeVirt mounts each containerDisk's image filesystem for its volume and
 * takes containerDisk.path inside it, or else the only file in its /disk
 * directory (zero or several files are errors). vmlet's disk root holds
 * one directory per volume, ROOT/NAME, which is either that image
 * filesystem (it has a disk/ directory) or the image's /disk directory
 * itself. A bare image file in ROOT serves a VM with a single
 * containerDisk; anything that could map two volumes to one file, or one
 * volume to either of two files, is an error naming the volumes.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spec/config.h"

char *config_join(const char *root, const char *path)
{
	char *p;

	while (*path == '/')
		path++;
	if (asprintf(&p, "%s/%s", root, path) < 0)
		spec_oom();
	return p;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

static bool is_image_name(const char *n)
{
	static const char *const ext[] = {".img", ".qcow2", ".raw", ".iso"};
	size_t l = strlen(n), e;

	for (unsigned int i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		e = strlen(ext[i]);
		if (l > e && strcmp(n + l - e, ext[i]) == 0)
			return true;
	}
	return false;
}

/* The regular files of dir (all of them, or only image names), sorted:
 * the count, and the first one in *first (malloc'ed) when there is one. */
static unsigned int dir_files(const char *dir, bool images_only, char **first)
{
	struct dirent **list = NULL;
	unsigned int found = 0;
	char *p;
	int n;

	*first = NULL;
	n = scandir(dir, &list, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if (name[0] != '.' && (!images_only || is_image_name(name))) {
			p = config_join(dir, name);
			if (is_file(p) && !found++)
				*first = p;
			else
				free(p);
		}
		free(list[i]);
	}
	free(list);
	return found;
}

static const char *vol_path(const struct resolver *r, unsigned int vi)
{
	return arena_printf(r->a, "%svolumes[%u].containerDisk",
			    r->vmi_only ? "spec." : "spec.template.spec.", vi);
}

/* Exactly one file in dir (images_only: by name), or a diag error. */
static char *only_file(const struct resolver *r, const struct node *cd, unsigned int vi,
		       const char *name, const char *dir, bool images_only)
{
	char *img;
	unsigned int n = dir_files(dir, images_only, &img);

	if (n == 1)
		return img;
	free(img);
	diag_err(r->d, cd, vol_path(r, vi),
		 "containerDisk volume %s: %s %s in %s, only one disk is allowed (set "
		 "containerDisk.path to choose)",
		 name, n ? "more than one" : "no", images_only ? "image file" : "file", dir);
	return NULL;
}

/* The number of containerDisk volumes, and their names in names[]. */
static unsigned int count_cdisks(const struct resolver *r, const struct node *vols, char *names,
				 size_t len)
{
	unsigned int n = 0;

	names[0] = 0;
	for (unsigned int i = 0; node_is_seq(vols) && i < vols->n; i++) {
		if (!node_get(vols->items[i], "containerDisk"))
			continue;
		snprintf(names + strlen(names), len - strlen(names), "%s%s", n++ ? ", " : "",
			 resolve_str(node_get(vols->items[i], "name")));
	}
	(void)r;
	return n;
}

/* No ROOT/NAME directory: ROOT's single image, for a VM with a single
 * containerDisk; ROOT/NAME.img (to be reported missing) when there is none. */
static char *root_image(const struct resolver *r, const struct node *cd, unsigned int vi,
			const char *root, const char *name, const struct node *vols)
{
	char names[256], *img, *guess;
	unsigned int n = dir_files(root, true, &img);

	if (!n) {
		guess = config_join(root, name);
		if (asprintf(&img, "%s.img", guess) < 0)
			spec_oom();
		free(guess);
		return img;
	}
	if (count_cdisks(r, vols, names, sizeof(names)) > 1) {
		free(img);
		diag_err(
		    r->d, cd, vol_path(r, vi),
		    "containerDisk volumes %s: no %s/%s directory, and the images in %s cannot "
		    "serve more than one containerDisk (put each volume's image in %s/NAME/)",
		    names, root, name, root, root);
		return NULL;
	}
	if (n > 1) {
		free(img);
		return only_file(r, cd, vi, name, root, true);
	}
	return img;
}

char *config_container_disk(const struct resolver *r, const char *root, const struct node *vols,
			    const char *name, const struct node *cd)
{
	const char *path = resolve_str(node_get(cd, "path"));
	char *dir = config_join(root, name), *sub, *img = NULL;
	unsigned int vi = 0;

	while (node_is_seq(vols) && vi < vols->n &&
	       strcmp(resolve_str(node_get(vols->items[vi], "name")), name))
		vi++;
	if (*path) {
		/* inside the image: DIR is its filesystem, or its /disk */
		sub = config_join(is_dir(dir) ? dir : root, path);
		if (!is_file(sub) && !strncmp(path, "/disk/", 6)) {
			free(sub);
			sub = config_join(is_dir(dir) ? dir : root, path + 6);
		}
		img = sub;
	} else if (is_dir(sub = config_join(dir, "disk"))) {
		img = only_file(r, cd, vi, name, sub, false);
		free(sub);
	} else {
		free(sub);
		img = is_dir(dir) ? only_file(r, cd, vi, name, dir, true)
				  : root_image(r, cd, vi, root, name, vols);
	}
	free(dir);
	return img;
}
