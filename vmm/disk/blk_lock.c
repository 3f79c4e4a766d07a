// SPDX-License-Identifier: MIT
/*
 * blk_lock.c - image locks in QEMU's layout (blk.h, blk_lock()).
 *
 * The byte offsets and permission numbers are QEMU's (block/file-posix.c
 * and the BLK_PERM_* bits): they are an interface between processes, so
 * vmlet must use the same ones to be seen by QEMU and seen by it.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "vmm/disk/blk.h"
#include "vmm/util/log.h"

#define LOCK_PERM_BASE	 100 /* + i: "I hold permission i" */
#define LOCK_SHARED_BASE 200 /* + i: "I refuse others permission i" */

enum {
	PERM_READ = 1u << 0, /* consistent read */
	PERM_WRITE = 1u << 1,
	PERM_WRITE_UNCHANGED = 1u << 2,
	PERM_RESIZE = 1u << 3,
	PERM_COUNT = 4,
};

static const char *const perm_names[PERM_COUNT] = {"consistent read", "write", "write unchanged",
						   "resize"};

/* A shared lock on one byte of fd's file. */
static int lock_byte(int fd, unsigned int off)
{
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = off, .l_len = 1};

	return fcntl(fd, F_OFD_SETLK, &fl) ? -errno : 0;
}

/* 0 when no other open file description locks the byte, -EBUSY when one
 * does, another -errno when the test itself failed. */
static int byte_free(int fd, unsigned int off)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = off, .l_len = 1};

	if (fcntl(fd, F_OFD_GETLK, &fl))
		return -errno;
	return fl.l_type == F_UNLCK ? 0 : -EBUSY;
}

static int lock_refused(const struct blk *b, int r, unsigned int i, bool theirs)
{
	if (r != -EBUSY && r != -EAGAIN && r != -EACCES)
		return r;
	return error_errno(-EBUSY,
			   "blk: image '%s' is in use by another process: it %s the \"%s\" "
			   "permission (a VM, qemu-img or QEMU has it open; shareable: true "
			   "lets several VMs write one image)",
			   b->path, theirs ? "holds" : "refuses others", perm_names[i]);
}

/* Take perm, refuse others what is not in shared: lock first, then check
 * (two openers racing both see each other and both fail, as in QEMU). */
static int blk_lock_one(const struct blk *b, unsigned int perm, unsigned int shared)
{
	unsigned int i;
	int r = 0;

	for (i = 0; i < PERM_COUNT && !r; i++) {
		if (perm & (1u << i))
			r = lock_byte(b->fd, LOCK_PERM_BASE + i);
		if (!r && !(shared & (1u << i)))
			r = lock_byte(b->fd, LOCK_SHARED_BASE + i);
	}
	if (r == -EAGAIN || r == -EACCES)
		return lock_refused(b, r, i - 1, false);
	for (i = 0; i < PERM_COUNT && !r; i++) {
		if ((perm & (1u << i)) && (r = byte_free(b->fd, LOCK_SHARED_BASE + i)))
			return lock_refused(b, r, i, false);
		if (!(shared & (1u << i)) && (r = byte_free(b->fd, LOCK_PERM_BASE + i)))
			return lock_refused(b, r, i, true);
	}
	return r;
}

/*
 * What QEMU 7.2 takes, as seen in /proc/locks (virtio-blk, as libvirt
 * starts it: readOnly is readonly=on, shareable is share-rw=on): a raw
 * writer holds read and write and refuses write; a read-only user holds
 * read and refuses write too, so it keeps writers out and they keep it
 * out; shareable refuses nothing (raw). A qcow2 image also holds resize
 * when written (it grows) and refuses write and resize in any mode, shared
 * or not (its metadata describes the file: QEMU's qcow2 driver never lets
 * another process write it). Backing files hold read and refuse write
 * and resize.
 */
static int lock_chain(struct blk *b, bool shareable)
{
	unsigned int all = (1u << PERM_COUNT) - 1, perm, shared;
	int r = 0;

	for (const struct blk *x = b; x && !r; x = x->backing) {
		bool qcow2 = x->format && !strcmp(x->format, "qcow2");
		bool write = x == b && !x->read_only;

		perm = PERM_READ | (write ? PERM_WRITE : 0) | (write && qcow2 ? PERM_RESIZE : 0);
		shared = all & ~(x == b && shareable && !qcow2 ? 0 : PERM_WRITE) &
			 ~(qcow2 || x != b ? PERM_RESIZE : 0);
		r = x->fd < 0 ? 0 : blk_lock_one(x, perm, shared); /* overlay: no file */
	}
	if (r == -EINVAL || r == -ENOLCK || r == -EOPNOTSUPP || r == -ENOSYS) {
		log_warn("blk: '%s': the filesystem does not support image locking (%s): "
			 "other users of the image are not detected",
			 b->path, strerror(-r));
		return 0;
	}
	return r;
}

/* Every image blk_lock() was asked for, open or not locked yet (live
 * migration's handover, blk.h). Setup, teardown and the main thread. */
#define BLK_LOCKS_MAX 256
static struct {
	struct blk *b;
	bool shareable, held;
} locks[BLK_LOCKS_MAX];
static unsigned int n_locks;
static bool deferred;

int blk_lock(struct blk *b, bool shareable)
{
	int r;

	if (n_locks == BLK_LOCKS_MAX)
		return error_errno(-ENOSPC, "blk: more than %u locked images", BLK_LOCKS_MAX);
	r = deferred ? 0 : lock_chain(b, shareable);
	if (!r)
		locks[n_locks++] = (typeof(locks[0])){b, shareable, !deferred};
	return r;
}

void blk_lock_forget(const struct blk *b)
{
	for (unsigned int i = 0; i < n_locks; i++)
		if (locks[i].b == b) {
			locks[i] = locks[--n_locks];
			return;
		}
}

void blk_lock_defer(bool on)
{
	deferred = on;
}

/* F_UNLCK over each file of b's chain. */
static void unlock_chain(const struct blk *b)
{
	struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};

	for (const struct blk *x = b; x; x = x->backing)
		if (x->fd >= 0)
			fcntl(x->fd, F_OFD_SETLK, &fl);
}

int blk_locks_release(void)
{
	int r = 0;

	for (unsigned int i = 0; i < n_locks && !r; i++)
		if (locks[i].held && !locks[i].b->read_only && (r = blk_flush(locks[i].b)))
			error_errno(r, "blk: '%s': flush", locks[i].b->path);
	for (unsigned int i = 0; i < n_locks && !r; i++)
		if (locks[i].held) {
			unlock_chain(locks[i].b);
			locks[i].held = false;
		}
	return r;
}

int blk_locks_take(void)
{
	int r = 0;

	for (unsigned int i = 0; i < n_locks && !r; i++)
		if (!locks[i].held) {
			r = lock_chain(locks[i].b, locks[i].shareable);
			if (r)
				unlock_chain(locks[i].b); /* none of a chain half taken */
			locks[i].held = !r;
		}
	deferred = false;
	return r;
}
