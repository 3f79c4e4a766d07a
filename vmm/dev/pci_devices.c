// SPDX-License-Identifier: MIT
/*
 * pci_devices.c - the "pci" entry of the device table: the host bridge
 * and every PCI function of the VM, in a fixed order so slots are stable:
 * 00:00.0 host bridge, then one virtio-blk per virtio disk in the order of
 * the resolved VMI's disks, the AHCI controller (ahci.h) when a disk or a
 * cdrom is on bus sata (its ports in disk order: ATA disks and ATAPI
 * CD-ROM drives, an empty one for a cdrom without a volume), one
 * virtio-net per interface (an e1000e, vmm/nic/e1000e.h, for model
 * e1000e), then
 * virtio-rng, the virtio-serial controller (channels), virtio-vsock
 * (autoattachVSOCK), then the memory balloon (autoattachMemBalloon);
 * VMs that boot OVMF also get the Q35 chipset registers (q35.h: the
 * bridge as the MCH, the LPC bridge at 00:1f.0).
 *
 * Each disk's backend comes from vmm/disk/volume.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/disk/blk.h"
#include "vmm/disk/volume.h"
#include "vmm/dev/ahci/ahci.h"
#include "vmm/dev/pci_devices.h"
#include "vmm/dev/pci.h"
#include "vmm/dev/q35.h"
#include "vmm/nic/e1000e.h"
#include "vmm/virtio/virtio_balloon.h"
#include "vmm/virtio/virtio_blk.h"
#include "vmm/virtio/virtio_console.h"
#include "vmm/virtio/virtio_net.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_rng.h"
#include "vmm/virtio/virtio_vsock.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/vm_config.h"

struct pci_devices {
	struct pci_host host;
	bool host_up;
	struct virtio_blk **blk;
	unsigned int n_blk;
	struct ahci *ahci; /* when a disk is on bus sata */
	unsigned int n_sata;
	int *disk_slot;		 /* per disk (config order): its bus-0 device number */
	int *disk_port;		 /* per disk: its AHCI port, -1 for virtio-blk */
	struct virtio_net **net; /* per interface; NULL for an e1000e one */
	struct e1000e **e1000e;	 /* per interface: model e1000e */
	unsigned int n_net;	 /* interfaces made */
	struct virtio_rng *rng;
	struct virtio_console *console;
	struct virtio_vsock *vsock; /* autoattachVSOCK */
	struct virtio_balloon *balloon;
	struct q35 *q35; /* OVMF VMs: the MCH and LPC registers */
};

static enum virtio_blk_error_policy blk_policy(enum vm_error_policy p)
{
	switch (p) {
	case VM_ERROR_REPORT:
		return VIRTIO_BLK_ERROR_REPORT;
	case VM_ERROR_IGNORE:
		return VIRTIO_BLK_ERROR_IGNORE;
	case VM_ERROR_ENOSPACE:
		return VIRTIO_BLK_ERROR_ENOSPACE;
	default:
		return VIRTIO_BLK_ERROR_STOP;
	}
}

_Static_assert(AHCI_PORTS == VM_MAX_SATA, "spec/ refuses more SATA disks than AHCI_PORTS");

static bool disk_is_sata(const struct vm_disk *d)
{
	return d->bus && strcmp(d->bus, "sata") == 0;
}

/* A disk on bus sata: the next port of the AHCI controller (made with the
 * first one). */
static int pci_devices_sata(struct pci_devices *s, const struct device_env *env,
			    const struct vm_disk *d, unsigned int i)
{
	struct ahci_disk_params p = {
	    .name = d->name,
	    .serial = d->serial,
	    .physical_block_size = d->physical_block_size,
	    .error_policy = d->error_policy,
	};
	bool cd = d->device == VM_DEV_CDROM;
	struct blk *be = NULL;
	int r;

	if (!s->ahci) {
		r = ahci_create(&s->ahci, &s->host, -1);
		if (r)
			return r;
	}
	if (s->n_sata >= AHCI_PORTS)
		return error_errno(-ENOSPC, "disk '%s': more than %d SATA disks", d->name,
				   AHCI_PORTS);
	/* an empty CD-ROM drive (no volume) has no backend */
	r = cd && d->source == VM_DISK_NONE ? 0 : volume_open(env->cfg, d, &be);
	if (r)
		return r;
	p.tray_open = d->tray_open;
	r = cd ? ahci_attach_cdrom(s->ahci, s->n_sata, be, &p)
	       : ahci_attach_disk(s->ahci, s->n_sata, be, &p);
	if (r)
		return r;
	s->disk_slot[i] = ahci_pci(s->ahci)->slot;
	s->disk_port[i] = (int)s->n_sata;
	if (be)
		log_info("disk '%s': %s on 00:%02x.0 port %u (%s, %llu bytes%s%s)", d->name,
			 cd ? "CD-ROM (SATA)" : "SATA", ahci_pci(s->ahci)->slot, s->n_sata,
			 be->format, (unsigned long long)be->size,
			 be->read_only ? ", read-only" : "", d->tray_open ? ", tray open" : "");
	else
		log_info("disk '%s': CD-ROM (SATA) on 00:%02x.0 port %u, no medium", d->name,
			 ahci_pci(s->ahci)->slot, s->n_sata);
	s->n_sata++;
	return 0;
}

