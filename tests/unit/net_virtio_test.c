/* SPDX-License-Identifier: MIT */
/*
 * virtio-net without KVM: the device on the fake PCI bus of
 * virtio_test_pci.h, a mini driver with rx/tx/control rings, and a test
 * backend over a SOCK_SEQPACKET socketpair (one message = one frame with
 * its vnet header) so the test plays the network. Checks TX/RX framing,
 * merged buffers, back-pressure with no RX buffers, the DHCP intercept,
 * the control queue, multiqueue and hostile descriptors.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/dev/virtio_net.h"
#include "vmm/net/backend.h"
#include "vmm/net/dhcp.h"
#include "vmm/net/net.h"
#include "vmm/net/pkt.h"
#include "vmm/net/tap.h"
#include "vmm/vm_config.h"
#include "tests/unit/net_testns.h"

#define F(b)	  (1ull << (b))
#define QSIZE	  64
#define RING(q)	  (0x100000ull + (uint64_t)(q)*0x10000)
#define DATA_BASE 0x200000ull
#define F_BASE	  (F(32) | F(5) | F(16) | F(3) | F(17) | F(18))
#define F_MRG	  F(15)

/* ---- test backend ---- */
struct sp_be {
	struct net_backend be;
	int peer; /* the test's end */
	unsigned int offload;
	int enabled; /* last set_enabled(): 1 / 0; -1 never called */
};

/* a tap's contract: the whole length even when iov is too short */
static ssize_t sp_recv(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
	ssize_t n = recvmsg(be->fd, &m, MSG_DONTWAIT | MSG_TRUNC);

	return n < 0 ? -errno : n;
}

static int sp_send(struct net_backend *be, const struct iovec *iov, int n)
{
	struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};

	return sendmsg(be->fd, &m, MSG_DONTWAIT) < 0 ? -errno : 0;
}

static int sp_offload(struct net_backend *be, unsigned int flags)
{
	((struct sp_be *)be)->offload = flags | 0x100;
	return 0;
}

static int sp_enabled(struct net_backend *be, bool on)
{
	((struct sp_be *)be)->enabled = on;
	return 0;
}

static void sp_destroy(struct net_backend *be)
{
	close(be->fd);
	close(((struct sp_be *)be)->peer);
	free(be);
}

static const struct net_backend_ops sp_ops = {
    .recv = sp_recv,
    .send = sp_send,
    .set_offload = sp_offload,
    .set_enabled = sp_enabled,
    .destroy = sp_destroy,
};

static struct sp_be *sp_new(bool vnet)
{
	struct sp_be *s = calloc(1, sizeof(*s));
	int sv[2];

	socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv);
	s->be = (struct net_backend){&sp_ops, sv[0], vnet, "test"};
	s->peer = sv[1];
	s->enabled = -1;
	return s;
}

/* ---- mini driver with several rings ---- */
struct ring {
	uint16_t avail_idx, next_desc, last_used;
};

struct env {
	struct pci_host h;
	struct tdrv d; /* RAM only */
	struct virtio_net *net;
	struct tvdev v;
	struct sp_be *be[2];
	struct ring r[5];
	gpa_t data;
	unsigned int nq;
};

static uint16_t ring_post(struct env *e, unsigned int q, const struct tbuf *b, unsigned int n)
{
	struct ring *r = &e->r[q];
	uint8_t *ram = e->d.ram;
	uint16_t head = r->next_desc % QSIZE, idx;

	for (unsigned int i = 0; i < n; i++) {
		struct virtq_desc *d;

		idx = r->next_desc++ % QSIZE;
		d = (struct virtq_desc *)(void *)(ram + RING(q) + 16u * idx);
		*d = (struct virtq_desc){b[i].addr, b[i].len,
					 (uint16_t)((b[i].write ? VIRTQ_DESC_F_WRITE : 0) |
						    (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0)),
					 (uint16_t)(r->next_desc % QSIZE)};
	}
	*(uint16_t *)(void *)(ram + RING(q) + 0x4000 + 4 + 2u * (r->avail_idx % QSIZE)) = head;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	r->avail_idx++;
	*(uint16_t *)(void *)(ram + RING(q) + 0x4000 + 2) = r->avail_idx;
	return head;
}

