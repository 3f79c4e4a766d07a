/* SPDX-License-Identifier: MIT */
/*
 * virtio-net without KVM (virtio_net_env.h) over real backends in a
 * private network namespace: a tap with the kernel as the peer, NICs made
 * from a VM config (--tap, multiqueue, bad models) and the masquerade
 * binding end to end. Needs root; skips otherwise.
 */
#include "tests/unit/virtio_net_env.h"

/* Post a TX chain: header h + frame. */
static void tx_post(struct env *e, const struct net_vnet_hdr *h, const void *f, size_t len)
{
	gpa_t g = alloc(e, (uint32_t)(12 + len));

	memcpy(e->d.ram + g, h, 12);
	memcpy(e->d.ram + g + 12, f, len);
	ring_post(e, 1, (struct tbuf[]){{g, 12, 0}, {g + 12, (uint32_t)len, 0}}, 2);
	tvdev_kick(&e->v, 1);
}

/* Wait for an RX frame whose ethertype/IP protocol match; its offset in RAM. */
static gpa_t rx_wait(struct env *e, const gpa_t *bufs, uint16_t type, uint8_t proto, int ms)
{
	uint32_t id, len;
	long end = testns_now_ms() + ms;

	while (testns_now_ms() < end) {
		const uint8_t *f;

		if (!ring_used(e, 0, &id, &len, 50))
			continue;
		if (id >= QSIZE || len < 12 + 42)
			continue;
		f = e->d.ram + bufs[id] + 12;
		if (pkt_be16(f + 12) == type && (type != PKT_ETHERTYPE_IPV4 || f[23] == proto))
			return bufs[id];
	}
	return 0;
}

static bool in_netns; /* test_real_tap moved us into a private netns */

