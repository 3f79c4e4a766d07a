/* SPDX-License-Identifier: MIT */
/*
 * virtio-net without KVM (virtio_net_env.h): TX/RX framing, merged
 * buffers, back-pressure with no RX buffers, the DHCP intercept, the
 * control queue, multiqueue (kept across a freeze and thaw), the announce
 * after a live migration and hostile descriptors.
 */
#include "tests/unit/virtio_net_env.h"
#include "vmm/virtio/virtio_net_int.h"

static void test_config_features(void)
{
	struct env e;
	uint64_t offered;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK_EQ_U64(ecam_rd(1, 0, 4), 0x10411af4);
	CHECK_EQ_U64(ecam_rd(1, 0x08, 4) >> 8, 0x020000);
	CHECK(start(&e, F_BASE | F_MRG, &offered) == 0x0f);
	CHECK(offered & F(32) && offered & F(5) && offered & F(16) && offered & F(15));
	CHECK(offered & F(0) && offered & F(1) && offered & F(7) && offered & F(11)); /* vnet */
	CHECK(!(offered & F(22))); /* one pair: no MQ */
	CHECK_EQ_U64(mmio_rd(e.v.device, 4), 0x00000002);
	CHECK_EQ_U64(mmio_rd(e.v.device + 4, 2), 0x4200);
	CHECK_EQ_U64(mmio_rd(e.v.device + 6, 2), 1);	 /* LINK_UP */
	CHECK_EQ_U64(mmio_rd(e.v.device + 8, 2), 1);	 /* max pairs */
	CHECK_EQ_U64(mmio_rd(e.v.device + 10, 2), 1500); /* mtu */
	CHECK_EQ_U64(mmio_rd(e.v.common + 0x12, 2), 3);
	/* the guest's GUEST_* choice reaches the backend */
	CHECK(start(&e, F_BASE | F(1) | F(7), NULL) == 0x0f);
	for (int i = 0; i < 2000 && e.be[0]->offload != (0x100 | NET_OFF_CSUM | NET_OFF_TSO4); i++)
		usleep(5000); /* the I/O thread applies it */
	CHECK_EQ_U64(e.be[0]->offload, 0x100 | NET_OFF_CSUM | NET_OFF_TSO4);
	env_down(&e);

	if (env_up(&e, false, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE, &offered) == 0x0f);
	CHECK(!(offered & (F(0) | F(1) | F(7) | F(11)))); /* no vnet header, no offloads */
	env_down(&e);
}

static void test_tx(void)
{
	struct env e;
	uint8_t frame[1000], got[2048];
	struct net_vnet_hdr h = {.flags = 1, .csum_start = 34, .csum_offset = 16};
	uint32_t id, len;
	gpa_t gh, gf;
	ssize_t n;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F(0), NULL) == 0x0f);
	fill(frame, sizeof(frame), 3);
	gh = alloc(&e, 12);
	gf = alloc(&e, sizeof(frame));
	memcpy(e.d.ram + gh, &h, 12);
	memcpy(e.d.ram + gf, frame, sizeof(frame));
	ring_post(&e, 1, (struct tbuf[]){{gh, 12, 0}, {gf, 600, 0}, {gf + 600, 400, 0}}, 3);
	tvdev_kick(&e.v, 1);
	n = net_take(&e, 0, got, sizeof(got), 10000);
	CHECK(n == 12 + (ssize_t)sizeof(frame));
	CHECK(!memcmp(got, &h, 12) && !memcmp(got + 12, frame, sizeof(frame)));
	CHECK(ring_used(&e, 1, &id, &len, 10000) && id == 0 && len == 0);

	/* hostile: a writable descriptor in a TX chain; a buffer outside RAM */
	ring_post(&e, 1, (struct tbuf[]){{gh, 12, 0}, {gf, 100, 1}}, 2);
	ring_post(&e, 1, (struct tbuf[]){{gh, 12, 0}, {0x7ffffff0, 100, 0}}, 2);
	ring_post(&e, 1, (struct tbuf[]){{gh, 8, 0}}, 1); /* shorter than a header */
	ring_post(&e, 1, (struct tbuf[]){{gh, 12, 0}, {DATA_BASE, 70000, 0}}, 2); /* huge */
	tvdev_kick(&e.v, 1);
	for (int i = 0; i < 4; i++)
		CHECK(ring_used(&e, 1, &id, &len, 10000) && len == 0);
	CHECK(net_take(&e, 0, got, sizeof(got), 100) < 0); /* nothing went out */
	{
		struct virtio_net_stats st;

		virtio_net_get_stats(e.net, &st);
		CHECK_EQ_U64(st.tx_packets, 1);
		CHECK_EQ_U64(st.tx_bytes, sizeof(frame)); /* without the header */
		CHECK_EQ_U64(st.tx_dropped, 4);
	}
	CHECK(status(&e) == 0x0f); /* bad requests do not break the device */
	env_down(&e);
}

