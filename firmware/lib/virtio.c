// SPDX-License-Identifier: MIT
/*
 * virtio.c - polled virtio 1.x PCI driver and the probe's PCI report
 * (virtio.h; virtio 1.2 §4.1 and §2.7, driver side).
 */
#include "firmware/lib/io.h"
#include "firmware/lib/virtio.h"
#include "firmware/lib/virtio_net.h"

#define QSIZE	    FW_VIRTIO_QSIZE
#define F_VERSION_1 (1ull << 32)
#define BLK_F_RO    (1ull << 5)
#define POLL_SPINS  2000000000ull

/* one queue's rings, reused by each device in turn (reset in between) */
static struct fw_vq shared_vq;

static uint8_t io_buf[65536] FW_ALIGNED(4096);

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
	uint8_t c = fw_pci_read8(f, 0x34) & 0xfc;

	for (int guard = 0; c && guard < 48; guard++) {
		uint32_t head = fw_pci_read32(f, c);
		uint8_t type = (uint8_t)(head >> 24), bar, at = c;
		uint64_t base;

		c = (uint8_t)(head >> 8) & 0xfc;
		if ((head & 0xff) != 0x09 || type < 1 || type > 4)
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
		case 1:
			v->common = (volatile uint8_t *)(uintptr_t)base;
			break;
		case 2:
			v->notify = (volatile uint8_t *)(uintptr_t)base;
			v->notify_mult = fw_pci_read32(f, at + 16u);
			break;
		case 3:
			v->isr = (volatile uint8_t *)(uintptr_t)base;
			break;
		case 4:
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
	C8(v, 0x14) = 0;
	for (int i = 0; i < 1000000 && C8(v, 0x14); i++)
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
	fw_pci_write16(f, 4, fw_pci_read16(f, 4) | 0x6); /* memory + bus master */
	fw_virtio_reset(v);
	C8(v, 0x14) = 1 | 2; /* ACKNOWLEDGE | DRIVER */
	C32(v, 0x00) = 0;
	offered = C32(v, 0x04);
	C32(v, 0x00) = 1;
	offered |= (uint64_t)C32(v, 0x04) << 32;
	v->features = offered & (want | F_VERSION_1);
	if (!(v->features & F_VERSION_1))
		return -1;
	C32(v, 0x08) = 0;
	C32(v, 0x0c) = (uint32_t)v->features;
	C32(v, 0x08) = 1;
	C32(v, 0x0c) = (uint32_t)(v->features >> 32);
	C8(v, 0x14) = 1 | 2 | 8;
	if (!(C8(v, 0x14) & 8))
		return -1;
	for (int i = 0; i < n; i++) {
		C16(v, 0x16) = (uint16_t)i;
		qmax = C16(v, 0x18);
		if (!qmax)
			return -1;
		r[i].qsize = qmax < r[i].qsize ? qmax : r[i].qsize;
		C16(v, 0x18) = r[i].qsize;
		C16(v, 0x1a) = 0xffff; /* no MSI-X vector: we poll */
		*(volatile uint64_t *)(v->common + 0x20) = (uint64_t)(uintptr_t)r[i].desc;
		*(volatile uint64_t *)(v->common + 0x28) = (uint64_t)(uintptr_t)r[i].avail;
		*(volatile uint64_t *)(v->common + 0x30) = (uint64_t)(uintptr_t)r[i].used;
		r[i].notify =
		    (volatile uint16_t *)(v->notify + (uint64_t)C16(v, 0x1e) * v->notify_mult);
		C16(v, 0x1c) = 1;
	}
	C8(v, 0x14) = 1 | 2 | 8 | 4;
	return C8(v, 0x14) & 0x40 ? -1 : 0;
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
		vq->desc[i].flags = (uint16_t)((i + 1 < n ? 1 : 0) | (b[i].write ? 2 : 0));
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

/* ---- the report -------------------------------------------------------- */

static void hex(char *out, const uint8_t *p, int n)
{
	static const char d[] = "0123456789abcdef";

	for (int i = 0; i < n; i++) {
		out[2 * i] = d[p[i] >> 4];
		out[2 * i + 1] = d[p[i] & 15];
	}
	out[2 * n] = 0;
}

/* 0, the device's status byte (1 IOERR, 2 UNSUPP, 0xff none written), or
 * -1 with no completion or a wrong used length. */
static int blk_read(struct fw_virtio *v, uint64_t sector, uint32_t len)
{
	struct {
		uint32_t type, reserved;
		uint64_t sector;
	} hdr = {0, 0, sector};
	static uint8_t status;
	struct fw_virtio_buf b[3] = {{&hdr, 16, false}, {io_buf, len, true}, {&status, 1, true}};
	int64_t used;

	status = 0xff;
	used = fw_virtio_submit(v, b, 3);
	if (used < 0)
		return -1;
	if (status)
		return status;
	return used == (int64_t)len + 1 ? 0 : -1;
}

static void report_blk(struct fw_buf *out, const struct fw_pci_fn *f, uint64_t *next)
{
	struct fw_virtio v;
	struct fw_sha256 sha;
	uint64_t cap, done = 0, total;
	bool failed = false;
	uint8_t digest[32];
	char serial[21] = {0}, dh[65];
	struct {
		uint32_t type, reserved;
		uint64_t sector;
	} hdr = {8, 0, 0};
	static uint8_t status;
	struct fw_virtio_buf id[3] = {{&hdr, 16, false}, {serial, 20, true}, {&status, 1, true}};

	if (fw_virtio_init(&v, f, BLK_F_RO, next) || !v.device) {
		fw_buf_printf(out, "error=virtio-blk %02x: cannot initialize\n", f->dev);
		return;
	}
	cap = *(volatile uint32_t *)v.device | (uint64_t) * (volatile uint32_t *)(v.device + 4)
						   << 32;
	if (fw_virtio_submit(&v, id, 3) < 0 || status != 0)
		serial[0] = 0;
	for (int i = 0; serial[i]; i++)
		if (serial[i] <= ' ' || serial[i] > '~')
			serial[i] = '_';
	total = cap * 512 < (1u << 20) ? cap * 512 : (1u << 20);
	fw_sha256_init(&sha);
	/* a failed chunk is reported and skipped: the next ones must work */
	for (int r, errors = 0; done < total && errors < 4; done += sizeof(io_buf)) {
		uint32_t n =
		    total - done < sizeof(io_buf) ? (uint32_t)(total - done) : sizeof(io_buf);

		r = blk_read(&v, done / 512, n);
		if (r) {
			fw_buf_printf(
			    out, "error=virtio-blk %02x: read failed at sector %llu (status %d)\n",
			    f->dev, (unsigned long long)(done / 512), r);
			errors++;
			failed = true;
			if (r < 0) /* nothing came back: the ring is not ours to reuse */
				break;
			continue;
		}
		fw_sha256_update(&sha, io_buf, n);
	}
	fw_sha256_final(&sha, digest);
	hex(dh, digest, 32);
	fw_buf_printf(out, "disk=00:%02x.%x %llu %d %s %s\n", f->dev, f->fn,
		      (unsigned long long)(cap * 512), (v.features & BLK_F_RO) ? 1 : 0,
		      done >= total && !failed ? dh : "-", serial[0] ? serial : "-");
	fw_virtio_reset(&v);
}

static void report_rng(struct fw_buf *out, const struct fw_pci_fn *f, uint64_t *next)
{
	struct fw_virtio v;
	static uint8_t a[64], b[64];
	struct fw_virtio_buf ba = {a, sizeof(a), true}, bb = {b, sizeof(b), true};
	int64_t la, lb;

	if (fw_virtio_init(&v, f, 0, next)) {
		fw_buf_printf(out, "error=virtio-rng %02x: cannot initialize\n", f->dev);
		return;
	}
	la = fw_virtio_submit(&v, &ba, 1);
	lb = fw_virtio_submit(&v, &bb, 1);
	fw_buf_printf(out, "rng=00:%02x.%x %lld %s\n", f->dev, f->fn, (long long)(la + lb),
		      la > 0 && lb > 0 && memcmp(a, b, 8) ? "ok" : "bad");
	fw_virtio_reset(&v);
}

/* A chain header (device-readable) + one data buffer + status. */
static int64_t hostile_chain(struct fw_virtio *v, uint64_t data_addr, uint32_t data_len)
{
	struct fw_vq *vq = v->vq;
	static struct {
		uint32_t type, reserved;
		uint64_t sector;
	} hdr;
	static uint8_t status;

	hdr.type = 0;
	hdr.sector = 0;
	vq->desc[0].addr = (uint64_t)(uintptr_t)&hdr;
	vq->desc[0].len = 16;
	vq->desc[0].flags = 1;
	vq->desc[0].next = 1;
	vq->desc[1].addr = data_addr;
	vq->desc[1].len = data_len;
	vq->desc[1].flags = 1 | 2;
	vq->desc[1].next = 2;
	vq->desc[2].addr = (uint64_t)(uintptr_t)&status;
	vq->desc[2].len = 1;
	vq->desc[2].flags = 2;
	vq->avail.ring[v->avail_idx % v->qsize] = 0;
	barrier();
	*(volatile uint16_t *)&vq->avail.idx = ++v->avail_idx;
	barrier();
	*(volatile uint16_t *)v->notify = 0;
	for (uint64_t spin = 0; spin < POLL_SPINS / 16; spin++) {
		if (*(volatile uint16_t *)&vq->used.idx != v->last_used) {
			barrier();
			return vq->used.ring[v->last_used++ % v->qsize].len;
		}
		if (C8(v, 0x14) & 0x40)
			return -2; /* NEEDS_RESET */
		__asm__ volatile("pause");
	}
	return -1;
}

/* Wait for NEEDS_RESET after a ring-level attack. */
static bool needs_reset(struct fw_virtio *v)
{
	for (uint64_t spin = 0; spin < POLL_SPINS / 16; spin++) {
		if (C8(v, 0x14) & 0x40)
			return true;
		__asm__ volatile("pause");
	}
	return false;
}

static const char *hostile_blk(const struct fw_pci_fn *f, uint64_t *next)
{
	struct fw_virtio v;
	struct fw_vq *vq = &shared_vq;

	if (fw_virtio_init(&v, f, 0, next))
		return "init";
	/* request-level: a buffer outside RAM, then an absurd length: the
	 * device completes them with nothing written */
	if (hostile_chain(&v, 0xfffffff000000000ull, 512) != 0)
		return "outside-ram";
	if (blk_read(&v, 0, 4096))
		return "read-after-outside-ram";
	if (hostile_chain(&v, (uint64_t)(uintptr_t)io_buf, 0xfffffe00u) != 0)
		return "huge-length";
	if (blk_read(&v, 1, 4096))
		return "read-after-huge-length";
	/* ring-level: a loop, then an avail index far ahead: NEEDS_RESET */
	vq->desc[0] = (typeof(vq->desc[0])){(uint64_t)(uintptr_t)io_buf, 16, 1, 1};
	vq->desc[1] = (typeof(vq->desc[1])){(uint64_t)(uintptr_t)io_buf, 16, 1, 0};
	vq->avail.ring[v.avail_idx % v.qsize] = 0;
	barrier();
	*(volatile uint16_t *)&vq->avail.idx = ++v.avail_idx;
	*(volatile uint16_t *)v.notify = 0;
	if (!needs_reset(&v))
		return "loop-not-reported";
	if (fw_virtio_init(&v, f, 0, next) || blk_read(&v, 2, 4096))
		return "read-after-loop";
	*(volatile uint16_t *)&vq->avail.idx = (uint16_t)(v.avail_idx + 1000);
	*(volatile uint16_t *)v.notify = 0;
	if (!needs_reset(&v))
		return "avail-idx-not-reported";
	if (fw_virtio_init(&v, f, 0, next) || blk_read(&v, 3, 4096))
		return "read-after-avail-idx";
	fw_virtio_reset(&v);
	return "ok";
}

/* The IDs and class of every function again through ports 0xcf8/0xcfc
 * (needs them granted at CPL3): pciCf8=<functions that match ECAM>. */
static void report_cf8(struct fw_buf *out, const struct fw_pci_fn *fns, int n)
{
	int same = 0;

	for (int i = 0; i < n; i++) {
		uint32_t a = 0x80000000u | (uint32_t)fns[i].dev << 11 | (uint32_t)fns[i].fn << 8;
		uint32_t id, cls;

		outl(0xcf8, a);
		id = inl(0xcfc);
		outl(0xcf8, a | 8);
		cls = inl(0xcfc) >> 8;
		if (id == fw_pci_read32(&fns[i], 0) && cls == fns[i].class_code)
			same++;
		else
			fw_buf_printf(out, "error=pci 00:%02x.%x: 0xcf8 reads %08x %06x\n",
				      fns[i].dev, fns[i].fn, id, cls);
	}
	outl(0xcf8, 0);
	fw_buf_printf(out, "pciCf8=%d\n", same);
}

void fw_virtio_report(struct fw_buf *out, uint64_t ecam, bool hostile)
{
	static struct fw_pci_fn fns[FW_PCI_MAX_FNS];
	uint64_t next = 0xd0000000ull; /* upper half of the 32-bit window */
	int n = fw_pci_scan(ecam, fns, FW_PCI_MAX_FNS);

	if (!ecam)
		return;
	fw_buf_printf(out, "pciFunctions=%d\n", n);
	for (int i = 0; i < n; i++)
		fw_buf_printf(out, "pci=00:%02x.%x %04x:%04x %06x\n", fns[i].dev, fns[i].fn,
			      fns[i].vendor, fns[i].device, fns[i].class_code);
	report_cf8(out, fns, n);
	for (int i = 0; i < n; i++) {
		if (fns[i].vendor != 0x1af4)
			continue;
		if (fns[i].device == 0x1042 && hostile)
			fw_buf_printf(out, "hostile=00:%02x.%x %s\n", fns[i].dev, fns[i].fn,
				      hostile_blk(&fns[i], &next));
		if (fns[i].device == 0x1042)
			report_blk(out, &fns[i], &next);
		else if (fns[i].device == 0x1044)
			report_rng(out, &fns[i], &next);
		if (fns[i].device == 0x1041 && hostile)
			fw_virtio_net_hostile(out, &fns[i], &next);
		if (fns[i].device == 0x1041)
			fw_virtio_net_report(out, &fns[i], &next);
	}
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