/* The device over a real tap in a private netns; the kernel is the peer. */
static void test_real_tap(void)
{
	static const uint8_t me[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x42};
	struct net_backend *tap = NULL;
	struct tap_info info;
	struct env e;
	struct net_vnet_hdr h = {0};
	uint8_t f[128], tap_mac[6];
	gpa_t bufs[QSIZE] = {0}, got;
	struct pkt_arp *a = (struct pkt_arp *)(f + PKT_ETH_HLEN);
	struct pkt_ip4 *ip = (struct pkt_ip4 *)(f + PKT_ETH_HLEN);

	if (testns_enter() < 0)
		SKIP("needs root and network namespaces");
	in_netns = true;
	CHECK(tap_open("vmt0", 1, &tap, &info) == 0);
	if (!tap)
		return;
	CHECK(tap_set_up("vmt0", 1500) == 0);
	CHECK(testns_sh("ip addr add 10.77.0.1/24 dev vmt0") == 0);
	if (env_up_any(&e, true, 1, false, tap))
		SKIP("no device");
	CHECK(start(&e, F_BASE | F_MRG | F(0) | F(1) | F(7) | F(11), NULL) == 0x0f);
	for (int i = 0; i < 32; i++) {
		gpa_t g = alloc(&e, 2048);

		bufs[ring_post(&e, 0, (struct tbuf[]){{g, 2048, 1}}, 1)] = g;
	}
	tvdev_kick(&e.v, 0);

	/* ARP for the tap's address: the kernel's reply lands in the RX ring */
	memset(f, 0, sizeof(f));
	memset(f, 0xff, 6);
	memcpy(f + 6, me, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_ARP);
	pkt_put16(a->htype, 1);
	pkt_put16(a->ptype, PKT_ETHERTYPE_IPV4);
	a->hlen = 6, a->plen = 4;
	pkt_put16(a->op, 1);
	memcpy(a->sha, me, 6);
	pkt_put32(a->spa, 0x0a4d0002);
	pkt_put32(a->tpa, 0x0a4d0001);
	tx_post(&e, &h, f, 60);
	got = rx_wait(&e, bufs, PKT_ETHERTYPE_ARP, 0, 20000);
	CHECK(got != 0);
	if (!got)
		goto out;
	memcpy(tap_mac, e.d.ram + got + 12 + 6, 6);

	/* ICMP echo with the checksum left to the device (NEEDS_CSUM) */
	memset(f, 0, sizeof(f));
	memcpy(f, tap_mac, 6);
	memcpy(f + 6, me, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	ip->ver_ihl = 0x45;
	pkt_put16(ip->tot_len, 20 + 64);
	ip->ttl = 64;
	ip->proto = PKT_IPPROTO_ICMP;
	pkt_put32(ip->saddr, 0x0a4d0002);
	pkt_put32(ip->daddr, 0x0a4d0001);
	pkt_put16(ip->csum, pkt_csum_fold(pkt_csum_add(0, ip, 20)));
	f[34] = 8;
	memcpy(f + 42, "virtio-net over a tap", 21);
	h.flags = 1;
	h.csum_start = 34;
	h.csum_offset = 2;
	tx_post(&e, &h, f, PKT_ETH_HLEN + 20 + 64);
	got = rx_wait(&e, bufs, PKT_ETHERTYPE_IPV4, PKT_IPPROTO_ICMP, 20000);
	CHECK(got != 0);
	if (got)
		CHECK(e.d.ram[got + 12 + 34] == 0 &&
		      !memcmp(e.d.ram + got + 12 + 42, "virtio-net over a tap", 21));
out:
	env_down(&e);
}

/* From the VM config: --tap, multiqueue = one pair per vCPU, bad models. */
static void test_create_nic(void)
{
	struct vm_config cfg;
	struct vm_nic nic = {.name = "net1", .model = "virtio", .tap = "vmq0"};
	struct virtio_net *n = NULL;
	uint64_t offered;
	struct env e;

	if (!in_netns)
		SKIP("needs root and network namespaces");
	vm_config_init(&cfg);
	cfg.name = "vm";
	cfg.cores = 2;
	cfg.net_multi_queue = true;
	cfg.nics = &nic;
	cfg.n_nics = 1;
	CHECK(env_up_nic(&e, &cfg, &n) == 0);
	if (n && !tvdev_probe(&e.v, 1)) {
		e.net = n;
		e.nq = 5;
		tvdev_msix(&e.v, 6);
		CHECK(start(&e, F_BASE | F(22), &offered) == 0x0f);
		CHECK(offered & F(22));
		CHECK_EQ_U64(mmio_rd(e.v.device + 8, 2), 2); /* two vCPUs, two pairs */
		CHECK(testns_sh("ip link show vmq0 | grep -q vmq0") == 0);
		virtio_net_destroy(n);
	}
	nic.model = "e1000";
	n = NULL;
	CHECK(virtio_net_create_nic(&n, &e.h, &cfg, 0) == -ENOTSUP && !n);
	pci_host_release(&e.h);
	tdrv_release(&e.d);
}

static const uint8_t g_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x42};

/* A DHCP client message from the guest (type, requested ip). */
static size_t guest_dhcp(uint8_t *f, const uint8_t mac[6], uint8_t type, uint32_t req_ip)
{
	static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t *b = f + PKT_UDP_HLEN, *o;

	memset(f, 0, PKT_UDP_HLEN + 300);
	b[0] = 1, b[1] = 1, b[2] = 6;
	memcpy(b + 4, "\x55\x66\x77\x88", 4);
	memcpy(b + 28, mac, 6);
	b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
	o = b + 240;
	*o++ = 53, *o++ = 1, *o++ = type;
	if (req_ip) {
		*o++ = 50, *o++ = 4;
		pkt_put32(o, req_ip);
		o += 4;
	}
	*o = 255;
	return pkt_udp4_finish(f, bc, mac, 0, 0xffffffff, 68, 67, 300);
}

/* Post one 2 KiB RX buffer, remembering where it is. */
static void rx_refill(struct env *e, gpa_t *bufs)
{
	gpa_t g = alloc(e, 2048);

	bufs[ring_post(e, 0, (struct tbuf[]){{g, 2048, 1}}, 1)] = g;
	tvdev_kick(&e->v, 0);
}

