/* SPDX-License-Identifier: MIT */
/*
 * The passt backend against Debian's passt (a peer we did not write), in a
 * network namespace this test creates: passt starts, answers DHCP and ARP
 * with the namespace's addresses, forwards a TCP port, and is restarted
 * after it dies. Skips (77) without root, netns or passt.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "tests/lib/test.h"
#include "tests/unit/net_testns.h"
#include "vmm/net/dhcp.h"
#include "vmm/net/passt.h"
#include "vmm/net/pkt.h"
#include "vmm/vm_config.h"

static const uint8_t guest_mac[6] = {0x02, 0x00, 0x00, 0x99, 0x00, 0x02};
static bool in_ns;

static size_t build_discover(uint8_t *f, uint32_t xid)
{
	static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t *b = f + PKT_UDP_HLEN, *o;

	memset(f, 0, PKT_UDP_HLEN + 300);
	b[0] = 1, b[1] = 1, b[2] = 6;
	pkt_put32(b + 4, xid);
	memcpy(b + 28, guest_mac, 6);
	b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
	o = b + 240;
	*o++ = 53, *o++ = 1, *o++ = DHCP_DISCOVER;
	*o++ = 55, *o++ = 4, *o++ = 1, *o++ = 3, *o++ = 6, *o++ = 26;
	*o++ = 255;
	return pkt_udp4_finish(f, bc, guest_mac, 0, 0xffffffff, 68, 67, 300);
}

/* Option value from a BOOTREPLY in frame f (no vnet header). */
static const uint8_t *reply_opt(const uint8_t *f, size_t len, uint8_t code, uint8_t *olen)
{
	const uint8_t *p = f + PKT_UDP_HLEN + 240, *end = f + len;

	while (p + 2 <= end && *p != 255) {
		if (*p == 0) {
			p++;
			continue;
		}
		if (p + 2 + p[1] > end)
			break;
		if (*p == code) {
			*olen = p[1];
			return p + 2;
		}
		p += 2 + p[1];
	}
	return NULL;
}

/* Send a DISCOVER, wait for passt's OFFER; returns yiaddr or 0. */
static uint32_t discover(struct net_backend *be, uint32_t xid, uint32_t *router, uint8_t *srv)
{
	uint8_t f[600], buf[NET_FRAME_MAX];
	long end = testns_now_ms() + 20000; /* generous: a loaded host */
	size_t len = build_discover(f, xid);

	if (testns_send(be, f, len))
		return 0;
	while (testns_now_ms() < end) {
		ssize_t n = testns_recv(be, buf, sizeof(buf), 500);
		const uint8_t *r = buf + NET_VNET_HDR_LEN, *o;
		uint8_t ol;

		if (n == NET_BE_RECONNECTED || n == -ETIMEDOUT)
			continue;
		if (n < (ssize_t)(NET_VNET_HDR_LEN + PKT_UDP_HLEN + 240) ||
		    pkt_be16(r + 12) != PKT_ETHERTYPE_IPV4 || r[PKT_ETH_HLEN + 9] != 17 ||
		    pkt_be16(r + PKT_ETH_HLEN + 22) != 68 || pkt_be32(r + PKT_UDP_HLEN + 4) != xid)
			continue;
		o = reply_opt(r, (size_t)n - NET_VNET_HDR_LEN, 53, &ol);
		if (!o || o[0] != DHCP_OFFER)
			continue;
		o = reply_opt(r, (size_t)n - NET_VNET_HDR_LEN, 3, &ol);
		*router = o && ol >= 4 ? pkt_be32(o) : 0;
		memcpy(srv, r + 6, 6);
		return pkt_be32(r + PKT_UDP_HLEN + 16);
	}
	return 0;
}

static bool setup_ns(void)
{
	return testns_sh("ip link add vpod0 type veth peer name vpod1 && "
			 "ip addr add 10.99.0.2/24 dev vpod0 && ip link set vpod0 up && "
			 "ip link set vpod1 up && ip route add default via 10.99.0.1") == 0;
}

