// SPDX-License-Identifier: MIT
/* virtio-vsock through the PCI transport, driven as Linux's
 * vmw_vsock_virtio_transport does and as a hostile driver might: the
 * guest CID in config space; guest-initiated streams to the Unix listener
 * PATH_P (through the connector process) and refused ones; host-initiated
 * streams with the CONNECT / OK handshake; the clean close; credit-based
 * flow control both ways without a lost byte; and every field the guest
 * writes (CIDs, ports, lengths, types, ops out of state, tiny or missing
 * receive buffers, a flood of requests) handled without harm; a snapshot
 * with --resume keeps a connection, a restore sends TRANSPORT_RESET on the
 * event queue and takes new host connections, and refuses another CID. */
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <linux/virtio_vsock.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/sandbox/connector.h"
#include "vmm/snapshot/snap_buf.h"
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

static void tq_setup(struct tc *t, unsigned int i)
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
static uint16_t tq_post(struct tc *t, unsigned int i, uint64_t base, uint32_t stride, uint32_t len,
			int wr, uint64_t addr_override)
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

static int tq_used(struct tc *t, unsigned int i, uint32_t *id, uint32_t *len, int ms)
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

static void rx_give(struct tc *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		tq_post(t, 0, RXB, RXSZ, RXSZ, 1, 0);
}

static uint32_t t_buf_alloc = 65536; /* the guest's credit its packets carry */

static struct virtio_vsock_hdr hdr(uint32_t src, uint32_t dst, uint16_t op)
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
static void send_pkt(struct tc *t, struct virtio_vsock_hdr h, const void *p, uint32_t len,
		     int nowait)
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
static int recv_pkt(struct tc *t, struct virtio_vsock_hdr *h, void *p, uint32_t cap, int ms)
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

static void expect(struct tc *t, uint16_t op, uint32_t src, uint32_t dst)
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

static void tc_start(struct tc *t, int with_path)
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

static void tc_stop(struct tc *t)
{
	virtio_vsock_destroy(t->v);
	pci_host_release(&t->h);
	munmap(t->ram, RAM);
	unlink(t->path);
}

static int listen_at(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 4) == 0);
	return fd;
}

static int connect_to(const char *path, int rcvbuf)
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
static int accept_2s(int l)
{
	struct pollfd pf = {l, POLLIN, 0};

	return poll(&pf, 1, 2000) == 1 ? accept(l, NULL, NULL) : -1;
}

/* Read exactly n bytes within 2 s. */
static ssize_t read_n(int fd, void *buf, size_t n)
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

static void test_config_and_guest_connect(void)
{
	struct virtio_vsock_hdr h;
	struct tc t;
	char lpath[120], buf[64];
	struct stat st;
	int l, fd;

	tc_start(&t, 1);
	CHECK_EQ_U64(mmio_rd(t.d.device, 4), CID);
	CHECK_EQ_U64(mmio_rd(t.d.device + 4, 4), 0);
	CHECK(lstat(t.path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600);
	CHECK_STR(virtio_vsock_path(t.v), t.path);
	rx_give(&t, 16);
	/* nothing listens on PATH_5000 yet: refused with a reset */
	send_pkt(&t, hdr(1234, 5000, VIRTIO_VSOCK_OP_REQUEST), NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 5000, 1234);
	snprintf(lpath, sizeof(lpath), "%s_5000", t.path);
	l = listen_at(lpath);
	send_pkt(&t, hdr(1234, 5000, VIRTIO_VSOCK_OP_REQUEST), NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RESPONSE, 5000, 1234);
	fd = accept_2s(l);
	CHECK(fd >= 0);
	send_pkt(&t, hdr(1234, 5000, VIRTIO_VSOCK_OP_RW), "hello", 5, 0);
	CHECK_EQ_U64(read_n(fd, buf, 5), 5);
	CHECK(!memcmp(buf, "hello", 5));
	CHECK_EQ_U64(write(fd, "world!", 6), 6);
	CHECK(recv_pkt(&t, &h, buf, sizeof(buf), 2000));
	CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_RW);
	CHECK_EQ_U64(h.len, 6);
	CHECK_EQ_U64(h.fwd_cnt, 5); /* the 5 bytes went to the host */
	CHECK_EQ_U64(h.buf_alloc, VIRTIO_VSOCK_BUF_ALLOC);
	CHECK(!memcmp(buf, "world!", 6));
	/* the guest closes: the host reads its end, the guest gets the RST */
	h = hdr(1234, 5000, VIRTIO_VSOCK_OP_SHUTDOWN);
	h.flags = VIRTIO_VSOCK_SHUTDOWN_RCV | VIRTIO_VSOCK_SHUTDOWN_SEND;
	send_pkt(&t, h, NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 5000, 1234);
	CHECK_EQ_U64(read(fd, buf, sizeof(buf)), 0);
	close(fd);
	close(l);
	unlink(lpath);
	tc_stop(&t);
}

