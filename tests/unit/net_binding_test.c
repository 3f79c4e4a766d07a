/* SPDX-License-Identifier: MIT */
/*
 * Bridge and masquerade bindings in a namespace that plays the pod (eth0
 * with an address and a default route) wired by a veth to a second
 * namespace that plays the node (the "outside", 10.200.0.1). The test is
 * the guest: it speaks through the binding's tap. Both namespaces are made
 * by this test (unshare) and vanish with it. Skips (77) without root/netns.
 */
#include <signal.h>
#include <sys/prctl.h>

#include "tests/lib/test.h"
#include "tests/unit/net_testns.h"
#include "vmm/net/binding.h"
#include "vmm/net/dhcp.h"
#include "vmm/net/net.h"
#include "vmm/net/pkt.h"
#include "vmm/vm_config.h"

#define OUT_IP 0x0ac80001 /* 10.200.0.1, the node */
#define POD_IP 0x0ac80002 /* 10.200.0.2, the pod */

static bool can_ns;
static pid_t outside = -1;
static char resolv[64];

static bool make_pod(void)
{
	return testns_pod(&outside) == 0;
}

static void make_env(struct net_env *env)
{
	FILE *f;

	snprintf(resolv, sizeof(resolv), "/tmp/vmlet-resolv.%d", getpid());
	f = fopen(resolv, "w");
	fprintf(f, "nameserver 10.200.0.53\nsearch ns1.svc.cluster.local\n");
	fclose(f);
	memset(env, 0, sizeof(*env));
	env->in_pod = true;
	env->cap_net_admin = true;
	env->pod_iface = "eth0";
	env->resolv_conf = resolv;
	env->nft = "nft";
}

static void make_cfg(struct vm_config *cfg, struct vm_nic *nic, enum vm_binding b)
{
	vm_config_init(cfg);
	cfg->name = "vm1";
	cfg->namespace = "ns1";
	memset(nic, 0, sizeof(*nic));
	nic->name = "default";
	nic->model = "virtio";
	nic->binding = b;
	cfg->nics = nic;
	cfg->n_nics = 1;
}

static size_t arp_frame(uint8_t *f, const uint8_t src_mac[6], const uint8_t dst_mac[6], int op,
			uint32_t spa, const uint8_t tha[6], uint32_t tpa)
{
	struct pkt_arp *a = (struct pkt_arp *)(f + PKT_ETH_HLEN);

	memset(f, 0, 60);
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_ARP);
	pkt_put16(a->htype, 1);
	pkt_put16(a->ptype, PKT_ETHERTYPE_IPV4);
	a->hlen = 6;
	a->plen = 4;
	pkt_put16(a->op, (uint16_t)op);
	memcpy(a->sha, src_mac, 6);
	pkt_put32(a->spa, spa);
	if (tha)
		memcpy(a->tha, tha, 6);
	pkt_put32(a->tpa, tpa);
	return 60;
}

static size_t ping_frame(uint8_t *f, const uint8_t src_mac[6], const uint8_t dst_mac[6],
			 uint32_t src, uint32_t dst)
{
	struct pkt_ip4 *ip = (struct pkt_ip4 *)(f + PKT_ETH_HLEN);
	uint8_t *icmp = f + PKT_ETH_HLEN + 20;

	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	memset(ip, 0, 20 + 16);
	ip->ver_ihl = 0x45;
	pkt_put16(ip->tot_len, 36);
	ip->ttl = 64;
	ip->proto = PKT_IPPROTO_ICMP;
	pkt_put32(ip->saddr, src);
	pkt_put32(ip->daddr, dst);
	pkt_put16(ip->csum, pkt_csum_fold(pkt_csum_add(0, ip, 20)));
	icmp[0] = 8;
	pkt_put16(icmp + 4, 0x4242);
	pkt_put16(icmp + 6, 7);
	pkt_put16(icmp + 2, pkt_csum_fold(pkt_csum_add(0, icmp, 16)));
	return PKT_ETH_HLEN + 36;
}

enum want { WANT_ARP_REPLY, WANT_ECHO_REPLY, WANT_SYN };

/*
 * Receive on the guest side until a frame of the wanted kind arrives,
 * answering ARP requests for the guest's own address on the way. For
 * WANT_ARP_REPLY the sender MAC goes to mac; for WANT_SYN arg is the port.
 */