/* A backend that sends nothing and records, at each frame, how many TX
 * completions the guest could already see (the used ring's idx). */
static struct net_backend_ops rec_ops;
static const uint8_t *rec_used_idx;
static uint16_t rec_seen[8];
static unsigned int rec_n;

static int rec_send(struct net_backend *be, const struct iovec *iov, int n)
{
	(void)be, (void)iov, (void)n;
	if (rec_n < 8)
		rec_seen[rec_n] =
		    __atomic_load_n((const uint16_t *)(const void *)rec_used_idx, __ATOMIC_ACQUIRE);
	rec_n++;
	return 0;
}

/*
 * Large frames are completed as they go, not in batches of 16: a guest
 * with a few 64 KiB buffers in flight gets each back to refill while the
 * next is sent (with the batch, none came back until all four were out).
 */
static void test_tx_big_frames_complete_early(void)
{
	struct sp_be *be = sp_new(true);
	struct net_vnet_hdr h = {0};
	struct env e;
	uint32_t id, len;
	gpa_t gh, gf;

	rec_ops = sp_ops;
	rec_ops.send = rec_send;
	be->be.ops = &rec_ops;
	rec_n = 0;
	if (env_up_any(&e, true, 1, false, &be->be))
		SKIP("no device");
	CHECK(start(&e, F_BASE, NULL) == 0x0f);
	rec_used_idx = e.d.ram + RING(1) + 0x8000 + 2;
	gh = alloc(&e, 12);
	gf = alloc(&e, 40000);
	memcpy(e.d.ram + gh, &h, 12);
	fill(e.d.ram + gf, 40000, 5);
	for (int i = 0; i < 4; i++)
		ring_post(&e, 1, (struct tbuf[]){{gh, 12, 0}, {gf, 40000, 0}}, 2);
	tvdev_kick(&e.v, 1);
	for (int i = 0; i < 4; i++)
		CHECK(ring_used(&e, 1, &id, &len, 10000) && len == 0);
	CHECK_EQ_U64(rec_n, 4);
	for (unsigned int i = 0; i < 4 && i < rec_n; i++)
		CHECK_EQ_U64(rec_seen[i], i);
	env_down(&e);
}

/* RX into buffers of bufsz; returns the number of used entries that made
 * up the frame and checks the bytes. */
static void rx_frame_check(struct env *e, size_t flen, uint32_t bufsz, unsigned int nbufs,
			   unsigned int want_bufs)
{
	uint8_t frame[4000], got[8192];
	static gpa_t g[QSIZE]; /* by descriptor: a buffer posted before may be used */
	uint32_t id, len, total = 0;
	unsigned int i, used = 0;
	uint16_t nb;

	for (i = 0; i < nbufs; i++) {
		gpa_t a = alloc(e, bufsz);

		memset(e->d.ram + a, 0xcc, bufsz);
		g[ring_post(e, 0, (struct tbuf[]){{a, bufsz, 1}}, 1)] = a;
	}
	tvdev_kick(&e->v, 0);
	fill(frame, flen, 9);
	net_inject(e, 0, frame, flen);
	while (used < want_bufs && ring_used(e, 0, &id, &len, 10000)) {
		CHECK(id < QSIZE && len <= bufsz);
		memcpy(got + total, e->d.ram + g[id], len);
		total += len;
		used++;
	}
	CHECK_EQ_U64(used, want_bufs);
	CHECK_EQ_U64(total, flen + 12);
	memcpy(&nb, got + 10, 2);
	CHECK_EQ_U64(nb, want_bufs);
	CHECK(!memcmp(got + 12, frame, flen));
}