static void test_host_connect(void)
{
	struct virtio_vsock_hdr h;
	struct tc t;
	char buf[64];
	uint32_t hp;
	int fd;

	tc_start(&t, 1);
	rx_give(&t, 16);
	fd = connect_to(t.path, 0);
	CHECK_EQ_U64(write(fd, "CONNECT 80\n", 11), 11);
	CHECK(recv_pkt(&t, &h, NULL, 0, 2000));
	CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_REQUEST);
	CHECK_EQ_U64(h.dst_port, 80);
	hp = h.src_port;
	CHECK(hp >= 0x40000000u);
	send_pkt(&t, hdr(80, hp, VIRTIO_VSOCK_OP_RESPONSE), NULL, 0, 0);
	snprintf(buf, sizeof(buf), "OK %u\n", hp);
	{
		char got[64] = {0};

		CHECK_EQ_U64(read_n(fd, got, strlen(buf)), strlen(buf));
		CHECK_STR(got, buf);
	}
	CHECK_EQ_U64(write(fd, "ping", 4), 4);
	CHECK(recv_pkt(&t, &h, buf, sizeof(buf), 2000));
	CHECK(h.op == VIRTIO_VSOCK_OP_RW && h.len == 4 && !memcmp(buf, "ping", 4));
	send_pkt(&t, hdr(80, hp, VIRTIO_VSOCK_OP_RW), "pong", 4, 0);
	CHECK_EQ_U64(read_n(fd, buf, 4), 4);
	CHECK(!memcmp(buf, "pong", 4));
	/* the host leaves: SHUTDOWN (no more from the host); the guest's
	 * own SHUTDOWN then ends it with an RST */
	close(fd);
	CHECK(recv_pkt(&t, &h, NULL, 0, 2000));
	CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_SHUTDOWN);
	CHECK_EQ_U64(h.flags, VIRTIO_VSOCK_SHUTDOWN_SEND);
	h = hdr(80, hp, VIRTIO_VSOCK_OP_SHUTDOWN);
	h.flags = 3;
	send_pkt(&t, h, NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, hp, 80);
	/* the guest refuses the next one: the client's socket is closed */
	fd = connect_to(t.path, 0);
	CHECK_EQ_U64(write(fd, "CONNECT 81\n", 11), 11);
	CHECK(recv_pkt(&t, &h, NULL, 0, 2000));
	CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_REQUEST);
	send_pkt(&t, hdr(81, h.src_port, VIRTIO_VSOCK_OP_RST), NULL, 0, 0);
	CHECK_EQ_U64(read_n(fd, buf, 1), 0);
	close(fd);
	/* bad lines: closed, the guest hears nothing */
	static const char *const bad[] = {"CONNECT\n", "CONNECT 99999999999\n", "connect 5\n",
					  "CONNECT 5x\n", "CONNECT 123456789012345678901234567"};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = connect_to(t.path, 0);
		CHECK(write(fd, bad[i], strlen(bad[i])) > 0);
		CHECK_EQ_U64(read_n(fd, buf, 1), 0);
		close(fd);
	}
	CHECK(!recv_pkt(&t, &h, NULL, 0, 100));
	tc_stop(&t);
}

