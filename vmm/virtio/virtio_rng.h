/* SPDX-License-Identifier: MIT */
/*
 * virtio_rng.h - virtio entropy device (virtio 1.2 §5.4): one request
 * queue; each device-writable buffer is filled from the host's
 * /dev/urandom (the same pool as getrandom(2), read through an fd opened
 * at creation so the sandboxed I/O thread needs only read(2)), limited by
 * a token bucket so a guest cannot drain the host pool or burn a core.
 */
#ifndef VMLET_VIRTIO_RNG_H
#define VMLET_VIRTIO_RNG_H

#include <stdint.h>

struct pci_host;
struct virtio_rng;
struct virtio_pci;

#define VIRTIO_RNG_RATE_DEFAULT	 (1u << 20) /* bytes per second */
#define VIRTIO_RNG_BURST_DEFAULT (64u << 10)

/* rate bytes/s refilled into a bucket of burst bytes (0: defaults). */
int virtio_rng_create(struct virtio_rng **out, struct pci_host *host, uint32_t rate,
		      uint32_t burst);
void virtio_rng_destroy(struct virtio_rng *r);
struct virtio_pci *virtio_rng_pci(struct virtio_rng *r);

#endif /* VMLET_VIRTIO_RNG_H */