static void test_rx_mergeable(void)
{
	struct env e;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG, NULL) == 0x0f);
	rx_frame_check(&e, 1400, 512, 4, 3); /* 1412 bytes: 3 buffers */
	rx_frame_check(&e, 100, 2048, 1, 1);
	env_down(&e);

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE, NULL) == 0x0f);
	rx_frame_check(&e, 1400, 2048, 1, 1);
	{
		/* no MRG_RXBUF and a buffer too small: dropped, buffer returned */
		struct virtio_net_stats st;
		uint32_t id, len;
		gpa_t g = alloc(&e, 256);
		uint8_t frame[600];

		virtio_net_get_stats(e.net, &st); /* the 1400-byte frame above */
		CHECK_EQ_U64(st.rx_packets, 1);
		CHECK_EQ_U64(st.rx_bytes, 1400);
		ring_post(&e, 0, (struct tbuf[]){{g, 256, 1}}, 1);
		tvdev_kick(&e.v, 0); /* the device asked for kicks: it had none */
		fill(frame, sizeof(frame), 1);
		net_inject(&e, 0, frame, sizeof(frame));
		CHECK(ring_used(&e, 0, &id, &len, 10000) && len == 0);
		virtio_net_get_stats(e.net, &st);
		CHECK_EQ_U64(st.rx_dropped, 1);
		/* a device-readable RX buffer: frame dropped, ring fine */
		ring_post(&e, 0, (struct tbuf[]){{g, 256, 0}}, 1);
		tvdev_kick(&e.v, 0);
		net_inject(&e, 0, frame, 100);
		CHECK(ring_used(&e, 0, &id, &len, 10000) && len == 0);
		CHECK(status(&e) == 0x0f);
	}
	env_down(&e);
}

/* Fewer merged buffers than a frame needs: wait for more, without spinning. */
static void test_rx_partial_buffers(void)
{
	struct env e;
	struct timespec t0, t1;
	uint8_t frame[1400];
	gpa_t g[3];
	uint32_t id, len, total = 0;
	int i;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG, NULL) == 0x0f);
	for (i = 0; i < 3; i++)
		g[i] = alloc(&e, 512);
	ring_post(&e, 0, (struct tbuf[]){{g[0], 512, 1}}, 1);
	tvdev_kick(&e.v, 0);
	fill(frame, sizeof(frame), 2);
	net_inject(&e, 0, frame, sizeof(frame));
	net_inject(&e, 0, frame, 64); /* more input waiting behind it */
	usleep(50000);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	usleep(200000);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	CHECK((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 50000000L);
	CHECK(!ring_used(&e, 0, &id, &len, 0)); /* nothing half-delivered */
	ring_post(&e, 0, (struct tbuf[]){{g[1], 512, 1}}, 1);
	ring_post(&e, 0, (struct tbuf[]){{g[2], 512, 1}}, 1);
	tvdev_kick(&e.v, 0);
	for (i = 0; i < 3 && ring_used(&e, 0, &id, &len, 10000); i++)
		total += len;
	CHECK_EQ_U64(i, 3);
	CHECK_EQ_U64(total, 12 + sizeof(frame));
	CHECK(!memcmp(e.d.ram + g[0] + 12, frame, 500));
	env_down(&e);
}

/*
 * Frames the guest's buffers can never hold: dropped and counted, and the
 * buffers serve the next frame. Merged: more than the buffers vmlet gathers
 * for one frame; a frame longer than any backend frame (cut short by the
 * read); without MRG_RXBUF, a buffer too small goes back empty.
 */
