/* SPDX-License-Identifier: MIT */
/*
 * virtio_test_driver.h - a tiny virtio driver for unit tests: guest RAM is
 * a malloc'd buffer at gpa 0, one split queue at fixed addresses, and
 * helpers to post chains (direct or indirect) and collect used entries.
 * Header-only so each test binary gets its own copy.
 */
#ifndef VMLET_VIRTIO_TEST_DRIVER_H
#define VMLET_VIRTIO_TEST_DRIVER_H

#include <stdlib.h>
#include <string.h>

#include "vmm/virtio/virtqueue.h"
#include "vmm/vm/guest_mem.h"

#define TDRV_DESC     0x1000ull
#define TDRV_AVAIL    0x5000ull
#define TDRV_USED     0x6000ull
#define TDRV_INDIRECT 0x8000ull	 /* scratch for one indirect table */
#define TDRV_DATA     0x10000ull /* free data area starts here */

struct tdrv {
	struct guest_mem mem;
	uint8_t *ram;
	uint64_t ram_size;
	uint16_t size, avail_idx, next_desc, last_used;
	gpa_t data_next;
};

struct tbuf {
	gpa_t addr;
	uint32_t len;
	int write;
};

static inline void tdrv_init(struct tdrv *d, uint64_t ram_size, uint16_t size)
{
	memset(d, 0, sizeof(*d));
	d->ram = aligned_alloc(4096, ram_size);
	memset(d->ram, 0, ram_size);
	d->ram_size = ram_size;
	d->mem.n = 1;
	d->mem.r[0].gpa = 0;
	d->mem.r[0].size = ram_size;
	d->mem.r[0].host = d->ram;
	d->mem.total = ram_size;
	d->size = size;
	d->data_next = TDRV_DATA;
}

static inline void tdrv_release(struct tdrv *d)
{
	free(d->ram);
	d->ram = NULL;
}

static inline void *tdrv_ptr(struct tdrv *d, gpa_t gpa)
{
	return d->ram + gpa;
}

/* Reserve len bytes of data area (512-aligned). */
static inline gpa_t tdrv_alloc(struct tdrv *d, uint32_t len)
{
	gpa_t g = d->data_next;

	d->data_next += (len + 511) & ~511ull;
	return g;
}

static inline struct virtq_desc *tdrv_desc(struct tdrv *d, unsigned int i)
{
	return (struct virtq_desc *)(void *)(d->ram + TDRV_DESC + 16u * i);
}

static inline uint16_t *tdrv_avail16(struct tdrv *d, unsigned int i)
{
	return (uint16_t *)(void *)(d->ram + TDRV_AVAIL + 2u * i);
}

/* Publish head in the avail ring. */
static inline void tdrv_publish(struct tdrv *d, uint16_t head)
{
	*tdrv_avail16(d, 2 + d->avail_idx % d->size) = head;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	d->avail_idx++;
	*tdrv_avail16(d, 1) = d->avail_idx;
}

/* Post a chain of n buffers; indirect puts them in a table at
 * TDRV_INDIRECT (one at a time). Returns the head index. */
static inline uint16_t tdrv_post(struct tdrv *d, const struct tbuf *b, unsigned int n, int indirect)
{
	uint16_t head = d->next_desc % d->size;
	struct virtq_desc *t;

	if (indirect) {
		t = (struct virtq_desc *)(void *)(d->ram + TDRV_INDIRECT);
		for (unsigned int i = 0; i < n; i++) {
			t[i].addr = b[i].addr;
			t[i].len = b[i].len;
			t[i].flags = (b[i].write ? VRING_DESC_F_WRITE : 0) |
				     (i + 1 < n ? VRING_DESC_F_NEXT : 0);
			t[i].next = (uint16_t)(i + 1);
		}
		*tdrv_desc(d, head) =
		    (struct virtq_desc){TDRV_INDIRECT, 16u * n, VRING_DESC_F_INDIRECT, 0};
		d->next_desc++;
	} else {
		for (unsigned int i = 0; i < n; i++) {
			uint16_t idx = d->next_desc++ % d->size;

			*tdrv_desc(d, idx) =
			    (struct virtq_desc){b[i].addr, b[i].len,
						(uint16_t)((b[i].write ? VRING_DESC_F_WRITE : 0) |
							   (i + 1 < n ? VRING_DESC_F_NEXT : 0)),
						(uint16_t)(d->next_desc % d->size)};
		}
	}
	tdrv_publish(d, head);
	return head;
}

/* Next used entry: 1 and (*id, *len), or 0 when none. */
static inline int tdrv_used(struct tdrv *d, uint32_t *id, uint32_t *len)
{
	uint16_t idx = *(uint16_t *)(void *)(d->ram + TDRV_USED + 2);
	uint8_t *e;

	if (idx == d->last_used)
		return 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	e = d->ram + TDRV_USED + 4 + 8u * (d->last_used % d->size);
	memcpy(id, e, 4);
	memcpy(len, e + 4, 4);
	d->last_used++;
	return 1;
}

static inline int tdrv_virtq(struct tdrv *d, struct virtq *q, int event_idx)
{
	return virtq_init(q, &d->mem, d->size, TDRV_DESC, TDRV_AVAIL, TDRV_USED, event_idx, true);
}

#endif /* VMLET_VIRTIO_TEST_DRIVER_H */
