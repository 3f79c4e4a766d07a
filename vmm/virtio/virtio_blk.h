/* SPDX-License-Identifier: MIT */
/*
 * virtio_blk.h - virtio block device (virtio 1.2 §5.2) over a block
 * backend (blk.h), on the virtio PCI transport.
 *
 * Each disk gets one I/O thread (THREAD_BLK_IO) serving all its queues:
 * it sleeps on the queues' kick eventfds, pops requests, does blocking
 * preadv/pwritev/fdatasync/fallocate through the backend and completes
 * them. A broken ring sets NEEDS_RESET; it does not stop vmlet.
 *
 * A host I/O error is handled by the disk's error policy (KubeVirt's
 * errorPolicy, QEMU's werror/rerror): report fails the request with
 * VIRTIO_BLK_S_IOERR (logged once); ignore completes it as if it had
 * worked; stop leaves it pending, pauses the VM (device_pause_vm(), reason
 * PausedIOError, the message naming disk, operation, sector and errno) and
 * waits; on resume the request is tried again, so the guest never sees
 * the error; the VM's end or a device reset drops it. enospace stops on
 * ENOSPC and reports anything else. While the thread waits the disk's
 * other requests wait too.
 */
#ifndef VMLET_VIRTIO_BLK_H
#define VMLET_VIRTIO_BLK_H

#include <stdbool.h>
#include <stdint.h>

struct blk;
struct pci_host;
struct virtio_blk;

enum virtio_blk_error_policy {
	VIRTIO_BLK_ERROR_REPORT = 0,
	VIRTIO_BLK_ERROR_STOP,
	VIRTIO_BLK_ERROR_IGNORE,
	VIRTIO_BLK_ERROR_ENOSPACE,
};

struct virtio_blk_params {
	const char *name;	      /* disk name, for messages */
	const char *serial;	      /* GET_ID, NULL = none (<= 20 bytes used) */
	uint32_t logical_block_size;  /* 0 = 512 */
	uint32_t physical_block_size; /* 0 = logical */
	unsigned int num_queues;      /* 0 = 1 */
	enum virtio_blk_error_policy error_policy;
};

/* Create the device on host; takes ownership of be (closed by destroy). */
int virtio_blk_create(struct virtio_blk **out, struct pci_host *host, struct blk *be,
		      const struct virtio_blk_params *p);
/* Teardown, vCPUs stopped: stop the I/O thread and flush the disk (once;
 * virtio_blk_destroy() flushes if this was not called). 0 or -errno. */
int virtio_blk_quiesce(struct virtio_blk *b);
void virtio_blk_destroy(struct virtio_blk *b);

/* The transport of the device (for tests and the probe report). */
struct virtio_pci *virtio_blk_pci(struct virtio_blk *b);

#endif /* VMLET_VIRTIO_BLK_H */