static void test_rx_oversized(void)
{
	static uint8_t big[100000];
	struct virtio_net_stats st;
	struct env e;
	uint8_t frame[20];
	uint32_t id, len;
	uint16_t nb;
	gpa_t g[QSIZE];
	int i;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG, NULL) == 0x0f);
	for (i = 0; i < QSIZE; i++) {
		gpa_t a = alloc(&e, 32);

		g[ring_post(&e, 0, (struct tbuf[]){{a, 32, 1}}, 1)] = a;
	}
	tvdev_kick(&e.v, 0);
	net_inject(&e, 0, big, 3000); /* 64 x 32 bytes < 3012 */
	CHECK(send(e.be[0]->peer, big, sizeof(big), 0) == (ssize_t)sizeof(big));
	fill(frame, sizeof(frame), 3);
	net_inject(&e, 0, frame, sizeof(frame));
	CHECK(ring_used(&e, 0, &id, &len, 10000) && id < QSIZE && len == 32);
	CHECK(!memcmp(e.d.ram + g[id] + 12, frame, sizeof(frame)));
	memcpy(&nb, e.d.ram + g[id] + 10, 2);
	CHECK_EQ_U64(nb, 1);
	CHECK(!ring_used(&e, 0, &id, &len, 50));
	virtio_net_get_stats(e.net, &st);
	CHECK_EQ_U64(st.rx_dropped, 2);
	CHECK_EQ_U64(st.rx_packets, 1);
	CHECK(status(&e) == 0x0f);
	env_down(&e);

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE, NULL) == 0x0f);
	g[0] = alloc(&e, 2048);
	ring_post(&e, 0, (struct tbuf[]){{g[0], 2048, 1}}, 1);
	tvdev_kick(&e.v, 0);
	CHECK(send(e.be[0]->peer, big, sizeof(big), 0) == (ssize_t)sizeof(big));
	CHECK(ring_used(&e, 0, &id, &len, 10000) && len == 0);
	ring_post(&e, 0, (struct tbuf[]){{g[0], 2048, 1}}, 1);
	tvdev_kick(&e.v, 0);
	net_inject(&e, 0, frame, sizeof(frame));
	CHECK(ring_used(&e, 0, &id, &len, 10000) && len == 12 + sizeof(frame));
	CHECK(!memcmp(e.d.ram + g[0] + 12, frame, sizeof(frame)));
	virtio_net_get_stats(e.net, &st);
	CHECK_EQ_U64(st.rx_dropped, 1);
	CHECK(status(&e) == 0x0f);
	env_down(&e);
}

/* A guest that posts no RX buffers: vmlet reads no frame ahead. */
static void test_rx_backpressure(void)
{
	struct env e;
	uint8_t frame[200];
	struct virtio_net_stats st;
	uint32_t id, len;
	int queued = 0, i;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG, NULL) == 0x0f);
	fill(frame, sizeof(frame), 5);
	for (i = 0; i < 50; i++) {
		frame[20] = (uint8_t)i;
		net_inject(&e, 0, frame, sizeof(frame));
	}
	/* frames go straight into guest buffers: with none, vmlet reads
	 * none (a read would show within the wait; a loaded host that runs
	 * the I/O thread late only makes this weaker, never false) */
	usleep(100000);
	ioctl(e.be[0]->be.fd, FIONREAD, &queued); /* bytes still queued */
	CHECK_EQ_U64(queued, 50 * (12 + sizeof(frame)));
	virtio_net_get_stats(e.net, &st);
	CHECK(st.rx_packets == 0 && st.rx_dropped == 0);
	/* buffers arrive: every frame is delivered, in order */
	for (i = 0; i < 50; i++) {
		gpa_t g = alloc(&e, 512);

		CHECK(ring_post(&e, 0, (struct tbuf[]){{g, 512, 1}}, 1) == i);
	}
	tvdev_kick(&e.v, 0);
	for (i = 0; i < 50; i++) {
		if (!ring_used(&e, 0, &id, &len, 10000))
			break;
		CHECK(id < 50 && len == 212 &&
		      e.d.ram[DATA_BASE + 512u * id + 12 + 20] == (uint8_t)i);
	}
	CHECK_EQ_U64(i, 50);
	env_down(&e);
}

