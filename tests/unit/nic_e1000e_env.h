/* SPDX-License-Identifier: MIT */
/*
 * nic_e1000e_env.h - the 82574L (vmm/nic/e1000e.h) without KVM for the unit
 * tests: the device on the fake PCI bus of virtio_test_pci.h, driven
 * through its registers the way Linux's e1000e driver drives it, over a
 * test backend (a SOCK_SEQPACKET socketpair: one message = one frame with
 * its vnet header) so the test plays the network. No I/O thread: the test
 * turns e1000e_io_turn() itself. Plus the frames a test sends (UDP, TCP
 * for TSO) and their checksum checks, and the driver's side of TX
 * (descriptors, contexts). Header-only: included once per test program by
 * nic_e1000e_test.c, nic_e1000e_tx_test.c and nic_e1000e_rx_test.c.
 */
#ifndef VMLET_TESTS_NIC_E1000E_ENV_H
#define VMLET_TESTS_NIC_E1000E_ENV_H

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

static inline ssize_t sp_recv(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
	ssize_t n = recvmsg(be->fd, &m, MSG_DONTWAIT | MSG_TRUNC);

	return n < 0 ? -errno : n;
}

/* a test may have the guest reset the NIC from inside a send (the I/O
 * thread holds no lock there, as a vCPU's write would find it) */
static void (*send_hook)(void);

static inline int sp_send(struct net_backend *be, const struct iovec *iov, int n)
{
	struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};

	if (send_hook)
		send_hook();
	return sendmsg(be->fd, &m, MSG_DONTWAIT) < 0 ? -errno : 0;
}

static inline void sp_destroy(struct net_backend *be)
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

static inline uint32_t rd(struct env *v, uint32_t off)
{
	return mmio_rd(v->bar0 + off, 4);
}

static inline void wr(struct env *v, uint32_t off, uint32_t val)
{
	mmio_wr(v->bar0 + off, val, 4);
}

static inline void env_init(struct env *v)
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

static inline void env_fini(struct env *v)
{
	e1000e_destroy(v->e);
	pci_host_release(&v->h);
	tdrv_release(&v->d);
}

/* the driver's bring-up of the rings (e1000_configure_tx/rx) */
static inline void env_rings(struct env *v, bool ext_rx)
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

static inline size_t udp4_frame(uint8_t *f, size_t payload)
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
static inline size_t tcp4_packet(uint8_t *f, size_t payload)
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

static inline bool ip4_csum_ok(const uint8_t *f)
{
	return pkt_csum_fold(pkt_csum_add(0, f + 14, 20)) == 0;
}

static inline bool l4_csum_ok(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14;
	size_t l4len = len - 34;
	uint32_t ps = pkt_csum_add(0, ip + 12, 8) + ip[9] + (uint32_t)l4len;

	return pkt_csum_fold(pkt_csum_add(ps, f + 34, l4len)) == 0;
}

/* ---- the driver's side of TX ------------------------------------------------ */

static inline void tx_desc(struct env *v, const uint8_t d[16])
{
	memcpy(v->d.ram + TXR + 16 * (v->tdt % 64), d, 16);
	v->tdt = (v->tdt + 1) % 64;
}

static inline void tx_data(struct env *v, uint64_t addr, uint32_t len, uint8_t dcmd, uint8_t popts)
{
	uint8_t d[16] = {0};
	uint32_t cl = len | TXD_DTYP_DATA << 20 | (uint32_t)(dcmd | TXD_CMD_DEXT) << 24;

	memcpy(d, &addr, 8);
	memcpy(d + 8, &cl, 4);
	d[13] = popts;
	tx_desc(v, d);
}

static inline void tx_ctx(struct env *v, const struct e1000e_txctx *c)
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

static inline void tx_go(struct env *v)
{
	wr(v, E_TDT, v->tdt);
	e1000e_io_turn(v->e, 0);
}

/* the next frame the device sent, without its vnet header; 0 none */
static inline size_t peer_recv(struct env *v, uint8_t *buf, size_t cap)
{
	uint8_t tmp[NET_VNET_HDR_LEN + 70000];
	ssize_t n = recv(v->peer, tmp, sizeof(tmp), MSG_DONTWAIT);

	if (n < NET_VNET_HDR_LEN)
		return 0;
	n -= NET_VNET_HDR_LEN;
	memcpy(buf, tmp + NET_VNET_HDR_LEN, (size_t)n < cap ? (size_t)n : cap);
	return (size_t)n;
}

static inline void peer_send(struct env *v, const uint8_t *f, size_t len, uint8_t vflags)
{
	static uint8_t tmp[NET_VNET_HDR_LEN + 16384];

	memset(tmp, 0, sizeof(tmp));

	tmp[0] = vflags;
	memcpy(tmp + NET_VNET_HDR_LEN, f, len);
	CHECK(send(v->peer, tmp, NET_VNET_HDR_LEN + len, 0) == (ssize_t)(NET_VNET_HDR_LEN + len));
}

#endif /* VMLET_TESTS_NIC_E1000E_ENV_H */
