// SPDX-License-Identifier: MIT
/*
 * virtqueue.c - split virtqueues, device side (virtio 1.2 §2.7).
 *
 * Ring layout (little-endian; our hosts are x86_64, so no swapping):
 *   desc:  struct virtq_desc[size]                       (16-byte aligned)
 *   avail: le16 flags, le16 idx, le16 ring[size], le16 used_event
 *   used:  le16 flags, le16 idx, {le32 id, le32 len}[size], le16 avail_event
 */
#include <errno.h>
#include <string.h>

#include "vmm/virtio/virtqueue.h"
#include "vmm/util/log.h"

#define AVAIL_FLAGS 0
#define AVAIL_IDX   2
#define AVAIL_RING  4
#define USED_FLAGS  0
#define USED_IDX    2
#define USED_RING   4

static inline uint16_t *u16_at(uint8_t *base, size_t off)
{
	return (uint16_t *)(void *)(base + off);
}

static inline uint16_t load16(uint8_t *base, size_t off)
{
	return __atomic_load_n(u16_at(base, off), __ATOMIC_RELAXED);
}

static inline void store16(uint8_t *base, size_t off, uint16_t v)
{
	__atomic_store_n(u16_at(base, off), v, __ATOMIC_RELAXED);
}

int virtq_init(struct virtq *q, const struct guest_mem *mem, uint16_t size, gpa_t desc, gpa_t avail,
	       gpa_t used, bool event_idx, bool indirect)
{
	uint8_t *desc_h, *avail_h, *used_h;

	memset(q, 0, sizeof(*q));
	if (!size || size > VIRTQ_MAX_SIZE || (size & (size - 1)))
		return -EINVAL;
	/* §2.7: alignment 16 / 2 / 4; we rely on it for atomic accesses */
	if ((desc & 15) || (avail & 1) || (used & 3))
		return -EINVAL;
	/* Both event fields are always mapped: they are part of the rings'
	 * size whether or not EVENT_IDX is negotiated (§2.7). */
	desc_h = guest_mem_ptr(mem, desc, 16ull * size);
	avail_h = guest_mem_ptr(mem, avail, 6ull + 2ull * size);
	used_h = guest_mem_ptr(mem, used, 6ull + 8ull * size);
	if (!desc_h || !avail_h || !used_h)
		return -EINVAL;
	*q = (struct virtq){.mem = mem,
			    .size = size,
			    .desc = desc,
			    .avail = avail,
			    .used = used,
			    .event_idx = event_idx,
			    .indirect = indirect,
			    .desc_h = desc_h,
			    .avail_h = avail_h,
			    .used_h = used_h};
	return 0;
}

void virtq_reset(struct virtq *q)
{
	memset(q, 0, sizeof(*q));
}

static int virtq_broken(struct virtq *q, const char *why, unsigned int v)
{
	if (!q->broken)
		log_warn("virtio: queue broken by the driver: %s (%u)", why, v);
	q->broken = true;
	return -EIO;
}

/* Append one descriptor's buffer to e; false when the request is bad. */
static bool elem_add(struct virtq *q, struct virtq_elem *e, const struct virtq_desc *d)
{
	bool wr = d->flags & VRING_DESC_F_WRITE;
	uint64_t *bytes = wr ? &e->in_bytes : &e->out_bytes;
	unsigned int *n = wr ? &e->n_in : &e->n_out;
	unsigned int cap = wr ? e->cap_in : e->cap_out;
	struct iovec *iov = wr ? e->in : e->out;
	void *p;

	if (!d->len)
		return true;
	*bytes += d->len;
	if (e->in_bytes + e->out_bytes > (e->max_bytes ? e->max_bytes : VIRTQ_MAX_BYTES) ||
	    *n >= cap)
		return false;
	p = guest_mem_ptr(q->mem, d->addr, d->len);
	if (!p)
		return false;
	iov[*n].iov_base = p;
	iov[*n].iov_len = d->len;
	(*n)++;
	return true;
}

/*
 * Walk the chain starting at head. Each table (the ring's, or one
 * indirect table) is walked at most its length in steps, so a loop is
 * caught after at most size + VIRTQ_MAX_SIZE descriptors.
 */
