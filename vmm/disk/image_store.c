// SPDX-License-Identifier: MIT
/*
 * image_store.c - containerDisk images from an OCI layout or `docker save`
 * archives, pulled with skopeo when missing (image_store.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/disk/image_store.h"
#include "vmm/log.h"
#include "vmm/vm_config.h"

#define CACHE_DIR  ".vmlet-disks"
#define MAX_LAYERS 128

extern char **environ;

/* The layers of an image, in order: files (OCI blobs) or members of a
 * docker archive. */
struct image {
	char key[80];  /* cache directory name */
	char *archive; /* docker archive, NULL for an OCI layout */
	char *layer[MAX_LAYERS];
	unsigned int n;
};

static void image_release(struct image *im)
{
	free(im->archive);
	for (unsigned int i = 0; i < im->n; i++)
		free(im->layer[i]);
	memset(im, 0, sizeof(*im));
}

/* Run argv with stdout to out_fd (-1: /dev/null): 0 when it exited 0,
 * -ENOENT when it is not installed, -EIO otherwise. */
static int store_exec(char *const argv[], int out_fd)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, r;

	posix_spawn_file_actions_init(&fa);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r)
		return -r;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return -ENOENT;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
}

/* argv's standard output, parsed as JSON (NULL when it failed). */
static json_object *store_exec_json(char *const argv[])
{
	FILE *f = tmpfile();
	json_object *j = NULL;

	if (f && !store_exec(argv, fileno(f)) && !fseek(f, 0, SEEK_SET))
		j = json_object_from_fd(fileno(f));
	if (f)
		fclose(f);
	return j;
}

