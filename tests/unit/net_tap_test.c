/* SPDX-License-Identifier: MIT */
/*
 * The tap backend against the kernel as the peer, and the DHCP responder
 * against busybox udhcpc (a client we did not write), all inside a network
 * namespace this test creates. Skips (77) without root or netns.
 */
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "tests/lib/test.h"
#include "tests/unit/net_testns.h"
#include "vmm/net/dhcp.h"
#include "vmm/net/pkt.h"
#include "vmm/net/tap.h"

static const uint8_t me_mac[6] = {0x02, 0x00, 0x00, 0x77, 0x00, 0x02};
#define ME_IP	0x0a4d0002 /* 10.77.0.2: "the guest" behind the tap */
#define HOST_IP 0x0a4d0001 /* 10.77.0.1: the tap's address in the netns */

static bool in_ns;

static size_t build_arp_req(uint8_t *f, uint32_t spa, uint32_t tpa)
{
	struct pkt_arp *a = (struct pkt_arp *)(f + PKT_ETH_HLEN);

	memset(f, 0, 60);
	memset(f, 0xff, 6);
	memcpy(f + 6, me_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_ARP);
	pkt_put16(a->htype, 1);
	pkt_put16(a->ptype, PKT_ETHERTYPE_IPV4);
	a->hlen = 6;
	a->plen = 4;
	pkt_put16(a->op, 1);
	memcpy(a->sha, me_mac, 6);
	pkt_put32(a->spa, spa);
	pkt_put32(a->tpa, tpa);
	return 60;
}

