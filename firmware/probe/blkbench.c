// SPDX-License-Identifier: MIT
/*
 * blkbench.c - timed virtio-blk I/O on the first disk for scripts/bench-blk
 * (probe.h). Runs at CPL3 with its own 256-entry ring so that up to 32
 * requests (three descriptors each) are in flight. It negotiates
 * VIRTIO_F_EVENT_IDX and behaves as a polling driver does: it kicks only
 * when the device asked for it (avail_event) and keeps used_event far
 * ahead so the device never needs to interrupt.
 */
#include "firmware/lib/io.h"
#include "firmware/lib/virtio.h"
#include "firmware/probe/probe.h"

#define BQ	     256 /* ring entries we offer */
#define BQD	     32	 /* most requests in flight */
#define T_FLUSH	     4
#define AREA_MAX     (128ull << 20) /* bytes of the disk the bench covers */
#define SPIN_TIMEOUT (1ull << 32)

struct bdesc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
};

static struct bdesc ring_desc[BQ] FW_ALIGNED(4096);
static struct {
	uint16_t flags, idx, ring[BQ + 1]; /* + used_event */
} ring_avail FW_ALIGNED(4096);
static struct {
	uint16_t flags, idx;
	struct {
		uint32_t id, len;
	} ring[BQ];
	uint16_t avail_event;
} ring_used FW_ALIGNED(4096);
static struct {
	uint32_t type, reserved;
	uint64_t sector;
} hdr[BQD];
static uint8_t status[BQD];
static uint8_t data[1u << 20] FW_ALIGNED(4096);

struct bench_mode {
	const char *name;
	uint32_t type, size, qd, n;
	bool seq, flush; /* flush: then a flush request, untimed */
	bool verify;	 /* each 4 KiB block starts with VMLETBLK<block, %08u> */
};

static const struct bench_mode modes[] = {
    {"idle", FW_VIRTIO_BLK_T_IN, 4096, 1, 0, false, false, false},   /* set up only: the baseline */
    {"qd1", FW_VIRTIO_BLK_T_IN, 4096, 1, 8192, false, false, false}, /* 4 KiB random reads */
    {"qd32", FW_VIRTIO_BLK_T_IN, 4096, BQD, 65536, false, false,
     false}, /* the same, 32 in flight */
    {"seqread", FW_VIRTIO_BLK_T_IN, 1u << 20, 1, 1024, true, false, false},  /* 1 MiB sequential */
    {"seqwrite", FW_VIRTIO_BLK_T_OUT, 1u << 20, 1, 1024, true, true, false}, /* then a flush */
    /* for tests: one 1 MiB write at sector 0; QD32 reads of a tagged image */
    {"write", FW_VIRTIO_BLK_T_OUT, 1u << 20, 1, 1, true, false, false},
    {"wflush", FW_VIRTIO_BLK_T_OUT, 1u << 20, 1, 1, true, true, false},
    {"verify", FW_VIRTIO_BLK_T_IN, 4096, BQD, 4096, false, false, true},
};

struct bench {
	struct fw_virtio v;
	uint16_t qsize, avail_idx, last_used;
	uint16_t free[BQD];
	uint32_t nfree;
	uint64_t area; /* bytes */
	uint64_t seq, x;
	uint32_t errors;
	bool verify; /* check the tag of each block read */
};

static void barrier(void)
{
	__asm__ volatile("" ::: "memory");
}

static volatile uint16_t *avail_event(struct bench *b)
{
	return (volatile uint16_t *)&ring_used.ring[b->qsize];
}

static volatile uint16_t *used_event(struct bench *b)
{
	return &ring_avail.ring[b->qsize];
}

/* Fill slot s (descriptors 3s..3s+2) and put it in the avail ring. */
static void post(struct bench *b, uint32_t type, uint32_t size, uint64_t sector)
{
	uint16_t s = b->free[--b->nfree];
	uint8_t *buf = size == 4096 ? data + 4096u * s : data;
	struct bdesc *d = &ring_desc[3 * s];

	hdr[s].type = type;
	hdr[s].reserved = 0;
	hdr[s].sector = sector;
	status[s] = 0xff;
	d[0] = (struct bdesc){(uint64_t)(uintptr_t)&hdr[s], 16, 1, (uint16_t)(3 * s + 1)};
	d[1] = (struct bdesc){(uint64_t)(uintptr_t)buf, size, (uint16_t)(size ? 1 : 0),
			      (uint16_t)(3 * s + 2)};
	if (type == FW_VIRTIO_BLK_T_IN)
		d[1].flags |= 2;
	if (!size) /* no data: header, then status */
		d[0] = (struct bdesc){(uint64_t)(uintptr_t)&hdr[s], 16, 1, (uint16_t)(3 * s + 2)};
	d[2] = (struct bdesc){(uint64_t)(uintptr_t)&status[s], 1, 2, 0};
	ring_avail.ring[b->avail_idx % b->qsize] = (uint16_t)(3 * s);
	b->avail_idx++;
}

/* Publish new avail entries; kick when the device asked for it (§2.7.10). */
static void publish(struct bench *b, uint16_t old)
{
	uint16_t ev;

	barrier();
	*(volatile uint16_t *)&ring_avail.idx = b->avail_idx;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* idx store before event load */
	if (b->v.features & FW_VIRTIO_F_EVENT_IDX) {
		ev = *avail_event(b);
		if ((uint16_t)(b->avail_idx - ev - 1) >= (uint16_t)(b->avail_idx - old))
			return;
	} else if (*(volatile uint16_t *)&ring_used.flags & 1) {
		return;
	}
	*(volatile uint16_t *)b->v.notify = 0;
}

