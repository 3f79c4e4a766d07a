// SPDX-License-Identifier: MIT
/*
 * pci_devices.c - the "pci" entry of the device table: the host bridge
 * and every PCI function of the VM, in a fixed order so slots are stable:
 * 00:00.0 host bridge, then one virtio-blk per disk in the order of the
 * resolved VMI's disks, one virtio-net per interface, then virtio-rng.
 *
 * Disk sources: files the manifest names (containerDisk, hostDisk, PVC,
 * DataVolume) are opened in place (hostDisk DiskOrCreate is created sparse
 * when missing); emptyDisk gets a sparse temporary file of its capacity
 * and cloudInitNoCloud / cloudInitConfigDrive a generated seed image; both
 * are unlinked as soon as they are open, so they vanish when vmlet exits,
 * however it exits. A path given for them on the command line is used
 * instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cloudinit.h"
#include "vmm/dev/blk.h"
#include "vmm/dev/pci_devices.h"
#include "vmm/dev/pci.h"
#include "vmm/dev/virtio_blk.h"
#include "vmm/dev/virtio_net.h"
#include "vmm/dev/virtio_pci.h"
#include "vmm/dev/virtio_rng.h"
#include "vmm/device.h"
#include "vmm/log.h"
#include "vmm/vm.h"
#include "vmm/vm_config.h"

struct pci_devices {
	struct pci_host host;
	bool host_up;
	struct virtio_blk **blk;
	unsigned int n_blk;
	struct virtio_net **net;
	unsigned int n_net;
	struct virtio_rng *rng;
};

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

static enum blk_cache disk_cache(const struct vm_disk *d)
{
	switch (d->cache) {
	case VM_CACHE_NONE:
		return BLK_CACHE_NONE;
	case VM_CACHE_WRITETHROUGH:
		return BLK_CACHE_WRITETHROUGH;
	default:
		return BLK_CACHE_WRITEBACK;
	}
}

/*
 * Open the backend of d, creating what vmlet generates first. Only
 * containerDisk images are probed for their format (they may be qcow2);
 * every other volume is raw, so a guest that writes a qcow2 header into
 * its disk cannot make vmlet reinterpret the file on the next boot.
 */
static int disk_open(const struct vm_config *cfg, const struct vm_disk *d, struct blk **be)
{
	char *gen = NULL, *id = NULL;
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
	case VM_DISK_HOSTDISK: /* DiskOrCreate: a capacity and no file yet */
		if (path && d->capacity && access(path, F_OK))
			r = sparse_file(d, path, &gen);
		break;
	case VM_DISK_CLOUDINIT_NOCLOUD:
	case VM_DISK_CLOUDINIT_CONFIGDRIVE:
		ro = true;
		if (path) /* a seed image given on the command line */
			break;
		/* KubeVirt's defaults: instance-id <name>.<namespace> */
		if (asprintf(&id, "%s.%s", cfg->name ? cfg->name : "vmi",
			     cfg->namespace ? cfg->namespace : "default") < 0)
			return -ENOMEM;
		r = cloudinit_write_file(d, id, cfg->hostname ? cfg->hostname : cfg->name,
					 tmp_dir(), &gen);
		free(id);
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
	r = blk_open_format(be, path, ro, disk_cache(d), fmt);
	if (r)
		error_errno(r, "disk '%s': cannot open '%s'", d->name, path);
	if (gen) {
		unlink(gen); /* the open fd keeps it until vmlet exits */
		free(gen);
	}
	return r;
}

static int disk_check(const struct vm_disk *d)
{
	if (d->device != VM_DEV_DISK)
		return error_errno(-ENOTSUP, "disk '%s': %s devices are not supported (only disk)",
				   d->name, d->device == VM_DEV_CDROM ? "cdrom" : "lun");
	if (d->bus && strcmp(d->bus, "virtio"))
		return error_errno(-ENOTSUP, "disk '%s': bus '%s' is not supported (only virtio)",
				   d->name, d->bus);
	return 0;
}

