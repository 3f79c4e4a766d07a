// SPDX-License-Identifier: MIT
/* virtio-vsock (virtio_vsock_env.h) driven by a hostile driver: every
 * field the guest writes (CIDs, ports, lengths, types, ops out of state,
 * a header cut short, tiny or missing receive buffers, data after its own
 * SHUTDOWN) handled without harm, and a flood of requests while the guest
 * posts no receive buffer stalls the transmit queue without losing a
 * reset. */
#include "tests/unit/virtio_vsock_env.h"

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

int main(void)
{
	TEST_RUN(test_hostile_driver);
	TEST_RUN(test_request_flood);
	return test_summary();
}
