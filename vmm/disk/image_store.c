// SPDX-License-Identifier: MIT
/*
 * image_store.c - containerDisk images from an OCI layout or `docker save`
 * archives, pulled with skopeo when missing (image_store.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/disk/image_layer.h"
#include "vmm/disk/image_manifest.h"
#include "vmm/disk/image_store.h"
#include "vmm/disk/sha256.h"
#include "vmm/disk/tar.h"
#include "vmm/util/log.h"
#include "vmm/vm_config.h"

#define CACHE_DIR     ".vmlet-disks"
#define ARCHIVE_MAX   100000u /* members of a docker archive */
#define ARCHIVE_LINKS 8	      /* links followed from a layer's name */

extern char **environ;

/* The layers of an image, base first: OCI blobs, or members of a docker
 * archive (all in archive_fd). */
struct image {
	char key[160]; /* what the image is, for the cache */
	int archive_fd;
	struct image_layer layer[IMAGE_MAX_LAYERS];
	unsigned int n;
};

static void image_release(struct image *im)
{
	for (unsigned int i = 0; i < im->n; i++)
		if (im->layer[i].fd >= 0 && im->layer[i].fd != im->archive_fd)
			close(im->layer[i].fd);
	if (im->archive_fd >= 0)
		close(im->archive_fd);
	memset(im, 0, sizeof(*im));
	im->archive_fd = -1;
}

/* A whole file of at most IMAGE_MANIFEST_MAX bytes, NUL-terminated. */
static int read_small(int dirfd, const char *path, char **out, size_t *len)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	ssize_t got = -1;
	char *p = NULL;

	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size <= IMAGE_MANIFEST_MAX &&
	    (p = malloc((size_t)st.st_size + 1)))
		got = pread(fd, p, (size_t)st.st_size, 0);
	close(fd);
	if (got != st.st_size) {
		free(p);
		return -EINVAL;
	}
	p[got] = 0;
	*out = p;
	*len = (size_t)got;
	return 0;
}

/* An OCI blob "sha256:<hex>" of the layout at store, opened. */
static int blob_open(const char *store, const char *digest, struct image_layer *l)
{
	char *p;
	struct stat st;
	int fd;

	if (!image_digest_valid(digest) ||
	    asprintf(&p, "%s/blobs/sha256/%s", store, digest + 7) < 0)
		return -EINVAL;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(p);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	*l = (struct image_layer){.fd = fd, .off = 0, .len = (uint64_t)st.st_size};
	return 0;
}

/* The image ref names in store's OCI layout: its manifest's layers. */
static int oci_find(const char *store, const char *ref, struct image *im)
{
	char *idx = NULL, *man = NULL, *mpath = NULL, digest[72];
	struct image_names layers = {0};
	size_t len;
	int r = -ENOENT;

	if (asprintf(&idx, "%s/index.json", store) < 0 || access(idx, F_OK) ||
	    read_small(AT_FDCWD, idx, &man, &len))
		goto out;
	r = image_oci_index(man, len, ref, digest);
	free(man);
	man = NULL;
	if (!r && (asprintf(&mpath, "%s/blobs/sha256/%s", store, digest + 7) < 0 ||
		   read_small(AT_FDCWD, mpath, &man, &len) || image_oci_layers(man, len, &layers)))
		r = -EINVAL;
	if (!r) {
		snprintf(im->key, sizeof(im->key), "oci %s", digest);
		for (unsigned int i = 0; !r && i < layers.n; i++)
			if (!(r = blob_open(store, layers.name[i], &im->layer[im->n])))
				im->n++;
	}
	if (r == -EINVAL)
		error("image store: '%s': the manifest of '%s' is unreadable or malformed", store,
		      ref);
out:
	image_names_release(&layers);
	free(mpath);
	free(man);
	free(idx);
	return r;
}

/* The members of a docker archive, in order (a later one of a name wins,
 * as in tar). */
struct member {
	char *name, *link;
	enum tar_type type;
	uint64_t off, size;
};

struct archive {
	struct member *m;
	size_t n;
};

static void archive_release(struct archive *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->m[i].name);
		free(a->m[i].link);
	}
	free(a->m);
	memset(a, 0, sizeof(*a));
}

static int archive_index(int fd, uint64_t len, struct archive *a, const char *path)
{
	struct tar_fd_src ctx;
	struct tar_src src;
	struct tar t;
	int r;

	tar_src_fd(&src, &ctx, fd, 0, len);
	tar_init(&t, &src);
	while ((r = tar_next(&t)) == 1) {
		struct member *m;

		if (a->n % 256 == 0) {
			if (a->n == ARCHIVE_MAX) {
				r = -E2BIG;
				snprintf(t.msg, sizeof(t.msg), "more than %u members", ARCHIVE_MAX);
				break;
			}
			if (!(m = realloc(a->m, (a->n + 256) * sizeof(*m)))) {
				r = -ENOMEM;
				break;
			}
			a->m = m;
		}
		m = &a->m[a->n++];
		*m = (struct member){.name = t.e.name,
				     .link = t.e.link,
				     .type = t.e.type,
				     .off = t.e.offset,
				     .size = t.e.size};
		t.e.name = t.e.link = NULL;
	}
	if (r)
		error_errno(r, "image store: '%s': %s", path, t.msg[0] ? t.msg : "unreadable");
	tar_release(&t);
	return r;
}