/* Open guest port 1000 -> host port 7000 (listener l): the host's fd. */
static int open_stream(struct tc *t, int l, uint32_t buf_alloc)
{
	struct virtio_vsock_hdr h = hdr(1000, 7000, VIRTIO_VSOCK_OP_REQUEST);

	h.buf_alloc = buf_alloc;
	send_pkt(t, h, NULL, 0, 0);
	expect(t, VIRTIO_VSOCK_OP_RESPONSE, 7000, 1000);
	return accept_2s(l);
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* A host reader that does not read: the guest's packets are still taken
 * (no queue stalls) up to the credit, none is lost; past it, a reset. */
static void test_flow_control(void)
{
	enum { PKT = 4096 };
	static uint8_t data[1 << 20], got[sizeof(data)];
	struct virtio_vsock_hdr h;
	struct tc t;
	char lpath[120];
	uint32_t sent = 0, fwd = 0;
	int l, fd, credit_seen = 0;

	tc_start(&t, 1);
	rx_give(&t, 100);
	snprintf(lpath, sizeof(lpath), "%s_7000", t.path);
	l = listen_at(lpath);
	t_buf_alloc = 100;
	fd = open_stream(&t, l, 100);
	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 31 + (i >> 12));
	/* fill the host socket and the device's buffer: within the credit
	 * (fwd counts bytes the host took) every packet completes */
	while (sent - fwd + PKT <= VIRTIO_VSOCK_BUF_ALLOC && sent + PKT <= sizeof(data)) {
		send_pkt(&t, hdr(1000, 7000, VIRTIO_VSOCK_OP_RW), data + sent, PKT, 0);
		sent += PKT;
		while (recv_pkt(&t, &h, NULL, 0, 0)) /* credit updates */
			if (h.op == VIRTIO_VSOCK_OP_CREDIT_UPDATE)
				fwd = h.fwd_cnt, credit_seen = 1;
	}
	/* stopped by the credit: the socket full, the device's buffer too */
	CHECK(sent > VIRTIO_VSOCK_BUF_ALLOC && sent < sizeof(data));
	/* the host reads everything, in order */
	CHECK_EQ_U64(read_n(fd, got, sent), sent);
	CHECK_EQ_U64(fnv(1, got, sent), fnv(1, data, sent));
	/* and the guest hears of the room made */
	while (recv_pkt(&t, &h, NULL, 0, 500))
		if (h.op == VIRTIO_VSOCK_OP_CREDIT_UPDATE)
			fwd = h.fwd_cnt, credit_seen = 1;
	CHECK(credit_seen);
	CHECK(sent - fwd <= VIRTIO_VSOCK_BUF_ALLOC / 2);
	/* host -> guest: only the guest's credit of 100 bytes goes */
	CHECK_EQ_U64(write(fd, data, 1000), 1000);
	CHECK(recv_pkt(&t, &h, got, sizeof(got), 2000));
	CHECK_EQ_U64(h.len, 100);
	CHECK(!recv_pkt(&t, &h, NULL, 0, 100));
	/* the guest's credit update releases 100 more */
	h = hdr(1000, 7000, VIRTIO_VSOCK_OP_CREDIT_UPDATE);
	h.buf_alloc = 100;
	h.fwd_cnt = 100;
	send_pkt(&t, h, NULL, 0, 0);
	CHECK(recv_pkt(&t, &h, got + 100, sizeof(got) - 100, 2000));
	CHECK_EQ_U64(h.len, 100);
	CHECK(!memcmp(got, data, 200));
	/* a CREDIT_REQUEST is answered */
	send_pkt(&t, hdr(1000, 7000, VIRTIO_VSOCK_OP_CREDIT_REQUEST), NULL, 0, 0);
	CHECK(recv_pkt(&t, &h, NULL, 0, 2000));
	CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_CREDIT_UPDATE);
	CHECK_EQ_U64(h.fwd_cnt, sent);
	t_buf_alloc = 65536;
	close(fd);
	close(l);
	unlink(lpath);
	tc_stop(&t);
}