static int ring_used(struct env *e, unsigned int q, uint32_t *id, uint32_t *len, int ms)
{
	struct ring *r = &e->r[q];

	for (int i = 0; i <= ms; i++) {
		uint16_t idx = __atomic_load_n(
		    (uint16_t *)(void *)(e->d.ram + RING(q) + 0x8000 + 2), __ATOMIC_ACQUIRE);

		if (idx != r->last_used) {
			uint8_t *u = e->d.ram + RING(q) + 0x8000 + 4 + 8u * (r->last_used % QSIZE);

			memcpy(id, u, 4);
			memcpy(len, u + 4, 4);
			r->last_used++;
			return 1;
		}
		usleep(1000);
	}
	return 0;
}

static gpa_t alloc(struct env *e, uint32_t len)
{
	gpa_t g = e->data;

	e->data += (len + 63) & ~63u;
	return g;
}

static uint8_t status(struct env *e)
{
	return (uint8_t)mmio_rd(e->v.common + 0x14, 1);
}

/* Negotiate want & offered and set up every queue. Returns the status. */
static uint8_t start(struct env *e, uint64_t want, uint64_t *offered)
{
	uint64_t common = e->v.common;

	tvdev_negotiate(&e->v, want, offered);
	mmio_wr(common + 0x10, 0, 2); /* config changes on vector 0 */
	memset(e->r, 0, sizeof(e->r));
	for (unsigned int q = 0; q < e->nq; q++) {
		memset(e->d.ram + RING(q), 0, 0x10000);
		mmio_wr(common + 0x16, q, 2);
		mmio_wr(common + 0x18, QSIZE, 2);
		mmio_wr(common + 0x1a, q + 1, 2);
		mmio_wr(common + 0x20, (uint32_t)RING(q), 4);
		mmio_wr(common + 0x24, 0, 4);
		mmio_wr(common + 0x28, (uint32_t)(RING(q) + 0x4000), 4);
		mmio_wr(common + 0x2c, 0, 4);
		mmio_wr(common + 0x30, (uint32_t)(RING(q) + 0x8000), 4);
		mmio_wr(common + 0x34, 0, 4);
		mmio_wr(common + 0x1c, 1, 2);
	}
	mmio_wr(common + 0x14, 0x0f, 1);
	e->data = DATA_BASE;
	return status(e);
}

static int env_up_any(struct env *e, bool vnet, unsigned int pairs, bool dhcp,
		      struct net_backend *tap)
{
	struct net_attach att;

	memset(e, 0, sizeof(*e));
	tbus_n = 0;
	tdrv_init(&e->d, 4 << 20, QSIZE);
	memset(&att, 0, sizeof(att));
	att.name = "default";
	memcpy(att.mac, "\x02\x00\x00\x00\x00\x42", 6);
	att.mtu = 1500;
	att.n_queues = pairs;
	for (unsigned int i = 0; i < pairs; i++) {
		if (tap) {
			att.be[i] = tap;
			continue;
		}
		e->be[i] = sp_new(vnet);
		att.be[i] = &e->be[i]->be;
	}
	if (dhcp) {
		att.dhcp = true;
		memcpy(att.lease.client_mac, att.mac, 6);
		memcpy(att.lease.server_mac, "\x02\x00\x00\x00\x00\x01", 6);
		att.lease.server_ip = 0x0a000201;
		att.lease.client_ip = 0x0a000202;
		att.lease.netmask = 0xffffff00;
		att.lease.router = 0x0a000201;
	}
	e->nq = 2 * pairs + 1;
	if (pci_host_init(&e->h, NULL, &tbus_pio, &tbus_mmio) ||
	    virtio_net_create(&e->net, &e->h, NULL, &e->d.mem, &att) || tvdev_probe(&e->v, 1))
		return -1;
	CHECK(att.be[0] == NULL); /* moved into the device */
	tvdev_msix(&e->v, e->nq + 1);
	return 0;
}

static int env_up(struct env *e, bool vnet, unsigned int pairs, bool dhcp)
{
	return env_up_any(e, vnet, pairs, dhcp, NULL);
}

/* A device for cfg's first NIC (virtio_net_create_nic: the real binding)
 * on a fresh test bus and driver. Returns its result. */
static int env_up_nic(struct env *e, const struct vm_config *cfg, struct virtio_net **n)
{
	memset(e, 0, sizeof(*e));
	tbus_n = 0;
	tdrv_init(&e->d, 4 << 20, QSIZE);
	CHECK(pci_host_init(&e->h, NULL, &tbus_pio, &tbus_mmio) == 0);
	return virtio_net_create_nic(n, &e->h, NULL, &e->d.mem, cfg, 0);
}