static void test_dhcp_intercept(void)
{
	struct env e;
	uint8_t f[600], *b = f + PKT_UDP_HLEN, got[256];
	static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint32_t id, len;
	gpa_t gh, gf, gr;
	size_t flen;
	struct dhcp_request req;

	if (env_up(&e, true, 1, true))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG, NULL) == 0x0f);
	memset(f, 0, sizeof(f));
	b[0] = 1, b[1] = 1, b[2] = 6;
	memcpy(b + 4, "\x11\x22\x33\x44", 4);
	memcpy(b + 28, "\x02\x00\x00\x00\x00\x42", 6);
	b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
	b[240] = 53, b[241] = 1, b[242] = DHCP_DISCOVER, b[243] = 255;
	flen = pkt_udp4_finish(f, bc, (const uint8_t *)"\x02\x00\x00\x00\x00\x42", 0, 0xffffffff,
			       68, 67, 300);
	gr = alloc(&e, 2048);
	ring_post(&e, 0, (struct tbuf[]){{gr, 2048, 1}}, 1);
	gh = alloc(&e, 12);
	gf = alloc(&e, (uint32_t)flen);
	memset(e.d.ram + gh, 0, 12);
	memcpy(e.d.ram + gf, f, flen);
	ring_post(&e, 1, (struct tbuf[]){{gh, 12, 0}, {gf, (uint32_t)flen, 0}}, 2);
	tvdev_kick(&e.v, 1);
	CHECK(ring_used(&e, 1, &id, &len, 10000));
	CHECK(ring_used(&e, 0, &id, &len, 10000) && len > 12 + PKT_UDP_HLEN + 240);
	/* the OFFER is a valid BOOTREPLY for our xid with yiaddr 10.0.2.2 */
	CHECK(e.d.ram[gr + 12 + PKT_UDP_HLEN] == 2);
	CHECK(pkt_be32(e.d.ram + gr + 12 + PKT_UDP_HLEN + 4) == 0x11223344);
	CHECK(pkt_be32(e.d.ram + gr + 12 + PKT_UDP_HLEN + 16) == 0x0a000202);
	CHECK(dhcp_parse(e.d.ram + gr + 12, len - 12, &req) == -EINVAL); /* a reply */
	/* and it never reached the network */
	CHECK(net_take(&e, 0, got, sizeof(got), 100) < 0);
	env_down(&e);
}

static uint8_t ctrl(struct env *e, uint8_t cls, uint8_t cmd, const void *data, uint32_t dlen)
{
	gpa_t h = alloc(e, 2), d = alloc(e, dlen + 1), a = alloc(e, 1);
	uint32_t id, len;

	e->d.ram[h] = cls;
	e->d.ram[h + 1] = cmd;
	if (dlen)
		memcpy(e->d.ram + d, data, dlen);
	e->d.ram[a] = 0xee;
	if (dlen)
		ring_post(e, e->nq - 1, (struct tbuf[]){{h, 2, 0}, {d, dlen, 0}, {a, 1, 1}}, 3);
	else
		ring_post(e, e->nq - 1, (struct tbuf[]){{h, 2, 0}, {a, 1, 1}}, 2);
	tvdev_kick(&e->v, (uint16_t)(e->nq - 1));
	if (!ring_used(e, e->nq - 1, &id, &len, 10000))
		return 0xff;
	return e->d.ram[a];
}