static void test_beyond_credit_resets(void)
{
	enum { PKT = 65536 };
	static uint8_t data[PKT];
	struct virtio_vsock_hdr h;
	struct tc t;
	char lpath[120];
	int l, fd, rcv = 4096;

	tc_start(&t, 1);
	rx_give(&t, 16);
	snprintf(lpath, sizeof(lpath), "%s_7000", t.path);
	l = listen_at(lpath);
	fd = open_stream(&t, l, 65536);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	/* a guest that ignores the credit: the stream is reset, not buffered */
	for (int i = 0; i < 8; i++)
		send_pkt(&t, hdr(1000, 7000, VIRTIO_VSOCK_OP_RW), data, PKT, 0);
	do /* (credit updates for what the host socket took first) */
		CHECK(recv_pkt(&t, &h, NULL, 0, 2000));
	while (h.op == VIRTIO_VSOCK_OP_CREDIT_UPDATE);
	CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_RST);
	close(fd);
	close(l);
	unlink(lpath);
	tc_stop(&t);
}

static void test_hostile_driver(void)
{
	struct virtio_vsock_hdr h;
	struct tc t;
	char lpath[120];
	uint32_t id, len;
	int l, fd;

	tc_start(&t, 1);
	/* receive buffers too small for a header, or outside RAM: skipped */
	tq_post(&t, 0, RXB, RXSZ, 8, 1, 0);
	tq_post(&t, 0, RXB, RXSZ, 64, 1, RAM + 0x1000);
	rx_give(&t, 40);
	/* from another CID, or to one other than the host: dropped */
	h = hdr(1, 2, VIRTIO_VSOCK_OP_REQUEST);
	h.src_cid = 7;
	send_pkt(&t, h, NULL, 0, 0);
	h = hdr(1, 2, VIRTIO_VSOCK_OP_REQUEST);
	h.dst_cid = 1;
	send_pkt(&t, h, NULL, 0, 0);
	h = hdr(1, 2, VIRTIO_VSOCK_OP_REQUEST);
	h.src_cid |= 1ull << 40;
	send_pkt(&t, h, NULL, 0, 0);
	CHECK(!tq_used(&t, 0, &id, &len, 100));
	/* a packet with no connection: RST (after the two skipped buffers
	 * came back empty); an RST with none: nothing */
	send_pkt(&t, hdr(5, 6, VIRTIO_VSOCK_OP_RW), "x", 1, 0);
	CHECK(tq_used(&t, 0, &id, &len, 2000) && len == 0);
	CHECK(tq_used(&t, 0, &id, &len, 2000) && len == 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 6, 5);
	send_pkt(&t, hdr(5, 6, VIRTIO_VSOCK_OP_RST), NULL, 0, 0);
	/* a length past the buffer, past 64 KiB, an unknown type: RST */
	h = hdr(5, 6, VIRTIO_VSOCK_OP_RW);
	h.len = 100;
	send_pkt(&t, h, NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 6, 5);
	h.len = 0xffffffffu;
	send_pkt(&t, h, NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 6, 5);
	h = hdr(5, 6, VIRTIO_VSOCK_OP_REQUEST);
	h.type = VIRTIO_VSOCK_TYPE_SEQPACKET;
	send_pkt(&t, h, NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 6, 5);
	/* a header cut short: dropped */
	{
		uint16_t head = t.q[1].next % QS;

		memcpy(t.ram + TXB + (uint64_t)TXSZ * head, &h, 20);
		tq_post(&t, 1, TXB, TXSZ, 20, 0, 0);
		CHECK(tq_used(&t, 1, &id, &len, 2000));
	}
	CHECK(!tq_used(&t, 0, &id, &len, 100));
	/* ops out of state on a live stream: RESPONSE, unknown ops, a second
	 * REQUEST on its ports: each resets it */
	snprintf(lpath, sizeof(lpath), "%s_7000", t.path);
	l = listen_at(lpath);
	static const uint16_t ops[] = {VIRTIO_VSOCK_OP_RESPONSE, 0, 99, VIRTIO_VSOCK_OP_REQUEST};
	for (unsigned int i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		char c;

		fd = open_stream(&t, l, 65536);
		CHECK(fd >= 0);
		send_pkt(&t, hdr(1000, 7000, ops[i]), NULL, 0, 0);
		expect(&t, VIRTIO_VSOCK_OP_RST, 7000, 1000);
		CHECK_EQ_U64(read_n(fd, &c, 1), 0); /* the host side closed too */
		close(fd);
	}
	/* RW after the guest said it sends no more */
	fd = open_stream(&t, l, 65536);
	h = hdr(1000, 7000, VIRTIO_VSOCK_OP_SHUTDOWN);
	h.flags = VIRTIO_VSOCK_SHUTDOWN_SEND;
	send_pkt(&t, h, NULL, 0, 0);
	send_pkt(&t, hdr(1000, 7000, VIRTIO_VSOCK_OP_RW), "late", 4, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 7000, 1000);
	close(fd);
	close(l);
	unlink(lpath);
	tc_stop(&t);
}