enum gw_want { GW_DHCP, GW_ARP_REPLY, GW_ECHO_REPLY, GW_SYN };

/*
 * The guest's receive loop: wait for a frame of the wanted kind, answering
 * ARP requests for our address (as a guest stack would) and refilling
 * buffers. Returns the frame's guest address (after the header) or 0.
 */
static gpa_t guest_wait(struct env *e, gpa_t *bufs, uint32_t my_ip, enum gw_want w, uint32_t arg,
			int ms)
{
	long end = testns_now_ms() + ms;
	uint32_t id, len;

	while (testns_now_ms() < end) {
		const uint8_t *f, *l4;
		gpa_t at;

		if (!ring_used(e, 0, &id, &len, 50) || id >= QSIZE)
			continue;
		at = bufs[id] + 12;
		f = e->d.ram + at;
		l4 = f + PKT_ETH_HLEN + 20;
		rx_refill(e, bufs);
		if (len < 12 + 42)
			continue;
		if (pkt_be16(f + 12) == PKT_ETHERTYPE_ARP) {
			const struct pkt_arp *a = (const struct pkt_arp *)(f + PKT_ETH_HLEN);
			struct net_vnet_hdr h = {0};
			uint8_t r[60] = {0};
			struct pkt_arp *ra = (struct pkt_arp *)(r + PKT_ETH_HLEN);

			if (w == GW_ARP_REPLY && pkt_be16(a->op) == 2 && pkt_be32(a->spa) == arg)
				return at;
			if (pkt_be16(a->op) != 1 || pkt_be32(a->tpa) != my_ip)
				continue;
			memcpy(r, a->sha, 6);
			memcpy(r + 6, g_mac, 6);
			pkt_put16(r + 12, PKT_ETHERTYPE_ARP);
			memcpy(ra, a, 8);
			pkt_put16(ra->op, 2);
			memcpy(ra->sha, g_mac, 6);
			pkt_put32(ra->spa, my_ip);
			memcpy(ra->tha, a->sha, 6);
			memcpy(ra->tpa, a->spa, 4);
			tx_post(e, &h, r, sizeof(r));
			continue;
		}
		if (pkt_be16(f + 12) != PKT_ETHERTYPE_IPV4)
			continue;
		if (w == GW_DHCP && f[23] == PKT_IPPROTO_UDP && pkt_be16(l4 + 2) == 68)
			return at;
		if (w == GW_ECHO_REPLY && f[23] == PKT_IPPROTO_ICMP && l4[0] == 0 &&
		    pkt_be32(f + 26) == arg)
			return at;
		if (w == GW_SYN && f[23] == PKT_IPPROTO_TCP && pkt_be16(l4 + 2) == arg &&
		    (l4[13] & 2) && pkt_be32(f + 30) == my_ip)
			return at;
	}
	return 0;
}

/*
 * The whole masquerade chain as `vmlet run` builds it (virtio_net_create_nic
 * in a netns that plays the pod): DHCP from vmlet through the device, ARP
 * to the tap's gateway, ICMP NATed out to the node, and a forwarded port.
 */