/* "sha256:<hex>" -> DIR/blobs/sha256/<hex>, NULL when malformed. */
static char *blob_path(const char *store, const char *digest)
{
	const char *hex = strchr(digest ? digest : "", ':');
	char *p;

	if (!hex || strncmp(digest, "sha256:", 7) || strlen(hex + 1) != 64 ||
	    strspn(hex + 1, "0123456789abcdef") != 64)
		return NULL;
	return asprintf(&p, "%s/blobs/sha256/%s", store, hex + 1) < 0 ? NULL : p;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* The image ref names in DIR's OCI layout: its manifest's layers. */
static int oci_find(const char *store, const char *ref, struct image *im)
{
	char *idx = NULL, *mpath = NULL;
	json_object *index, *man = NULL, *list, *layers;
	const char *digest = NULL;
	int r = -ENOENT;

	if (asprintf(&idx, "%s/index.json", store) < 0 || access(idx, R_OK) ||
	    !(index = json_object_from_file(idx))) {
		free(idx);
		return -ENOENT;
	}
	if (json_object_object_get_ex(index, "manifests", &list))
		for (size_t i = 0; i < json_object_array_length(list) && !digest; i++) {
			json_object *m = json_object_array_get_idx(list, i), *ann;
			const char *name = json_object_object_get_ex(m, "annotations", &ann)
					       ? jstr(ann, "org.opencontainers.image.ref.name")
					       : NULL;

			if (name && !strcmp(name, ref))
				digest = jstr(m, "digest");
		}
	if (digest && (mpath = blob_path(store, digest)) && (man = json_object_from_file(mpath)) &&
	    json_object_object_get_ex(man, "layers", &layers)) {
		snprintf(im->key, sizeof(im->key), "%s", strchr(digest, ':') + 1);
		r = 0;
		for (size_t i = 0; !r && i < json_object_array_length(layers); i++)
			if (im->n == MAX_LAYERS ||
			    !(im->layer[im->n++] = blob_path(
				  store, jstr(json_object_array_get_idx(layers, i), "digest"))))
				r = -EINVAL;
	} else if (digest) {
		r = -EINVAL;
	}
	if (r == -EINVAL)
		error("image store: '%s': the manifest of '%s' is unreadable or malformed", store,
		      ref);
	json_object_put(man);
	json_object_put(index);
	free(mpath);
	free(idx);
	return r;
}

/* A layer member name of a docker archive: relative, no "..". */
static bool member_ok(const char *m)
{
	return m && *m && *m != '/' && !strstr(m, "..");
}

/* The entry of a docker save archive at path whose RepoTags hold ref. */
static int archive_entry(const char *path, const char *ref, struct image *im)
{
	char *argv[] = {"tar", "-xOf", (char *)path, "manifest.json", NULL};
	json_object *man = store_exec_json(argv), *tags, *layers;
	struct stat st;
	int r = -ENOENT;

	for (size_t i = 0; man && r == -ENOENT && i < json_object_array_length(man); i++) {
		json_object *e = json_object_array_get_idx(man, i);
		bool hit = false;

		if (json_object_object_get_ex(e, "RepoTags", &tags))
			for (size_t t = 0; t < json_object_array_length(tags); t++)
				hit |= !strcmp(
				    json_object_get_string(json_object_array_get_idx(tags, t)),
				    ref);
		if (!hit || !json_object_object_get_ex(e, "Layers", &layers))
			continue;
		r = stat(path, &st) ? -errno : 0;
		snprintf(im->key, sizeof(im->key), "archive-%llx-%llx",
			 (unsigned long long)st.st_ino, (unsigned long long)st.st_mtime);
		for (size_t l = 0; !r && l < json_object_array_length(layers); l++) {
			const char *m =
			    json_object_get_string(json_object_array_get_idx(layers, l));

			if (im->n == MAX_LAYERS || !member_ok(m) ||
			    !(im->layer[im->n++] = strdup(m)))
				r = -EINVAL;
		}
		if (!r && !(im->archive = strdup(path)))
			r = -ENOMEM;
	}
	json_object_put(man);
	return r;
}

static int archive_find(const char *store, const char *ref, struct image *im)
{
	struct dirent **list = NULL;
	int n = scandir(store, &list, NULL, alphasort), r = -ENOENT;
	char *p;

	for (int i = 0; i < n; i++) {
		size_t l = strlen(list[i]->d_name);

		if (r == -ENOENT && l > 4 && !strcmp(list[i]->d_name + l - 4, ".tar") &&
		    asprintf(&p, "%s/%s", store, list[i]->d_name) >= 0) {
			r = archive_entry(p, ref, im);
			free(p);
			if (r == -ENOENT)
				image_release(im);
		}
		free(list[i]);
	}
	free(list);
	return r;
}

/* How layer file f names member m ("m" or "./m"), malloc'ed; NULL when
 * f does not hold it. */
static char *layer_member(const char *f, const char *m)
{
	char *argv[] = {"tar", "-tf", (char *)f, NULL}, line[PATH_MAX], *found = NULL;
	FILE *out = tmpfile();
	size_t l = strlen(m);

	if (!out)
		return NULL;
	if (!store_exec(argv, fileno(out)) && !fseek(out, 0, SEEK_SET))
		while (!found && fgets(line, sizeof(line), out)) {
			bool dot = !strncmp(line, "./", 2);
			const char *s = line + (dot ? 2 : 0);

			if (!strncmp(s, m, l) && (s[l] == '/' || s[l] == '\n' || !s[l]) &&
			    asprintf(&found, "%s%s", dot ? "./" : "", m) < 0)
				found = NULL;
		}
	fclose(out);
	return found;
}

/* Unpack member of every layer of the image, in order, into dir. */
static int image_unpack_into(const struct image *im, const char *member, const char *dir)
{
	char *lay = NULL, *file = NULL, *name;
	int r = asprintf(&lay, "%s/.layer", dir) < 0 ? -ENOMEM : 0;

	for (unsigned int i = 0; !r && i < im->n; i++) {
		char *xa[] = {"tar", "-xf", im->archive, "-C", lay, im->layer[i], NULL};
		char *rm[] = {"rm", "-rf", lay, NULL};

		free(file);
		file = NULL;
		if (im->archive && (mkdir(lay, 0700) || (r = store_exec(xa, -1)) ||
				    asprintf(&file, "%s/%s", lay, im->layer[i]) < 0))
			r = r ? r : -EIO;
		if (!r && (name = layer_member(im->archive ? file : im->layer[i], member))) {
			char *x[] = {"tar",
				     "-xf",
				     im->archive ? file : im->layer[i],
				     "-C",
				     (char *)dir,
				     "--no-same-owner",
				     "--no-same-permissions",
				     name,
				     NULL};

			r = store_exec(x, -1);
			free(name);
		}
		if (im->archive)
			store_exec(rm, -1);
	}
	free(file);
	free(lay);
	return r;
}

/* DIR/.vmlet-disks/<key>: unpacked once, atomically (rename). */
static int image_unpack(const char *store, const struct image *im, const char *member, char **dest)
{
	char *cache = NULL, *tmp = NULL, *d = NULL;
	struct stat st;
	int r = -ENOMEM;

	if (asprintf(&cache, "%s/" CACHE_DIR, store) < 0 ||
	    asprintf(&d, "%s/%s", cache, im->key) < 0 ||
	    asprintf(&tmp, "%s.tmp-%d", d, (int)getpid()) < 0)
		goto out;
	r = 0;
	if (!stat(d, &st) && S_ISDIR(st.st_mode))
		goto out;
	if ((mkdir(cache, 0755) && errno != EEXIST) || mkdir(tmp, 0755)) {
		r = error_errno(-errno, "image store: cannot unpack into '%s'", cache);
		goto out;
	}
	r = image_unpack_into(im, member, tmp);
	if (!r && rename(tmp, d) && errno != ENOTEMPTY && errno != EEXIST)
		r = -errno;
	if (r || !access(tmp, F_OK)) {
		char *rm[] = {"rm", "-rf", tmp, NULL};

		store_exec(rm, -1);
	}
	if (r)
		error_errno(r, "image store: cannot unpack '%s' of image %s", member, im->key);
out:
	free(cache);
	free(tmp);
	if (!r)
		*dest = d;
	else
		free(d);
	return r;
}

/* The disk in the unpacked image at dest: containerDisk.path, else the
 * only file under /disk (KubeVirt's rule); a regular file inside dest. */
static int image_disk(const struct vm_disk *d, const char *dest, char **out)
{
	char *p = NULL, *dir = NULL, real[PATH_MAX], root[PATH_MAX];
	struct dirent **list = NULL;
	struct stat st;
	int n = 0, found = 0, r = -ENOENT;

	if (d->image_path) {
		if (asprintf(&p, "%s/%s", dest, d->image_path + strspn(d->image_path, "/")) < 0)
			return -ENOMEM;
	} else if (asprintf(&dir, "%s/disk", dest) >= 0) {
		n = scandir(dir, &list, NULL, alphasort);
		for (int i = 0; i < n; i++) {
			if (list[i]->d_name[0] != '.' && !found++ &&
			    asprintf(&p, "%s/%s", dir, list[i]->d_name) < 0)
				p = NULL;
			free(list[i]);
		}
		free(list);
		if (found != 1) {
			free(p);
			p = NULL;
		}
	}
	if (p && realpath(p, real) && realpath(dest, root) && !strncmp(real, root, strlen(root)) &&
	    real[strlen(root)] == '/' && !lstat(p, &st) && S_ISREG(st.st_mode)) {
		*out = p;
		r = 0;
	} else {
		free(p);
		r = error_errno(-ENOENT,
				"containerDisk volume '%s': image '%s' has %s (KubeVirt takes "
				"containerDisk.path, else the only file in /disk)",
				d->name, d->image,
				d->image_path ? "no regular file at containerDisk.path"
				: found > 1   ? "more than one file in /disk"
					      : "no disk file in /disk");
	}
	free(dir);
	return r;
}

static int image_find(const char *store, const struct vm_disk *d, struct image *im)
{
	char *src = NULL, *dst = NULL;
	int r = oci_find(store, d->image, im);

	if (r == -ENOENT)
		r = archive_find(store, d->image, im);
	if (r != -ENOENT)
		return r;
	if (asprintf(&src, "docker://%s", d->image) < 0 ||
	    asprintf(&dst, "oci:%s:%s", store, d->image) < 0) {
		r = -ENOMEM;
	} else {
		char *argv[] = {"skopeo", "copy", src, dst, NULL};

		log_info("image store: pulling '%s' into '%s' (skopeo)", d->image, store);
		r = store_exec(argv, -1);
		if (!r && (r = oci_find(store, d->image, im)) == -ENOENT)
			r = -EIO; /* pulled, but not under that name */
	}
	free(src);
	free(dst);
	if (r)
		error("containerDisk volume '%s': image '%s' is not in the image store '%s' (an "
		      "OCI layout naming it, or a docker save archive tagged with it)%s",
		      d->name, d->image, store,
		      r == -ENOENT ? "; install skopeo to pull it"
				   : " and skopeo could not pull it");
	return r ? -ENOENT : 0;
}

int image_store_resolve(const char *store, struct vm_config *cfg)
{
	int r = 0;

	for (unsigned int i = 0; !r && i < cfg->n_disks; i++) {
		struct vm_disk *d = &cfg->disks[i];
		struct image im = {0};
		char *dest = NULL;

		if (d->source != VM_DISK_CONTAINERDISK || d->path)
			continue;
		if (!d->image || !*d->image)
			return error_errno(-EINVAL, "containerDisk volume '%s' names no image",
					   d->name);
		r = image_find(store, d, &im);
		if (!r)
			r = image_unpack(store, &im,
					 d->image_path ? d->image_path + strspn(d->image_path, "/")
						       : "disk",
					 &dest);
		if (!r)
			r = image_disk(d, dest, &d->path);
		if (!r)
			log_info("containerDisk volume '%s': image '%s' -> %s", d->name, d->image,
				 d->path);
		free(dest);
		image_release(&im);
	}
	return r;
}