/* Does slot s's buffer hold the tag of the block its request read? */
static bool tagged(uint16_t s)
{
	char tag[20];

	fw_snprintf(tag, sizeof(tag), "VMLETBLK%08u", (unsigned int)(hdr[s].sector / 8));
	return !memcmp(data + 4096u * s, tag, 16);
}

/* Wait for at least one completion and reap all there are; count them. */
static int reap(struct bench *b, uint32_t want_len, uint32_t *done)
{
	volatile uint16_t *idx = &ring_used.idx;
	uint64_t spin = 0;

	while (*idx == b->last_used)
		if (++spin > SPIN_TIMEOUT)
			return -1;
		else
			__asm__ volatile("pause");
	barrier();
	while (b->last_used != *idx) {
		uint32_t id = ring_used.ring[b->last_used % b->qsize].id;
		uint32_t len = ring_used.ring[b->last_used % b->qsize].len;
		uint16_t s = (uint16_t)(id / 3);

		if (id % 3 || s >= BQD)
			return -1;
		if (status[s] != 0 || len != want_len || (b->verify && !tagged(s)))
			b->errors++;
		b->free[b->nfree++] = s;
		b->last_used++;
		(*done)++;
	}
	/* far ahead: the device never has a reason to interrupt us */
	*used_event(b) = (uint16_t)(b->last_used + 0x8000);
	return 0;
}

static uint64_t next_sector(struct bench *b, const struct bench_mode *m)
{
	uint64_t off;

	if (m->seq) {
		off = b->seq;
		b->seq = b->seq + m->size + m->size > b->area ? 0 : b->seq + m->size;
		return off / 512;
	}
	b->x ^= b->x << 13, b->x ^= b->x >> 7, b->x ^= b->x << 17; /* xorshift64 */
	return (b->x % (b->area / 4096)) * 8;
}

/* Run m->n requests, at most m->qd in flight. TSC ticks, or 0 on a hang. */
static uint64_t run(struct bench *b, const struct bench_mode *m)
{
	uint32_t issued = 0, done = 0, qd = m->qd;
	uint32_t want = m->type == FW_VIRTIO_BLK_T_IN ? m->size + 1 : 1;
	uint64_t t0 = rdtsc();

	while (done < m->n) {
		uint16_t old = b->avail_idx;

		while (b->nfree > BQD - qd && issued < m->n) {
			post(b, m->type, m->size, next_sector(b, m));
			issued++;
		}
		if (b->avail_idx != old)
			publish(b, old);
		if (reap(b, want, &done))
			return 0;
	}
	return rdtsc() - t0;
}

static int bench_init(struct bench *b, const struct fw_pci_fn *f, uint64_t *next)
{
	uint64_t cap;

	memset(b, 0, sizeof(*b));
	memset(&ring_avail, 0, sizeof(ring_avail));
	memset(&ring_used, 0, sizeof(ring_used));
	if (fw_virtio_init_rings(&b->v, f, FW_VIRTIO_F_EVENT_IDX, next, BQ, ring_desc, &ring_avail,
				 &ring_used) ||
	    !b->v.device || b->v.qsize < 3 * BQD)
		return -1;
	b->qsize = b->v.qsize;
	ring_avail.flags = FW_VRING_AVAIL_F_NO_INTERRUPT; /* no interrupts (without EVENT_IDX) */
	*used_event(b) = 0x8000;
	for (uint16_t s = 0; s < BQD; s++)
		b->free[b->nfree++] = (uint16_t)(BQD - 1 - s);
	cap = *(volatile uint32_t *)b->v.device |
	      (uint64_t) * (volatile uint32_t *)(b->v.device + 4) << 32;
	b->area = cap * 512 < AREA_MAX ? cap * 512 & ~((1ull << 20) - 1) : AREA_MAX;
	b->x = 88172645463325252ull;
	return b->area >= (2u << 20) ? 0 : -1;
}

void probe_blk_bench(struct fw_buf *out, uint64_t ecam, const char *mode)
{
	static struct fw_pci_fn fns[FW_PCI_MAX_FNS];
	static struct bench b;
	const struct bench_mode *m = NULL;
	uint64_t next = 0xd0000000ull, ticks = 0;
	uint32_t done = 0;
	int n = ecam ? fw_pci_scan(ecam, fns, FW_PCI_MAX_FNS) : 0, i;

	for (size_t k = 0; k < FW_ARRAY_SIZE(modes); k++)
		if (!strcmp(modes[k].name, mode))
			m = &modes[k];
	for (i = 0;
	     i < n && (fns[i].vendor != FW_VIRTIO_VENDOR || fns[i].device != FW_VIRTIO_DEV_BLK);
	     i++)
		;
	if (!m || i == n || bench_init(&b, &fns[i], &next)) {
		fw_buf_printf(out, "error=blkbench %s: no mode or no usable disk\n", mode);
		return;
	}
	for (uint32_t k = 0; k < sizeof(data); k++)
		data[k] = (uint8_t)(k * 7 + (k >> 12));
	b.verify = m->verify;
	if (m->n)
		ticks = run(&b, m);
	if (m->flush) { /* the writes reach the file before we stop */
		post(&b, T_FLUSH, 0, 0);
		publish(&b, (uint16_t)(b.avail_idx - 1));
		if (reap(&b, 1, &done))
			b.errors++;
	}
	fw_buf_printf(out, "blkBench=00:%02x.%x %s %u %llu %llu %u\n", fns[i].dev, fns[i].fn,
		      m->name, m->n, (unsigned long long)m->n * m->size, (unsigned long long)ticks,
		      b.errors + (m->n && !ticks));
	fw_virtio_reset(&b.v);
}
