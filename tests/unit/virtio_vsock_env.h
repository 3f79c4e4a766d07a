/* SPDX-License-Identifier: MIT */
/*
 * virtio_vsock_env.h - a virtio-vsock device (vmm/virtio/virtio_vsock.h)
 * without KVM for the unit tests: the device on the fake PCI bus of
 * virtio_test_pci.h with its three queues set up the way Linux's
 * vmw_vsock_virtio_transport does (struct tc: tc_start/tc_stop), packets
 * to and from the guest (send_pkt, recv_pkt, expect), and the host's side
 * over Unix sockets (listen_at, connect_to, accept_2s, read_n). The guest
 * CID is CID; a stream is opened with open_stream. Header-only: included
 * once per test program by virtio_vsock_test.c, virtio_vsock_hostile_test.c
 * and virtio_vsock_snap_test.c. The functions are static (unused ones are
 * fine) rather than inline, so GCC inlines them no more than it would in
 * the file they came from.
 */
#ifndef VMLET_TESTS_VIRTIO_VSOCK_ENV_H
#define VMLET_TESTS_VIRTIO_VSOCK_ENV_H

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <linux/virtio_vsock.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_vsock.h"

#define RAM  (32ull << 20)
#define QS   128
#define CID  42
#define RXB  0x100000ull /* receive buffers: RXSZ each, by descriptor */
#define RXSZ 0x2000u
#define TXB  0x400000ull /* transmit packets: TXSZ each, by descriptor */
#define TXSZ 0x11000u
#define VER1 (1ull << 32)
#define HL   sizeof(struct virtio_vsock_hdr)

struct tq {
	gpa_t desc, avail, used;
	uint16_t avail_idx, next, last_used;
};

struct tc {
	struct guest_mem mem;
	uint8_t *ram;
	struct pci_host h;
	struct virtio_vsock *v;
	struct tvdev d;
	struct tq q[3];
	char path[100];
};

static __attribute__((unused)) void tq_setup(struct tc *t, unsigned int i)
{
	struct tq *q = &t->q[i];
	gpa_t base = 0x10000 + 0x8000ull * i;

	*q = (struct tq){base, base + 0x2000, base + 0x4000, 0, 0, 0};
	mmio_wr(t->d.common + 0x16, i, 2);
	mmio_wr(t->d.common + 0x18, QS, 2);
	mmio_wr(t->d.common + 0x1a, i + 1, 2);
	mmio_wr(t->d.common + 0x20, (uint32_t)q->desc, 4);
	mmio_wr(t->d.common + 0x24, 0, 4);
	mmio_wr(t->d.common + 0x28, (uint32_t)q->avail, 4);
	mmio_wr(t->d.common + 0x2c, 0, 4);
	mmio_wr(t->d.common + 0x30, (uint32_t)q->used, 4);
	mmio_wr(t->d.common + 0x34, 0, 4);
	mmio_wr(t->d.common + 0x1c, 1, 2);
}

/* Post one buffer on queue i (addr(head) gives its address); kick. */
static __attribute__((unused)) uint16_t tq_post(struct tc *t, unsigned int i, uint64_t base,
						uint32_t stride, uint32_t len, int wr,
						uint64_t addr_override)
{
	struct tq *q = &t->q[i];
	uint16_t head = q->next++ % QS;
	uint64_t a = addr_override ? addr_override : base + (uint64_t)stride * head;
	struct virtq_desc d = {a, len, (uint16_t)(wr ? VRING_DESC_F_WRITE : 0), 0};

	memcpy(t->ram + q->desc + 16u * head, &d, sizeof(d));
	memcpy(t->ram + q->avail + 4 + 2u * (q->avail_idx % QS), &head, 2);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	q->avail_idx++;
	memcpy(t->ram + q->avail + 2, &q->avail_idx, 2);
	tvdev_kick(&t->d, (uint16_t)i);
	return head;
}

static __attribute__((unused)) int tq_used(struct tc *t, unsigned int i, uint32_t *id,
					   uint32_t *len, int ms)
{
	struct tq *q = &t->q[i];

	for (int k = 0; k <= ms; k++) {
		uint16_t idx =
		    __atomic_load_n((uint16_t *)(void *)(t->ram + q->used + 2), __ATOMIC_ACQUIRE);
		if (idx != q->last_used) {
			uint8_t *e = t->ram + q->used + 4 + 8u * (q->last_used % QS);

			memcpy(id, e, 4);
			memcpy(len, e + 4, 4);
			q->last_used++;
			return 1;
		}
		usleep(1000);
	}
	return 0;
}

static __attribute__((unused)) void rx_give(struct tc *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		tq_post(t, 0, RXB, RXSZ, RXSZ, 1, 0);
}

static uint32_t t_buf_alloc = 65536; /* the guest's credit its packets carry */

static __attribute__((unused)) struct virtio_vsock_hdr hdr(uint32_t src, uint32_t dst, uint16_t op)
{
	return (struct virtio_vsock_hdr){.src_cid = CID,
					 .dst_cid = 2,
					 .src_port = src,
					 .dst_port = dst,
					 .type = VIRTIO_VSOCK_TYPE_STREAM,
					 .op = op,
					 .buf_alloc = t_buf_alloc};
}