static int pci_devices_disks(struct pci_devices *s, const struct device_env *env)
{
	const struct vm_config *cfg = env->cfg;
	unsigned int vcpus = (unsigned int)vm_config_vcpus(cfg);
	int r;

	s->blk = calloc(cfg->n_disks ? cfg->n_disks : 1, sizeof(*s->blk));
	s->disk_slot = calloc(cfg->n_disks ? cfg->n_disks : 1, sizeof(*s->disk_slot));
	s->disk_port = calloc(cfg->n_disks ? cfg->n_disks : 1, sizeof(*s->disk_port));
	if (!s->blk || !s->disk_slot || !s->disk_port)
		return -ENOMEM;
	for (unsigned int i = 0; i < cfg->n_disks; i++) {
		const struct vm_disk *d = &cfg->disks[i];
		struct virtio_blk_params p = {
		    .name = d->name,
		    .serial = d->serial,
		    .logical_block_size = d->logical_block_size,
		    .physical_block_size = d->physical_block_size,
		    .num_queues = cfg->block_multi_queue && vcpus ? vcpus : 1,
		    .error_policy = blk_policy(d->error_policy),
		};
		struct blk *be;

		if (disk_is_sata(d)) {
			r = pci_devices_sata(s, env, d, i);
			if (r)
				return r;
			continue;
		}
		r = volume_open(cfg, d, &be);
		if (r)
			return r;
		r = virtio_blk_create(&s->blk[s->n_blk], &s->host, be, &p);
		if (r) {
			blk_close(be);
			return r;
		}
		s->n_blk++;
		s->disk_slot[i] = virtio_blk_pci(s->blk[s->n_blk - 1])->pci.slot;
		s->disk_port[i] = -1;
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
	s->e1000e = calloc(cfg->n_nics ? cfg->n_nics : 1, sizeof(*s->e1000e));
	if (!s->net || !s->e1000e)
		return -ENOMEM;
	for (unsigned int i = 0; i < cfg->n_nics; i++) {
		const char *model = cfg->nics[i].model;

		if (model && !strcmp(model, "e1000e"))
			r = e1000e_create_nic(&s->e1000e[s->n_net], &s->host, cfg, i);
		else
			r = virtio_net_create_nic(&s->net[s->n_net], &s->host, cfg, i);
		if (r)
			return r;
		s->n_net++;
	}
	return 0;
}

struct virtio_net *pci_devices_nic(struct vm *vm, unsigned int i)
{
	const struct pci_devices *s = device_state(vm, &pci_devices_device);

	return s && i < s->n_net ? s->net[i] : NULL;
}

struct q35 *pci_devices_q35(struct vm *vm)
{
	const struct pci_devices *s = device_state(vm, &pci_devices_device);

	return s ? s->q35 : NULL;
}

int pci_devices_disk_slot(struct vm *vm, unsigned int i)
{
	const struct pci_devices *s = device_state(vm, &pci_devices_device);

	return s && i < s->n_blk + s->n_sata ? s->disk_slot[i] : -ENOENT;
}

int pci_devices_disk_port(struct vm *vm, unsigned int i)
{
	const struct pci_devices *s = device_state(vm, &pci_devices_device);

	return s && i < s->n_blk + s->n_sata ? s->disk_port[i] : -1;
}

/* The balloon takes the last slot; a bus the disks and NICs filled runs
 * without it (a VM whose disks fit must not fail for the balloon). */
static int pci_devices_balloon(struct pci_devices *s, const struct device_env *env)
{
	struct virtio_balloon_params bp = {.reporting = env->cfg->free_page_reporting};
	int slot;

	for (slot = 0; slot < PCI_SLOTS && s->host.dev[slot]; slot++)
		;
	if (slot == PCI_SLOTS) {
		log_warn("no PCI slot left for the memory balloon: the VM runs without it");
		return 0;
	}
	return virtio_balloon_create(&s->balloon, &s->host, &bp);
}

static int pci_devices_console(struct pci_devices *s, const struct device_env *env)
{
	const char *names[VM_MAX_CHANNELS];
	unsigned int n = env->cfg->n_channels;

	_Static_assert(VM_MAX_CHANNELS <= VIRTIO_CONSOLE_MAX_PORTS, "channels fit the device");
	_Static_assert(VM_CHANNEL_NAME_MAX <= VIRTIO_CONSOLE_NAME_MAX, "names fit the device");
	for (unsigned int i = 0; i < n && i < VM_MAX_CHANNELS; i++)
		names[i] = env->cfg->channels[i];
	return virtio_console_create(&s->console, &s->host, names,
				     n < VM_MAX_CHANNELS ? n : VM_MAX_CHANNELS,
				     env->channel_prefix);
}

/* autoattachVSOCK: the device, its socket PREFIX + "vsock.sock" beside
 * the channels' (none without a prefix: vmlet probe) */
static int pci_devices_vsock(struct pci_devices *s, const struct device_env *env)
{
	char *path = NULL;
	int r;

	if (!env->cfg->vsock_cid)
		return 0;
	if (env->channel_prefix &&
	    asprintf(&path, "%s%s", env->channel_prefix, VIRTIO_VSOCK_SOCKET_NAME) < 0)
		return -ENOMEM;
	r = virtio_vsock_create(&s->vsock, &s->host, env->cfg->vsock_cid, path);
	free(path);
	return r;
}

static void pci_devices_quiesce(void *state)
{
	struct pci_devices *s = state;

	for (unsigned int i = 0; i < s->n_blk; i++)
		virtio_blk_quiesce(s->blk[i]);
	ahci_quiesce(s->ahci);
}

static void pci_devices_destroy(void *state)
{
	struct pci_devices *s = state;

	if (!s)
		return;
	virtio_balloon_destroy(s->balloon);
	virtio_vsock_destroy(s->vsock);
	virtio_console_destroy(s->console);
	virtio_rng_destroy(s->rng);
	q35_destroy(s->q35);
	while (s->n_net) {
		s->n_net--;
		virtio_net_destroy(s->net[s->n_net]);
		e1000e_destroy(s->e1000e[s->n_net]);
	}
	while (s->n_blk)
		virtio_blk_destroy(s->blk[--s->n_blk]);
	ahci_destroy(s->ahci);
	if (s->host_up)
		pci_host_release(&s->host);
	free(s->blk);
	free(s->disk_slot);
	free(s->disk_port);
	free(s->net);
	free(s->e1000e);
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
	r = pci_host_init(&s->host, env);
	if (r)
		goto out;
	s->host_up = true;
	if (env->fw && env->fw->flash_code) {
		r = q35_create(&s->q35, &s->host, env->pio);
		if (!r && env->fw->smm)
			r = q35_enable_smm(s->q35, env->vm);
		if (r)
			goto out;
	}
	r = pci_devices_disks(s, env);
	if (!r)
		r = pci_devices_nics(s, env);
	if (!r && env->cfg->rng)
		r = virtio_rng_create(&s->rng, &s->host, 0, 0);
	if (!r && env->cfg->n_channels)
		r = pci_devices_console(s, env);
	if (!r)
		r = pci_devices_vsock(s, env);
	if (!r && env->cfg->mem_balloon)
		r = pci_devices_balloon(s, env);
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

/*
 * Snapshot: the host's latch, then per populated slot its number, the
 * function's PCI state and its own: a virtio function's transport
 * (virtio_pci.h says which ones it captures), the AHCI controller's
 * (ahci.h), an e1000e NIC's (e1000e.h), the Q35 LPC bridge's PM timer
 * (q35.h). The host bridge (the
 * Q35 MCH) has its config space only.
 */
enum { PCI_DEVICES_SNAP_SLOT = 0x100 };

static int pci_devices_save_fn(struct pci_devices *s, struct pci_dev *d, struct snap_buf *b)
{
	if (virtio_pci_of(d))
		return virtio_pci_save(virtio_pci_of(d), b);
	if (s->ahci && d == ahci_pci(s->ahci))
		return ahci_save(s->ahci, b);
	if (s->q35 && d == q35_lpc_dev(s->q35)) {
		q35_save(s->q35, b);
		return 0;
	}
	for (unsigned int i = 0; i < s->n_net; i++)
		if (s->e1000e[i] && d == e1000e_pci(s->e1000e[i]))
			return e1000e_save(s->e1000e[i], b);
	if (d != &s->host.bridge)
		return error_errno(-ENOTSUP, "snapshot: PCI slot %d has no snapshot state",
				   d->slot);
	return 0;
}

static int pci_devices_save(void *state, struct snap_buf *b)
{
	struct pci_devices *s = state;
	int ret = 0;

	pci_host_save(&s->host, b);
	for (uint32_t slot = 0; slot < PCI_SLOTS && !ret; slot++) {
		struct pci_dev *d = s->host.dev[slot];

		if (!d)
			continue;
		snap_buf_item(b, PCI_DEVICES_SNAP_SLOT, &slot, sizeof(slot));
		pci_dev_save(d, b);
		ret = pci_devices_save_fn(s, d, b);
	}
	return ret ? ret : b->err;
}

static void pci_devices_thaw(void *state)
{
	struct pci_devices *s = state;

	for (int slot = 0; slot < PCI_SLOTS; slot++) {
		struct virtio_pci *vp = s->host.dev[slot] ? virtio_pci_of(s->host.dev[slot]) : NULL;

		if (vp)
			virtio_pci_thaw(vp);
	}
	if (s->ahci)
		ahci_thaw(s->ahci);
	for (unsigned int i = 0; i < s->n_net; i++)
		if (s->e1000e[i])
			e1000e_thaw(s->e1000e[i]);
}

static int pci_devices_freeze(void *state)
{
	struct pci_devices *s = state;
	int ret = 0;

	for (int slot = 0; slot < PCI_SLOTS && !ret; slot++) {
		struct virtio_pci *vp = s->host.dev[slot] ? virtio_pci_of(s->host.dev[slot]) : NULL;

		if (vp)
			ret = virtio_pci_freeze(vp);
	}
	if (!ret && s->ahci)
		ret = ahci_freeze(s->ahci);
	for (unsigned int i = 0; i < s->n_net && !ret; i++)
		if (s->e1000e[i])
			ret = e1000e_freeze(s->e1000e[i]);
	return ret; /* refused: snapshot.c thaws this device too */
}

static int pci_devices_load_fn(struct pci_devices *s, struct pci_dev *d, struct snap_cur *c)
{
	if (virtio_pci_of(d))
		return virtio_pci_load(virtio_pci_of(d), c);
	if (s->ahci && d == ahci_pci(s->ahci))
		return ahci_load(s->ahci, c);
	if (s->q35 && d == q35_lpc_dev(s->q35))
		return q35_load(s->q35, c);
	for (unsigned int i = 0; i < s->n_net; i++)
		if (s->e1000e[i] && d == e1000e_pci(s->e1000e[i]))
			return e1000e_load(s->e1000e[i], c);
	return 0;
}

static int pci_devices_load(void *state, struct snap_cur *c)
{
	struct pci_devices *s = state;
	uint32_t slot;
	int ret;

	ret = pci_host_load(&s->host, c);
	for (uint32_t want = 0; want < PCI_SLOTS && !ret; want++) {
		struct pci_dev *d = s->host.dev[want];

		if (!d)
			continue;
		if (snap_cur_want(c, PCI_DEVICES_SNAP_SLOT, &slot, sizeof(slot)) || slot != want)
			return error_errno(-EBADMSG, "snapshot: PCI slot %u: not in the snapshot",
					   want);
		ret = pci_dev_load(&s->host, d, c);
		if (!ret)
			ret = pci_devices_load_fn(s, d, c);
	}
	for (uint32_t i = 0; i < PCI_SLOTS && !ret; i++)
		if (s->host.dev[i])
			pci_dev_resync(&s->host, s->host.dev[i]);
	/* the devices the driver had started start now, on their rings */
	for (uint32_t i = 0; i < PCI_SLOTS && !ret; i++)
		if (s->host.dev[i] && virtio_pci_of(s->host.dev[i]))
			ret = virtio_pci_start(virtio_pci_of(s->host.dev[i]));
	return ret;
}

const struct device_type pci_devices_device = {
    .name = "pci",
    .create = pci_devices_create,
    .quiesce = pci_devices_quiesce,
    .destroy = pci_devices_destroy,
    .save = pci_devices_save,
    .load = pci_devices_load,
    .freeze = pci_devices_freeze,
    .thaw = pci_devices_thaw,
};