/* A flood of refused requests while the guest posts no receive buffer:
 * the transmit queue stops once 64 resets are owed (none is lost), and
 * goes on when buffers come. */
static void test_request_flood(void)
{
	struct virtio_vsock_hdr h;
	struct tc t;
	uint32_t id, len, n;

	tc_start(&t, 1);
	for (uint32_t i = 0; i < 100; i++)
		send_pkt(&t, hdr(2000 + i, 9, VIRTIO_VSOCK_OP_REQUEST), NULL, 0, 1);
	for (n = 0; tq_used(&t, 1, &id, &len, n < 64 ? 2000 : 200);)
		n++;
	CHECK_EQ_U64(n, 64);
	rx_give(&t, 100);
	for (uint32_t i = 0; i < 100; i++) {
		CHECK(recv_pkt(&t, &h, NULL, 0, 2000));
		CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_RST);
		CHECK_EQ_U64(h.dst_port, 2000 + i);
	}
	for (; n < 100 && tq_used(&t, 1, &id, &len, 2000);)
		n++;
	CHECK_EQ_U64(n, 100);
	tc_stop(&t);
}

/* Host clients that do not finish the handshake within 5 s (no line, or
 * a guest that never answers) are closed; the guest that saw the request
 * gets an RST. */
static void test_handshake_timeout(void)
{
	struct virtio_vsock_hdr h;
	struct pollfd pf[2];
	struct tc t;
	char c;
	int a, b;

	tc_start(&t, 1);
	rx_give(&t, 8);
	a = connect_to(t.path, 0);
	b = connect_to(t.path, 0);
	CHECK_EQ_U64(write(b, "CONNECT 99\n", 11), 11);
	CHECK(recv_pkt(&t, &h, NULL, 0, 2000));
	CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_REQUEST);
	pf[0] = (struct pollfd){a, POLLIN, 0};
	pf[1] = (struct pollfd){b, POLLIN, 0};
	CHECK(poll(pf, 2, 1000) == 0); /* nothing before the deadline */
	CHECK(poll(&pf[0], 1, 8000) == 1 && read(a, &c, 1) == 0);
	CHECK(poll(&pf[1], 1, 8000) == 1 && read(b, &c, 1) == 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, h.src_port, 99);
	close(a);
	close(b);
	tc_stop(&t);
}

/* Without a host socket every request is refused. */
static void test_no_path(void)
{
	struct tc t;

	tc_start(&t, 0);
	CHECK(virtio_vsock_path(t.v) == NULL);
	rx_give(&t, 4);
	send_pkt(&t, hdr(1, 2, VIRTIO_VSOCK_OP_REQUEST), NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 2, 1);
	tc_stop(&t);
}

static void test_create_refuses(void)
{
	struct virtio_vsock *v = NULL;
	struct pci_host h;
	struct guest_mem mem = {.n = 0};
	char path[100];
	int fd;

	tbus_n = 0;
	CHECK(thost_init(&h, &mem) == 0);
	CHECK(virtio_vsock_create(&v, &h, 2, NULL) == -EINVAL);
	CHECK(virtio_vsock_create(&v, &h, 1ull << 32, NULL) == -EINVAL);
	/* a file planted where the socket goes is not replaced */
	snprintf(path, sizeof(path), "%s/vvf%d.sock", getenv("TMPDIR") ?: "/tmp", getpid());
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	close(fd);
	CHECK(virtio_vsock_create(&v, &h, 3, path) == -EEXIST);
	unlink(path);
	pci_host_release(&h);
}

static int confine_kill(void)
{
	return connector_filter(SANDBOX_SECCOMP_KILL);
}

/* The connector under its own seccomp filter (as sandbox_prepare() sets
 * it up) still connects, and still refuses what is not there. */