/* A packet from the guest (header h, then len bytes of p); waits for the
 * device to take it unless nowait. */
static __attribute__((unused)) void send_pkt(struct tc *t, struct virtio_vsock_hdr h, const void *p,
					     uint32_t len, int nowait)
{
	uint16_t head = t->q[1].next % QS;
	uint8_t *b = t->ram + TXB + (uint64_t)TXSZ * head;
	uint32_t id, ul;

	if (!h.len) /* a hostile test sets its own */
		h.len = len;
	memcpy(b, &h, HL);
	if (len)
		memcpy(b + HL, p, len);
	tq_post(t, 1, TXB, TXSZ, (uint32_t)HL + len, 0, 0);
	if (!nowait)
		CHECK(tq_used(t, 1, &id, &ul, 2000));
}

/* The next packet to the guest within ms: 1, its header and payload. */
static __attribute__((unused)) int recv_pkt(struct tc *t, struct virtio_vsock_hdr *h, void *p,
					    uint32_t cap, int ms)
{
	uint32_t id = 0, len = 0;
	const uint8_t *b;

	if (!tq_used(t, 0, &id, &len, ms))
		return 0;
	b = t->ram + RXB + (uint64_t)RXSZ * id;
	CHECK(len >= HL);
	memcpy(h, b, HL);
	CHECK_EQ_U64(len, HL + h->len);
	if (p)
		memcpy(p, b + HL, h->len < cap ? h->len : cap);
	return 1;
}

static __attribute__((unused)) void expect(struct tc *t, uint16_t op, uint32_t src, uint32_t dst)
{
	struct virtio_vsock_hdr h;

	CHECK(recv_pkt(t, &h, NULL, 0, 2000));
	CHECK_EQ_U64(h.op, op);
	CHECK_EQ_U64(h.src_cid, 2);
	CHECK_EQ_U64(h.dst_cid, CID);
	CHECK_EQ_U64(h.src_port, src);
	CHECK_EQ_U64(h.dst_port, dst);
	CHECK_EQ_U64(h.type, VIRTIO_VSOCK_TYPE_STREAM);
}

static __attribute__((unused)) void tc_start(struct tc *t, int with_path)
{
	memset(t, 0, sizeof(*t));
	tbus_n = 0;
	t->ram = mmap(NULL, RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(t->ram != MAP_FAILED);
	t->mem = (struct guest_mem){.n = 1, .total = RAM, .page_size = 4096};
	t->mem.r[0] = (struct guest_mem_region){0, RAM, t->ram};
	snprintf(t->path, sizeof(t->path), "%s/vv%d.sock", getenv("TMPDIR") ?: "/tmp", getpid());
	CHECK(thost_init(&t->h, &t->mem) == 0);
	CHECK(virtio_vsock_create(&t->v, &t->h, CID, with_path ? t->path : NULL) == 0);
	CHECK(tvdev_probe(&t->d, 1) == 0);
	CHECK_EQ_U64(ecam_rd(1, 0, 4), 0x10531af4); /* virtio device id 19 */
	tvdev_msix(&t->d, 4);
	tvdev_negotiate(&t->d, VER1, NULL);
	mmio_wr(t->d.common + 0x10, 0, 2);
	for (unsigned int i = 0; i < 3; i++)
		tq_setup(t, i);
	mmio_wr(t->d.common + 0x14, 0x0f, 1);
	CHECK_EQ_U64(mmio_rd(t->d.common + 0x14, 1), 0x0f);
}

static __attribute__((unused)) void tc_stop(struct tc *t)
{
	virtio_vsock_destroy(t->v);
	pci_host_release(&t->h);
	munmap(t->ram, RAM);
	unlink(t->path);
}

static __attribute__((unused)) int listen_at(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path) < (int)sizeof(sa.sun_path));
	unlink(path);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 4) == 0);
	return fd;
}

static __attribute__((unused)) int connect_to(const char *path, int rcvbuf)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	return fd;
}

/* A connection on listener l within 2 s, or -1. */
static __attribute__((unused)) int accept_2s(int l)
{
	struct pollfd pf = {l, POLLIN, 0};

	return poll(&pf, 1, 2000) == 1 ? accept(l, NULL, NULL) : -1;
}

/* Read exactly n bytes within 2 s. */
static __attribute__((unused)) ssize_t read_n(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd pf = {fd, POLLIN, 0};
		ssize_t r;

		if (poll(&pf, 1, 2000) <= 0)
			break;
		r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Open guest port 1000 -> host port 7000 (listener l): the host's fd. */
static __attribute__((unused)) int open_stream(struct tc *t, int l, uint32_t buf_alloc)
{
	struct virtio_vsock_hdr h = hdr(1000, 7000, VIRTIO_VSOCK_OP_REQUEST);

	h.buf_alloc = buf_alloc;
	send_pkt(t, h, NULL, 0, 0);
	expect(t, VIRTIO_VSOCK_OP_RESPONSE, 7000, 1000);
	return accept_2s(l);
}

#endif /* VMLET_TESTS_VIRTIO_VSOCK_ENV_H */
