// SPDX-License-Identifier: MIT
/*
 * virtio.c - polled virtio 1.x PCI driver (virtio.h; virtio 1.2 §4.1 and
 * §2.7, driver side) and SHA-256. The probe's report on the devices is
 * firmware/probe/virtio_report.c.
 */
#include "firmware/lib/io.h"
#include "firmware/lib/virtio.h"

#define QSIZE	   FW_VIRTIO_QSIZE
#define POLL_SPINS 2000000000ull

/* one queue's rings, reused by each device in turn (reset in between) */
static struct fw_vq shared_vq;

#define C8(v, o)  (*(volatile uint8_t *)((v)->common + (o)))
#define C16(v, o) (*(volatile uint16_t *)((v)->common + (o)))
#define C32(v, o) (*(volatile uint32_t *)((v)->common + (o)))

static void barrier(void)
{
	__asm__ volatile("" ::: "memory");
}

/* The vendor capabilities (virtio 1.2 §4.1.4): one 32-bit read for each
 * capability's id, next and type, more only for the four structures used,
 * and each BAR's address read once (every config read is a VM exit). */
static int virtio_caps(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t *next)
{
	uint64_t bars[6] = {0};
	uint8_t c = fw_pci_read8(f, FW_PCI_CAPABILITY_LIST) & 0xfc;

	for (int guard = 0; c && guard < 48; guard++) {
		uint32_t head = fw_pci_read32(f, c);
		uint8_t type = (uint8_t)(head >> 24), bar, at = c;
		uint64_t base;

		c = (uint8_t)(head >> 8) & 0xfc;
		if ((head & 0xff) != FW_PCI_CAP_ID_VNDR || type < FW_VIRTIO_PCI_CAP_COMMON_CFG ||
		    type > FW_VIRTIO_PCI_CAP_DEVICE_CFG)
			continue;
		bar = (uint8_t)fw_pci_read32(f, at + 4u);
		if (bar > 5)
			continue;
		if (!bars[bar])
			bars[bar] = fw_pci_bar(f, bar, next);
		if (!bars[bar])
			continue;
		base = bars[bar] + fw_pci_read32(f, at + 8u);
		switch (type) {
		case FW_VIRTIO_PCI_CAP_COMMON_CFG:
			v->common = (volatile uint8_t *)(uintptr_t)base;
			break;
		case FW_VIRTIO_PCI_CAP_NOTIFY_CFG:
			v->notify = (volatile uint8_t *)(uintptr_t)base;
			v->notify_mult = fw_pci_read32(f, at + 16u);
			break;
		case FW_VIRTIO_PCI_CAP_ISR_CFG:
			v->isr = (volatile uint8_t *)(uintptr_t)base;
			break;
		case FW_VIRTIO_PCI_CAP_DEVICE_CFG:
			v->device = (volatile uint8_t *)(uintptr_t)base;
			break;
		}
	}
	return v->common && v->notify && v->isr ? 0 : -1;
}

void fw_virtio_reset(struct fw_virtio *v)
{
	if (!v->common)
		return;
	C8(v, FW_VIRTIO_COMMON_STATUS) = 0;
	for (int i = 0; i < 1000000 && C8(v, FW_VIRTIO_COMMON_STATUS); i++)
		__asm__ volatile("pause");
}

int fw_virtio_init(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t want,
		   uint64_t *mmio_next)
{
	return fw_virtio_init_q(v, f, want, mmio_next, &shared_vq);
}

int fw_virtio_init_q(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t want,
		     uint64_t *mmio_next, struct fw_vq *q)
{
	memset(q, 0, sizeof(*q));
	if (fw_virtio_init_rings(v, f, want, mmio_next, QSIZE, q->desc, &q->avail, &q->used))
		return -1;
	v->vq = q;
	return 0;
}

int fw_virtio_init_rings(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t want,
			 uint64_t *mmio_next, uint16_t qsize, void *desc, void *avail, void *used)
{
	struct fw_virtio_ring r = {qsize, desc, avail, used, NULL};

	if (fw_virtio_init_queues(v, f, want, mmio_next, &r, 1))
		return -1;
	v->qsize = r.qsize;
	v->notify = (volatile uint8_t *)r.notify;
	return 0;
}