/* The regular member at name, links inside the archive followed. */
static const struct member *archive_member(const struct archive *a, const char *name)
{
	char *cur = strdup(name), *next = NULL;
	const struct member *m = NULL;

	for (unsigned int hop = 0; cur && hop <= ARCHIVE_LINKS; hop++) {
		m = NULL;
		for (size_t i = a->n; i-- > 0 && !m;)
			if (!strcmp(a->m[i].name, cur))
				m = &a->m[i];
		if (!m || m->type == TAR_REG || (m->type != TAR_SYMLINK && m->type != TAR_HARDLINK))
			break;
		/* a symbolic link is relative to its directory; neither may
		 * leave the archive (tar_name_norm refuses "..", so "../"
		 * targets are folded here first) */
		const char *slash = strrchr(cur, '/');
		int dl = m->type == TAR_SYMLINK && slash ? (int)(slash - cur) : 0;
		const char *t = m->link;

		while (m->type == TAR_SYMLINK && !strncmp(t, "../", 3) && dl > 0) {
			const char *up = memrchr(cur, '/', (size_t)dl);

			dl = up ? (int)(up - cur) : 0;
			t += 3;
		}
		m = NULL;
		if (asprintf(&next, "%.*s%s%s", dl, cur, dl ? "/" : "", t) < 0 ||
		    tar_name_norm(next)) {
			free(next);
			next = NULL;
		}
		free(cur);
		cur = next;
	}
	free(cur);
	return m && m->type == TAR_REG ? m : NULL;
}

/* The entry of the docker save archive at path whose RepoTags hold ref. */
static int archive_entry(const char *path, const char *ref, struct image *im)
{
	struct image_names layers = {0};
	const struct member *man;
	struct archive a = {0};
	char *json = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), r;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		r = -ENOENT;
		goto out;
	}
	if ((r = archive_index(fd, (uint64_t)st.st_size, &a, path)))
		goto out;
	r = -ENOENT;
	man = archive_member(&a, "manifest.json");
	if (!man || man->size > IMAGE_MANIFEST_MAX || !(json = malloc(man->size + 1)) ||
	    pread(fd, json, man->size, (off_t)man->off) != (ssize_t)man->size)
		goto out;
	r = image_docker_layers(json, man->size, ref, &layers);
	for (unsigned int i = 0; !r && i < layers.n; i++) {
		const struct member *m = archive_member(&a, layers.name[i]);

		if (!m) {
			error("image store: '%s': layer '%s' of '%s' is not a file of the archive",
			      path, layers.name[i], ref);
			r = -EINVAL;
		} else {
			im->layer[im->n++] =
			    (struct image_layer){.fd = fd, .off = m->off, .len = m->size};
		}
	}
	if (r == -EINVAL && !layers.n)
		error("image store: '%s': manifest.json is malformed", path);
	if (!r) {
		snprintf(im->key, sizeof(im->key), "archive %llx %llx %llx %lld.%09ld",
			 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			 (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
			 st.st_mtim.tv_nsec);
		im->archive_fd = fd;
		fd = -1;
	}
out:
	if (r)
		im->n = 0;
	if (fd >= 0)
		close(fd);
	free(json);
	image_names_release(&layers);
	archive_release(&a);
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
		}
		free(list[i]);
	}
	free(list);
	return r;
}

/* skopeo copy -- docker://REF oci:STORE:REF; 0, -ENOENT when skopeo is
 * not installed, -EIO when it failed. */