static bool guest_await(struct net_backend *be, const uint8_t me[6], uint32_t my_ip, enum want w,
			uint32_t arg, uint8_t mac[6], int ms)
{
	uint8_t buf[NET_FRAME_MAX], out[64];
	long end = testns_now_ms() + ms;

	while (testns_now_ms() < end) {
		ssize_t n = testns_recv(be, buf, sizeof(buf), 100);
		uint8_t *f = buf + NET_VNET_HDR_LEN, *l4 = f + PKT_ETH_HLEN + 20;
		struct pkt_arp *a = (struct pkt_arp *)(f + PKT_ETH_HLEN);

		if (n < NET_VNET_HDR_LEN + PKT_ETH_HLEN + 28)
			continue;
		if (pkt_be16(f + 12) == PKT_ETHERTYPE_ARP) {
			if (pkt_be16(a->op) == 1 && pkt_be32(a->tpa) == my_ip) {
				size_t l =
				    arp_frame(out, me, a->sha, 2, my_ip, a->sha, pkt_be32(a->spa));
				testns_send(be, out, l);
			} else if (w == WANT_ARP_REPLY && pkt_be16(a->op) == 2 &&
				   pkt_be32(a->spa) == arg) {
				memcpy(mac, a->sha, 6);
				return true;
			}
			continue;
		}
		if (pkt_be16(f + 12) != PKT_ETHERTYPE_IPV4 ||
		    pkt_be32(f + PKT_ETH_HLEN + 16) != my_ip)
			continue;
		if (w == WANT_ECHO_REPLY && f[PKT_ETH_HLEN + 9] == PKT_IPPROTO_ICMP && l4[0] == 0 &&
		    pkt_be32(f + PKT_ETH_HLEN + 12) == arg)
			return true;
		if (w == WANT_SYN && f[PKT_ETH_HLEN + 9] == PKT_IPPROTO_TCP &&
		    pkt_be16(l4 + 2) == arg && (l4[13] & 0x02))
			return true;
	}
	return false;
}

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* DISCOVER through net_intercept: the binding's lease comes back. */
static bool dhcp_offer_ok(const struct net_attach *a, uint32_t want_ip)
{
	uint8_t f[600], out[DHCP_FRAME_MAX], *b = f + PKT_UDP_HLEN;
	size_t len;
	int n;

	memset(f, 0, sizeof(f));
	b[0] = 1, b[1] = 1, b[2] = 6;
	memcpy(b + 28, a->mac, 6);
	b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
	b[240] = 53, b[241] = 1, b[242] = DHCP_DISCOVER, b[243] = 255;
	len = pkt_udp4_finish(f, bcast, a->mac, 0, 0xffffffff, 68, 67, 300);
	n = net_intercept(a, f, len, out, sizeof(out));
	return n > 0 && pkt_be32(out + PKT_UDP_HLEN + 16) == want_ip;
}

static void test_bridge(void)
{
	struct vm_config cfg;
	struct vm_nic nic;
	struct net_env env;
	struct net_attach a;
	uint8_t f[128], gw_mac[6], pod_mac[6];
	FILE *p;
	size_t len;

	if (!can_ns)
		SKIP("needs root and network namespaces");
	CHECK(make_pod());
	make_env(&env);
	make_cfg(&cfg, &nic, VM_BIND_BRIDGE);
	p = popen("ip -o link show eth0 | sed 's|.*link/ether \\([^ ]*\\).*|\\1|'", "r");
	CHECK(p && fscanf(p, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &pod_mac[0], &pod_mac[1], &pod_mac[2],
			  &pod_mac[3], &pod_mac[4], &pod_mac[5]) == 6);
	if (p)
		pclose(p);
	CHECK(net_attach(&cfg, 0, 1, &env, &a) == 0);
	if (!a.be[0])
		return;
	CHECK(a.mode == NET_MODE_BRIDGE && a.dhcp && a.n_queues == 1);
	CHECK(!memcmp(a.mac, pod_mac, 6)); /* the guest takes the pod's MAC */
	CHECK_EQ_U64(a.lease.client_ip, POD_IP);
	CHECK_EQ_U64(a.lease.netmask, 0xffffff00);
	CHECK_EQ_U64(a.lease.router, OUT_IP);
	CHECK(a.lease.n_dns == 1 && a.lease.dns[0] == 0x0ac80035);
	CHECK_STR(a.lease.search, "ns1.svc.cluster.local");
	CHECK_STR(a.lease.hostname, "vm1");
	CHECK(a.mtu == 1500 && a.lease.mtu == 1500);
	CHECK(dhcp_offer_ok(&a, POD_IP));
	/* the pod interface lost its address and MAC and joined the bridge */
	CHECK(testns_sh("! ip -4 addr show dev eth0 | grep -q inet") == 0);
	CHECK(testns_sh("ip link show eth0 | grep -q 'master %s'", a.bridge) == 0);
	CHECK(testns_sh("ip link show %s | grep -q 'master %s'", a.tap, a.bridge) == 0);
	CHECK(testns_sh("! ip link show eth0 | grep -qi %02x:%02x:%02x:%02x:%02x:%02x", pod_mac[0],
			pod_mac[1], pod_mac[2], pod_mac[3], pod_mac[4], pod_mac[5]) == 0);

	/* the guest, with the pod's IP, reaches the node across the bridge */
	len = arp_frame(f, a.mac, bcast, 1, POD_IP, NULL, OUT_IP);
	CHECK(testns_send(a.be[0], f, len) == 0);
	CHECK(guest_await(a.be[0], a.mac, POD_IP, WANT_ARP_REPLY, OUT_IP, gw_mac, 20000));
	len = ping_frame(f, a.mac, gw_mac, POD_IP, OUT_IP);
	CHECK(testns_send(a.be[0], f, len) == 0);
	CHECK(guest_await(a.be[0], a.mac, POD_IP, WANT_ECHO_REPLY, OUT_IP, NULL, 20000));

	/* a second attach finds the address gone and says so */
	{
		struct net_attach b;

		CHECK(net_attach(&cfg, 0, 1, &env, &b) == -EADDRNOTAVAIL);
	}
	net_detach(&a);
	unlink(resolv);
}