static void test_ctrl_and_mq(void)
{
	struct env e;
	uint64_t offered;
	uint16_t pairs;
	uint8_t frame[100], got[256];
	gpa_t g;
	uint32_t id, len;

	if (env_up(&e, true, 2, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG | F(22), &offered) == 0x0f);
	CHECK(offered & F(22));
	CHECK_EQ_U64(mmio_rd(e.v.device + 8, 2), 2);
	CHECK_EQ_U64(mmio_rd(e.v.common + 0x12, 2), 5);
	/* set by the I/O threads */
	for (int i = 0; i < 2000 && (e.be[0]->enabled < 0 || e.be[1]->enabled < 0); i++)
		usleep(5000);
	CHECK(e.be[0]->enabled == 1 && e.be[1]->enabled == 0); /* pair 1 off steering */
	CHECK(ctrl(&e, 0, 0, "\1", 1) == 0);		       /* promisc on */
	CHECK(ctrl(&e, 9, 0, NULL, 0) == 1);		       /* unknown class */
	pairs = 3;
	CHECK(ctrl(&e, 4, 0, &pairs, 2) == 1); /* more pairs than offered */
	pairs = 0;
	CHECK(ctrl(&e, 4, 0, &pairs, 2) == 1);
	/* pair 1 is idle until the driver enables two pairs */
	fill(frame, sizeof(frame), 7);
	g = alloc(&e, 512);
	memset(e.d.ram + g, 0, 12);
	memcpy(e.d.ram + g + 12, frame, sizeof(frame));
	ring_post(&e, 3, (struct tbuf[]){{g, 12 + sizeof(frame), 0}}, 1);
	tvdev_kick(&e.v, 3);
	CHECK(net_take(&e, 1, got, sizeof(got), 100) < 0);
	pairs = 2;
	CHECK(ctrl(&e, 4, 0, &pairs, 2) == 0);
	CHECK(e.be[1]->enabled == 1);
	tvdev_kick(&e.v, 3);
	CHECK(net_take(&e, 1, got, sizeof(got), 10000) == 12 + (ssize_t)sizeof(frame));
	CHECK(ring_used(&e, 3, &id, &len, 10000));
	CHECK(net_take(&e, 0, got, sizeof(got), 50) < 0); /* not on pair 0 */
	env_down(&e);
}

/* A freeze and thaw (a snapshot with --resume; a live migration's source
 * holds its devices once before the pre-copy, and again when it fails)
 * keep the pairs the driver enabled: pair 1 still transmits and stays in
 * the tap's receive steering. (It fell back to one pair: the guest's
 * frames on pair 1 waited for ever, its TCP stalled.) */
static void test_mq_kept_across_thaw(void)
{
	struct env e;
	uint64_t offered;
	uint16_t pairs = 2;
	uint8_t frame[100], got[256];
	gpa_t g;
	uint32_t id, len;

	if (env_up(&e, true, 2, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG | F(22), &offered) == 0x0f);
	CHECK(ctrl(&e, 4, 0, &pairs, 2) == 0);
	CHECK(e.be[1]->enabled == 1);
	CHECK_EQ_U64(virtio_pci_freeze(&e.net->vp), 0);
	virtio_pci_thaw(&e.net->vp);
	fill(frame, sizeof(frame), 9);
	g = alloc(&e, 512);
	memset(e.d.ram + g, 0, 12);
	memcpy(e.d.ram + g + 12, frame, sizeof(frame));
	ring_post(&e, 3, (struct tbuf[]){{g, 12 + sizeof(frame), 0}}, 1);
	tvdev_kick(&e.v, 3);
	CHECK(net_take(&e, 1, got, sizeof(got), 10000) == 12 + (ssize_t)sizeof(frame));
	CHECK(ring_used(&e, 3, &id, &len, 10000));
	CHECK(e.be[1]->enabled == 1);
	env_down(&e);
}

/* After a live migration the device asks the guest to announce itself
 * (VIRTIO_NET_F_GUEST_ANNOUNCE, bit 21): status ANNOUNCE (2) until the
 * driver acks on the control queue; not offered back without the feature. */
