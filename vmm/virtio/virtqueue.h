/* SPDX-License-Identifier: MIT */
/*
 * virtqueue.h - the device side of split virtqueues (virtio 1.2 §2.7).
 *
 * A struct virtq holds what the driver told the transport (size, ring
 * addresses, negotiated ring features) and the device's private indices.
 * The rings live in guest RAM and are reached only through guest_mem_ptr();
 * everything read from them is untrusted and read exactly once into host
 * memory before it is checked and used.
 *
 * Two kinds of guest mistakes are told apart:
 *  - a bad *request* (a buffer outside RAM, a total length above
 *    VIRTQ_MAX_BYTES or the element's max_bytes, more segments than the caller's iovec array): the
 *    chain's head is known, virtq_pop() returns VIRTQ_POP_BAD and the
 *    device completes that head with virtq_push(q, head, 0);
 *  - a broken *ring* (avail index more than size ahead, a head or next
 *    index >= size, a descriptor loop, a malformed indirect table, a
 *    device-readable descriptor after a writable one, rings outside RAM):
 *    virtq_pop() returns -EIO, q->broken is set and stays set until
 *    virtq_reset(); the transport then sets VIRTIO_CONFIG_S_NEEDS_RESET.
 * Nothing ever loops more than the queue size (or indirect table length)
 * per chain, and nothing touches memory outside guest RAM.
 *
 * Concurrency: one consumer thread per queue pops and pushes; the vCPU
 * threads only configure the queue while it is not running (transport's
 * job). Memory ordering against the driver follows §2.7.13 (see the
 * comments at each fence in virtqueue.c).
 */
#ifndef VMLET_VIRTQUEUE_H
#define VMLET_VIRTQUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <linux/virtio_config.h> /* VIRTIO_F_VERSION_1 */
#include <linux/virtio_ring.h>	 /* VRING_*_F_*, VIRTIO_RING_F_* */

#include "vmm/vm/guest_mem.h"

#define VIRTQ_MAX_SIZE	1024	    /* queue size and indirect table cap */
#define VIRTQ_MAX_BYTES (64u << 20) /* cap on one chain's total length */

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
} __attribute__((packed));
_Static_assert(sizeof(struct virtq_desc) == 16, "virtq_desc is 16 bytes");

struct virtq {
	const struct guest_mem *mem;
	uint16_t size; /* power of two, 1..VIRTQ_MAX_SIZE */
	gpa_t desc, avail, used;
	bool event_idx; /* VIRTIO_RING_F_EVENT_IDX negotiated */
	bool indirect;	/* VIRTIO_RING_F_INDIRECT_DESC negotiated */
	bool broken;
	uint16_t last_avail;	 /* next avail ring slot to consume */
	uint16_t used_idx;	 /* our copy of used->idx */
	uint16_t signalled_used; /* used_idx at the last interrupt */
	bool signalled_valid;
	/* host views of the rings, checked once by virtq_init() */
	uint8_t *desc_h, *avail_h, *used_h;
};

/*
 * One popped chain: out[] are the device-readable segments in order, in[]
 * the device-writable ones. Pointers are host addresses inside guest RAM,
 * valid until the VM's memory goes away. The caller provides the arrays.
 */
struct virtq_elem {
	uint16_t head;
	struct iovec *out, *in;
	unsigned int n_out, n_in;
	unsigned int cap_out, cap_in;
	uint64_t out_bytes, in_bytes;
	/* cap on the chain's total length, 0 = VIRTQ_MAX_BYTES (a queue whose
	 * buffers are never copied, e.g. virtio-balloon's page reports,
	 * may allow more) */
	uint64_t max_bytes;
};

enum virtq_pop_result {
	VIRTQ_POP_EMPTY = 0, /* nothing available */
	VIRTQ_POP_OK = 1,    /* *e is a good chain */
	VIRTQ_POP_BAD = 2,   /* e->head valid, chain unusable: push it with 0 */
};

/*
 * Set up q from the transport's registers; checks size (power of two,
 * <= VIRTQ_MAX_SIZE) and that the three rings lie in RAM. Returns 0 or
 * -EINVAL (the transport then refuses to enable the queue).
 */
int virtq_init(struct virtq *q, const struct guest_mem *mem, uint16_t size, gpa_t desc, gpa_t avail,
	       gpa_t used, bool event_idx, bool indirect);
void virtq_reset(struct virtq *q);

/* Pop the next chain. Returns enum virtq_pop_result or -EIO (broken). */
int virtq_pop(struct virtq *q, struct virtq_elem *e);
/* Return a chain to the driver with len bytes written. 0 or -EIO. */
int virtq_push(struct virtq *q, uint16_t head, uint32_t len);
/*
 * The same in two steps, for chains the driver must see together (one
 * merged RX frame): virtq_fill() writes the i-th used element past the
 * published ones without publishing it; virtq_flush() then publishes the
 * first n filled elements at once. 0 or -EIO.
 */
int virtq_fill(struct virtq *q, unsigned int i, uint16_t head, uint32_t len);
int virtq_flush(struct virtq *q, unsigned int n);
/*
 * After one or more pushes: does the driver want an interrupt now?
 * (VRING_AVAIL_F_NO_INTERRUPT or used_event, §2.7.10). Updates the
 * "signalled" bookkeeping, so call it once per interrupt decision.
 */
bool virtq_should_notify(struct virtq *q);
/*
 * Before the consumer sleeps: ask for notifications again (avail_event =
 * last_avail under EVENT_IDX, else clear USED_F_NO_NOTIFY) and return true
 * if more buffers arrived meanwhile, i.e. the consumer must not sleep.
 */
bool virtq_enable_notify(struct virtq *q);
/* While draining: tell the driver not to kick (no-op under EVENT_IDX). */
void virtq_disable_notify(struct virtq *q);

/* The used_event / avail_event comparison of virtio 1.2 §2.7.10. */
static inline bool virtq_need_event(uint16_t event, uint16_t new_idx, uint16_t old)
{
	return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old);
}

#endif /* VMLET_VIRTQUEUE_H */