static int pci_devices_disks(struct pci_devices *s, const struct device_env *env)
{
	const struct vm_config *cfg = env->cfg;
	unsigned int vcpus = cfg->sockets * cfg->cores * cfg->threads;
	int r;

	s->blk = calloc(cfg->n_disks ? cfg->n_disks : 1, sizeof(*s->blk));
	if (!s->blk)
		return -ENOMEM;
	for (unsigned int i = 0; i < cfg->n_disks; i++) {
		const struct vm_disk *d = &cfg->disks[i];
		struct virtio_blk_params p = {
		    .name = d->name,
		    .serial = d->serial,
		    .logical_block_size = d->logical_block_size,
		    .physical_block_size = d->physical_block_size,
		    .num_queues = cfg->block_multi_queue && vcpus ? vcpus : 1,
		};
		struct blk *be;

		r = disk_check(d);
		if (!r)
			r = disk_open(cfg, d, &be);
		if (r)
			return r;
		r = virtio_blk_create(&s->blk[s->n_blk], &s->host, env->vm, env->mem, be, &p);
		if (r) {
			blk_close(be);
			return r;
		}
		s->n_blk++;
		log_info("disk '%s': virtio-blk on 00:%02x.0 (%s, %llu bytes%s)", d->name,
			 virtio_blk_pci(s->blk[s->n_blk - 1])->pci.slot, be->format,
			 (unsigned long long)be->size, be->read_only ? ", read-only" : "");
	}
	return 0;
}

static int pci_devices_nics(struct pci_devices *s, const struct device_env *env)
{
	const struct vm_config *cfg = env->cfg;
	int r;

	s->net = calloc(cfg->n_nics ? cfg->n_nics : 1, sizeof(*s->net));
	if (!s->net)
		return -ENOMEM;
	for (unsigned int i = 0; i < cfg->n_nics; i++) {
		r = virtio_net_create_nic(&s->net[s->n_net], &s->host, env->vm, env->mem, cfg, i);
		if (r)
			return r;
		s->n_net++;
	}
	return 0;
}

struct virtio_net *pci_devices_nic(struct vm *vm, unsigned int i)
{
	for (unsigned int d = 0; d < vm->n_devs; d++) {
		const struct pci_devices *s = vm->devs[d].state;

		if (vm->devs[d].type == &pci_devices_device && s)
			return i < s->n_net ? s->net[i] : NULL;
	}
	return NULL;
}

int pci_devices_disk_slot(struct vm *vm, unsigned int i)
{
	for (unsigned int d = 0; d < vm->n_devs; d++) {
		const struct pci_devices *s = vm->devs[d].state;

		if (vm->devs[d].type == &pci_devices_device && s)
			return i < s->n_blk ? virtio_blk_pci(s->blk[i])->pci.slot : -ENOENT;
	}
	return -ENOENT;
}

static void pci_devices_destroy(void *state)
{
	struct pci_devices *s = state;

	if (!s)
		return;
	virtio_rng_destroy(s->rng);
	while (s->n_net)
		virtio_net_destroy(s->net[--s->n_net]);
	while (s->n_blk)
		virtio_blk_destroy(s->blk[--s->n_blk]);
	if (s->host_up)
		pci_host_release(&s->host);
	free(s->blk);
	free(s->net);
	free(s);
}

static int pci_devices_create(const struct device_env *env, unsigned int index, void **state)
{
	struct pci_devices *s;
	int r;

	(void)index;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	r = pci_host_init(&s->host, env->vm, env->pio, env->mmio);
	if (r)
		goto out;
	s->host_up = true;
	r = pci_devices_disks(s, env);
	if (!r)
		r = pci_devices_nics(s, env);
	if (!r && env->cfg->rng)
		r = virtio_rng_create(&s->rng, &s->host, env->vm, env->mem, 0, 0);
	if (!r) {
		uint32_t mask = 0;

		for (int slot = 0; slot < PCI_SLOTS; slot++)
			if (s->host.dev[slot])
				mask |= 1u << slot;
		device_set_pci_slots(env->vm, mask);
		*state = s;
		return 0;
	}
out:
	pci_devices_destroy(s);
	return r;
}

const struct device_type pci_devices_device = {
    .name = "pci",
    .create = pci_devices_create,
    .destroy = pci_devices_destroy,
};
