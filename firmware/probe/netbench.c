// SPDX-License-Identifier: MIT
/*
 * netbench.c - a CPL3 traffic generator and sink on the first virtio-net
 * for scripts/bench-net (probe.h). Its own 256-entry rings; it kicks only
 * when the device has not set VRING_USED_F_NO_NOTIFY, and asks for no
 * interrupts (it polls).
 *   tx64 / tx1500   frames of 60 / 1514 bytes to a MAC no host owns
 *   tx64k           64 KiB TCP/IPv4 super-frames the device segments
 *                   (HOST_TSO4 + CSUM)
 *   rx64 / rx1500 / rx64k   count what the host sends (rx64k: GUEST_TSO4
 *                   + GUEST_CSUM, one 64 KiB+ buffer per descriptor)
 * Timing: TSC from the first frame posted (tx) to the last completion;
 * rx: from the end of a warm-up of RX_WARMUP frames (what the tap queued
 * before the guest was there, segmented before the guest took offloads)
 * to the last frame counted.
 */
#include "firmware/lib/io.h"
#include "firmware/lib/virtio.h"
#include "firmware/probe/probe.h"

#define NB_Q	  256
#define HDR	  12
#define SMALL	  2048
#define BIG	  (65536 + 64)
#define BIG_SLOTS 16
#define TIMEOUT	  (1ull << 35)
#define RX_WARMUP 1024

struct nb_ring FW_VIRTIO_RINGS(NB_Q) FW_ALIGNED(4096);

static struct nb_ring rq, tq;
static uint8_t pool[BIG_SLOTS * BIG] FW_ALIGNED(4096); /* = NB_Q * SMALL + ... */

struct nb_mode {
	const char *name;
	bool rx, big;
	uint32_t frame, n;
	uint64_t features;
};

static const struct nb_mode nb_modes[] = {
    {"idle", false, false, 60, 0, 0},
    {"tx64", false, false, 60, 300000, 0},
    {"tx1500", false, false, 1514, 100000, 0},
    {"tx64k", false, true, 65054, 3000, FW_VIRTIO_NET_F_CSUM | FW_VIRTIO_NET_F_HOST_TSO4},
    {"rx64", true, false, 60, 200000, 0},
    {"rx1500", true, false, 1514, 100000, 0},
    {"rx64k", true, true, 65054, 3000, FW_VIRTIO_NET_F_GUEST_CSUM | FW_VIRTIO_NET_F_GUEST_TSO4},
};

struct nb {
	struct fw_virtio v;
	struct fw_virtio_ring r[2];
	uint16_t slots, avail, seen;
	uint32_t slot_size;
};

static void kick(struct nb_ring *q, struct nb *b, int which, uint16_t idx)
{
	__asm__ volatile("" ::: "memory");
	*(volatile uint16_t *)&q->avail.idx = idx;
	__asm__ volatile("mfence" ::: "memory");
	if (!(*(volatile uint16_t *)&q->used.flags & 1))
		*b->r[which].notify = (uint16_t)which;
}

static void post(struct nb_ring *q, struct nb *b, uint16_t slot, uint32_t len, bool write)
{
	q->desc[slot].addr = (uint64_t)(uintptr_t)(pool + (uint64_t)slot * b->slot_size);
	q->desc[slot].len = len;
	q->desc[slot].flags = write ? 2 : 0;
	q->avail.ring[b->avail % b->r[write ? 0 : 1].qsize] = slot;
	b->avail++;
}

