/* SPDX-License-Identifier: MIT */
/*
 * blk.h - block backends: a disk image as a flat array of bytes with
 * vectored reads and writes, flush, discard and write-zeroes. Formats:
 * raw (any file or block device) and qcow2 (v2/v3; see blk_qcow2.c for
 * what is refused). blk_open() picks the format from the image's magic.
 *
 * Where things are (vmm/disk/): blk.c opens and closes and chooses the
 * format; blk_raw.c and blk_qcow2*.c (blk_qcow2.h) are the formats; blk_io.c holds the
 * positioned-I/O helpers the formats share (declared in blk_format.h,
 * which only formats include); volume.c turns a resolved disk into an
 * open struct blk (volume.h).
 *
 * All calls are blocking and made from the disk's I/O thread; one struct
 * blk is used by one thread at a time. Errors are -errno; an EIO/ENOSPC
 * from the host comes back as is so the device can report IOERR.
 * Reads past the end of a file that is not a multiple of 512 bytes return
 * zeroes for the missing tail.
 */
#ifndef VMLET_DISK_BLK_H
#define VMLET_DISK_BLK_H

#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <sys/uio.h>

#include "vmm/util/file.h"

enum blk_cache {
	BLK_CACHE_WRITEBACK = 0, /* page cache; FLUSH -> fdatasync */
	BLK_CACHE_NONE,		 /* O_DIRECT (bounce buffers if unaligned) */
	BLK_CACHE_WRITETHROUGH,	 /* O_DSYNC */
};

struct blk;

struct blk_ops {
	int (*preadv)(struct blk *b, const struct iovec *iov, int n, uint64_t off);
	int (*pwritev)(struct blk *b, const struct iovec *iov, int n, uint64_t off);
	int (*flush)(struct blk *b);
	int (*discard)(struct blk *b, uint64_t off, uint64_t len);
	int (*write_zeroes)(struct blk *b, uint64_t off, uint64_t len, bool unmap);
	void (*close)(struct blk *b);
};

struct blk {
	const struct blk_ops *ops;
	char *path;
	const char *format; /* "raw" / "qcow2" */
	uint64_t size;	    /* virtual disk size in bytes */
	bool read_only;
	enum blk_cache cache;
	int fd;
	uint32_t dio_align;  /* O_DIRECT alignment, 0 when not O_DIRECT */
	void *priv;	     /* format state */
	struct blk *backing; /* the image this one reads through to (qcow2
			      * backing file; owned by the format), or NULL */
	bool no_backing;     /* blk_where.no_backing */
	int tail_fd;	     /* b->fd without O_DIRECT, for the part of a write
			      * past size rounded down to dio_align (a raw image
			      * of an unaligned size), or -1 */
};

/*
 * Where an image may be and what it may be (volume.c sets it from the
 * disk; a name from a manifest or an image is untrusted). file: the root
 * it is opened beneath, whether a last-component symlink is followed and
 * a block device accepted (vmm/util/file.h). no_backing: a qcow2 image that
 * names a backing file is refused before anything is opened for it (a
 * containerDisk, as KubeVirt's virt-handler refuses one). Without it a
 * backing file must be a plain name (no '/', not "." or ".."): a regular
 * file, not a symlink, in the image's own directory.
 */
struct blk_where {
	struct file_where file;
	bool no_backing;
};

/*
 * Open path as w allows (format by magic). read_only opens O_RDONLY. cache
 * none asks for O_DIRECT and falls back to the page cache with a warning
 * when the filesystem refuses it (tmpfs). Errors name the image (and say
 * why a file was refused: file_why()).
 */
int blk_open_at(struct blk **out, const char *path, const struct blk_where *w, bool read_only,
		enum blk_cache cache, const char *format);
/* blk_open_at() with no root, a symlink followed, regular files only. */
int blk_open(struct blk **out, const char *path, bool read_only, enum blk_cache cache);
/* Same with the format forced ("raw", "qcow2"; NULL = by magic). */
int blk_open_format(struct blk **out, const char *path, bool read_only, enum blk_cache cache,
		    const char *format);
/* The same over fd, a file vmlet made and holds (never reopened by name):
 * *out owns fd, also on failure. name is for messages; w may be NULL. */
int blk_open_fd(struct blk **out, int fd, const char *name, const struct blk_where *w,
		bool read_only, enum blk_cache cache, const char *format);