static void test_masquerade(void)
{
	struct vm_port ports[] = {{.protocol = "TCP", .port = 8080}};
	struct vm_config cfg;
	struct vm_nic nic;
	struct net_env env;
	struct net_attach a;
	uint8_t f[128];
	size_t len;

	if (!can_ns)
		SKIP("needs root and network namespaces");
	if (access("/usr/sbin/nft", X_OK))
		SKIP("no nft");
	CHECK(make_pod());
	make_env(&env);
	make_cfg(&cfg, &nic, VM_BIND_MASQUERADE);
	nic.ports = ports;
	nic.n_ports = 1;
	cfg.hostname = "masq-vm";
	CHECK(net_attach(&cfg, 0, 1, &env, &a) == 0);
	if (!a.be[0])
		return;
	CHECK(a.mode == NET_MODE_MASQUERADE && a.dhcp);
	CHECK_EQ_U64(a.lease.client_ip, NET_MASQ_GUEST);
	CHECK_EQ_U64(a.lease.router, NET_MASQ_GATEWAY);
	CHECK_STR(a.lease.hostname, "masq-vm");
	CHECK(dhcp_offer_ok(&a, NET_MASQ_GUEST));
	CHECK(testns_sh("ip -4 addr show dev %s | grep -q 'inet 10.0.2.1/24'", a.tap) == 0);
	CHECK(testns_sh("nft list table ip vmlet_default >/dev/null") == 0);
	/* eth0 keeps the pod's address */
	CHECK(testns_sh("ip -4 addr show dev eth0 | grep -q 10.200.0.2/24") == 0);

	/* guest → node: NATed to the pod's address, the reply finds its way */
	len = ping_frame(f, a.mac, a.lease.server_mac, NET_MASQ_GUEST, OUT_IP);
	CHECK(testns_send(a.be[0], f, len) == 0);
	CHECK(guest_await(a.be[0], a.mac, NET_MASQ_GUEST, WANT_ECHO_REPLY, OUT_IP, NULL, 20000));

	/* node → pod:8080 is forwarded to the guest; 9090 is not */
	testns_sh("nsenter -t %d -n sh -c 'timeout 20 bash -c \"echo > /dev/tcp/10.200.0.2/8080\"' "
		  ">/dev/null 2>&1 &",
		  outside);
	CHECK(guest_await(a.be[0], a.mac, NET_MASQ_GUEST, WANT_SYN, 8080, NULL, 20000));
	testns_sh("nsenter -t %d -n sh -c 'timeout 1 bash -c \"echo > /dev/tcp/10.200.0.2/9090\"' "
		  ">/dev/null 2>&1 &",
		  outside);
	CHECK(!guest_await(a.be[0], a.mac, NET_MASQ_GUEST, WANT_SYN, 9090, NULL, 1000));

	/* attaching again replaces the table instead of failing */
	net_detach(&a);
	CHECK(net_attach(&cfg, 0, 1, &env, &a) == 0);
	CHECK(testns_sh("test $(nft list table ip vmlet_default | grep -c dnat) = 1") == 0);
	net_detach(&a);
	unlink(resolv);
}