static void env_down(struct env *e)
{
	virtio_net_destroy(e->net);
	pci_host_release(&e->h);
	tdrv_release(&e->d);
}

/* Send len bytes of frame (with a zero header) from the network side. */
static void net_inject(struct env *e, unsigned int pair, const void *frame, size_t len)
{
	uint8_t buf[NET_FRAME_MAX] = {0};

	memcpy(buf + NET_VNET_HDR_LEN, frame, len);
	CHECK(send(e->be[pair]->peer, buf, len + NET_VNET_HDR_LEN, 0) ==
	      (ssize_t)(len + NET_VNET_HDR_LEN));
}

static ssize_t net_take(struct env *e, unsigned int pair, void *buf, size_t cap, int ms)
{
	struct pollfd p = {e->be[pair]->peer, POLLIN, 0};

	if (poll(&p, 1, ms) != 1)
		return -1;
	return recv(e->be[pair]->peer, buf, cap, MSG_DONTWAIT);
}

static void fill(uint8_t *f, size_t len, uint8_t seed)
{
	memset(f, 0xff, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x99", 6);
	f[12] = 0x88, f[13] = 0xb5; /* local experimental ethertype */
	for (size_t i = 14; i < len; i++)
		f[i] = (uint8_t)(seed + i);
}

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

/* Post a TX chain: header h + frame. */
static void tx_post(struct env *e, const struct net_vnet_hdr *h, const void *f, size_t len)
{
	gpa_t g = alloc(e, (uint32_t)(12 + len));

	memcpy(e->d.ram + g, h, 12);
	memcpy(e->d.ram + g + 12, f, len);
	ring_post(e, 1, (struct tbuf[]){{g, 12, 0}, {g + 12, (uint32_t)len, 0}}, 2);
	tvdev_kick(&e->v, 1);
}

/* Wait for an RX frame whose ethertype/IP protocol match; its offset in RAM. */
static gpa_t rx_wait(struct env *e, const gpa_t *bufs, uint16_t type, uint8_t proto, int ms)
{
	uint32_t id, len;
	long end = testns_now_ms() + ms;

	while (testns_now_ms() < end) {
		const uint8_t *f;

		if (!ring_used(e, 0, &id, &len, 50))
			continue;
		if (id >= QSIZE || len < 12 + 42)
			continue;
		f = e->d.ram + bufs[id] + 12;
		if (pkt_be16(f + 12) == type && (type != PKT_ETHERTYPE_IPV4 || f[23] == proto))
			return bufs[id];
	}
	return 0;
}

static bool in_netns; /* test_real_tap moved us into a private netns */

/* The device over a real tap in a private netns; the kernel is the peer. */
static void test_real_tap(void)
{
	static const uint8_t me[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x42};
	struct net_backend *tap = NULL;
	struct tap_info info;
	struct env e;
	struct net_vnet_hdr h = {0};
	uint8_t f[128], tap_mac[6];
	gpa_t bufs[QSIZE] = {0}, got;
	struct pkt_arp *a = (struct pkt_arp *)(f + PKT_ETH_HLEN);
	struct pkt_ip4 *ip = (struct pkt_ip4 *)(f + PKT_ETH_HLEN);

	if (testns_enter() < 0)
		SKIP("needs root and network namespaces");
	in_netns = true;
	CHECK(tap_open("vmt0", 1, &tap, &info) == 0);
	if (!tap)
		return;
	CHECK(tap_set_up("vmt0", 1500) == 0);
	CHECK(testns_sh("ip addr add 10.77.0.1/24 dev vmt0") == 0);
	if (env_up_any(&e, true, 1, false, tap))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG | F(0) | F(1) | F(7) | F(11), NULL) == 0x0f);
	for (int i = 0; i < 32; i++) {
		gpa_t g = alloc(&e, 2048);

		bufs[ring_post(&e, 0, (struct tbuf[]){{g, 2048, 1}}, 1)] = g;
	}
	tvdev_kick(&e.v, 0);

	/* ARP for the tap's address: the kernel's reply lands in the RX ring */
	memset(f, 0, sizeof(f));
	memset(f, 0xff, 6);
	memcpy(f + 6, me, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_ARP);
	pkt_put16(a->htype, 1);
	pkt_put16(a->ptype, PKT_ETHERTYPE_IPV4);
	a->hlen = 6, a->plen = 4;
	pkt_put16(a->op, 1);
	memcpy(a->sha, me, 6);
	pkt_put32(a->spa, 0x0a4d0002);
	pkt_put32(a->tpa, 0x0a4d0001);
	tx_post(&e, &h, f, 60);
	got = rx_wait(&e, bufs, PKT_ETHERTYPE_ARP, 0, 20000);
	CHECK(got != 0);
	if (!got)
		goto out;
	memcpy(tap_mac, e.d.ram + got + 12 + 6, 6);

	/* ICMP echo with the checksum left to the device (NEEDS_CSUM) */
	memset(f, 0, sizeof(f));
	memcpy(f, tap_mac, 6);
	memcpy(f + 6, me, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	ip->ver_ihl = 0x45;
	pkt_put16(ip->tot_len, 20 + 64);
	ip->ttl = 64;
	ip->proto = PKT_IPPROTO_ICMP;
	pkt_put32(ip->saddr, 0x0a4d0002);
	pkt_put32(ip->daddr, 0x0a4d0001);
	pkt_put16(ip->csum, pkt_csum_fold(pkt_csum_add(0, ip, 20)));
	f[34] = 8;
	memcpy(f + 42, "virtio-net over a tap", 21);
	h.flags = 1;
	h.csum_start = 34;
	h.csum_offset = 2;
	tx_post(&e, &h, f, PKT_ETH_HLEN + 20 + 64);
	got = rx_wait(&e, bufs, PKT_ETHERTYPE_IPV4, PKT_IPPROTO_ICMP, 20000);
	CHECK(got != 0);
	if (got)
		CHECK(e.d.ram[got + 12 + 34] == 0 &&
		      !memcmp(e.d.ram + got + 12 + 42, "virtio-net over a tap", 21));
out:
	env_down(&e);
}

