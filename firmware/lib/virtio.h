/* SPDX-License-Identifier: MIT */
/*
 * virtio.h - a minimal virtio 1.x PCI driver for the guest firmware
 * (modern transport only, split queues, polled, synchronous), shared by
 * the probe and the EFI firmware, and SHA-256. Runs at CPL3 (fast on our
 * hosts): it only touches memory, ECAM and BARs.
 */
#ifndef FW_LIB_VIRTIO_H
#define FW_LIB_VIRTIO_H

#include "firmware/lib/fw.h"
#include "firmware/lib/pci.h"
#include "firmware/lib/virtio_spec.h"

/* The body of a struct holding one split queue of n entries (§2.7):
 * desc, avail, and used on a page of its own. */
#define FW_VIRTIO_RINGS(n)                                                                         \
	{                                                                                          \
		struct {                                                                           \
			uint64_t addr;                                                             \
			uint32_t len;                                                              \
			uint16_t flags, next;                                                      \
		} desc[n] FW_ALIGNED(16);                                                          \
		struct {                                                                           \
			uint16_t flags, idx, ring[n], used_event;                                  \
		} avail FW_ALIGNED(2);                                                             \
		struct {                                                                           \
			uint16_t flags, idx;                                                       \
			struct {                                                                   \
				uint32_t id, len;                                                  \
			} ring[n];                                                                 \
			uint16_t avail_event;                                                      \
		} used FW_ALIGNED(4096);                                                           \
	}

/* One split queue's rings (4 KiB aligned, 8 KiB). */
#define FW_VIRTIO_QSIZE 16
struct fw_vq FW_VIRTIO_RINGS(FW_VIRTIO_QSIZE) FW_ALIGNED(4096);

struct fw_virtio {
	const struct fw_pci_fn *pci;
	struct fw_vq *vq;
	volatile uint8_t *common, *isr, *device, *notify;
	uint32_t notify_mult;
	uint16_t qsize, avail_idx, last_used;
	uint64_t features; /* negotiated */
};

struct fw_virtio_buf {
	void *addr;
	uint32_t len;
	bool write; /* device-writable */
};

/* Reset, negotiate (want & offered, VERSION_1 required), set up queue 0,
 * DRIVER_OK. mmio_next: where to place unprogrammed BARs. 0 or -1. */
int fw_virtio_init(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t want,
		   uint64_t *mmio_next);
/* The same with rings of the caller's (several devices live at once; the
 * plain init shares one static queue between devices used in turn). */
int fw_virtio_init_q(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t want,
		     uint64_t *mmio_next, struct fw_vq *q);
/* The same with rings of any size (the device may lower qsize: see
 * v->qsize) laid out by the caller (§2.7: desc 16-, avail 2-, used
 * 4-byte aligned); v->vq stays NULL, so fw_virtio_submit() is not for
 * these rings. */
int fw_virtio_init_rings(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t want,
			 uint64_t *mmio_next, uint16_t qsize, void *desc, void *avail, void *used);
/* One of several queues for fw_virtio_init_queues(): qsize in (the device
 * may lower it) and out, ring addresses in, the queue's doorbell out. */
struct fw_virtio_ring {
	uint16_t qsize;
	void *desc, *avail, *used;
	volatile uint16_t *notify;
};
/* Reset, negotiate, set up queues 0..n-1 with the caller's rings,
 * DRIVER_OK. v->vq stays NULL. 0 or -1. */
int fw_virtio_init_queues(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t want,
			  uint64_t *mmio_next, struct fw_virtio_ring *r, int n);
/* Post one chain on queue 0, notify, poll for its completion. Returns the
 * used length, or -1 on timeout. */
int64_t fw_virtio_submit(struct fw_virtio *v, const struct fw_virtio_buf *b, int n);
void fw_virtio_reset(struct fw_virtio *v);

/* SHA-256 (FIPS 180-4), integer-only. */
struct fw_sha256 {
	uint32_t h[8];
	uint8_t buf[64];
	uint64_t len;
};
void fw_sha256_init(struct fw_sha256 *s);
void fw_sha256_update(struct fw_sha256 *s, const void *data, size_t len);
void fw_sha256_final(struct fw_sha256 *s, uint8_t out[32]);

#endif /* FW_LIB_VIRTIO_H */