/* ICMP echo request; the ICMP checksum is left 0 when partial. */
static size_t build_ping(uint8_t *f, const uint8_t dst_mac[6], uint32_t dst, uint16_t seq,
			 bool partial)
{
	struct pkt_ip4 *ip = (struct pkt_ip4 *)(f + PKT_ETH_HLEN);
	uint8_t *icmp = f + PKT_ETH_HLEN + 20;
	size_t plen = 8 + 56;

	memcpy(f, dst_mac, 6);
	memcpy(f + 6, me_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	memset(ip, 0, 20);
	ip->ver_ihl = 0x45;
	pkt_put16(ip->tot_len, (uint16_t)(20 + plen));
	ip->ttl = 64;
	ip->proto = PKT_IPPROTO_ICMP;
	pkt_put32(ip->saddr, ME_IP);
	pkt_put32(ip->daddr, dst);
	pkt_put16(ip->csum, pkt_csum_fold(pkt_csum_add(0, ip, 20)));
	memset(icmp, 0, plen);
	icmp[0] = 8;
	pkt_put16(icmp + 4, 0x1234);
	pkt_put16(icmp + 6, seq);
	memcpy(icmp + 8, "vmlet-net-test", 14);
	if (!partial)
		pkt_put16(icmp + 2, pkt_csum_fold(pkt_csum_add(0, icmp, plen)));
	return PKT_ETH_HLEN + 20 + plen;
}

/* Wait for the kernel's ARP reply; returns the tap's MAC in mac. */
static bool await_arp_reply(struct net_backend *be, uint8_t mac[6])
{
	uint8_t buf[NET_FRAME_MAX];
	long end = testns_now_ms() + 20000; /* generous: a loaded host */

	while (testns_now_ms() < end) {
		ssize_t n = testns_recv(be, buf, sizeof(buf), 500);
		uint8_t *f = buf + NET_VNET_HDR_LEN;
		struct pkt_arp *a = (struct pkt_arp *)(f + PKT_ETH_HLEN);

		if (n < NET_VNET_HDR_LEN + PKT_ETH_HLEN + 28)
			continue;
		if (pkt_be16(f + 12) == PKT_ETHERTYPE_ARP && pkt_be16(a->op) == 2 &&
		    pkt_be32(a->spa) == HOST_IP && !memcmp(f, me_mac, 6)) {
			memcpy(mac, a->sha, 6);
			return true;
		}
	}
	return false;
}

static bool await_echo_reply(struct net_backend *be, uint16_t seq)
{
	uint8_t buf[NET_FRAME_MAX];
	long end = testns_now_ms() + 20000; /* generous: a loaded host */

	while (testns_now_ms() < end) {
		ssize_t n = testns_recv(be, buf, sizeof(buf), 500);
		uint8_t *f = buf + NET_VNET_HDR_LEN, *icmp = f + PKT_ETH_HLEN + 20;
		struct pkt_ip4 *ip = (struct pkt_ip4 *)(f + PKT_ETH_HLEN);

		if (n < NET_VNET_HDR_LEN + PKT_ETH_HLEN + 28 ||
		    pkt_be16(f + 12) != PKT_ETHERTYPE_IPV4 || ip->proto != PKT_IPPROTO_ICMP)
			continue;
		if (icmp[0] == 0 && pkt_be16(icmp + 6) == seq && pkt_be32(ip->saddr) == HOST_IP &&
		    !memcmp(icmp + 8, "vmlet-net-test", 14))
			return true;
	}
	return false;
}

static void test_tap_kernel_peer(void)
{
	struct net_backend *be[2] = {0};
	struct tap_info info;
	uint8_t f[128], tap_mac[6];
	size_t len;

	if (!in_ns)
		SKIP("needs root and network namespaces");
	CHECK(tap_open("vmtap0", 1, be, &info) == 0);
	if (!be[0])
		return;
	CHECK(info.created);
	CHECK_STR(info.name, "vmtap0");
	CHECK(be[0]->has_vnet_hdr);
	CHECK(tap_set_up("vmtap0", 1400) == 0);
	CHECK(testns_sh("ip addr add 10.77.0.1/24 dev vmtap0") == 0);
	CHECK(testns_sh("ip link show vmtap0 | grep -q 'mtu 1400'") == 0);

	/* ARP: the kernel answers for its address on the tap */
	len = build_arp_req(f, ME_IP, HOST_IP);
	CHECK(testns_send(be[0], f, len) == 0);
	CHECK(await_arp_reply(be[0], tap_mac));

	/* ICMP echo, the kernel replies */
	len = build_ping(f, tap_mac, HOST_IP, 1, false);
	CHECK(testns_send(be[0], f, len) == 0);
	CHECK(await_echo_reply(be[0], 1));

	/* the vnet header reaches the kernel: a partial checksum it fills */
	{
		struct net_vnet_hdr h = {
		    .flags = 1, .csum_start = PKT_ETH_HLEN + 20, .csum_offset = 2};
		struct iovec iov[2] = {{&h, sizeof(h)}, {f, 0}};

		iov[1].iov_len = build_ping(f, tap_mac, HOST_IP, 2, true);
		CHECK(be[0]->ops->send(be[0], iov, 2) == 0);
		CHECK(await_echo_reply(be[0], 2));
	}
	CHECK(be[0]->ops->set_offload(be[0], NET_OFF_CSUM | NET_OFF_TSO4 | NET_OFF_TSO6) == 0);

	/* a second open of a single-queue tap in use fails with a message */
	CHECK(tap_open("vmtap0", 1, &be[1], &info) < 0);
	net_backend_destroy(be[0]);
	/* a tap vmlet created goes away with its fd */
	CHECK(if_nametoindex("vmtap0") == 0);
}

static void test_tap_existing_multiqueue(void)
{
	struct net_backend *be[4] = {0};
	struct tap_info info;
	int i;

	if (!in_ns)
		SKIP("needs root and network namespaces");
	CHECK(testns_sh("ip tuntap add mode tap name vmtapmq multi_queue vnet_hdr") == 0);
	CHECK(tap_open("vmtapmq", 4, be, &info) == 0);
	CHECK(!info.created);
	for (i = 0; i < 4; i++)
		CHECK(be[i] && be[i]->fd >= 0);
	/* steering: a queue is detached and comes back; asking for the state it
	 * is in is no error (the kernel's EINVAL for attaching an attached
	 * queue was logged whenever a guest enabled its queue pairs) */
	CHECK(be[0]->ops->set_enabled(be[0], true) == 0);
	CHECK(be[1]->ops->set_enabled(be[1], false) == 0);
	CHECK(be[1]->ops->set_enabled(be[1], false) == 0);
	CHECK(be[1]->ops->set_enabled(be[1], true) == 0);
	CHECK(be[1]->ops->set_enabled(be[1], true) == 0);
	{ /* the kernel agrees: queue 1 is attached again (attaching fails) */
		struct ifreq ifr = {.ifr_flags = IFF_ATTACH_QUEUE};

		CHECK(ioctl(be[1]->fd, TUNSETQUEUE, &ifr) < 0 && errno == EINVAL);
	}
	for (i = 0; i < 4; i++)
		net_backend_destroy(be[i]);
	/* a persistent tap the user made stays */
	CHECK(if_nametoindex("vmtapmq") != 0);
	CHECK(tap_open("vmtapmq", 99, be, &info) < 0);
	/* an existing multiqueue tap asked for one queue: one, in MQ mode */
	CHECK(tap_open("vmtapmq", 1, be, &info) == 0 && info.n_queues == 1);
	net_backend_destroy(be[0]);
	CHECK(testns_sh("ip link del vmtapmq") == 0);
	/* an existing single-queue tap asked for four: one */
	CHECK(testns_sh("ip tuntap add mode tap name vmtapsq vnet_hdr") == 0);
	memset(be, 0, sizeof(be));
	CHECK(tap_open("vmtapsq", 4, be, &info) == 0 && info.n_queues == 1);
	CHECK(be[0] && !be[1]);
	net_backend_destroy(be[0]);
	CHECK(testns_sh("ip link del vmtapsq") == 0);
}

/* DHCP: busybox udhcpc on the kernel side of the tap, our responder here. */
static void test_dhcp_udhcpc(void)
{
	struct net_backend *be = NULL;
	struct tap_info info;
	struct dhcp_lease l;
	struct ifreq ifr;
	char dir[] = "/tmp/vmlet-dhcp.XXXXXX", path[256], out[300], *env;
	uint8_t buf[NET_FRAME_MAX], reply[DHCP_FRAME_MAX];
	int s, st = -1, answered = 0;
	pid_t pid;
	FILE *fp;
	long end;

	if (!in_ns)
		SKIP("needs root and network namespaces");
	if (access("/bin/busybox", X_OK))
		SKIP("no busybox");
	CHECK(tap_open("vmdhcp0", 1, &be, &info) == 0 && tap_set_up("vmdhcp0", 0) == 0);
	if (!be)
		return;
	memset(&l, 0, sizeof(l));
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "vmdhcp0");
	CHECK(ioctl(s, SIOCGIFHWADDR, &ifr) == 0);
	close(s);
	memcpy(l.client_mac, ifr.ifr_hwaddr.sa_data, 6);
	memcpy(l.server_mac, me_mac, 6);
	l.server_ip = 0x0a4e0001;
	l.client_ip = 0x0a4e0002;
	l.netmask = 0xffffff00;
	l.router = 0x0a4e0001;
	dhcp_parse_resolv_conf("nameserver 10.78.0.53\nsearch a.example b.example\n", &l);
	strcpy(l.hostname, "udhcpc-guest");
	l.mtu = 1400;
	l.lease_secs = 600;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/script", dir);
	snprintf(out, sizeof(out), "%s/env", dir);
	fp = fopen(path, "w");
	fprintf(fp, "#!/bin/sh\n[ \"$1\" = bound ] && env > %s\nexit 0\n", out);
	fclose(fp);
	chmod(path, 0755);

	pid = fork();
	if (pid == 0) {
		execl("/bin/busybox", "udhcpc", "-i", "vmdhcp0", "-f", "-q", "-n", "-t", "10", "-T",
		      "3", "-O", "search", "-s", path, (char *)NULL);
		_exit(127);
	}
	end = testns_now_ms() + 60000; /* udhcpc gives up first: 10 tries, 3 s each */
	while (testns_now_ms() < end) {
		struct dhcp_request r;
		ssize_t n = testns_recv(be, buf, sizeof(buf), 200);
		int rl;

		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		if (n <= NET_VNET_HDR_LEN ||
		    dhcp_parse(buf + NET_VNET_HDR_LEN, (size_t)n - NET_VNET_HDR_LEN, &r))
			continue;
		rl = dhcp_build_reply(&l, &r, reply, sizeof(reply));
		if (rl > 0 && testns_send(be, reply, (size_t)rl) == 0)
			answered++;
	}
	if (testns_now_ms() >= end) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(answered >= 2); /* OFFER and ACK */
	env = test_read_file(out, NULL);
	CHECK(env != NULL);
	if (env) {
		CHECK(strstr(env, "ip=10.78.0.2\n"));
		CHECK(strstr(env, "subnet=255.255.255.0\n"));
		CHECK(strstr(env, "router=10.78.0.1"));
		CHECK(strstr(env, "dns=10.78.0.53"));
		CHECK(strstr(env, "mtu=1400\n"));
		CHECK(strstr(env, "hostname=udhcpc-guest\n"));
		CHECK(strstr(env, "domain=a.example\n"));
		CHECK(strstr(env, "search=a.example b.example"));
		CHECK(strstr(env, "serverid=10.78.0.1\n"));
		CHECK(strstr(env, "lease=600\n"));
		if (test_failed_checks)
			printf("%s", env);
		free(env);
	}
	unlink(out);
	unlink(path);
	rmdir(dir);
	net_backend_destroy(be);
}

int main(void)
{
	in_ns = testns_enter() == 0;
	TEST_RUN(test_tap_kernel_peer);
	TEST_RUN(test_tap_existing_multiqueue);
	TEST_RUN(test_dhcp_udhcpc);
	return test_summary();
}