/* From the VM config: --tap, multiqueue = one pair per vCPU, bad models. */
static void test_create_nic(void)
{
	struct vm_config cfg;
	struct vm_nic nic = {.name = "net1", .model = "virtio", .tap = "vmq0"};
	struct virtio_net *n = NULL;
	uint64_t offered;
	struct env e;

	if (!in_netns)
		SKIP("needs root and network namespaces");
	vm_config_init(&cfg);
	cfg.name = "vm";
	cfg.cores = 2;
	cfg.net_multi_queue = true;
	cfg.nics = &nic;
	cfg.n_nics = 1;
	CHECK(env_up_nic(&e, &cfg, &n) == 0);
	if (n && !tvdev_probe(&e.v, 1)) {
		e.net = n;
		e.nq = 5;
		tvdev_msix(&e.v, 6);
		CHECK(start(&e, F_BASE | F(22), &offered) == 0x0f);
		CHECK(offered & F(22));
		CHECK_EQ_U64(mmio_rd(e.v.device + 8, 2), 2); /* two vCPUs, two pairs */
		CHECK(testns_sh("ip link show vmq0 | grep -q vmq0") == 0);
		virtio_net_destroy(n);
	}
	nic.model = "e1000";
	n = NULL;
	CHECK(virtio_net_create_nic(&n, &e.h, NULL, &e.d.mem, &cfg, 0) == -ENOTSUP && !n);
	pci_host_release(&e.h);
	tdrv_release(&e.d);
}

static const uint8_t g_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x42};

/* A DHCP client message from the guest (type, requested ip). */
static size_t guest_dhcp(uint8_t *f, const uint8_t mac[6], uint8_t type, uint32_t req_ip)
{
	static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t *b = f + PKT_UDP_HLEN, *o;

	memset(f, 0, PKT_UDP_HLEN + 300);
	b[0] = 1, b[1] = 1, b[2] = 6;
	memcpy(b + 4, "\x55\x66\x77\x88", 4);
	memcpy(b + 28, mac, 6);
	b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
	o = b + 240;
	*o++ = 53, *o++ = 1, *o++ = type;
	if (req_ip) {
		*o++ = 50, *o++ = 4;
		pkt_put32(o, req_ip);
		o += 4;
	}
	*o = 255;
	return pkt_udp4_finish(f, bc, mac, 0, 0xffffffff, 68, 67, 300);
}

