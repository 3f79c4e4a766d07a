/* SPDX-License-Identifier: MIT */
/*
 * tar.h - a streaming reader of untrusted tar archives (image layers and
 * `docker save` archives, vmm/disk/image_store.h). It only reads: nothing
 * is created from an entry here, and nothing in an archive is ever passed
 * to another program.
 *
 * Formats: ustar (name with its prefix), GNU ('L' long names, 'K' long
 * link names, old sparse 'S' entries skipped with their extension
 * blocks), pax ('x' records path, linkpath and size; 'g' ignored). Every
 * header's checksum is checked; sizes are octal or base-256 and bounded;
 * metadata records are capped (TAR_NAME_MAX, TAR_PAX_MAX). A size is
 * never trusted past the end of the input: data that ends early is
 * -EIO, not a short entry.
 *
 * Names are normalised (no leading "./", no "." parts, no doubled or
 * trailing '/'); an absolute name, or one with a ".." part, makes the
 * archive malformed (-EINVAL), as does a hard link target of that kind.
 * Symbolic link targets are kept as written (they are never followed
 * here). The header's mode, owner and device numbers are not used.
 */
#ifndef VMLET_DISK_TAR_H
#define VMLET_DISK_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TAR_BLOCK    512
#define TAR_NAME_MAX 4096	/* longest name or link target */
#define TAR_PAX_MAX  (1u << 20) /* largest pax record set */

/* Where the archive's bytes come from. read: up to n bytes into buf,
 * 0 at the end, -errno. skip (optional, else bytes are read and dropped):
 * move n bytes on, -EIO when fewer are left. */
struct tar_src {
	ssize_t (*read)(void *ctx, void *buf, size_t n);
	int (*skip)(void *ctx, uint64_t n);
	void *ctx;
};

enum tar_type {
	TAR_REG,      /* '0', '\0', '7': data follows */
	TAR_HARDLINK, /* '1': link is another entry's name */
	TAR_SYMLINK,  /* '2' */
	TAR_CHR,      /* '3' */
	TAR_BLK,      /* '4' */
	TAR_DIR,      /* '5', GNU 'D' */
	TAR_FIFO,     /* '6' */
	TAR_OTHER,    /* GNU sparse, volume labels, unknown types */
};

struct tar_entry {
	char *name; /* normalised; "" is the archive's root */
	char *link; /* TAR_HARDLINK (normalised), TAR_SYMLINK (as written), else NULL */
	enum tar_type type;
	uint64_t size;	 /* bytes of data (tar_read) */
	uint64_t offset; /* where the data starts in the input */
};

struct tar {
	struct tar_src src;
	struct tar_entry e; /* the current entry (valid after tar_next() returned 1) */
	uint64_t pos;	    /* bytes consumed from src */
	uint64_t left;	    /* data of e not read yet */
	uint64_t pad;	    /* padding after it */
	bool end;
	char msg[160]; /* why the last call failed */
};

void tar_init(struct tar *t, const struct tar_src *src);
/* Move to the next entry: 1 (t->e), 0 at the end of the archive (a zero
 * block, or the input ending on a header boundary), -EINVAL malformed,
 * -EIO truncated or the source failed; t->msg says which. */
int tar_next(struct tar *t);
/* Up to n bytes of the current entry's data: the count, 0 at its end,
 * -EIO when the input ends first. */
ssize_t tar_read(struct tar *t, void *buf, size_t n);
void tar_release(struct tar *t);

/* Normalise a member name in place as entry names are: 0, or -EINVAL
 * when it is absolute or has a ".." part. */
int tar_name_norm(char *name);

/* A source over bytes [off, off + len) of fd (pread; skip checks len). */
struct tar_fd_src {
	int fd;
	uint64_t off, len, pos;
};
void tar_src_fd(struct tar_src *src, struct tar_fd_src *ctx, int fd, uint64_t off, uint64_t len);

/* A source over memory. */
struct tar_mem_src {
	const uint8_t *p;
	size_t len, pos;
};
void tar_src_mem(struct tar_src *src, struct tar_mem_src *ctx, const void *p, size_t len);

#endif /* VMLET_DISK_TAR_H */