static int skopeo_pull(const char *store, const char *ref)
{
	char *src = NULL, *dst = NULL;
	pid_t pid;
	int st, r = -ENOMEM;

	if (asprintf(&src, "docker://%s", ref) >= 0 &&
	    asprintf(&dst, "oci:%s:%s", store, ref) >= 0) {
		char *argv[] = {"skopeo", "copy", "--", src, dst, NULL};
		posix_spawn_file_actions_t fa;

		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		r = -posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		while (!r && waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				r = -errno;
		if (!r && WIFEXITED(st) && WEXITSTATUS(st) == 127)
			r = -ENOENT;
		else if (!r && !(WIFEXITED(st) && !WEXITSTATUS(st)))
			r = -EIO;
	}
	free(src);
	free(dst);
	return r;
}

static int image_find(const char *store, const struct vm_disk *d, struct image *im)
{
	int r = oci_find(store, d->image, im);

	if (r == -ENOENT)
		r = archive_find(store, d->image, im);
	if (r != -ENOENT)
		return r;
	log_info("image store: pulling '%s' into '%s' (skopeo)", d->image, store);
	r = skopeo_pull(store, d->image);
	if (!r && (r = oci_find(store, d->image, im)) == -ENOENT)
		r = -EIO; /* pulled, but not under that name */
	if (r)
		error("containerDisk volume '%s': image '%s' is not in the image store '%s' (an "
		      "OCI layout naming it, or a docker save archive tagged with it)%s",
		      d->name, d->image, store,
		      r == -ENOENT ? "; install skopeo to pull it"
				   : " and skopeo could not pull it");
	return r ? -ENOENT : 0;
}

/* STORE/.vmlet-disks, ours and 0700, opened. */
static int cache_open(const char *store, int *dfd)
{
	char *p;
	struct stat st;
	int fd, r = 0;

	if (asprintf(&p, "%s/" CACHE_DIR, store) < 0)
		return -ENOMEM;
	if (mkdir(p, 0700) && errno != EEXIST)
		r = -errno;
	fd = r ? -1 : open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!r && (fd < 0 || fstat(fd, &st)))
		r = -errno;
	else if (!r && st.st_uid != geteuid())
		r = -EPERM;
	else if (!r && (st.st_mode & 077) && fchmod(fd, 0700))
		r = -errno;
	if (r) {
		error_errno(r, "image store: '%s' must be a directory of this user, mode 0700", p);
		if (fd >= 0)
			close(fd);
	} else {
		*dfd = fd;
	}
	free(p);
	return r;
}

/* The disk (member, NULL: the only file in /disk) of im as the file
 * STORE/.vmlet-disks/<sha256 of image and member>: extracted once into a
 * fresh file (O_EXCL, 0600, then 0400) and renamed into place. */
static int image_unpack(const char *store, const struct image *im, const char *member,
			const char *what, char **dest)
{
	char key[65], tmp[96];
	struct sha256 h;
	struct stat st;
	int dfd, fd = -1, r = cache_open(store, &dfd);

	if (r)
		return r;
	sha256_init(&h);
	sha256_update(&h, im->key, strlen(im->key) + 1);
	sha256_update(&h, member ? member : "", member ? strlen(member) + 1 : 1);
	sha256_hex(&h, key);
	if (!fstatat(dfd, key, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
			r = error_errno(-EEXIST,
					"image store: '%s/" CACHE_DIR "/%s' is not a file "
					"vmlet made: remove it",
					store, key);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), ".tmp-%.16s-%d", key, (int)getpid());
	unlinkat(dfd, tmp, 0); /* a leftover of this pid */
	fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = error_errno(-errno, "image store: cannot create '%s/" CACHE_DIR "/%s'", store,
				tmp);
		goto out;
	}
	r = image_layer_extract(im->layer, im->n, member, fd, what);
	if (!r && (fchmod(fd, 0400) || fdatasync(fd) || renameat(dfd, tmp, dfd, key)))
		r = error_errno(-errno, "image store: cannot store the disk of %s", what);
	if (r)
		unlinkat(dfd, tmp, 0);
out:
	if (fd >= 0)
		close(fd);
	close(dfd);
	if (!r && asprintf(dest, "%s/" CACHE_DIR "/%s", store, key) < 0)
		r = -ENOMEM;
	return r;
}

/* containerDisk.path as a member name: relative, normalised, no "..". */
static int disk_member(const struct vm_disk *d, char **out)
{
	char *m;

	*out = NULL;
	if (!d->image_path)
		return 0;
	if (!(m = strdup(d->image_path + strspn(d->image_path, "/"))))
		return -ENOMEM;
	if (tar_name_norm(m) || !*m) {
		free(m);
		return error_errno(
		    -EINVAL,
		    "containerDisk volume '%s': path '%s' must be an absolute path to "
		    "a file without relative components",
		    d->name, d->image_path);
	}
	*out = m;
	return 0;
}

int image_store_resolve(const char *store, struct vm_config *cfg)
{
	int r = 0;

	for (unsigned int i = 0; !r && i < cfg->n_disks; i++) {
		struct vm_disk *d = &cfg->disks[i];
		struct image im = {.archive_fd = -1};
		char *member = NULL, *what = NULL;

		if (d->source != VM_DISK_CONTAINERDISK || d->path)
			continue;
		if (!d->image || !*d->image)
			return error_errno(-EINVAL, "containerDisk volume '%s' names no image",
					   d->name);
		if (!image_ref_valid(d->image))
			return error_errno(
			    -EINVAL,
			    "containerDisk volume '%s': '%s' is not an image reference "
			    "([registry/]name[:tag][@digest], lowercase name)",
			    d->name, d->image);
		r = disk_member(d, &member);
		if (!r &&
		    asprintf(&what, "containerDisk volume '%s': image '%s'", d->name, d->image) < 0)
			r = -ENOMEM;
		if (!r)
			r = image_find(store, d, &im);
		if (!r)
			r = image_unpack(store, &im, member, what, &d->path);
		if (!r)
			log_info("containerDisk volume '%s': image '%s' -> %s", d->name, d->image,
				 d->path);
		free(member);
		free(what);
		image_release(&im);
	}
	return r;
}