static void test_passt_dhcp_restart(void)
{
	struct vm_port ports[] = {{.protocol = "TCP", .port = 8080}};
	struct passt_config cfg = {.mtu = 1500, .ports = ports, .n_ports = 1};
	struct net_backend *be = NULL;
	uint32_t ip, router = 0;
	uint8_t srv[6];
	pid_t old;

	if (!in_ns)
		SKIP("needs root and network namespaces");
	if (access("/usr/bin/passt", X_OK))
		SKIP("no passt");
	CHECK(setup_ns());
	CHECK(passt_create(&cfg, &be) == 0);
	if (!be)
		return;
	CHECK(passt_pid(be) > 0 && passt_starts(be) == 1);

	/* passt's own DHCP hands out the namespace's address and gateway */
	ip = discover(be, 0x1001, &router, srv);
	CHECK_EQ_U64(ip, 0x0a630002);
	CHECK_EQ_U64(router, 0x0a630001);

	/* the forwarded port: a connection inside the netns reaches the guest
	 * as a SYN to 8080 */
	{
		int s = -1;
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_port = htons(8080),
					.sin_addr.s_addr = htonl(0x7f000001)};
		uint8_t buf[NET_FRAME_MAX];
		long end = testns_now_ms() + 20000, again = 0;
		bool syn = false;

		while (!syn && testns_now_ms() < end) {
			ssize_t n;

			/* (re)connect until passt listens: it binds its
			 * sockets at start, maybe not yet on a loaded host */
			if (testns_now_ms() >= again) {
				if (s >= 0)
					close(s);
				s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
				connect(s, (struct sockaddr *)&a, sizeof(a));
				again = testns_now_ms() + 2000;
			}
			n = testns_recv(be, buf, sizeof(buf), 500);
			const uint8_t *f = buf + NET_VNET_HDR_LEN, *tcp = f + PKT_ETH_HLEN + 20;

			if (n < (ssize_t)(NET_VNET_HDR_LEN + PKT_ETH_HLEN + 40) ||
			    pkt_be16(f + 12) != PKT_ETHERTYPE_IPV4 || f[PKT_ETH_HLEN + 9] != 6)
				continue;
			syn = pkt_be16(tcp + 2) == 8080 && (tcp[13] & 0x02) &&
			      pkt_be32(f + PKT_ETH_HLEN + 16) == 0x0a630002;
		}
		CHECK(syn);
		close(s);
	}

	/* passt dies: the backend restarts it and DHCP works again */
	old = passt_pid(be);
	kill(old, SIGKILL);
	{
		uint8_t buf[NET_FRAME_MAX];
		long end = testns_now_ms() + 20000;

		while (passt_starts(be) < 2 && testns_now_ms() < end)
			testns_recv(be, buf, sizeof(buf), 50);
	}
	ip = discover(be, 0x1002, &router, srv);
	CHECK_EQ_U64(ip, 0x0a630002);
	CHECK(passt_starts(be) == 2);
	CHECK(passt_pid(be) > 0 && passt_pid(be) != old);
	old = passt_pid(be);
	net_backend_destroy(be);
	/* vmlet has no child to wait for; the supervisor stops passt */
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	{
		long end = testns_now_ms() + 20000;

		while (kill(old, 0) == 0 && testns_now_ms() < end)
			usleep(20000);
		CHECK(kill(old, 0) < 0 && errno == ESRCH);
	}
}

static void test_passt_ports_and_missing(void)
{
	struct vm_port ports[] = {
	    {.protocol = "TCP", .port = 80},
	    {.protocol = "udp", .port = 53},
	    {.port = 443},
	    {.protocol = "UDP", .port = 5353},
	    {.port = 0},
	};
	struct passt_config cfg = {.binary = "/nonexistent/passt"};
	struct net_backend *be = NULL;
	char tcp[64], udp[64], small[4];

	CHECK(passt_port_specs(ports, 5, true, tcp, sizeof(tcp), udp, sizeof(udp)) == 0);
	CHECK_STR(tcp, "80,443");
	CHECK_STR(udp, "53,5353");
	CHECK(passt_port_specs(ports, 1, true, tcp, sizeof(tcp), udp, sizeof(udp)) == 0);
	CHECK_STR(tcp, "80");
	CHECK_STR(udp, "none"); /* some ports listed: only those */
	CHECK(passt_port_specs(NULL, 0, false, tcp, sizeof(tcp), udp, sizeof(udp)) == 0);
	CHECK_STR(tcp, "none");
	CHECK_STR(udp, "none");
	CHECK(passt_port_specs(NULL, 0, true, tcp, sizeof(tcp), udp, sizeof(udp)) == 0);
	CHECK_STR(tcp, "all"); /* KubeVirt: no ports listed, all forwarded */
	CHECK_STR(udp, "all");
	CHECK(passt_port_specs(ports, 5, true, small, sizeof(small), udp, sizeof(udp)) ==
	      -ENAMETOOLONG);
	CHECK(passt_create(&cfg, &be) == -ENOENT && !be);
}

/* A passt that cannot start: what it said reaches vmlet's log. */
static void test_passt_last_words(void)
{
	char dir[] = "/tmp/vmlet-passt-XXXXXX", path[64];
	struct passt_config cfg = {.binary = path};
	struct net_backend *be = NULL;
	uint8_t buf[NET_FRAME_MAX];
	long end;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/passt", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	/* many lines (more than a pipe holds), a tab, a last line without
	 * its newline */
	fputs("#!/bin/sh\ni=0; while [ $i -lt 3000 ]; do echo \"chatter line $i of passt's "
	      "start-up, long enough to fill the pipe\" >&2; i=$((i+1)); done\n"
	      "printf 'Failed to sandbox\\tprocess, exiting' >&2\nexit 1\n",
	      f);
	fclose(f);
	chmod(path, 0755);
	CHECK(passt_create(&cfg, &be) == 0 && be);
	if (!be)
		goto out;
	CHECK_STR(passt_last_words(be), ""); /* the first start */
	end = testns_now_ms() + 30000;
	while (passt_starts(be) < 2 && testns_now_ms() < end)
		testns_recv(be, buf, sizeof(buf), 50);
	CHECK(passt_starts(be) >= 2);
	CHECK_STR(passt_last_words(be), "Failed to sandbox?process, exiting");
	net_backend_destroy(be);
out:
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	TEST_RUN(test_passt_last_words); /* before the netns: /tmp as it is */
	in_ns = testns_enter() == 0;
	TEST_RUN(test_passt_dhcp_restart);
	TEST_RUN(test_passt_ports_and_missing);
	return test_summary();
}
