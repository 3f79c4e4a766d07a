/* SPDX-License-Identifier: MIT */
/*
 * file.h - opening and creating host files without being led elsewhere.
 *
 * Names that come from manifests and images are untrusted, and a
 * directory someone else can write may hold a link planted where vmlet
 * means to read or create a file. So:
 *  - a file under a root (--disk-root, the PVC directory, an image's
 *    unpack directory, the directory of a qcow2 image for its backing
 *    file) is opened relative to that root with openat2(RESOLVE_BENEATH |
 *    RESOLVE_NO_MAGICLINKS): "..", an absolute symlink or one leading out
 *    cannot leave it (-EXDEV);
 *  - what a name is gets looked at before it is opened (O_PATH, fstat): a
 *    FIFO never blocks the start and a device node is not opened unless
 *    the caller accepts block devices; the real open then uses O_NONBLOCK
 *    and is checked again (same type, same inode);
 *  - files vmlet creates are new (O_CREAT | O_EXCL, which never follows a
 *    link) or unnamed (O_TMPFILE), and are used through the descriptor
 *    that created them, never reopened by name.
 *
 * Functions return a descriptor (O_CLOEXEC) or 0, else -errno; they print
 * nothing (the caller names the file in its error).
 */
#ifndef VMLET_FILE_H
#define VMLET_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct file_where {
	/* non-NULL: path lies under this directory (path is ROOT/REL, or REL
	 * relative to it) and is opened beneath it; NULL: path as it is */
	const char *root;
	bool follow;   /* a symlink as the last component is followed (a path
			* the operator gave); else -ELOOP */
	bool block_ok; /* a block device is accepted; else regular files only */
};

/*
 * Open path as w allows, with flags (the access mode, O_DSYNC...; not
 * O_CREAT, O_TRUNC or O_DIRECT, which fcntl(F_SETFL) sets afterwards).
 * Errors: -EXDEV path leads out of the root (or is absolute and not under
 * it), -ELOOP a symlink not followed, -EMEDIUMTYPE not a regular file (nor
 * an accepted block device), -ESTALE the name changed between the look and
 * the open, -ENOSYS a kernel without openat2 (Linux 5.6) for a path under
 * a root; others from the kernel. file_why() words them for a message.
 */
int file_open(const struct file_where *w, const char *path, int flags);

/* What a file_open() error means, to follow the file's name in a message
 * (" (it is a symbolic link)"...); "" for the kernel's own errors. */
const char *file_why(int err);

/* A new file at path (O_CREAT | O_EXCL | O_NOFOLLOW), opened O_RDWR with
 * mode: -EEXIST when anything (a link included) has that name. */
int file_create(const char *path, mode_t mode);

/* An unnamed file in dir, open O_RDWR (O_TMPFILE; where the file system
 * has none, a new name unlinked at once). */
int file_tmp(const char *dir);

/*
 * Replacing path atomically: file_replace_begin() makes a new file beside
 * it (PATH.tmp-XXXXXX, O_EXCL: a planted link is never followed) and
 * returns its descriptor (O_RDWR, mode) and name (*tmp, malloc'ed); the
 * caller writes it; file_replace_commit() syncs it and renames it over
 * path (a link at path is replaced, not followed), or with err != 0 (or
 * when that fails) removes it. It frees *tmp and keeps fd open; returns 0
 * or -errno (err when given).
 */
int file_replace_begin(const char *path, mode_t mode, char **tmp);
int file_replace_commit(int fd, char **tmp, const char *path, int err);

/* Copy of name fit for a file name: characters other than [A-Za-z0-9._-]
 * become '_', a leading '.' too; "" becomes "_". NULL when out of memory. */
char *file_safe_name(const char *name);

#endif /* VMLET_FILE_H */
