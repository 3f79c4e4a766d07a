// SPDX-License-Identifier: MIT
/*
 * volume.c - a resolved disk's volume as an open block backend
 * (volume.h): what vmlet generates is made first (sparse files, the
 * cloud-init seed), then the image is opened with the disk's cache mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/cloudinit.h"
#include "vmm/disk/volume.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"
#include "vmm/vm_config.h"

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

/* A sparse file of capacity bytes, new (O_EXCL, no link followed) at
 * path, or unnamed in $TMPDIR when path is NULL: its descriptor, used as
 * it is (never reopened by name), or -errno. */
static int sparse_file(const struct vm_disk *d, const char *path)
{
	int fd, r;

	if (!d->capacity)
		return error_errno(-EINVAL, "disk '%s': no capacity for a new disk file", d->name);
	fd = path ? file_create(path, 0660) : file_tmp(tmp_dir());
	if (fd < 0)
		return error_errno(fd, "disk '%s': cannot create '%s'", d->name,
				   path ? path : tmp_dir());
	if (ftruncate(fd, (off_t)d->capacity)) {
		r = -errno;
		close(fd);
		if (path)
			unlink(path);
		return error_errno(r, "disk '%s': cannot size '%s'", d->name,
				   path ? path : tmp_dir());
	}
	return fd;
}

/* Where d's file may be, and what it may be (blk.h, vmm/util/file.h): beneath
 * its root when it has one (a name from the manifest under --disk-root
 * or the PVC directory); a symlink or a block device only where the
 * operator named the file (--volume); no backing file for a
 * containerDisk. */
static void volume_where(const struct vm_disk *d, struct blk_where *w)
{
	*w = (struct blk_where){
	    .file = {.root = d->root, .follow = d->operator_path, .block_ok = d->operator_path},
	    .no_backing = d->source == VM_DISK_CONTAINERDISK,
	};
}

/*
 * The cache mode of d's image (at path, or made and open as fd), as
 * KubeVirt's virt-launcher sets it (SetDriverCacheMode): unset is none
 * where the file can be opened with O_DIRECT, else writethrough; none
 * where it cannot is refused; unsafe (a warning at resolve) is writeback.
 */
static int volume_cache(const struct vm_disk *d, const char *path, int fd,
			const struct blk_where *w, enum blk_cache *out)
{
	int dio;

	if (d->cache == VM_CACHE_WRITETHROUGH || d->cache == VM_CACHE_WRITEBACK) {
		*out =
		    d->cache == VM_CACHE_WRITEBACK ? BLK_CACHE_WRITEBACK : BLK_CACHE_WRITETHROUGH;
		return 0;
	}
	dio = fd >= 0 ? blk_fd_direct_io(fd) : blk_direct_io(path, w);
	if (dio < 0)
		return error_errno(dio, "disk '%s': cannot open '%s'%s", d->name, path,
				   file_why(dio));
	if (d->cache == VM_CACHE_NONE && !dio)
		return error_errno(-EINVAL,
				   "disk '%s': cache mode 'none' needs direct I/O, which the file "
				   "system of '%s' does not support (KubeVirt refuses it too)",
				   d->name, path);
	*out = dio ? BLK_CACHE_NONE : BLK_CACHE_WRITETHROUGH;
	if (d->cache == VM_CACHE_DEFAULT)
		log_info("disk '%s': cache mode %s (unset: none where '%s' takes direct I/O, "
			 "else writethrough, as in KubeVirt)",
			 d->name, dio ? "none" : "writethrough", path);
	return 0;
}

/*
 * Open d's backend (the file at path, or fd when vmlet made it: *be owns
 * fd) and lock it. A containerDisk is ephemeral, as in KubeVirt: its
 * image is only read, and unless the disk is readonly the guest's writes
 * go to a throw-away overlay in $TMPDIR (else /tmp).
 */