static void test_connector_confined(void)
{
	struct virtio_vsock_hdr h;
	struct tc t;
	char lpath[120], buf[8];
	int l, fd;

	connector_confine = confine_kill;
	tc_start(&t, 1);
	rx_give(&t, 8);
	snprintf(lpath, sizeof(lpath), "%s_4294967295", t.path);
	l = listen_at(lpath);
	send_pkt(&t, hdr(3, 0xffffffffu, VIRTIO_VSOCK_OP_REQUEST), NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RESPONSE, 0xffffffffu, 3);
	fd = accept_2s(l);
	CHECK(fd >= 0);
	send_pkt(&t, hdr(3, 0xffffffffu, VIRTIO_VSOCK_OP_RW), "abc", 3, 0);
	CHECK_EQ_U64(read_n(fd, buf, 3), 3);
	send_pkt(&t, hdr(4, 0, VIRTIO_VSOCK_OP_REQUEST), NULL, 0, 0);
	expect(&t, VIRTIO_VSOCK_OP_RST, 0, 4);
	/* the connector is alive after both (a filter kill would show here) */
	send_pkt(&t, hdr(5, 0xffffffffu, VIRTIO_VSOCK_OP_REQUEST), NULL, 0, 0);
	CHECK(recv_pkt(&t, &h, NULL, 0, 2000));
	CHECK_EQ_U64(h.op, VIRTIO_VSOCK_OP_RESPONSE);
	connector_confine = NULL;
	close(fd);
	close(l);
	unlink(lpath);
	tc_stop(&t);
}

/* ---- snapshot (vmm/virtio/virtio_vsock_snap.c) ------------------------- */

#define EVB 0x800000ull /* event buffers: 16 bytes each, by descriptor */

/* A host client's connection to guest port 80, accepted by the guest:
 * the client's fd, the host port in *hp. */
static int host_connect(struct tc *t, uint32_t *hp)
{
	struct virtio_vsock_hdr h;
	char want[32], got[32] = {0};
	int fd = connect_to(t->path, 0);

	CHECK_EQ_U64(write(fd, "CONNECT 80\n", 11), 11);
	CHECK(recv_pkt(t, &h, NULL, 0, 2000));
	CHECK(h.op == VIRTIO_VSOCK_OP_REQUEST && h.dst_port == 80);
	*hp = h.src_port;
	send_pkt(t, hdr(80, *hp, VIRTIO_VSOCK_OP_RESPONSE), NULL, 0, 0);
	snprintf(want, sizeof(want), "OK %u\n", *hp);
	CHECK_EQ_U64(read_n(fd, got, strlen(want)), strlen(want));
	CHECK_STR(got, want);
	return fd;
}

static void snap_save(struct tc *t, struct snap_buf *s)
{
	struct virtio_pci *vp = virtio_vsock_pci(t->v);

	memset(s, 0, sizeof(*s));
	CHECK_EQ_U64(virtio_pci_freeze(vp), 0);
	pci_dev_save(&vp->pci, s);
	CHECK_EQ_U64(virtio_pci_save(vp, s), 0);
}

/* A snapshot with --resume (twice in a row, as a migration's source
 * does): the device is held (nothing reaches the guest), then goes on
 * with its connection; a driver reset afterwards still drops it. */
static void test_snapshot_resume(void)
{
	struct virtio_vsock_hdr h;
	struct snap_buf s;
	struct tc t;
	char buf[16];
	uint32_t hp;
	int fd;

	tc_start(&t, 1);
	rx_give(&t, 16);
	fd = host_connect(&t, &hp);
	/* a migration's source holds, lets go and holds again at once */
	snap_save(&t, &s);
	virtio_pci_thaw(virtio_vsock_pci(t.v));
	snap_buf_release(&s);
	snap_save(&t, &s);
	CHECK_EQ_U64(write(fd, "abc", 3), 3);
	CHECK(!recv_pkt(&t, &h, buf, sizeof(buf), 200)); /* held */
	virtio_pci_thaw(virtio_vsock_pci(t.v));
	CHECK(recv_pkt(&t, &h, buf, sizeof(buf), 2000));
	CHECK(h.op == VIRTIO_VSOCK_OP_RW && h.len == 3 && !memcmp(buf, "abc", 3));
	send_pkt(&t, hdr(80, hp, VIRTIO_VSOCK_OP_RW), "xyz", 3, 0);
	CHECK_EQ_U64(read_n(fd, buf, 3), 3);
	CHECK(!memcmp(buf, "xyz", 3));
	/* the driver's reset (not a snapshot's) drops the connection */
	mmio_wr(t.d.common + 0x14, 0, 1);
	{
		struct pollfd pf = {fd, POLLIN, 0};

		CHECK(poll(&pf, 1, 2000) == 1 && read(fd, buf, 1) == 0); /* the end, not a wait */
	}
	close(fd);
	snap_buf_release(&s);
	tc_stop(&t);
}