/* One frame's bytes: Ethernet to 02:00:00:00:00:99, IPv4/TCP for tx64k. */
static void build_frame(uint8_t *p, const struct nb_mode *m, const uint8_t *mac)
{
	struct {
		uint8_t flags, gso_type;
		uint16_t hdr_len, gso_size, csum_start, csum_offset, num_buffers;
	} FW_PACKED h = {0};
	uint8_t *f = p + HDR;
	uint32_t ip_len = m->frame - 14;

	for (uint32_t i = 0; i < m->frame; i++)
		f[i] = (uint8_t)i;
	memcpy(f, (const uint8_t[6]){2, 0, 0, 0, 0, 0x99}, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x08, f[13] = 0;
	f[14] = 0x45, f[15] = 0;
	f[16] = (uint8_t)(ip_len >> 8), f[17] = (uint8_t)ip_len;
	f[18] = f[19] = f[20] = f[21] = 0;
	f[22] = 64, f[23] = m->big ? 6 : 17;
	f[24] = f[25] = 0;
	memcpy(f + 26, (const uint8_t[8]){10, 99, 0, 2, 10, 99, 0, 1}, 8);
	if (m->big) { /* TCP, data offset 5, ACK */
		f[46] = 0x50, f[47] = 0x10;
		h.flags = 1; /* NEEDS_CSUM */
		h.gso_type = 1;
		h.hdr_len = 54;
		h.gso_size = 1448;
		h.csum_start = 34;
		h.csum_offset = 16;
	}
	memcpy(p, &h, sizeof(h));
}

static uint64_t nb_tx(struct nb *b, const struct nb_mode *m, uint32_t *done)
{
	uint32_t sent = 0;
	uint16_t nfree = b->slots, free_list[NB_Q];
	uint64_t t0 = rdtsc();

	for (uint16_t i = 0; i < b->slots; i++)
		free_list[i] = i;
	while (*done < m->n && rdtsc() - t0 < TIMEOUT) {
		uint16_t before = b->avail;

		while (nfree && sent < m->n) {
			post(&tq, b, free_list[--nfree], HDR + m->frame, false);
			sent++;
		}
		if (b->avail != before)
			kick(&tq, b, 1, b->avail);
		while (*(volatile uint16_t *)&tq.used.idx != b->seen) {
			__asm__ volatile("" ::: "memory");
			uint32_t id = tq.used.ring[b->seen++ % b->r[1].qsize].id;

			if (id < b->slots)
				free_list[nfree++] = (uint16_t)id;
			(*done)++;
		}
	}
	return rdtsc() - t0;
}

static uint64_t nb_rx(struct nb *b, const struct nb_mode *m, uint32_t *done, uint64_t *bytes)
{
	uint64_t t0 = 0, start = rdtsc();
	uint32_t warm = 0;

	for (uint16_t i = 0; i < b->slots; i++)
		post(&rq, b, i, b->slot_size, true);
	kick(&rq, b, 0, b->avail);
	while (*done < m->n && rdtsc() - start < TIMEOUT) {
		uint16_t before = b->avail;

		while (*(volatile uint16_t *)&rq.used.idx != b->seen) {
			__asm__ volatile("" ::: "memory");
			uint32_t id = rq.used.ring[b->seen % b->r[0].qsize].id;
			uint32_t len = rq.used.ring[b->seen % b->r[0].qsize].len;

			b->seen++;
			if (warm < RX_WARMUP) {
				if (++warm == RX_WARMUP)
					t0 = rdtsc();
			} else {
				*bytes += len > HDR ? len - HDR : 0;
				(*done)++;
			}
			if (id < b->slots)
				post(&rq, b, (uint16_t)id, b->slot_size, true);
		}
		if (b->avail != before)
			kick(&rq, b, 0, b->avail);
	}
	return t0 ? rdtsc() - t0 : 0;
}

static int nb_init(struct nb *b, const struct fw_pci_fn *f, const struct nb_mode *m, uint64_t *next)
{
	memset(b, 0, sizeof(*b));
	memset(&rq, 0, sizeof(rq));
	memset(&tq, 0, sizeof(tq));
	b->r[0] = (struct fw_virtio_ring){NB_Q, rq.desc, &rq.avail, &rq.used, NULL};
	b->r[1] = (struct fw_virtio_ring){NB_Q, tq.desc, &tq.avail, &tq.used, NULL};
	if (fw_virtio_init_queues(&b->v, f, m->features, next, b->r, 2) ||
	    (b->v.features & m->features) != m->features)
		return -1;
	rq.avail.flags = tq.avail.flags = 1; /* no interrupts: we poll */
	b->slot_size = m->big ? BIG : SMALL;
	b->slots = (uint16_t)(sizeof(pool) / b->slot_size);
	if (b->slots > b->r[m->rx ? 0 : 1].qsize)
		b->slots = b->r[m->rx ? 0 : 1].qsize;
	return 0;
}

void probe_net_bench(struct fw_buf *out, uint64_t ecam, const char *mode)
{
	static struct fw_pci_fn fns[FW_PCI_MAX_FNS];
	static struct nb b;
	const struct nb_mode *m = NULL;
	uint64_t next = 0xd0000000ull, ticks, bytes = 0;
	uint32_t done = 0;
	uint8_t mac[6];
	int n = ecam ? fw_pci_scan(ecam, fns, FW_PCI_MAX_FNS) : 0, i;

	for (size_t k = 0; k < FW_ARRAY_SIZE(nb_modes); k++)
		if (!strcmp(nb_modes[k].name, mode))
			m = &nb_modes[k];
	for (i = 0;
	     i < n && (fns[i].vendor != FW_VIRTIO_VENDOR || fns[i].device != FW_VIRTIO_DEV_NET);
	     i++)
		;
	if (!m || i == n || nb_init(&b, &fns[i], m, &next)) {
		fw_buf_printf(out, "error=netbench %s: no such mode, no NIC or a feature missing\n",
			      mode);
		return;
	}
	for (int k = 0; k < 6; k++)
		mac[k] = b.v.device ? b.v.device[k] : 0;
	if (m->rx) {
		ticks = nb_rx(&b, m, &done, &bytes);
	} else {
		for (uint16_t s = 0; s < b.slots; s++)
			build_frame(pool + (uint64_t)s * b.slot_size, m, mac);
		ticks = nb_tx(&b, m, &done);
		bytes = (uint64_t)done * m->frame;
	}
	fw_buf_printf(out, "netBench=00:%02x.%x %s %u %llu %llu %u\n", fns[i].dev, fns[i].fn, mode,
		      done, (unsigned long long)bytes, (unsigned long long)ticks,
		      done < m->n ? m->n - done : 0);
	fw_virtio_reset(&b.v);
}