static int volume_attach(const struct vm_disk *d, const char *path, int fd, bool ro,
			 const char *fmt, struct blk **be)
{
	bool ephemeral = d->source == VM_DISK_CONTAINERDISK && !ro;
	struct blk *img, *top;
	enum blk_cache cache = BLK_CACHE_WRITEBACK;
	struct blk_where w;
	int r;

	volume_where(d, &w);
	r = volume_cache(d, path, fd, &w, &cache);
	if (r) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (fd >= 0)
		r = blk_open_fd(&img, fd, path, &w, ro || ephemeral, cache, fmt);
	else
		r = blk_open_at(&img, path, &w, ro || ephemeral, cache, fmt);
	if (!r && ephemeral) {
		r = blk_overlay_open(&top, img, tmp_dir());
		if (r)
			blk_close(img);
		else
			img = top;
	}
	if (!r && (r = blk_lock(img, d->shareable)))
		blk_close(img);
	if (r)
		return error_errno(r, "disk '%s': cannot open '%s'", d->name, path);
	if (ephemeral)
		log_info(
		    "disk '%s': containerDisk '%s' (%s) is read-only; the guest's writes go to "
		    "an overlay in %s, thrown away at exit",
		    d->name, path, img->backing->format, tmp_dir());
	*be = img;
	return 0;
}

/*
 * Open the backend of d, creating what vmlet generates first (used
 * through the descriptor that made it). Only containerDisk images are
 * probed for their format (they may be qcow2); every other volume is raw,
 * so a guest that writes a qcow2 header into its disk cannot make vmlet
 * reinterpret the file on the next boot.
 */
static int volume_provision(const struct vm_disk *d, struct blk **be)
{
	const char *path = d->path, *fmt = "raw";
	/* a CD-ROM drive reads only, whatever cdrom.readonly says (QEMU's
	 * ATAPI has no write command either) */
	bool ro = d->read_only || d->device == VM_DEV_CDROM, made = false;
	char label[512];
	int fd = -1;

	switch (d->source) {
	case VM_DISK_CONTAINERDISK:
		fmt = NULL;
		break;
	case VM_DISK_EMPTYDISK:
		made = !path || access(path, F_OK);
		fd = made ? sparse_file(d, path) : -1;
		break;
	case VM_DISK_HOSTDISK: /* only DiskOrCreate makes a missing file; Disk never */
		made = path && d->create_missing && access(path, F_OK);
		fd = made ? sparse_file(d, path) : -1;
		break;
	case VM_DISK_CLOUDINIT_NOCLOUD:
	case VM_DISK_CLOUDINIT_CONFIGDRIVE:
		ro = true;
		made = !path; /* else a seed image given on the command line */
		/* the meta-data as spec/ decided it (KubeVirt's defaults) */
		fd = made ? cloudinit_write_fd(d, tmp_dir()) : -1;
		break;
	case VM_DISK_NONE: /* an empty CD-ROM drive has nothing to open */
	case VM_DISK_OTHER:
		return error_errno(-ENOTSUP, "disk '%s': its volume kind is not supported by vmlet",
				   d->name);
	default:
		break;
	}
	if (made && fd < 0)
		return fd;
	if (!made && !path)
		return error_errno(-EINVAL, "disk '%s': no host path for its volume", d->name);
	if (!path) {
		snprintf(label, sizeof(label), "%s/(unnamed)", tmp_dir());
		path = label;
	}
	return volume_attach(d, path, fd, ro, fmt, be);
}

static int volume_check(const struct vm_disk *d)
{
	if (d->device == VM_DEV_LUN)
		return error_errno(-ENOTSUP,
				   "disk '%s': lun devices are not supported (no SCSI controller)",
				   d->name);
	if (d->device == VM_DEV_CDROM && (!d->bus || strcmp(d->bus, "sata")))
		return error_errno(-ENOTSUP,
				   "disk '%s': a cdrom on bus '%s' is not supported (only sata)",
				   d->name, d->bus ? d->bus : "");
	if (d->bus && strcmp(d->bus, "virtio") && strcmp(d->bus, "sata"))
		return error_errno(-ENOTSUP,
				   "disk '%s': bus '%s' is not supported (only virtio and sata)",
				   d->name, d->bus);
	return 0;
}

int volume_open(const struct vm_config *cfg, const struct vm_disk *d, struct blk **be)
{
	int r = volume_check(d);

	(void)cfg; /* everything the volume needs is in d (spec/ decided it) */
	return r ? r : volume_provision(d, be);
}