/* Post one 2 KiB RX buffer, remembering where it is. */
static void rx_refill(struct env *e, gpa_t *bufs)
{
	gpa_t g = alloc(e, 2048);

	bufs[ring_post(e, 0, (struct tbuf[]){{g, 2048, 1}}, 1)] = g;
	tvdev_kick(&e->v, 0);
}

enum gw_want { GW_DHCP, GW_ARP_REPLY, GW_ECHO_REPLY, GW_SYN };

/*
 * The guest's receive loop: wait for a frame of the wanted kind, answering
 * ARP requests for our address (as a guest stack would) and refilling
 * buffers. Returns the frame's guest address (after the header) or 0.
 */
static gpa_t guest_wait(struct env *e, gpa_t *bufs, uint32_t my_ip, enum gw_want w, uint32_t arg,
			int ms)
{
	long end = testns_now_ms() + ms;
	uint32_t id, len;

	while (testns_now_ms() < end) {
		const uint8_t *f, *l4;
		gpa_t at;

		if (!ring_used(e, 0, &id, &len, 50) || id >= QSIZE)
			continue;
		at = bufs[id] + 12;
		f = e->d.ram + at;
		l4 = f + PKT_ETH_HLEN + 20;
		rx_refill(e, bufs);
		if (len < 12 + 42)
			continue;
		if (pkt_be16(f + 12) == PKT_ETHERTYPE_ARP) {
			const struct pkt_arp *a = (const struct pkt_arp *)(f + PKT_ETH_HLEN);
			struct net_vnet_hdr h = {0};
			uint8_t r[60] = {0};
			struct pkt_arp *ra = (struct pkt_arp *)(r + PKT_ETH_HLEN);

			if (w == GW_ARP_REPLY && pkt_be16(a->op) == 2 && pkt_be32(a->spa) == arg)
				return at;
			if (pkt_be16(a->op) != 1 || pkt_be32(a->tpa) != my_ip)
				continue;
			memcpy(r, a->sha, 6);
			memcpy(r + 6, g_mac, 6);
			pkt_put16(r + 12, PKT_ETHERTYPE_ARP);
			memcpy(ra, a, 8);
			pkt_put16(ra->op, 2);
			memcpy(ra->sha, g_mac, 6);
			pkt_put32(ra->spa, my_ip);
			memcpy(ra->tha, a->sha, 6);
			memcpy(ra->tpa, a->spa, 4);
			tx_post(e, &h, r, sizeof(r));
			continue;
		}
		if (pkt_be16(f + 12) != PKT_ETHERTYPE_IPV4)
			continue;
		if (w == GW_DHCP && f[23] == PKT_IPPROTO_UDP && pkt_be16(l4 + 2) == 68)
			return at;
		if (w == GW_ECHO_REPLY && f[23] == PKT_IPPROTO_ICMP && l4[0] == 0 &&
		    pkt_be32(f + 26) == arg)
			return at;
		if (w == GW_SYN && f[23] == PKT_IPPROTO_TCP && pkt_be16(l4 + 2) == arg &&
		    (l4[13] & 2) && pkt_be32(f + 30) == my_ip)
			return at;
	}
	return 0;
}

/*
 * The whole masquerade chain as `vmlet run` builds it (virtio_net_create_nic
 * in a netns that plays the pod): DHCP from vmlet through the device, ARP
 * to the tap's gateway, ICMP NATed out to the node, and a forwarded port.
 */
