// SPDX-License-Identifier: MIT
/*
 * virtio_net_hostile.c - what a malicious guest does to a virtio-net
 * device ("vmlet.hostile"; virtio_net.h): transmit chains that point
 * outside RAM, claim absurd lengths, exceed any frame size, are
 * device-writable, or loop; a receive queue with no buffers at all while
 * transmitting. After each, the device must either complete the chain or
 * report NEEDS_RESET, and then carry a good frame again.
 */
#include "firmware/lib/io.h"
#include "firmware/probe/virtio_net_int.h"

#define SPINS (1ull << 31) /* TSC ticks to wait for a completion */

static struct fw_vq hq[2];
static uint8_t frame[HDR + 64] FW_ALIGNED(64);
static uint8_t big[2][65536] FW_ALIGNED(4096);

struct hn {
	struct fw_virtio v;
	struct fw_virtio_ring r[2];
	uint16_t avail, seen;
};

static int hn_init(struct hn *h, const struct fw_pci_fn *f, uint64_t *next)
{
	memset(h, 0, sizeof(*h));
	memset(hq, 0, sizeof(hq));
	for (int i = 0; i < 2; i++)
		h->r[i] = (struct fw_virtio_ring){NQ, hq[i].desc, &hq[i].avail, &hq[i].used, NULL};
	return fw_virtio_init_queues(&h->v, f, FW_VIRTIO_NET_F_MAC, next, h->r, 2);
}

/* Post the chain of n descriptors already in hq[1].desc; 1 completed,
 * 0 NEEDS_RESET, -1 neither in time. */
static int hn_send(struct hn *h)
{
	struct fw_vq *q = &hq[1];

	q->avail.ring[h->avail % h->r[1].qsize] = 0;
	__asm__ volatile("" ::: "memory");
	*(volatile uint16_t *)&q->avail.idx = ++h->avail;
	__asm__ volatile("" ::: "memory");
	*h->r[1].notify = 1;
	for (uint64_t t0 = rdtsc(); rdtsc() - t0 < SPINS;) {
		if (*(volatile uint16_t *)&q->used.idx != h->seen) {
			h->seen++;
			return 1;
		}
		if (*(volatile uint8_t *)(h->v.common + 0x14) & 0x40)
			return 0;
		__asm__ volatile("pause");
	}
	return -1;
}

static void desc(int i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	hq[1].desc[i].addr = addr;
	hq[1].desc[i].len = len;
	hq[1].desc[i].flags = flags;
	hq[1].desc[i].next = next;
}

/* A good broadcast frame must still go out (after a reset if needed). */
static bool still_works(struct hn *h, const struct fw_pci_fn *f, uint64_t *next, int r)
{
	if (r < 0 || (r == 0 && hn_init(h, f, next)))
		return false;
	memset(frame, 0, sizeof(frame));
	memset(frame + HDR, 0xff, 6);
	memcpy(frame + HDR + 6, (const uint8_t[6]){2, 0, 0, 0, 0, 0x77}, 6);
	frame[HDR + 12] = 0x88; /* local experimental ethertype 0x88b5 */
	frame[HDR + 13] = 0xb5;
	desc(0, (uint64_t)(uintptr_t)frame, sizeof(frame), 0, 0);
	return hn_send(h) == 1;
}

static const char *hostile_nic(const struct fw_pci_fn *f, uint64_t *next)
{
	static const struct {
		const char *name;
		uint64_t addr;
		uint32_t len;
		uint16_t flags;
	} one[] = {
	    {"outside-ram", 0xfffffff000000000ull, 64, 0},
	    {"huge-length", 0, 0xfffffff0u, 0},
	    {"device-writable", 0, 64, 2},
	    {"empty", 0, 0, 0},
	};
	struct hn h;

	if (hn_init(&h, f, next))
		return "init";
	/* no receive buffers were ever posted: transmit must work anyway */
	if (!still_works(&h, f, next, 1))
		return "no-rx-buffers";
	for (size_t i = 0; i < FW_ARRAY_SIZE(one); i++) {
		desc(0, one[i].addr ? one[i].addr : (uint64_t)(uintptr_t)frame, one[i].len,
		     one[i].flags, 0);
		if (!still_works(&h, f, next, hn_send(&h)))
			return one[i].name;
	}
	/* 128 KiB in two descriptors: more than any frame */
	desc(0, (uint64_t)(uintptr_t)big[0], sizeof(big[0]), 1, 1);
	desc(1, (uint64_t)(uintptr_t)big[1], sizeof(big[1]), 0, 0);
	if (!still_works(&h, f, next, hn_send(&h)))
		return "oversized";
	/* a loop: 0 -> 1 -> 0 */
	desc(0, (uint64_t)(uintptr_t)frame, 16, 1, 1);
	desc(1, (uint64_t)(uintptr_t)frame, 16, 1, 0);
	if (!still_works(&h, f, next, hn_send(&h)))
		return "loop";
	return "ok";
}

void fw_virtio_net_hostile(struct fw_buf *out, const struct fw_pci_fn *f, uint64_t *mmio_next)
{
	struct hn h;

	fw_buf_printf(out, "hostileNic=00:%02x.%x %s\n", f->dev, f->fn, hostile_nic(f, mmio_next));
	h.v.common = NULL;
	if (!hn_init(&h, f, mmio_next))
		fw_virtio_reset(&h.v);
}
