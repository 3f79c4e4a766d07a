// SPDX-License-Identifier: MIT
/*
 * nic_e1000e_snap_test.c - the 82574L in a snapshot (vmm/nic/e1000e_snap.c)
 * without KVM: a NIC brought up the way Linux's e1000e driver does it
 * (rings, interrupt causes and vectors, an offload context, a packet
 * half-gathered) is saved with its PCI function, a NIC made anew loads it
 * and saves the same bytes, and then runs on: the half-gathered packet's
 * rest is dropped as on a wire, the next packet goes out, a frame comes
 * in. Then the hostile snapshots: a tail outside its ring, a ring outside
 * RAM, a STATUS bit the device never sets, a changed PHY ID, IMS bits
 * beyond the causes, a register offset twice or unaligned, a truncated
 * item: each refused, and nothing of it set.
 */
#include <stdlib.h>
#include <sys/socket.h>

#define TEST_PCI_NO_THREADS
#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/net/pkt.h"
#include "vmm/nic/e1000e_int.h"
#include "vmm/snapshot/snap_buf.h"

#define RAM   (4u << 20)
#define TXR   0x10000u	/* TX ring: 64 descriptors */
#define RXR   0x20000u	/* RX ring: 64 descriptors */
#define TXBUF 0x100000u /* packet buffers */
#define RXBUF 0x200000u /* 2048-byte receive buffers */

static const uint8_t MAC[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};

struct sp_be {
	struct net_backend be;
	int peer;
};

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

static void sp_destroy(struct net_backend *be)
{
	close(be->fd);
	close(((struct sp_be *)be)->peer);
	free(be);
}

static const struct net_backend_ops sp_ops = {
    .recv = sp_recv, .send = sp_send, .destroy = sp_destroy};

struct env {
	struct pci_host h;
	struct tdrv d;
	struct e1000e *e;
	int peer;
	uint64_t bar0;
	int slot;
	uint32_t tdt;
};

static uint32_t rd(struct env *v, uint32_t off)
{
	return mmio_rd(v->bar0 + off, 4);
}

static void wr(struct env *v, uint32_t off, uint32_t val)
{
	mmio_wr(v->bar0 + off, val, 4);
}

