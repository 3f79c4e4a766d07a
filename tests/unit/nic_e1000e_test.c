// SPDX-License-Identifier: MIT
/*
 * nic_e1000e_test.c - the 82574L (vmm/nic/e1000e.h) without KVM: the
 * device on the fake PCI bus of virtio_test_pci.h, driven through its
 * registers the way Linux's e1000e driver drives it, over a test backend
 * (a SOCK_SEQPACKET socketpair: one message = one frame with its vnet
 * header) so the test plays the network. No I/O thread: the test turns
 * e1000e_io_turn() itself.
 *
 * Covered: PCI IDs, the EEPROM (MAC, checksum 0xBABA), the PHY behind
 * MDIC, legacy and extended TX with checksum insertion, TSO (segments,
 * headers, checksums), legacy and extended RX with the checksum status,
 * MSI-X through IVAR with auto-clear, link down, clear-on-read counters;
 * and the guest's attacks: a tail outside the ring, rings and buffers
 * outside RAM, TSO contexts whose header length, MSS or offsets do not
 * fit the packet.
 */
#include <stdlib.h>
#include <sys/socket.h>

#define TEST_PCI_NO_THREADS
#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/net/pkt.h"
#include "vmm/nic/e1000e_int.h"

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

/* a test may have the guest reset the NIC from inside a send (the I/O
 * thread holds no lock there, as a vCPU's write would find it) */
static void (*send_hook)(void);

static int sp_send(struct net_backend *be, const struct iovec *iov, int n)
{
	struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};

	if (send_hook)
		send_hook();
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
	uint64_t bar0, bar3;
	int slot, msix_cap;
	uint32_t tdt, rdt;
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
	v->bar3 = ecam_rd(v->slot, PCI_BASE_ADDRESS_3, 4) & ~0xfull;
	ecam_wr(v->slot, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	for (uint8_t c = (uint8_t)ecam_rd(v->slot, PCI_CAPABILITY_LIST, 1); c;
	     c = (uint8_t)ecam_rd(v->slot, c + 1, 1))
		if (ecam_rd(v->slot, c, 1) == PCI_CAP_ID_MSIX)
			v->msix_cap = c;
}

static void env_fini(struct env *v)
{
	e1000e_destroy(v->e);
	pci_host_release(&v->h);
	tdrv_release(&v->d);
}

/* the driver's bring-up of the rings (e1000_configure_tx/rx) */
static void env_rings(struct env *v, bool ext_rx)
{
	wr(v, E_TDBAL, TXR);
	wr(v, E_TDBAH, 0);
	wr(v, E_TDLEN, 64 * 16);
	wr(v, E_TDH, 0);
	wr(v, E_TDT, 0);
	wr(v, E_TCTL, TCTL_EN);
	wr(v, E_RDBAL, RXR);
	wr(v, E_RDLEN, 64 * 16);
	wr(v, E_RDH, 0);
	for (unsigned int i = 0; i < 64; i++) {
		uint64_t a = RXBUF + 2048ull * i;

		memcpy(v->d.ram + RXR + 16 * i, &a, 8);
		memset(v->d.ram + RXR + 16 * i + 8, 0, 8);
	}
	wr(v, E_RDT, 63);
	wr(v, E_RFCTL, ext_rx ? RFCTL_EXTEN : 0);
	wr(v, E_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);
}

/* ---- frames ---------------------------------------------------------------- */