static int virtq_walk(struct virtq *q, struct virtq_elem *e, uint16_t head)
{
	const uint8_t *table = q->desc_h;
	unsigned int table_n = q->size;
	unsigned int budget = table_n;
	unsigned int idx = head;
	bool indirect = false, bad = false, seen_write = false;
	struct virtq_desc d;

	for (;;) {
		if (!budget--)
			return virtq_broken(q, "descriptor loop at head", head);
		memcpy(&d, table + 16u * idx, sizeof(d)); /* read once */
		if (d.flags & VRING_DESC_F_INDIRECT) {
			if (!q->indirect || indirect || (d.flags & VRING_DESC_F_NEXT))
				return virtq_broken(q, "misplaced indirect descriptor", idx);
			if (!d.len || d.len % 16 || d.len / 16 > VIRTQ_MAX_SIZE)
				return virtq_broken(q, "indirect table length", d.len);
			table = guest_mem_ptr(q->mem, d.addr, d.len);
			if (!table)
				return virtq_broken(q, "indirect table outside ram", idx);
			table_n = budget = d.len / 16;
			idx = 0;
			indirect = true;
			continue;
		}
		if (d.flags & VRING_DESC_F_WRITE)
			seen_write = true;
		else if (seen_write)
			return virtq_broken(q, "readable descriptor after writable", idx);
		if (!bad && !elem_add(q, e, &d))
			bad = true;
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		idx = d.next;
		if (idx >= table_n)
			return virtq_broken(q, "next index out of range", idx);
	}
	return bad ? VIRTQ_POP_BAD : VIRTQ_POP_OK;
}

int virtq_pop(struct virtq *q, struct virtq_elem *e)
{
	uint16_t avail_idx, pending, head;

	if (q->broken || !q->size)
		return -EIO;
	avail_idx = load16(q->avail_h, AVAIL_IDX);
	pending = (uint16_t)(avail_idx - q->last_avail);
	if (!pending)
		return VIRTQ_POP_EMPTY;
	if (pending > q->size)
		return virtq_broken(q, "avail index too far ahead", pending);
	/* §2.7.13.3: the driver writes the ring entry, then idx; pair its
	 * barrier so we read the entry only after seeing the new idx. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	head = load16(q->avail_h, AVAIL_RING + 2u * (q->last_avail % q->size));
	if (head >= q->size)
		return virtq_broken(q, "head index out of range", head);
	q->last_avail++;
	e->head = head;
	e->n_out = e->n_in = 0;
	e->out_bytes = e->in_bytes = 0;
	return virtq_walk(q, e, head);
}

/* The used ring was translated once, at virtq_init(): its writes are
 * marked here for live migration (guest_mem.h; a no-op unless tracking). */
static void used_written(const struct virtq *q)
{
	guest_mem_mark_host(q->mem, q->used_h, 6ull + 8ull * q->size);
}

int virtq_fill(struct virtq *q, unsigned int i, uint16_t head, uint32_t len)
{
	uint8_t *slot;

	if (q->broken || !q->size || i >= q->size)
		return -EIO;
	slot = q->used_h + USED_RING + 8u * ((uint16_t)(q->used_idx + i) % q->size);
	__atomic_store_n((uint32_t *)(void *)slot, (uint32_t)head, __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)(void *)(slot + 4), len, __ATOMIC_RELAXED);
	used_written(q);
	return 0;
}

int virtq_flush(struct virtq *q, unsigned int n)
{
	if (q->broken || !q->size || n > q->size)
		return -EIO;
	q->used_idx = (uint16_t)(q->used_idx + n);
	/* §2.7.8: the elements must be visible before the new used idx */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	store16(q->used_h, USED_IDX, q->used_idx);
	used_written(q);
	return 0;
}

int virtq_push(struct virtq *q, uint16_t head, uint32_t len)
{
	int r = virtq_fill(q, 0, head, len);

	return r ? r : virtq_flush(q, 1);
}

bool virtq_should_notify(struct virtq *q)
{
	uint16_t old, event;
	bool valid;

	if (!q->size)
		return false;
	/* Our used idx store must be globally visible before we read the
	 * driver's suppression state, or both sides may miss each other:
	 * a full fence (store -> load ordering). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!q->event_idx)
		return !(load16(q->avail_h, AVAIL_FLAGS) & VRING_AVAIL_F_NO_INTERRUPT);
	old = q->signalled_used;
	valid = q->signalled_valid;
	q->signalled_used = q->used_idx;
	q->signalled_valid = true;
	if (!valid)
		return true;
	event = load16(q->avail_h, AVAIL_RING + 2u * q->size);
	return virtq_need_event(event, q->used_idx, old);
}

bool virtq_enable_notify(struct virtq *q)
{
	if (!q->size || q->broken)
		return false;
	if (q->event_idx)
		store16(q->used_h, USED_RING + 8u * q->size, q->last_avail);
	else
		store16(q->used_h, USED_FLAGS, 0);
	used_written(q);
	/* The store above must be visible before we look at avail idx again
	 * (store -> load): a driver adding a buffer now either sees our
	 * request or we see its buffer. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return load16(q->avail_h, AVAIL_IDX) != q->last_avail;
}

void virtq_disable_notify(struct virtq *q)
{
	if (q->size && !q->event_idx)
		store16(q->used_h, USED_FLAGS, VRING_USED_F_NO_NOTIFY);
	used_written(q);
}