static void test_masquerade_device(void)
{
	struct vm_port ports[] = {{.protocol = "TCP", .port = 8080}};
	struct vm_nic nic = {.name = "default",
			     .model = "virtio",
			     .binding = VM_BIND_MASQUERADE,
			     .ports = ports,
			     .n_ports = 1};
	struct vm_config cfg;
	struct virtio_net *n = NULL;
	struct net_vnet_hdr h = {0};
	gpa_t bufs[QSIZE] = {0}, at;
	uint8_t f[600], gw_mac[6];
	pid_t outside = -1;
	struct env e;
	size_t len;

	if (!in_netns || access("/usr/sbin/nft", X_OK))
		SKIP("needs root, network namespaces and nft");
	CHECK(testns_pod(&outside) == 0);
	setenv("VMLET_POD_INTERFACE", "eth0", 1);
	vm_config_init(&cfg);
	cfg.name = "vm";
	nic.mac_set = true;
	memcpy(nic.mac, g_mac, 6);
	cfg.nics = &nic;
	cfg.n_nics = 1;
	CHECK(env_up_nic(&e, &cfg, &n) == 0);
	unsetenv("VMLET_POD_INTERFACE");
	if (!n || tvdev_probe(&e.v, 1))
		goto out;
	e.net = n;
	e.nq = 3;
	tvdev_msix(&e.v, 4);
	CHECK(start(&e, F_BASE | F_MRG | F(0) | F(1), NULL) == 0x0f);
	for (int i = 0; i < 16; i++)
		rx_refill(&e, bufs);

	/* DHCP: vmlet answers through the device */
	len = guest_dhcp(f, g_mac, DHCP_DISCOVER, 0);
	tx_post(&e, &h, f, len);
	at = guest_wait(&e, bufs, 0, GW_DHCP, 0, 20000);
	CHECK(at && pkt_be32(e.d.ram + at + PKT_UDP_HLEN + 16) == 0x0a000202);
	len = guest_dhcp(f, g_mac, DHCP_REQUEST, 0x0a000202);
	tx_post(&e, &h, f, len);
	at = guest_wait(&e, bufs, 0, GW_DHCP, 0, 20000);
	CHECK(at && e.d.ram[at + PKT_UDP_HLEN + 240 + 2] == DHCP_ACK);

	/* ARP for the gateway 10.0.2.1: the pod's kernel answers on the tap */
	memset(f, 0, 60);
	memset(f, 0xff, 6);
	memcpy(f + 6, g_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_ARP);
	memcpy(f + 14, "\x00\x01\x08\x00\x06\x04\x00\x01", 8);
	memcpy(f + 22, g_mac, 6);
	pkt_put32(f + 28, 0x0a000202);
	pkt_put32(f + 38, 0x0a000201);
	tx_post(&e, &h, f, 60);
	at = guest_wait(&e, bufs, 0x0a000202, GW_ARP_REPLY, 0x0a000201, 20000);
	CHECK(at != 0);
	if (!at)
		goto out;
	memcpy(gw_mac, e.d.ram + at + 22, 6);

	/* ICMP to the node, NATed through the pod's eth0 */
	memset(f, 0, 100);
	memcpy(f, gw_mac, 6);
	memcpy(f + 6, g_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	f[14] = 0x45;
	pkt_put16(f + 16, 20 + 16);
	f[22] = 64;
	f[23] = PKT_IPPROTO_ICMP;
	pkt_put32(f + 26, 0x0a000202);
	pkt_put32(f + 30, 0x0ac80001);
	pkt_put16(f + 24, pkt_csum_fold(pkt_csum_add(0, f + 14, 20)));
	f[34] = 8;
	pkt_put16(f + 36, pkt_csum_fold(pkt_csum_add(0, f + 34, 16)));
	tx_post(&e, &h, f, PKT_ETH_HLEN + 36);
	CHECK(guest_wait(&e, bufs, 0x0a000202, GW_ECHO_REPLY, 0x0ac80001, 20000) != 0);

	/* the node connects to the pod's port 8080: the guest sees the SYN */
	testns_sh("nsenter -t %d -n sh -c 'timeout 20 bash -c \"echo > /dev/tcp/10.200.0.2/8080\"' "
		  ">/dev/null 2>&1 &",
		  outside);
	CHECK(guest_wait(&e, bufs, 0x0a000202, GW_SYN, 8080, 20000) != 0);
out:
	virtio_net_destroy(n);
	pci_host_release(&e.h);
	tdrv_release(&e.d);
	if (outside > 0) {
		kill(outside, SIGKILL);
		waitpid(outside, NULL, 0);
	}
}

int main(void)
{
	TEST_RUN(test_config_features);
	TEST_RUN(test_tx);
	TEST_RUN(test_rx_mergeable);
	TEST_RUN(test_rx_backpressure);
	TEST_RUN(test_rx_partial_buffers);
	TEST_RUN(test_rx_oversized);
	TEST_RUN(test_dhcp_intercept);
	TEST_RUN(test_ctrl_and_mq);
	TEST_RUN(test_broken_ring);
	TEST_RUN(test_backend_gone);
	TEST_RUN(test_real_tap); /* it moves the process into a new netns */
	TEST_RUN(test_create_nic);
	TEST_RUN(test_masquerade_device);
	return test_summary();
}