static void env_init(struct env *v)
{
	struct sp_be *s = calloc(1, sizeof(*s));
	struct net_attach att = {.name = "nic0", .mode = NET_MODE_TAP, .n_queues = 1};
	int sv[2];

	memset(v, 0, sizeof(*v));
	tdrv_init(&v->d, RAM, 64);
	CHECK(thost_init(&v->h, &v->d.mem) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	s->be = (struct net_backend){&sp_ops, sv[0], true, "test"};
	s->peer = sv[1];
	v->peer = sv[1];
	memcpy(att.mac, MAC, 6);
	att.be[0] = &s->be;
	CHECK(e1000e_create(&v->e, &v->h, &att, false) == 0);
	v->slot = e1000e_pci(v->e)->slot;
	v->bar0 = ecam_rd(v->slot, PCI_BASE_ADDRESS_0, 4) & ~0xfull;
	ecam_wr(v->slot, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
}

static void env_fini(struct env *v)
{
	e1000e_destroy(v->e);
	pci_host_release(&v->h);
	tdrv_release(&v->d);
}

static void rx_descs(struct env *v)
{
	for (unsigned int i = 0; i < 64; i++) {
		uint64_t a = RXBUF + 2048ull * i;

		memcpy(v->d.ram + RXR + 16 * i, &a, 8);
		memset(v->d.ram + RXR + 16 * i + 8, 0, 8);
	}
}

/* the driver's bring-up (e1000_configure_tx/rx, e1000_configure_msix) */
static void env_up(struct env *v)
{
	wr(v, E_TDBAL, TXR);
	wr(v, E_TDLEN, 64 * 16);
	wr(v, E_TDH, 0);
	wr(v, E_TDT, 0);
	wr(v, E_TCTL, TCTL_EN);
	wr(v, E_RDBAL, RXR);
	wr(v, E_RDLEN, 64 * 16);
	wr(v, E_RDH, 0);
	rx_descs(v);
	wr(v, E_RDT, 63);
	wr(v, E_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);
	wr(v, E_IVAR, 0x8 | 0x9 << 8 | 0xa << 16 | 1u << 31);
	wr(v, E_EIAC, ICR_RXQ0 | ICR_TXQ0);
	wr(v, E_EITR0 + 4, 0x1234);
	wr(v, E_IMS, ICR_RXQ0 | ICR_TXQ0 | ICR_OTHER | ICR_LSC);
}

static size_t udp4_frame(uint8_t *f, const uint8_t *dst, size_t payload)
{
	uint8_t *ip = f + 14, *udp = ip + 20;

	memset(f, 0, 14 + 28 + payload);
	memcpy(f, dst, 6);
	memcpy(f + 6, "\x02\xaa\xbb\xcc\xdd\xee", 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	ip[0] = 0x45;
	pkt_put16(ip + 2, (uint16_t)(28 + payload));
	ip[8] = 64;
	ip[9] = PKT_IPPROTO_UDP;
	for (size_t i = 0; i < payload; i++)
		udp[8 + i] = (uint8_t)(i * 7 + 3);
	return 14 + 28 + payload;
}

static void tx_desc(struct env *v, uint64_t addr, uint32_t len, uint8_t dcmd, uint32_t dtyp)
{
	uint8_t d[16] = {0};
	uint32_t cl = len | dtyp << 20 | (uint32_t)(dcmd | TXD_CMD_DEXT) << 24;

	memcpy(d, &addr, 8);
	memcpy(d + 8, &cl, 4);
	if (dtyp == TXD_DTYP_CTX) { /* ipcss 14, ipcso 24, tucss 34, MSS 1400, hdr 42 */
		d[0] = 14;
		d[1] = 24;
		d[4] = 34;
		d[13] = 42;
		d[14] = 0x78;
		d[15] = 0x05;
	}
	memcpy(v->d.ram + TXR + 16 * (v->tdt % 64), d, 16);
	v->tdt = (v->tdt + 1) % 64;
}

static void tx_go(struct env *v)
{
	wr(v, E_TDT, v->tdt);
	e1000e_io_turn(v->e, 0);
}

/* the next frame the device sent (vnet header stripped); 0 none */
static size_t peer_recv(struct env *v, uint8_t *buf, size_t cap)
{
	uint8_t tmp[NET_VNET_HDR_LEN + 4096];
	ssize_t n = recv(v->peer, tmp, sizeof(tmp), MSG_DONTWAIT);

	if (n < NET_VNET_HDR_LEN)
		return 0;
	n -= NET_VNET_HDR_LEN;
	memcpy(buf, tmp + NET_VNET_HDR_LEN, (size_t)n < cap ? (size_t)n : cap);
	return (size_t)n;
}

static void save(struct env *v, struct snap_buf *b)
{
	memset(b, 0, sizeof(*b));
	pci_dev_save(e1000e_pci(v->e), b);
	CHECK(e1000e_save(v->e, b) == 0);
}

/* the loader's answer for b on a NIC made anew, left in v */
static int load(struct env *v, const struct snap_buf *b)
{
	struct snap_cur c = snap_cur_make(b->p, b->len);
	int r;

	env_init(v);
	r = pci_dev_load(&v->h, e1000e_pci(v->e), &c);
	if (!r)
		r = e1000e_load(v->e, &c);
	if (!r)
		pci_dev_resync(&v->h, e1000e_pci(v->e));
	CHECK(r || !c.left);
	return r;
}

/* A NIC the driver runs: saved, loaded, saved again: the same bytes; and
 * the restored NIC goes on from where the first stopped. */
static void test_roundtrip(void)
{
	struct env a, b;
	struct snap_buf s1, s2;
	struct e1000e_stats st;
	uint8_t f[256], got[256];
	size_t len = udp4_frame(f, (const uint8_t *)"\x02\xaa\xbb\xcc\xdd\xee", 60);
	uint32_t tdt;

	env_init(&a);
	env_up(&a);
	memcpy(a.d.ram + TXBUF, f, len);
	tx_desc(&a, 0, 0, 0, TXD_DTYP_CTX);
	tx_desc(&a, TXBUF, (uint32_t)len, TXD_CMD_EOP | TXD_CMD_RS, TXD_DTYP_DATA);
	tx_desc(&a, TXBUF, 30, TXD_CMD_RS, TXD_DTYP_DATA); /* no EOP: half a packet */
	tx_go(&a);
	CHECK(peer_recv(&a, got, sizeof(got)) == len && !memcmp(got, f, len));
	CHECK(a.e->tx.len == 30 && a.e->ctx.mss == 1400);
	a.e->irq_deferred[0] = ICR_RXT0; /* moderation held an RX interrupt back */
	tdt = a.tdt;
	save(&a, &s1);
	env_fini(&a);

	CHECK(load(&b, &s1) == 0);
	save(&b, &s2);
	CHECK_EQ_U64(s2.len, s1.len);
	CHECK(!memcmp(s1.p, s2.p, s1.len));
	CHECK_EQ_U64(rd(&b, E_TDH), 3);
	CHECK_EQ_U64(rd(&b, E_RDT), 63);
	CHECK_EQ_U64(rd(&b, E_EITR0 + 4), 0x1234);
	CHECK_EQ_U64(rd(&b, E_IMS) & ICR_TXQ0, ICR_TXQ0);
	/* on: the half packet's last descriptor, then a whole packet */
	b.tdt = tdt;
	memcpy(b.d.ram + TXBUF, f, len);
	tx_desc(&b, TXBUF + 30, (uint32_t)len - 30, TXD_CMD_EOP, TXD_DTYP_DATA);
	tx_desc(&b, TXBUF, (uint32_t)len, TXD_CMD_EOP, TXD_DTYP_DATA);
	tx_go(&b);
	CHECK(peer_recv(&b, got, sizeof(got)) == len && !memcmp(got, f, len));
	CHECK(peer_recv(&b, got, sizeof(got)) == 0);
	e1000e_get_stats(b.e, &st);
	CHECK_EQ_U64(st.tx_dropped, 1);
	CHECK_EQ_U64(b.e->irq_deferred[0], 0); /* the held-back interrupt went out */
	/* a frame in: the receive ring as the guest left it */
	rx_descs(&b);
	udp4_frame(f, MAC, 60);
	{
		uint8_t m[NET_VNET_HDR_LEN + 256] = {0};

		memcpy(m + NET_VNET_HDR_LEN, f, len);
		CHECK(send(b.peer, m, NET_VNET_HDR_LEN + len, 0) ==
		      (ssize_t)(NET_VNET_HDR_LEN + len));
	}
	e1000e_io_turn(b.e, 0);
	CHECK_EQ_U64(rd(&b, E_RDH), 1);
	CHECK(!memcmp(b.d.ram + RXBUF, f, len));
	env_fini(&b);
	snap_buf_release(&s1);
	snap_buf_release(&s2);
}

enum hostile {
	H_TAIL,
	H_RING_RAM,
	H_STATUS,
	H_PHY_ID,
	H_IMS,
	H_OFF_TWICE,
	H_OFF_UNALIGNED,
	H_TRUNCATED,
	H_N
};

/* The bytes of a device the driver brought up, spoilt as h says. */
static void hostile_state(enum hostile h, struct snap_buf *b)
{
	struct env a;
	struct e1000e *e;
	uint32_t pairs[4] = {E_RDT, 1, E_RDT, 2};

	env_init(&a);
	env_up(&a);
	e = a.e;
	if (h == H_TAIL)
		e->reg[E_RDT / 4] = 64; /* a ring of 64 */
	if (h == H_RING_RAM)
		e->reg[E_TDBAL / 4] = RAM - 512; /* 1 KiB from there */
	if (h == H_STATUS)
		e->reg[E_STATUS / 4] |= 1u << 30;
	if (h == H_PHY_ID)
		e->phy[0][PHY_ID2] ^= 1;
	if (h == H_IMS)
		e->reg[E_IMS / 4] = ~0u;
	save(&a, b);
	if (h == H_OFF_TWICE || h == H_OFF_UNALIGNED) {
		struct snap_buf t = {0};
		struct snap_cur c = snap_cur_make(b->p, b->len), body;
		uint32_t tag;
		size_t mark;

		if (h == H_OFF_UNALIGNED)
			pairs[2] = E_RDT + 1;
		for (int i = 0; i < 4; i++) { /* the PCI function's items */
			CHECK(snap_cur_next(&c, &tag, &body) == 0);
			snap_buf_item(&t, tag, body.p, body.left);
		}
		CHECK(snap_cur_next(&c, &tag, &body) == 0); /* the registers */
		mark = snap_buf_open(&t, tag);
		snap_buf_put(&t, pairs, sizeof(pairs));
		snap_buf_close(&t, mark);
		snap_buf_put(&t, c.p, c.left);
		snap_buf_release(b);
		*b = t;
	}
	if (h == H_TRUNCATED)
		b->len -= 4;
	env_fini(&a);
}

/* Each hostile snapshot is refused, and the new NIC keeps its reset
 * state: no ring, no cause, no vector. */
static void test_hostile(void)
{
	for (int h = 0; h < H_N; h++) {
		struct snap_buf s;
		struct env b;

		hostile_state((enum hostile)h, &s);
		CHECK(load(&b, &s) < 0);
		CHECK_EQ_U64(rd(&b, E_RDLEN), 0);
		CHECK_EQ_U64(rd(&b, E_RCTL), 0);
		CHECK_EQ_U64(rd(&b, E_IVAR), 0);
		CHECK_EQ_U64(rd(&b, E_IMS), 0);
		env_fini(&b);
		snap_buf_release(&s);
	}
}

int main(void)
{
	TEST_RUN(test_roundtrip);
	TEST_RUN(test_hostile);
	return test_summary();
}