static void test_nft_script(void)
{
	struct vm_port ports[] = {
	    {.protocol = "TCP", .port = 80},
	    {.protocol = "UDP", .port = 53},
	    {.port = 443},
	};
	struct vm_nic nic = {.name = "default"};
	char buf[2048], small[64];

	CHECK(binding_nft_script(buf, sizeof(buf), "vmlet_default", "eth0", "vt-default", &nic) >
	      0);
	CHECK(strstr(buf, "iifname \"eth0\" meta l4proto { tcp, udp } dnat to 10.0.2.2"));
	CHECK(strstr(buf, "ip saddr 10.0.2.2 oifname != \"vt-default\" masquerade"));
	CHECK(strstr(buf, "delete table ip vmlet_default\n"));
	nic.ports = ports;
	nic.n_ports = 3;
	CHECK(binding_nft_script(buf, sizeof(buf), "t", "eth0", "tap", &nic) > 0);
	CHECK(strstr(buf, "tcp dport { 80, 443 } dnat to 10.0.2.2"));
	CHECK(strstr(buf, "udp dport { 53 } dnat to 10.0.2.2"));
	CHECK(!strstr(buf, "l4proto"));
	CHECK(binding_nft_script(small, sizeof(small), "t", "eth0", "tap", &nic) == -ENOSPC);
}

static void test_unsupported(void)
{
	struct vm_config cfg;
	struct vm_nic nic;
	struct net_env env = {.in_pod = true, .cap_net_admin = true, .pod_iface = "eth0"};
	struct net_attach a;

	make_cfg(&cfg, &nic, VM_BIND_BRIDGE);
	nic.model = "e1000";
	CHECK(net_validate(&cfg) == -ENOTSUP);
	CHECK(net_attach(&cfg, 0, 1, &env, &a) == -ENOTSUP);
	nic.model = NULL; /* unset means virtio */
	CHECK(net_validate(&cfg) == 0);
	nic.binding = VM_BIND_SRIOV;
	CHECK(net_validate(&cfg) == -ENOTSUP);
	nic.binding = VM_BIND_MACVTAP;
	CHECK(net_attach(&cfg, 0, 1, &env, &a) == -ENOTSUP);
	nic.binding = VM_BIND_PLUGIN;
	nic.binding_plugin = "mybinding";
	CHECK(net_validate(&cfg) == -ENOTSUP);
	nic.binding_plugin = "passt"; /* KubeVirt's passt binding plugin */
	CHECK(net_validate(&cfg) == 0);
	nic.binding = VM_BIND_MASQUERADE;
	nic.network_type = "multus";
	CHECK(net_validate(&cfg) == -ENOTSUP);
	{
		/* two interfaces on the pod network; fine once one has a tap */
		struct vm_nic two[2] = {{.name = "a", .binding = VM_BIND_MASQUERADE},
					{.name = "b", .binding = VM_BIND_BRIDGE}};

		cfg.nics = two;
		cfg.n_nics = 2;
		CHECK(net_validate(&cfg) == -ENOTSUP);
		two[1].tap = "tap9";
		CHECK(net_validate(&cfg) == 0);
		cfg.nics = &nic;
		cfg.n_nics = 1;
	}
}

/* Outside a pod, bridge falls back to passt (the host's connectivity). */
static void test_fallback_passt(void)
{
	struct vm_config cfg;
	struct vm_nic nic;
	struct net_env env;
	struct net_attach a;

	if (!can_ns)
		SKIP("needs root and network namespaces");
	if (access("/usr/bin/passt", X_OK))
		SKIP("no passt");
	CHECK(make_pod());
	make_env(&env);
	env.in_pod = false;
	make_cfg(&cfg, &nic, VM_BIND_BRIDGE);
	CHECK(net_attach(&cfg, 0, 4, &env, &a) == 0);
	CHECK(a.mode == NET_MODE_PASST && !a.dhcp && a.n_queues == 1);
	/* no pod plumbing happened */
	CHECK(testns_sh("ip -4 addr show dev eth0 | grep -q 10.200.0.2/24") == 0);
	net_detach(&a);
	unlink(resolv);
}

int main(void)
{
	can_ns = geteuid() == 0 && access("/usr/bin/nsenter", X_OK) == 0;
	TEST_RUN(test_nft_script);
	TEST_RUN(test_unsupported);
	TEST_RUN(test_bridge);
	TEST_RUN(test_masquerade);
	TEST_RUN(test_fallback_passt);
	if (outside > 0) {
		kill(outside, SIGKILL);
		waitpid(outside, NULL, 0);
	}
	return test_summary();
}