static void test_masquerade_device(void)
{
	struct vm_port ports[] = {{.protocol = "TCP", .port = 8080}};
	struct vm_nic nic = {.name = "default",
			     .model = "virtio",
			     .binding = VM_BIND_MASQUERADE,
			     .ports = ports,
			     .n_ports = 1};
	struct vm_config cfg;
	struct virtio_net *n = NULL;
	struct net_vnet_hdr h = {0};
	gpa_t bufs[QSIZE] = {0}, at;
	uint8_t f[600], gw_mac[6];
	pid_t outside = -1;
	struct env e;
	size_t len;

	if (!in_netns || access("/usr/sbin/nft", X_OK))
		SKIP("needs root, network namespaces and nft");
	CHECK(testns_pod(&outside) == 0);
	setenv("VMLET_POD_INTERFACE", "eth0", 1);
	vm_config_init(&cfg);
	cfg.name = "vm";
	nic.mac_set = true;
	memcpy(nic.mac, g_mac, 6);
	cfg.nics = &nic;
	cfg.n_nics = 1;
	CHECK(env_up_nic(&e, &cfg, &n) == 0);
	unsetenv("VMLET_POD_INTERFACE");
	if (!n || tvdev_probe(&e.v, 1))
		goto out;
	e.net = n;
	e.nq = 3;
	tvdev_msix(&e.v, 4);
	CHECK(start(&e, F_BASE | F_MRG | F(0) | F(1), NULL) == 0x0f);
	for (int i = 0; i < 16; i++)
		rx_refill(&e, bufs);

	/* DHCP: vmlet answers through the device */
	len = guest_dhcp(f, g_mac, DHCP_DISCOVER, 0);
	tx_post(&e, &h, f, len);
	at = guest_wait(&e, bufs, 0, GW_DHCP, 0, 20000);
	CHECK(at && pkt_be32(e.d.ram + at + PKT_UDP_HLEN + 16) == 0x0a000202);
	len = guest_dhcp(f, g_mac, DHCP_REQUEST, 0x0a000202);
	tx_post(&e, &h, f, len);
	at = guest_wait(&e, bufs, 0, GW_DHCP, 0, 20000);
	CHECK(at && e.d.ram[at + PKT_UDP_HLEN + 240 + 2] == DHCP_ACK);

	/* ARP for the gateway 10.0.2.1: the pod's kernel answers on the tap */
	memset(f, 0, 60);
	memset(f, 0xff, 6);
	memcpy(f + 6, g_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_ARP);
	memcpy(f + 14, "\x00\x01\x08\x00\x06\x04\x00\x01", 8);
	memcpy(f + 22, g_mac, 6);
	pkt_put32(f + 28, 0x0a000202);
	pkt_put32(f + 38, 0x0a000201);
	tx_post(&e, &h, f, 60);
	at = guest_wait(&e, bufs, 0x0a000202, GW_ARP_REPLY, 0x0a000201, 20000);
	CHECK(at != 0);
	if (!at)
		goto out;
	memcpy(gw_mac, e.d.ram + at + 22, 6);

	/* ICMP to the node, NATed through the pod's eth0 */
	memset(f, 0, 100);
	memcpy(f, gw_mac, 6);
	memcpy(f + 6, g_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_IPV4);
	f[14] = 0x45;
	pkt_put16(f + 16, 20 + 16);
	f[22] = 64;
	f[23] = PKT_IPPROTO_ICMP;
	pkt_put32(f + 26, 0x0a000202);
	pkt_put32(f + 30, 0x0ac80001);
	pkt_put16(f + 24, pkt_csum_fold(pkt_csum_add(0, f + 14, 20)));
	f[34] = 8;
	pkt_put16(f + 36, pkt_csum_fold(pkt_csum_add(0, f + 34, 16)));
	tx_post(&e, &h, f, PKT_ETH_HLEN + 36);
	CHECK(guest_wait(&e, bufs, 0x0a000202, GW_ECHO_REPLY, 0x0ac80001, 20000) != 0);

	/* the node connects to the pod's port 8080: the guest sees the SYN */
	testns_sh("nsenter -t %d -n sh -c 'timeout 20 bash -c \"echo > /dev/tcp/10.200.0.2/8080\"' "
		  ">/dev/null 2>&1 &",
		  outside);
	CHECK(guest_wait(&e, bufs, 0x0a000202, GW_SYN, 8080, 20000) != 0);
out:
	virtio_net_destroy(n);
	pci_host_release(&e.h);
	tdrv_release(&e.d);
	if (outside > 0) {
		kill(outside, SIGKILL);
		waitpid(outside, NULL, 0);
	}
}

int main(void)
{
	TEST_RUN(test_real_tap); /* it moves the process into a new netns */
	TEST_RUN(test_create_nic);
	TEST_RUN(test_masquerade_device);
	return test_summary();
}