/* 1 when path (opened as w allows) takes O_DIRECT, 0 when its file system
 * refuses O_DIRECT (tmpfs), -errno when it cannot be opened at all. */
int blk_direct_io(const char *path, const struct blk_where *w);
/* The same for an open fd (its flags are left as they were). */
int blk_fd_direct_io(int fd);
void blk_close(struct blk *b);

/*
 * A throw-away copy-on-write overlay over base (read-only, any format):
 * reads come from base until the guest writes a sector, writes go to a
 * sparse scratch file in dir that is unlinked at once (blk_overlay.c).
 * Offsets and lengths must be multiples of 512 (-EINVAL otherwise). On
 * success *out owns base (blk_close(*out) closes both; *out's backing is
 * base, its format "overlay", its fd -1); on failure base stays the
 * caller's.
 */
int blk_overlay_open(struct blk **out, struct blk *base, const char *dir);

/*
 * Image locking, compatible with QEMU's (file-posix locking=auto), so that
 * vmlet, QEMU and qemu-img see each other's use of an image. Open file
 * description (F_OFD_SETLK) shared locks on single bytes of the image
 * file: byte 100 + i while holding permission i, byte 200 + i while
 * refusing others permission i, where i is 0 "consistent read", 1 "write",
 * 2 "write unchanged", 3 "resize". Taking a permission checks that nobody
 * locked 200 + i; refusing one checks that nobody locked 100 + i.
 *
 * As QEMU 7.2 does for a virtio-blk drive as libvirt sets it up
 * (readOnly: readonly=on; shareable: share-rw=on): a writer takes read and
 * write and refuses others write; a read-only user takes read and refuses
 * write, so it is refused next to a writer and a writer is refused next to
 * it; shareable refuses nothing (several writers, or readers and writers,
 * hold a raw image together); a written qcow2 image also takes resize, a
 * qcow2 image refuses write and resize whatever the disk says (shareable
 * included), backing files refuse write and resize. So a second writer
 * is refused, readers share, and a reader and a writer exclude each other
 * unless the disks are shareable (qemu-img info on a qcow2 image a VM
 * writes fails: "Failed to get shared 'write' lock"; qemu-img -U skips
 * the check). tests/sh/blk_lock.sh compares the bytes with QEMU's.
 *
 * The locks live on b's descriptors: they are taken once at open (before
 * any sandbox), stay with the process and go with its last descriptor,
 * whatever ends it (SIGKILL included). -EBUSY with an error naming the
 * image when another process holds a conflicting lock; a filesystem
 * without OFD locks only gets a warning.
 */
int blk_lock(struct blk *b, bool shareable);

/*
 * The handover of live migration (vmm/snapshot/migrate.h, QEMU's
 * inactivate/activate order): the source flushes every written image and
 * then releases every image lock it holds (blk_locks_release(): 0, or the
 * flush's error with every lock still held) before the destination
 * takes them; the destination, started with blk_lock_defer(true), opens
 * its images unlocked (blk_lock() only records them) and takes them all
 * with blk_locks_take() once the source let go (0, or the first refusal:
 * then no lock of that image is left half taken). A source whose
 * migration failed takes its locks back with blk_locks_take(). blk_close()
 * forgets the image (blk_lock_forget()). Main thread only.
 */
void blk_lock_defer(bool on);
int blk_locks_release(void);
int blk_locks_take(void);
void blk_lock_forget(const struct blk *b);

static inline int blk_preadv(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	return b->ops->preadv(b, iov, n, off);
}
static inline int blk_pwritev(struct blk *b, const struct iovec *iov, int n, uint64_t off)
{
	return b->read_only ? -EROFS : b->ops->pwritev(b, iov, n, off);
}
static inline int blk_flush(struct blk *b)
{
	return b->ops->flush(b);
}
static inline int blk_discard(struct blk *b, uint64_t off, uint64_t len)
{
	return b->read_only ? -EROFS : b->ops->discard(b, off, len);
}
static inline int blk_write_zeroes(struct blk *b, uint64_t off, uint64_t len, bool unmap)
{
	return b->read_only ? -EROFS : b->ops->write_zeroes(b, off, len, unmap);
}

#endif /* VMLET_DISK_BLK_H */