int fw_virtio_init_queues(struct fw_virtio *v, const struct fw_pci_fn *f, uint64_t want,
			  uint64_t *mmio_next, struct fw_virtio_ring *r, int n)
{
	uint64_t offered;
	uint16_t qmax;

	memset(v, 0, sizeof(*v));
	v->pci = f;
	if (virtio_caps(v, f, mmio_next))
		return -1;
	fw_pci_write16(f, FW_PCI_COMMAND,
		       fw_pci_read16(f, FW_PCI_COMMAND) | FW_PCI_COMMAND_MEMORY |
			   FW_PCI_COMMAND_MASTER);
	fw_virtio_reset(v);
	C8(v, FW_VIRTIO_COMMON_STATUS) = FW_VIRTIO_S_ACKNOWLEDGE | FW_VIRTIO_S_DRIVER;
	C32(v, FW_VIRTIO_COMMON_DFSELECT) = 0;
	offered = C32(v, FW_VIRTIO_COMMON_DF);
	C32(v, FW_VIRTIO_COMMON_DFSELECT) = 1;
	offered |= (uint64_t)C32(v, FW_VIRTIO_COMMON_DF) << 32;
	v->features = offered & (want | FW_VIRTIO_F_VERSION_1);
	if (!(v->features & FW_VIRTIO_F_VERSION_1))
		return -1;
	C32(v, FW_VIRTIO_COMMON_GFSELECT) = 0;
	C32(v, FW_VIRTIO_COMMON_GF) = (uint32_t)v->features;
	C32(v, FW_VIRTIO_COMMON_GFSELECT) = 1;
	C32(v, FW_VIRTIO_COMMON_GF) = (uint32_t)(v->features >> 32);
	C8(v, FW_VIRTIO_COMMON_STATUS) =
	    FW_VIRTIO_S_ACKNOWLEDGE | FW_VIRTIO_S_DRIVER | FW_VIRTIO_S_FEATURES_OK;
	if (!(C8(v, FW_VIRTIO_COMMON_STATUS) & FW_VIRTIO_S_FEATURES_OK))
		return -1;
	for (int i = 0; i < n; i++) {
		C16(v, FW_VIRTIO_COMMON_Q_SELECT) = (uint16_t)i;
		qmax = C16(v, FW_VIRTIO_COMMON_Q_SIZE);
		if (!qmax)
			return -1;
		r[i].qsize = qmax < r[i].qsize ? qmax : r[i].qsize;
		C16(v, FW_VIRTIO_COMMON_Q_SIZE) = r[i].qsize;
		C16(v, FW_VIRTIO_COMMON_Q_MSIX) =
		    FW_VIRTIO_MSI_NO_VECTOR; /* no MSI-X vector: we poll */
		*(volatile uint64_t *)(v->common + FW_VIRTIO_COMMON_Q_DESC) =
		    (uint64_t)(uintptr_t)r[i].desc;
		*(volatile uint64_t *)(v->common + FW_VIRTIO_COMMON_Q_AVAIL) =
		    (uint64_t)(uintptr_t)r[i].avail;
		*(volatile uint64_t *)(v->common + FW_VIRTIO_COMMON_Q_USED) =
		    (uint64_t)(uintptr_t)r[i].used;
		r[i].notify =
		    (volatile uint16_t *)(v->notify + (uint64_t)C16(v, FW_VIRTIO_COMMON_Q_NOFF) *
							  v->notify_mult);
		C16(v, FW_VIRTIO_COMMON_Q_ENABLE) = 1;
	}
	C8(v, FW_VIRTIO_COMMON_STATUS) = FW_VIRTIO_S_ACKNOWLEDGE | FW_VIRTIO_S_DRIVER |
					 FW_VIRTIO_S_FEATURES_OK | FW_VIRTIO_S_DRIVER_OK;
	return C8(v, FW_VIRTIO_COMMON_STATUS) & FW_VIRTIO_S_NEEDS_RESET ? -1 : 0;
}

int64_t fw_virtio_submit(struct fw_virtio *v, const struct fw_virtio_buf *b, int n)
{
	struct fw_vq *vq = v->vq;
	volatile uint16_t *used_idx = &vq->used.idx;

	if (n < 1 || n > v->qsize)
		return -1;
	for (int i = 0; i < n; i++) {
		vq->desc[i].addr = (uint64_t)(uintptr_t)b[i].addr;
		vq->desc[i].len = b[i].len;
		vq->desc[i].flags = (uint16_t)((i + 1 < n ? FW_VRING_DESC_F_NEXT : 0) |
					       (b[i].write ? FW_VRING_DESC_F_WRITE : 0));
		vq->desc[i].next = (uint16_t)(i + 1);
	}
	vq->avail.ring[v->avail_idx % v->qsize] = 0;
	barrier();
	*(volatile uint16_t *)&vq->avail.idx = ++v->avail_idx;
	barrier();
	*(volatile uint16_t *)v->notify = 0;
	for (uint64_t spin = 0; spin < POLL_SPINS; spin++) {
		if (*used_idx != v->last_used) {
			barrier();
			uint32_t len = vq->used.ring[v->last_used % v->qsize].len;

			v->last_used++;
			return len;
		}
		__asm__ volatile("pause");
	}
	return -1;
}

/* ---- SHA-256 --------------------------------------------------------------- */

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha_block(struct fw_sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++)
		w[i] = w[i - 16] + (ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3)) +
		       w[i - 7] + (ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10));
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 =
		    h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));

		h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
	s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

void fw_sha256_init(struct fw_sha256 *s)
{
	static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

	memcpy(s->h, h0, sizeof(h0));
	s->len = 0;
}

void fw_sha256_update(struct fw_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		size_t at = s->len % 64, c = 64 - at < len ? 64 - at : len;

		memcpy(s->buf + at, p, c);
		s->len += c;
		p += c;
		len -= c;
		if (s->len % 64 == 0)
			sha_block(s, s->buf);
	}
}

void fw_sha256_final(struct fw_sha256 *s, uint8_t out[32])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, zero = 0, l[8];

	fw_sha256_update(s, &pad, 1);
	while (s->len % 64 != 56)
		fw_sha256_update(s, &zero, 1);
	for (int i = 0; i < 8; i++)
		l[i] = (uint8_t)(bits >> (56 - 8 * i));
	fw_sha256_update(s, l, 8);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}
