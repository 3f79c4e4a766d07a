// SPDX-License-Identifier: MIT
/*
 * file.c - opening and creating host files without being led elsewhere
 * (file.h): openat2() beneath a root, a look (O_PATH) before the open,
 * O_NONBLOCK and a second look after it; new files made with O_EXCL or
 * O_TMPFILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/util/file.h"

/* path relative to root (ROOT/REL or a relative REL), or NULL when path
 * is absolute and not under root. */
static const char *file_rel(const char *root, const char *path)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (strncmp(path, root, n) || (path[n] != '/' && !(n == 1 && root[0] == '/')))
		return path[0] != '/' ? path : NULL; /* REL, or not under root */
	path += n;
	while (*path == '/')
		path++;
	return path;
}

static int file_openat(int dir, const char *rel, int flags, bool beneath)
{
	struct open_how how = {
	    .flags = (unsigned int)(flags | O_CLOEXEC),
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (!beneath)
		fd = openat(dir, rel, flags | O_CLOEXEC);
	else
		fd = syscall(SYS_openat2, dir, rel, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

/* What st is allowed to be. */
static int file_kind_ok(const struct file_where *w, const struct stat *st)
{
	if (S_ISREG(st->st_mode) || (w->block_ok && S_ISBLK(st->st_mode)))
		return 0;
	return S_ISLNK(st->st_mode) ? -ELOOP : -EMEDIUMTYPE;
}

/* Look at what rel names (O_PATH opens nothing: no FIFO, no driver), then
 * open it for real with O_NONBLOCK, and check it is still that file. */
static int file_open_in(const struct file_where *w, int dir, const char *rel, int flags)
{
	int nofollow = w->follow ? 0 : O_NOFOLLOW, fd, pfd, r, fl;
	struct stat a, b;

	pfd = file_openat(dir, rel, O_PATH | nofollow, w->root != NULL);
	if (pfd < 0)
		return pfd;
	r = fstat(pfd, &a) ? -errno : file_kind_ok(w, &a);
	close(pfd);
	if (r)
		return r;
	fd = file_openat(dir, rel, flags | nofollow | O_NONBLOCK, w->root != NULL);
	if (fd < 0)
		return fd;
	if (fstat(fd, &b))
		r = -errno;
	else if (a.st_dev != b.st_dev || a.st_ino != b.st_ino || a.st_rdev != b.st_rdev)
		r = -ESTALE;
	else if (!(r = file_kind_ok(w, &b)) && (fl = fcntl(fd, F_GETFL)) >= 0)
		r = fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? -errno : 0;
	else if (!r)
		r = -errno;
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

int file_open(const struct file_where *w, const char *path, int flags)
{
	const char *rel = path;
	int dir = AT_FDCWD, fd;

	if (flags & (O_CREAT | O_TRUNC | O_DIRECT | O_PATH))
		return -EINVAL;
	if (w->root) {
		rel = file_rel(w->root, path);
		if (!rel)
			return -EXDEV;
		if (!*rel)
			return -EMEDIUMTYPE; /* the root itself */
		dir = open(w->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return -errno;
	}
	fd = file_open_in(w, dir, rel, flags);
	if (dir >= 0)
		close(dir);
	return fd;
}

const char *file_why(int err)
{
	switch (err) {
	case -EXDEV:
		return " (it leads out of the directory it must stay in)";
	case -ELOOP:
		return " (it is a symbolic link)";
	case -EMEDIUMTYPE:
		return " (it is not a regular file)";
	case -ESTALE:
		return " (it changed while it was opened)";
	case -ENOSYS:
		return " (this kernel has no openat2, Linux 5.6, to open it safely)";
	default:
		return "";
	}
}

int file_create(const char *path, mode_t mode)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

	return fd < 0 ? -errno : fd;
}

int file_tmp(const char *dir)
{
	char *name = NULL;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	/* no O_TMPFILE here: a new name (O_EXCL), gone at once */
	if (asprintf(&name, "%s/vmlet-XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	else
		unlink(name);
	free(name);
	return fd;
}

int file_replace_begin(const char *path, mode_t mode, char **tmp)
{
	int fd;

	if (asprintf(tmp, "%s.tmp-XXXXXX", path) < 0) {
		*tmp = NULL;
		return -ENOMEM;
	}
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd >= 0 && !fchmod(fd, mode))
		return fd;
	fd = fd < 0 ? -errno : (close(fd), unlink(*tmp), -EIO);
	free(*tmp);
	*tmp = NULL;
	return fd;
}

int file_replace_commit(int fd, char **tmp, const char *path, int err)
{
	if (!err && fdatasync(fd))
		err = -errno;
	if (!err && rename(*tmp, path))
		err = -errno;
	if (err)
		unlink(*tmp);
	free(*tmp);
	*tmp = NULL;
	return err;
}

char *file_safe_name(const char *name)
{
	char *s = strdup(*name ? name : "_");

	for (char *p = s; p && *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || (*p == '.' && p != s)))
			*p = '_';
	return s;
}