/* The device of a saved tc made anew (a restore): the same guest memory
 * and driver state, a device for cid loaded from s. 0 or the error. */
static int snap_restore(struct tc *b, const struct tc *a, const struct snap_buf *s, uint64_t cid)
{
	struct snap_cur c = snap_cur_make(s->p, s->len);
	struct virtio_pci *vp;
	int r;

	*b = *a;
	tbus_n = 0;
	CHECK(thost_init(&b->h, &b->mem) == 0);
	CHECK(virtio_vsock_create(&b->v, &b->h, cid, b->path) == 0);
	vp = virtio_vsock_pci(b->v);
	r = pci_dev_load(&b->h, &vp->pci, &c);
	if (!r)
		r = virtio_pci_load(vp, &c);
	if (!r && c.left)
		r = -EBADMSG;
	if (!r)
		pci_dev_resync(&b->h, &vp->pci);
	if (!r)
		r = virtio_pci_start(vp);
	CHECK(tvdev_probe(&b->d, 1) == 0);
	return r;
}

/* Restored, the device tells the driver its connections are gone (a
 * TRANSPORT_RESET event in the first event buffer, as vhost-vsock after
 * a migration) and host clients connect anew; a snapshot of another CID
 * is refused. */
static void test_snapshot_restore(void)
{
	struct virtio_vsock_event ev;
	struct snap_buf s;
	struct tc a, b;
	uint32_t hp, id, len;
	int fd;

	tc_start(&a, 1);
	rx_give(&a, 16);
	for (int i = 0; i < 4; i++) /* Linux posts its event buffers at probe */
		tq_post(&a, 2, EVB, 16, 16, 1, 0);
	fd = host_connect(&a, &hp);
	snap_save(&a, &s);
	virtio_vsock_destroy(a.v); /* the source vmlet ends */
	pci_host_release(&a.h);
	{
		struct pollfd pf = {fd, POLLIN, 0};

		CHECK(poll(&pf, 1, 2000) == 1 &&
		      read(fd, &id, 1) == 0); /* its client sees the end */
	}
	close(fd);
	CHECK(snap_restore(&b, &a, &s, CID + 1) < 0);
	virtio_vsock_destroy(b.v);
	pci_host_release(&b.h);
	CHECK_EQ_U64(snap_restore(&b, &a, &s, CID), 0);
	CHECK(tq_used(&b, 2, &id, &len, 2000));
	CHECK_EQ_U64(id, 0);
	CHECK_EQ_U64(len, sizeof(ev));
	memcpy(&ev, b.ram + EVB, sizeof(ev));
	CHECK_EQ_U64(ev.id, VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	CHECK(!tq_used(&b, 2, &id, &len, 100)); /* one event */
	fd = host_connect(&b, &hp);
	close(fd);
	snap_buf_release(&s);
	tc_stop(&b);
}

int main(void)
{
	TEST_RUN(test_config_and_guest_connect);
	TEST_RUN(test_host_connect);
	TEST_RUN(test_flow_control);
	TEST_RUN(test_beyond_credit_resets);
	TEST_RUN(test_hostile_driver);
	TEST_RUN(test_request_flood);
	TEST_RUN(test_handshake_timeout);
	TEST_RUN(test_no_path);
	TEST_RUN(test_create_refuses);
	TEST_RUN(test_connector_confined);
	TEST_RUN(test_snapshot_resume);
	TEST_RUN(test_snapshot_restore);
	return test_summary();
}
