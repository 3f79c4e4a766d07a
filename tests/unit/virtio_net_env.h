/* SPDX-License-Identifier: MIT */
/*
 * virtio_net_env.h - a virtio-net device without KVM for the unit tests:
 * the device on the fake PCI bus of virtio_test_pci.h, a mini driver with
 * rx/tx/control rings (struct env), and a test backend over a
 * SOCK_SEQPACKET socketpair (one message = one frame with its vnet header)
 * so the test plays the network. Header-only: included by
 * tests/unit/net_virtio_test.c and net_virtio_tap_test.c.
 */
#ifndef VMLET_TESTS_VIRTIO_NET_ENV_H
#define VMLET_TESTS_VIRTIO_NET_ENV_H

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/virtio/virtio_net.h"
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
static inline ssize_t sp_recv(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
	ssize_t n = recvmsg(be->fd, &m, MSG_DONTWAIT | MSG_TRUNC);

	return n < 0 ? -errno : n;
}

static inline int sp_send(struct net_backend *be, const struct iovec *iov, int n)
{
	struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};

	return sendmsg(be->fd, &m, MSG_DONTWAIT) < 0 ? -errno : 0;
}

static inline int sp_offload(struct net_backend *be, unsigned int flags)
{
	((struct sp_be *)be)->offload = flags | 0x100;
	return 0;
}

static inline int sp_enabled(struct net_backend *be, bool on)
{
	((struct sp_be *)be)->enabled = on;
	return 0;
}

static inline void sp_destroy(struct net_backend *be)
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

static inline struct sp_be *sp_new(bool vnet)
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

static inline uint16_t ring_post(struct env *e, unsigned int q, const struct tbuf *b,
				 unsigned int n)
{
	struct ring *r = &e->r[q];
	uint8_t *ram = e->d.ram;
	uint16_t head = r->next_desc % QSIZE, idx;

	for (unsigned int i = 0; i < n; i++) {
		struct virtq_desc *d;

		idx = r->next_desc++ % QSIZE;
		d = (struct virtq_desc *)(void *)(ram + RING(q) + 16u * idx);
		*d = (struct virtq_desc){b[i].addr, b[i].len,
					 (uint16_t)((b[i].write ? VRING_DESC_F_WRITE : 0) |
						    (i + 1 < n ? VRING_DESC_F_NEXT : 0)),
					 (uint16_t)(r->next_desc % QSIZE)};
	}
	*(uint16_t *)(void *)(ram + RING(q) + 0x4000 + 4 + 2u * (r->avail_idx % QSIZE)) = head;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	r->avail_idx++;
	*(uint16_t *)(void *)(ram + RING(q) + 0x4000 + 2) = r->avail_idx;
	return head;
}

static inline int ring_used(struct env *e, unsigned int q, uint32_t *id, uint32_t *len, int ms)
{
	struct ring *r = &e->r[q];

	*id = *len = 0; /* defined even when nothing arrives */
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

static inline gpa_t alloc(struct env *e, uint32_t len)
{
	gpa_t g = e->data;

	e->data += (len + 63) & ~63u;
	return g;
}

static inline uint8_t status(struct env *e)
{
	return (uint8_t)mmio_rd(e->v.common + 0x14, 1);
}

/* Negotiate want & offered and set up every queue. Returns the status. */
static inline uint8_t start(struct env *e, uint64_t want, uint64_t *offered)
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

static inline int env_up_any(struct env *e, bool vnet, unsigned int pairs, bool dhcp,
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
	if (thost_init(&e->h, &e->d.mem) || virtio_net_create(&e->net, &e->h, &att) ||
	    tvdev_probe(&e->v, 1))
		return -1;
	CHECK(att.be[0] == NULL); /* moved into the device */
	tvdev_msix(&e->v, e->nq + 1);
	return 0;
}

static inline int env_up(struct env *e, bool vnet, unsigned int pairs, bool dhcp)
{
	return env_up_any(e, vnet, pairs, dhcp, NULL);
}

/* A device for cfg's first NIC (virtio_net_create_nic: the real binding)
 * on a fresh test bus and driver. Returns its result. */
static inline int env_up_nic(struct env *e, const struct vm_config *cfg, struct virtio_net **n)
{
	memset(e, 0, sizeof(*e));
	tbus_n = 0;
	tdrv_init(&e->d, 4 << 20, QSIZE);
	CHECK(thost_init(&e->h, &e->d.mem) == 0);
	return virtio_net_create_nic(n, &e->h, cfg, 0);
}

static inline void env_down(struct env *e)
{
	virtio_net_destroy(e->net);
	pci_host_release(&e->h);
	tdrv_release(&e->d);
}

/* Send len bytes of frame (with a zero header) from the network side. */
static inline void net_inject(struct env *e, unsigned int pair, const void *frame, size_t len)
{
	uint8_t buf[NET_FRAME_MAX] = {0};

	memcpy(buf + NET_VNET_HDR_LEN, frame, len);
	CHECK(send(e->be[pair]->peer, buf, len + NET_VNET_HDR_LEN, 0) ==
	      (ssize_t)(len + NET_VNET_HDR_LEN));
}

static inline ssize_t net_take(struct env *e, unsigned int pair, void *buf, size_t cap, int ms)
{
	struct pollfd p = {e->be[pair]->peer, POLLIN, 0};

	if (poll(&p, 1, ms) != 1)
		return -1;
	return recv(e->be[pair]->peer, buf, cap, MSG_DONTWAIT);
}

static inline void fill(uint8_t *f, size_t len, uint8_t seed)
{
	memset(f, 0xff, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x99", 6);
	f[12] = 0x88, f[13] = 0xb5; /* local experimental ethertype */
	for (size_t i = 14; i < len; i++)
		f[i] = (uint8_t)(seed + i);
}

#endif
