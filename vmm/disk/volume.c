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

#include "vmm/cloudinit.h"
#include "vmm/disk/volume.h"
#include "vmm/log.h"
#include "vmm/vm_config.h"

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

/* A sparse file of capacity bytes at path, or (path NULL) a temporary one
 * whose name is returned in *made. */
static int sparse_file(const struct vm_disk *d, const char *path, char **made)
{
	char *tmp = NULL;
	int fd, r;

	if (!d->capacity)
		return error_errno(-EINVAL, "disk '%s': no capacity for a new disk file", d->name);
	if (!path && asprintf(&tmp, "%s/vmlet-empty-XXXXXX", tmp_dir()) < 0)
		return -ENOMEM;
	fd = tmp ? mkstemp(tmp) : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
	if (fd < 0 || ftruncate(fd, (off_t)d->capacity)) {
		r = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp ? tmp : path);
		}
		free(tmp);
		return error_errno(r, "disk '%s': cannot create '%s'", d->name, tmp ? tmp : path);
	}
	close(fd);
	*made = tmp;
	return 0;
}

/*
 * The cache mode of d's image at path, as KubeVirt's virt-launcher sets
 * it (SetDriverCacheMode): unset is none where the file can be opened
 * with O_DIRECT, else writethrough; none where it cannot is refused;
 * unsafe (a warning at resolve) is writeback.
 */
static int volume_cache(const struct vm_disk *d, const char *path, enum blk_cache *out)
{
	int dio;

	if (d->cache == VM_CACHE_WRITETHROUGH || d->cache == VM_CACHE_WRITEBACK) {
		*out =
		    d->cache == VM_CACHE_WRITEBACK ? BLK_CACHE_WRITEBACK : BLK_CACHE_WRITETHROUGH;
		return 0;
	}
	dio = blk_direct_io(path);
	if (dio < 0)
		return error_errno(dio, "disk '%s': cannot open '%s'", d->name, path);
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
 * Open path as d's backend and lock it. A containerDisk is ephemeral, as
 * in KubeVirt: its image is only read, and unless the disk is readonly
 * the guest's writes go to a throw-away overlay in $TMPDIR (else /tmp).
 */
static int volume_attach(const struct vm_disk *d, const char *path, bool ro, const char *fmt,
			 struct blk **be)
{
	bool ephemeral = d->source == VM_DISK_CONTAINERDISK && !ro;
	struct blk *img, *top;
	enum blk_cache cache = BLK_CACHE_WRITEBACK;
	int r = volume_cache(d, path, &cache);

	if (r)
		return r;
	r = blk_open_format(&img, path, ro || ephemeral, cache, fmt);

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
 * Open the backend of d, creating what vmlet generates first. Only
 * containerDisk images are probed for their format (they may be qcow2);
 * every other volume is raw, so a guest that writes a qcow2 header into
 * its disk cannot make vmlet reinterpret the file on the next boot.
 */
static int volume_provision(const struct vm_disk *d, struct blk **be)
{
	char *gen = NULL;
	const char *path = d->path, *fmt = "raw";
	bool ro = d->read_only;
	int r = 0;

	switch (d->source) {
	case VM_DISK_CONTAINERDISK:
		fmt = NULL;
		break;
	case VM_DISK_EMPTYDISK:
		if (!path || access(path, F_OK))
			r = sparse_file(d, path, &gen);
		break;
	case VM_DISK_HOSTDISK: /* only DiskOrCreate makes a missing file; Disk never */
		if (path && d->create_missing && access(path, F_OK))
			r = sparse_file(d, path, &gen);
		break;
	case VM_DISK_CLOUDINIT_NOCLOUD:
	case VM_DISK_CLOUDINIT_CONFIGDRIVE:
		ro = true;
		if (path) /* a seed image given on the command line */
			break;
		/* the meta-data as spec/ decided it (KubeVirt's defaults) */
		r = cloudinit_write_file(d, tmp_dir(), &gen);
		break;
	case VM_DISK_OTHER:
		return error_errno(-ENOTSUP, "disk '%s': its volume kind is not supported by vmlet",
				   d->name);
	default:
		break;
	}
	if (r)
		return r;
	if (gen)
		path = gen;
	if (!path)
		return error_errno(-EINVAL, "disk '%s': no host path for its volume", d->name);
	r = volume_attach(d, path, ro, fmt, be);
	if (gen) {
		unlink(gen); /* the open fd keeps it until vmlet exits */
		free(gen);
	}
	return r;
}

static int volume_check(const struct vm_disk *d)
{
	if (d->device != VM_DEV_DISK)
		return error_errno(-ENOTSUP, "disk '%s': %s devices are not supported (only disk)",
				   d->name, d->device == VM_DEV_CDROM ? "cdrom" : "lun");
	if (d->bus && strcmp(d->bus, "virtio"))
		return error_errno(-ENOTSUP, "disk '%s': bus '%s' is not supported (only virtio)",
				   d->name, d->bus);
	return 0;
}

int volume_open(const struct vm_config *cfg, const struct vm_disk *d, struct blk **be)
{
	int r = volume_check(d);

	(void)cfg; /* everything the volume needs is in d (spec/ decided it) */
	return r ? r : volume_provision(d, be);
}