static size_t udp4_frame(uint8_t *f, size_t payload)
{
	uint8_t *ip = f + 14, *udp = ip + 20;

	memset(f, 0, 14 + 28 + payload);
	memcpy(f, "\x02\xaa\xbb\xcc\xdd\xee", 6);
	memcpy(f + 6, MAC, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	ip[0] = 0x45;
	pkt_put16(ip + 2, (uint16_t)(28 + payload));
	ip[8] = 64;
	ip[9] = PKT_IPPROTO_UDP;
	memcpy(ip + 12, "\x0a\x00\x02\x02\x0a\x00\x02\x01", 8);
	pkt_put16(udp, 1234);
	pkt_put16(udp + 2, 5678);
	pkt_put16(udp + 4, (uint16_t)(8 + payload));
	for (size_t i = 0; i < payload; i++)
		udp[8 + i] = (uint8_t)(i * 7);
	return 14 + 28 + payload;
}

/* a TCP/IPv4 packet as Linux hands it to TSO: tot_len 0, the pseudo sum
 * without the length in the TCP checksum field */
static size_t tcp4_packet(uint8_t *f, size_t payload)
{
	uint8_t *ip = f + 14, *tcp = ip + 20;
	uint32_t ps;

	memset(f, 0, 54);
	memcpy(f, "\x02\xaa\xbb\xcc\xdd\xee", 6);
	memcpy(f + 6, MAC, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	ip[0] = 0x45;
	pkt_put16(ip + 4, 0x1000);
	ip[8] = 64;
	ip[9] = PKT_IPPROTO_TCP;
	memcpy(ip + 12, "\x0a\x00\x02\x02\x0a\x00\x02\x01", 8);
	pkt_put16(tcp, 40000);
	pkt_put16(tcp + 2, 80);
	pkt_put32(tcp + 4, 1000);
	tcp[12] = 5 << 4;
	tcp[13] = 0x18 | 0x01; /* PSH ACK FIN */
	ps = pkt_csum_add(PKT_IPPROTO_TCP, ip + 12, 8);
	pkt_put16(tcp + 16, (uint16_t)~pkt_csum_fold(ps));
	for (size_t i = 0; i < payload; i++)
		f[54 + i] = (uint8_t)(i * 13 + 1);
	return 54 + payload;
}

static bool ip4_csum_ok(const uint8_t *f)
{
	return pkt_csum_fold(pkt_csum_add(0, f + 14, 20)) == 0;
}

static bool l4_csum_ok(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14;
	size_t l4len = len - 34;
	uint32_t ps = pkt_csum_add(0, ip + 12, 8) + ip[9] + (uint32_t)l4len;

	return pkt_csum_fold(pkt_csum_add(ps, f + 34, l4len)) == 0;
}

/* ---- the driver's side of TX ------------------------------------------------ */

static void tx_desc(struct env *v, const uint8_t d[16])
{
	memcpy(v->d.ram + TXR + 16 * (v->tdt % 64), d, 16);
	v->tdt = (v->tdt + 1) % 64;
}

static void tx_data(struct env *v, uint64_t addr, uint32_t len, uint8_t dcmd, uint8_t popts)
{
	uint8_t d[16] = {0};
	uint32_t cl = len | TXD_DTYP_DATA << 20 | (uint32_t)(dcmd | TXD_CMD_DEXT) << 24;

	memcpy(d, &addr, 8);
	memcpy(d + 8, &cl, 4);
	d[13] = popts;
	tx_desc(v, d);
}

static void tx_ctx(struct env *v, const struct e1000e_txctx *c)
{
	uint8_t d[16] = {0};
	uint32_t cl = c->paylen | TXD_DTYP_CTX << 20 | (uint32_t)(c->tucmd | TXD_CMD_DEXT) << 24;

	d[0] = c->ipcss;
	d[1] = c->ipcso;
	memcpy(d + 2, &c->ipcse, 2);
	d[4] = c->tucss;
	d[5] = c->tucso;
	memcpy(d + 6, &c->tucse, 2);
	memcpy(d + 8, &cl, 4);
	d[13] = c->hdr_len;
	memcpy(d + 14, &c->mss, 2);
	tx_desc(v, d);
}

static void tx_go(struct env *v)
{
	wr(v, E_TDT, v->tdt);
	e1000e_io_turn(v->e, 0);
}

/* the next frame the device sent, without its vnet header; 0 none */
static size_t peer_recv(struct env *v, uint8_t *buf, size_t cap)
{
	uint8_t tmp[NET_VNET_HDR_LEN + 70000];
	ssize_t n = recv(v->peer, tmp, sizeof(tmp), MSG_DONTWAIT);

	if (n < NET_VNET_HDR_LEN)
		return 0;
	n -= NET_VNET_HDR_LEN;
	memcpy(buf, tmp + NET_VNET_HDR_LEN, (size_t)n < cap ? (size_t)n : cap);
	return (size_t)n;
}

static void peer_send(struct env *v, const uint8_t *f, size_t len, uint8_t vflags)
{
	static uint8_t tmp[NET_VNET_HDR_LEN + 16384];

	memset(tmp, 0, sizeof(tmp));

	tmp[0] = vflags;
	memcpy(tmp + NET_VNET_HDR_LEN, f, len);
	CHECK(send(v->peer, tmp, NET_VNET_HDR_LEN + len, 0) == (ssize_t)(NET_VNET_HDR_LEN + len));
}

/* ---- tests ------------------------------------------------------------------- */

static void test_ids_eeprom_phy(void)
{
	struct env v;
	uint16_t sum = 0, w[64];
	uint32_t m;

	env_init(&v);
	CHECK_EQ_U64(ecam_rd(v.slot, 0, 4), 0x10d38086);
	CHECK_EQ_U64(ecam_rd(v.slot, PCI_SUBSYSTEM_VENDOR_ID, 4), 0x00008086);
	CHECK_EQ_U64(ecam_rd(v.slot, PCI_CLASS_REVISION, 4) >> 8, 0x020000);
	CHECK(v.msix_cap != 0);
	CHECK_EQ_U64(ecam_rd(v.slot, v.msix_cap + 2, 2) & PCI_MSIX_FLAGS_QSIZE, 4); /* 5 */
	for (unsigned int i = 0; i < 64; i++) {
		wr(&v, E_EERD, i << 2 | EERD_START);
		m = rd(&v, E_EERD);
		CHECK(m & EERD_DONE);
		w[i] = (uint16_t)(m >> 16);
		sum = (uint16_t)(sum + w[i]);
	}
	CHECK_EQ_U64(sum, 0xBABA);
	CHECK_EQ_U64(w[0], 0x1102);
	CHECK_EQ_U64(w[2], 0x5544);
	CHECK_EQ_U64(rd(&v, E_RAL0), 0x33221102);
	CHECK_EQ_U64(rd(&v, E_RAH0), 0x80005544);
	CHECK(rd(&v, E_STATUS) & STATUS_LU);
	/* PHY at address 1: the 82574's ID, link up, autoneg complete */
	wr(&v, E_MDIC, MDIC_OP_READ | 1u << 21 | 2u << 16);
	m = rd(&v, E_MDIC);
	CHECK((m & MDIC_READY) && !(m & MDIC_ERROR));
	CHECK_EQ_U64(m & 0xffff, 0x0141);
	wr(&v, E_MDIC, MDIC_OP_READ | 1u << 21 | 3u << 16);
	CHECK_EQ_U64(rd(&v, E_MDIC) & 0xffff, 0x0cb1);
	wr(&v, E_MDIC, MDIC_OP_READ | 1u << 21 | 1u << 16);
	CHECK_EQ_U64(rd(&v, E_MDIC) & 0x24, 0x24);
	wr(&v, E_MDIC, MDIC_OP_READ | 2u << 21 | 1u << 16); /* no PHY there */
	CHECK(rd(&v, E_MDIC) & MDIC_ERROR);
	/* a software reset keeps the MAC in RAR0 */
	wr(&v, E_RAL0, 0);
	wr(&v, E_CTRL, CTRL_RST);
	CHECK_EQ_U64(rd(&v, E_RAL0), 0x33221102);
	env_fini(&v);
}

static void test_tx_csum(void)
{
	struct env v;
	struct e1000e_txctx c = {.tucss = 34, .tucso = 40, .ipcss = 14, .ipcso = 24, .ipcse = 33};
	uint8_t f[256], got[256];
	size_t len = udp4_frame(f, 100), n;
	uint8_t *ram;

	env_init(&v);
	env_rings(&v, true);
	ram = v.d.ram;
	memcpy(ram + TXBUF, f, len);
	/* the driver's pseudo-header seed in the UDP checksum field */
	pkt_put16(ram + TXBUF + 40,
		  (uint16_t)~pkt_csum_fold(pkt_csum_add(PKT_IPPROTO_UDP + 108, f + 26, 8)));
	tx_ctx(&v, &c);
	tx_data(&v, TXBUF, 30, 0, TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	tx_data(&v, TXBUF + 30, (uint32_t)len - 30, TXD_CMD_EOP | TXD_CMD_RS,
		TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	tx_go(&v);
	n = peer_recv(&v, got, sizeof(got));
	CHECK_EQ_U64(n, len);
	CHECK(ip4_csum_ok(got));
	CHECK(l4_csum_ok(got, n));
	CHECK(!memcmp(got + 42, f + 42, 100));
	CHECK(ram[TXR + 16 * 2 + 12] & TXD_STAT_DD);
	CHECK_EQ_U64(rd(&v, E_TDH), 3);
	CHECK(rd(&v, E_ICR) & ICR_TXDW);
	/* the statistics clear on read */
	CHECK_EQ_U64(rd(&v, E_GPTC), 1);
	CHECK_EQ_U64(rd(&v, E_GPTC), 0);
	/* a legacy descriptor with the legacy checksum (css/cso) */
	memcpy(ram + TXBUF, f, len);
	{
		uint8_t d[16] = {0};
		uint64_t a = TXBUF;

		memcpy(d, &a, 8);
		d[8] = (uint8_t)len;
		d[10] = 40;
		d[11] = TXD_CMD_EOP | TXD_CMD_IC | TXD_CMD_RS;
		d[13] = 34;
		pkt_put16(ram + TXBUF + 40,
			  (uint16_t)~pkt_csum_fold(pkt_csum_add(PKT_IPPROTO_UDP + 108, f + 26, 8)));
		tx_desc(&v, d);
	}
	tx_go(&v);
	n = peer_recv(&v, got, sizeof(got));
	CHECK_EQ_U64(n, len);
	CHECK(l4_csum_ok(got, n));
	env_fini(&v);
}

static struct e1000e_txctx tso_ctx(void)
{
	return (struct e1000e_txctx){.ipcss = 14,
				     .ipcso = 24,
				     .ipcse = 33,
				     .tucss = 34,
				     .tucso = 50,
				     .hdr_len = 54,
				     .mss = 1000,
				     .paylen = 2500,
				     .tucmd = TXD_TUCMD_TCP | TXD_TUCMD_IP | TXD_TUCMD_TSE};
}

static void test_tso(void)
{
	struct env v;
	struct e1000e_txctx c = tso_ctx();
	static uint8_t f[4096], got[2048];
	size_t len = tcp4_packet(f, 2500), n;
	unsigned int i;

	env_init(&v);
	env_rings(&v, true);
	memcpy(v.d.ram + TXBUF, f, len);
	tx_ctx(&v, &c);
	tx_data(&v, TXBUF, 54, TXD_CMD_TSE, TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	tx_data(&v, TXBUF + 54, 2500, TXD_CMD_TSE | TXD_CMD_EOP | TXD_CMD_RS,
		TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	tx_go(&v);
	for (i = 0; (n = peer_recv(&v, got, sizeof(got))); i++) {
		size_t pay = i < 2 ? 1000 : 500;

		CHECK_EQ_U64(n, 54 + pay);
		CHECK_EQ_U64(pkt_be16(got + 16), 40 + pay);   /* IPv4 total length */
		CHECK_EQ_U64(pkt_be16(got + 18), 0x1000 + i); /* IP ID */
		CHECK_EQ_U64(pkt_be32(got + 38), 1000 + 1000 * i);
		CHECK_EQ_U64(got[47] & 0x09, i == 2 ? 0x09 : 0); /* FIN, PSH last only */
		CHECK(ip4_csum_ok(got));
		CHECK(l4_csum_ok(got, n));
		CHECK(!memcmp(got + 54, f + 54 + 1000 * i, pay));
	}
	CHECK_EQ_U64(i, 3);
	env_fini(&v);
}

static struct env *reset_env;

static void reset_now(void)
{
	send_hook = NULL;
	wr(reset_env, E_CTRL, CTRL_RST);
}

/* A reset (CTRL.RST clears the offload context) while a TSO packet is
 * being cut: the packet goes out as its context said, whole. */
static void test_tso_reset_midway(void)
{
	struct env v;
	struct e1000e_txctx c = tso_ctx();
	static uint8_t f[4096], got[2048];
	size_t len = tcp4_packet(f, 2500), n;
	unsigned int i;

	env_init(&v);
	env_rings(&v, true);
	memcpy(v.d.ram + TXBUF, f, len);
	tx_ctx(&v, &c);
	tx_data(&v, TXBUF, (uint32_t)len, TXD_CMD_TSE | TXD_CMD_EOP | TXD_CMD_RS,
		TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	reset_env = &v;
	send_hook = reset_now;
	tx_go(&v);
	for (i = 0; (n = peer_recv(&v, got, sizeof(got))); i++)
		CHECK(l4_csum_ok(got, n));
	CHECK_EQ_U64(i, 3);
	CHECK_EQ_U64(rd(&v, E_TCTL), 0); /* the reset happened */
	env_fini(&v);
}

/* TSO contexts that lie about the packet: each is dropped, none sent. */
static void test_tso_bad_context(void)
{
	struct env v;
	static uint8_t f[512], got[2048];
	size_t len = tcp4_packet(f, 100);
	struct e1000e_txctx bad[6];
	struct e1000e_stats st;

	for (unsigned int i = 0; i < 6; i++)
		bad[i] = tso_ctx();
	bad[0].hdr_len = 200; /* headers longer than the packet */
	bad[1].mss = 0;
	bad[2].tucss = 140; /* TCP header past the headers */
	bad[2].hdr_len = 150;
	bad[3].tucso = 254; /* checksum field past the headers */
	bad[4].ipcss = 40;  /* IPv4 header overlapping TCP's */
	bad[5].mss = 8;	    /* 8-byte segments: an amplifier */
	env_init(&v);
	env_rings(&v, true);
	memcpy(v.d.ram + TXBUF, f, len);
	for (unsigned int i = 0; i < 6; i++) {
		tx_ctx(&v, &bad[i]);
		tx_data(&v, TXBUF, (uint32_t)len, TXD_CMD_TSE | TXD_CMD_EOP | TXD_CMD_RS,
			TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	}
	tx_go(&v);
	CHECK_EQ_U64(peer_recv(&v, got, sizeof(got)), 0);
	e1000e_get_stats(v.e, &st);
	CHECK_EQ_U64(st.tx_dropped, 6);
	CHECK_EQ_U64(st.tx_packets, 0);
	CHECK_EQ_U64(rd(&v, E_TDH), 12); /* the ring went on */
	env_fini(&v);
}

/* Rings and buffers the guest points anywhere. */
static void test_tx_untrusted_ring(void)
{
	struct env v;
	uint8_t f[128], got[2048];
	size_t len = udp4_frame(f, 20);
	struct e1000e_stats st;

	env_init(&v);
	env_rings(&v, true);
	memcpy(v.d.ram + TXBUF, f, len);
	/* a tail outside the ring: nothing runs */
	wr(&v, E_TDT, 100);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_TDH), 0);
	/* a buffer outside RAM, then one crossing its end, then a packet
	 * longer than the device takes: dropped, the ring goes on */
	wr(&v, E_TDT, 0);
	tx_data(&v, 0xfff00000ull, 64, TXD_CMD_EOP, 0);
	tx_data(&v, RAM - 32, 64, TXD_CMD_EOP, 0);
	for (unsigned int i = 0; i < 3; i++) /* 3 x 30000 bytes */
		tx_data(&v, TXBUF, 30000, i == 2 ? TXD_CMD_EOP : 0, 0);
	tx_data(&v, TXBUF, (uint32_t)len, TXD_CMD_EOP, 0); /* a good one */
	tx_go(&v);
	CHECK_EQ_U64(peer_recv(&v, got, sizeof(got)), len);
	CHECK_EQ_U64(peer_recv(&v, got, sizeof(got)), 0);
	e1000e_get_stats(v.e, &st);
	CHECK_EQ_U64(st.tx_dropped, 3);
	/* the ring itself outside RAM */
	wr(&v, E_TDBAL, 0xfffff000u);
	wr(&v, E_TDBAH, 0xffffffffu);
	wr(&v, E_TDT, 5);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(peer_recv(&v, got, sizeof(got)), 0);
	env_fini(&v);
}

static void test_rx(void)
{
	struct env v;
	uint8_t f[256], *ram;
	size_t len = udp4_frame(f, 100);
	uint8_t bcast[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t other[60] = {0x02, 0x99};
	uint32_t se;

	/* the frame is for the NIC */
	memcpy(f, MAC, 6);
	pkt_put16(f + 14 + 10, 0);
	pkt_put16(f + 14 + 10, pkt_csum_fold(pkt_csum_add(0, f + 14, 20)));
	{
		uint32_t ps = pkt_csum_add(0, f + 26, 8) + PKT_IPPROTO_UDP + 108;

		pkt_put16(f + 40, pkt_csum_fold(pkt_csum_add(ps, f + 34, 108)));
	}
	for (int ext = 0; ext < 2; ext++) {
		env_init(&v);
		env_rings(&v, ext);
		ram = v.d.ram;
		peer_send(&v, other, sizeof(other), 0); /* not ours: filtered */
		peer_send(&v, f, len, 0);
		f[60] ^= 1; /* a bad UDP checksum */
		peer_send(&v, f, len, 0);
		f[60] ^= 1;
		peer_send(&v, bcast, sizeof(bcast), 0);
		e1000e_io_turn(v.e, 0);
		CHECK_EQ_U64(rd(&v, E_RDH), 3);
		CHECK(!memcmp(ram + RXBUF, f, len));
		CHECK(!memcmp(ram + RXBUF + 4096, bcast, 6));
		if (ext) {
			memcpy(&se, ram + RXR + 8, 4);
			CHECK_EQ_U64(se & 0xff,
				     RXD_STAT_DD | RXD_STAT_EOP | RXD_STAT_IPCS | RXD_STAT_UDPCS);
			CHECK_EQ_U64(ram[RXR + 12] | ram[RXR + 13] << 8, len);
			memcpy(&se, ram + RXR + 16 + 8, 4);
			CHECK(se & 0x20000000u); /* TCPE */
		} else {
			CHECK_EQ_U64(ram[RXR + 12],
				     RXD_STAT_DD | RXD_STAT_EOP | RXD_STAT_IPCS | RXD_STAT_UDPCS);
			CHECK_EQ_U64(ram[RXR + 8] | ram[RXR + 9] << 8, len);
			CHECK(ram[RXR + 16 + 13] & RXD_ERR_TCPE);
		}
		CHECK(rd(&v, E_ICR) & ICR_RXT0);
		CHECK_EQ_U64(rd(&v, E_GPRC), 3);
		CHECK_EQ_U64(rd(&v, E_ROC), 0); /* the filtered frame is no error */
		env_fini(&v);
	}
}

/* Packet split (Linux's e1000e with a jumbo MTU): 32-byte descriptors
 * of four buffers, the frame in buffer 0 (128 bytes) then the pages; a
 * frame the four cannot hold is dropped. */
static void test_rx_packet_split(void)
{
	struct env v;
	static uint8_t f[14000];
	uint8_t *ram, *d;
	uint32_t se;
	size_t len = 3000;

	env_init(&v);
	env_rings(&v, true);
	ram = v.d.ram;
	wr(&v, E_RCTL, 0);
	for (unsigned int i = 0; i < 32; i++) /* 32 descriptors of 4 buffers */
		for (unsigned int b = 0; b < 4; b++) {
			uint64_t a = RXBUF + 0x10000ull * i + 0x1000ull * b;

			memcpy(ram + RXR + 32 * i + 8 * b, &a, 8);
		}
	wr(&v, E_RDLEN, 32 * 32);
	wr(&v, E_RDH, 0);
	wr(&v, E_RDT, 31 << 1); /* in 16-byte units, as Linux writes it */
	wr(&v, E_PSRCTL, 1 | 4u << 8 | 4u << 16 | 4u << 24); /* 128 B, 3 x 4 KiB */
	wr(&v, E_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC | RCTL_LPE | RCTL_DTYP_PS);
	memcpy(f, MAC, 6);
	memcpy(f + 6, "\x02\xaa\xbb\xcc\xdd\xee\x88\xb5", 8);
	for (size_t i = 14; i < sizeof(f); i++)
		f[i] = (uint8_t)(i * 7);
	peer_send(&v, f, len, 0);
	peer_send(&v, f, 13000, 0); /* more than 128 + 3 x 4096 */
	peer_send(&v, f, 9000, 0);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 2 << 1);
	d = ram + RXR;
	memcpy(&se, d + 8, 4);
	CHECK_EQ_U64(se & 0xff, RXD_STAT_DD | RXD_STAT_EOP);
	CHECK_EQ_U64(d[12] | d[13] << 8, 128);	     /* length0 */
	CHECK_EQ_U64(d[18] | d[19] << 8, len - 128); /* length[0] */
	CHECK_EQ_U64(d[20] | d[21] << 8, 0);
	CHECK(!memcmp(ram + RXBUF, f, 128));
	CHECK(!memcmp(ram + RXBUF + 0x1000, f + 128, len - 128));
	d = ram + RXR + 32; /* the 9000-byte one: 128 + 4096 + 4096 + 680 */
	CHECK_EQ_U64(d[18] | d[19] << 8, 4096);
	CHECK_EQ_U64(d[22] | d[23] << 8, 9000 - 128 - 8192);
	CHECK(!memcmp(ram + RXBUF + 0x10000 + 0x3000, f + 128 + 8192, 9000 - 128 - 8192));
	CHECK_EQ_U64(rd(&v, E_ROC), 1);
	env_fini(&v);
}

/* A ring the guest set up wrong takes nothing; a buffer outside RAM gets
 * nothing written and says RXE. */
static void test_rx_untrusted(void)
{
	struct env v;
	uint8_t f[128];
	size_t len = udp4_frame(f, 20);
	uint64_t far = 0xfff00000ull;
	uint32_t se;

	memcpy(f, MAC, 6);
	env_init(&v);
	env_rings(&v, true);
	wr(&v, E_RDT, 200); /* outside the ring */
	peer_send(&v, f, len, 0);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 0);
	memcpy(v.d.ram + RXR, &far, 8);
	wr(&v, E_RDT, 63);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 1);
	memcpy(&se, v.d.ram + RXR + 8, 4);
	CHECK(se & 0x80000000u); /* RXE */
	env_fini(&v);
}

/* A guest kernel points receive buffers into SMRAM (q35's TSEG, hidden
 * outside SMM): the frame must not land there (it would rewrite SMM's
 * code); the descriptor says RXE instead. */
static void test_rx_into_smram(void)
{
	const uint64_t tseg = RAM - (1u << 20);
	struct env v;
	uint8_t f[128];
	size_t len = udp4_frame(f, 20);
	uint32_t se;

	memcpy(f, MAC, 6);
	env_init(&v);
	env_rings(&v, true);
	memset(v.d.ram + tseg, 0xcc, 4096);
	memcpy(v.d.ram + RXR, &tseg, 8);
	guest_mem_set_smram(&v.d.mem, tseg, RAM, true);
	peer_send(&v, f, len, 0);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 1);
	CHECK(v.d.ram[tseg] == 0xcc && v.d.ram[tseg + 2047] == 0xcc);
	memcpy(&se, v.d.ram + RXR + 8, 4);
	CHECK(se & 0x80000000u); /* RXE */
	env_fini(&v);
}

static void test_msix_and_link(void)
{
	struct env v;
	struct e1000e *e;
	uint32_t m;

	env_init(&v);
	e = v.e;
	for (unsigned int i = 0; i < 5; i++) {
		mmio_wr(v.bar3 + 16 * i, 0xfee00000u, 4);
		mmio_wr(v.bar3 + 16 * i + 8, 0x40 + i, 4);
		mmio_wr(v.bar3 + 16 * i + 12, 0, 4);
	}
	ecam_wr(v.slot, v.msix_cap + 2, PCI_MSIX_FLAGS_ENABLE, 2);
	/* Linux's e1000_configure_msix: rx0 -> 0, tx0 -> 1, other -> 2 */
	wr(&v, E_IVAR, 0x8 | 0x9 << 8 | 0xa << 16 | 1u << 31);
	wr(&v, E_EIAC, ICR_RXQ0 | ICR_TXQ0);
	wr(&v, E_IAM, ~(0x1fu << 20) | ICR_OTHER);
	wr(&v, E_CTRL_EXT, rd(&v, E_CTRL_EXT) | CTRL_EXT_EIAME);
	wr(&v, E_IMS, ICR_RXQ0 | ICR_TXQ0 | ICR_OTHER | ICR_LSC | ICR_RXT0 | ICR_TXDW);
	CHECK_EQ_U64(e->msix_sent, 0);
	wr(&v, E_ICS, ICR_RXT0);
	CHECK_EQ_U64(e->msix_sent, 1);
	CHECK(!(rd(&v, E_ICS) & ICR_RXQ0)); /* auto-cleared (EIAC) */
	/* link down: LSC on the "other" vector, which then masks itself */
	e1000e_set_link(e, false);
	CHECK_EQ_U64(e->msix_sent, 2);
	CHECK(!(rd(&v, E_IMS) & ICR_OTHER));
	CHECK(!(rd(&v, E_STATUS) & STATUS_LU));
	wr(&v, E_MDIC, MDIC_OP_READ | 1u << 21 | 1u << 16);
	m = rd(&v, E_MDIC);
	CHECK(!(m & 0x4));
	CHECK(rd(&v, E_ICR) & ICR_LSC);
	CHECK_EQ_U64(rd(&v, E_ICR), 0); /* clear on read */
	e1000e_set_link(e, true);
	CHECK(rd(&v, E_STATUS) & STATUS_LU);
	env_fini(&v);
}

static uint64_t fake_ns = 1000000000;

static uint64_t fake_clock(void)
{
	return fake_ns;
}

/* EITR holds the RX vector's next interrupt back until its interval ends;
 * the thread sends it then. EITR 0: no moderation. (The device's clock is
 * the test's.) */
static void test_moderation(void)
{
	struct env v;
	uint8_t f[128];
	size_t len = udp4_frame(f, 20);
	struct e1000e *e;

	memcpy(f, MAC, 6);
	env_init(&v);
	e = v.e;
	e->clock_ns = fake_clock;
	env_rings(&v, true);
	mmio_wr(v.bar3, 0xfee00000u, 4);
	mmio_wr(v.bar3 + 8, 0x40, 4);
	mmio_wr(v.bar3 + 12, 0, 4);
	ecam_wr(v.slot, v.msix_cap + 2, PCI_MSIX_FLAGS_ENABLE, 2);
	wr(&v, E_IVAR, 0x8 | 0x9 << 8 | 0xa << 16);
	wr(&v, E_EIAC, ICR_RXQ0 | ICR_TXQ0);
	wr(&v, E_EITR0, 0xffff); /* 16.8 ms */
	wr(&v, E_IMS, ICR_RXQ0);
	peer_send(&v, f, len, 0);
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(e->msix_sent, 1);
	peer_send(&v, f, len, 0);
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 2);
	CHECK_EQ_U64(e->msix_sent, 1); /* held back */
	fake_ns += 0xffff * 256 - 1000;
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(e->msix_sent, 1); /* not yet */
	fake_ns += 1000;
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(e->msix_sent, 2); /* the interval ended: sent */
	wr(&v, E_EITR0, 0);
	peer_send(&v, f, len, 0);
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(e->msix_sent, 3); /* no moderation */
	env_fini(&v);
}

int main(void)
{
	TEST_RUN(test_ids_eeprom_phy);
	TEST_RUN(test_tx_csum);
	TEST_RUN(test_tso);
	TEST_RUN(test_tso_bad_context);
	TEST_RUN(test_tso_reset_midway);
	TEST_RUN(test_tx_untrusted_ring);
	TEST_RUN(test_rx);
	TEST_RUN(test_rx_packet_split);
	TEST_RUN(test_rx_untrusted);
	TEST_RUN(test_rx_into_smram);
	TEST_RUN(test_msix_and_link);
	TEST_RUN(test_moderation);
	return test_summary();
}
