// SPDX-License-Identifier: MIT
/* virtio-vsock through the PCI transport (virtio_vsock_env.h), driven as
 * Linux's vmw_vsock_virtio_transport does: the guest CID in config space;
 * guest-initiated streams to the Unix listener PATH_P (through the
 * connector process, also under its own seccomp filter) and refused ones;
 * host-initiated streams with the CONNECT / OK handshake, bad lines and
 * clients that do not finish it; the clean close; credit-based flow
 * control both ways without a lost byte, and a reset past the credit; no
 * host socket; the CIDs and the planted file virtio_vsock_create()
 * refuses. The hostile driver is in virtio_vsock_hostile_test.c, the
 * snapshots in virtio_vsock_snap_test.c. */
#include <fcntl.h>
#include <sys/stat.h>

#include "tests/unit/virtio_vsock_env.h"
#include "vmm/sandbox/connector.h"

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

int main(void)
{
	TEST_RUN(test_config_and_guest_connect);
	TEST_RUN(test_host_connect);
	TEST_RUN(test_flow_control);
	TEST_RUN(test_beyond_credit_resets);
	TEST_RUN(test_handshake_timeout);
	TEST_RUN(test_no_path);
	TEST_RUN(test_create_refuses);
	TEST_RUN(test_connector_confined);
	return test_summary();
}