static void test_announce(void)
{
	struct env e;
	uint64_t offered;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F(21), &offered) == 0x0f);
	CHECK(offered & F(21) && offered & F(17)); /* with the control queue */
	CHECK(virtio_net_announce(e.net) == 0);
	CHECK_EQ_U64(mmio_rd(e.v.device + 6, 2), 3); /* LINK_UP | ANNOUNCE */
	CHECK(ctrl(&e, 3, 1, NULL, 0) == 1);	     /* no such command */
	CHECK(ctrl(&e, 3, 0, "\1", 1) == 1);	     /* the ack has no data */
	CHECK_EQ_U64(mmio_rd(e.v.device + 6, 2), 3);
	CHECK(ctrl(&e, 3, 0, NULL, 0) == 0); /* VIRTIO_NET_CTRL_ANNOUNCE_ACK */
	CHECK_EQ_U64(mmio_rd(e.v.device + 6, 2), 1);
	env_down(&e);

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE, NULL) == 0x0f);
	CHECK(virtio_net_announce(e.net) == -ENOTSUP);
	CHECK_EQ_U64(mmio_rd(e.v.device + 6, 2), 1);
	CHECK(ctrl(&e, 3, 0, NULL, 0) == 1);
	env_down(&e);
}

/* The backend goes away: link down for the guest, no spinning, TX dropped. */
static void test_backend_gone(void)
{
	struct env e;
	struct timespec t0, t1;
	uint32_t id, len;
	gpa_t g;
	int i;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE, NULL) == 0x0f);
	CHECK_EQ_U64(mmio_rd(e.v.device + 6, 2), 1);
	close(e.be[0]->peer);
	e.be[0]->peer = open("/dev/null", O_RDONLY); /* sp_destroy closes it */
	for (i = 0; i < 2000 && mmio_rd(e.v.device + 6, 2); i++)
		usleep(5000);
	CHECK_EQ_U64(mmio_rd(e.v.device + 6, 2), 0);
	CHECK(tirq_wait(0x40, 10000) >= 1); /* config interrupt on vector 0 */
	/* the I/O thread sleeps instead of spinning on the dead fd */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	usleep(200000);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	CHECK((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 50000000L);
	/* TX still completes (dropped) */
	g = alloc(&e, 100);
	memset(e.d.ram + g, 0, 100);
	ring_post(&e, 1, (struct tbuf[]){{g, 100, 0}}, 1);
	tvdev_kick(&e.v, 1);
	CHECK(ring_used(&e, 1, &id, &len, 10000));
	env_down(&e);
}

static void test_broken_ring(void)
{
	struct env e;

	if (env_up(&e, true, 1, false))
		SKIP("no device");
	CHECK(start(&e, F_BASE, NULL) == 0x0f);
	/* an avail entry naming descriptor 200 of a 64-entry ring */
	*(uint16_t *)(void *)(e.d.ram + RING(1) + 0x4000 + 4) = 200;
	*(uint16_t *)(void *)(e.d.ram + RING(1) + 0x4000 + 2) = 1;
	tvdev_kick(&e.v, 1);
	for (int i = 0; i < 2000 && !(status(&e) & VIRTIO_CONFIG_S_NEEDS_RESET); i++)
		usleep(5000);
	CHECK(status(&e) & VIRTIO_CONFIG_S_NEEDS_RESET);
	/* and a reset brings it back */
	CHECK(start(&e, F_BASE, NULL) == 0x0f);
	rx_frame_check(&e, 64, 2048, 1, 1);
	env_down(&e);
}

int main(void)
{
	TEST_RUN(test_config_features);
	TEST_RUN(test_tx);
	TEST_RUN(test_tx_big_frames_complete_early);
	TEST_RUN(test_rx_mergeable);
	TEST_RUN(test_rx_backpressure);
	TEST_RUN(test_rx_partial_buffers);
	TEST_RUN(test_rx_oversized);
	TEST_RUN(test_dhcp_intercept);
	TEST_RUN(test_ctrl_and_mq);
	TEST_RUN(test_mq_kept_across_thaw);
	TEST_RUN(test_announce);
	TEST_RUN(test_broken_ring);
	TEST_RUN(test_backend_gone);
	return test_summary();
}
