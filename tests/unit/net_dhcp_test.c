/* SPDX-License-Identifier: MIT */
/* DHCP responder and ARP helper on crafted and malformed frames. */
#include <errno.h>
#include <stdlib.h>

#include "tests/lib/test.h"
#include "vmm/net/dhcp.h"
#include "vmm/net/pkt.h"

static const uint8_t guest_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t gw_mac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};

static void make_lease(struct dhcp_lease *l)
{
	memset(l, 0, sizeof(*l));
	memcpy(l->client_mac, guest_mac, 6);
	memcpy(l->server_mac, gw_mac, 6);
	l->server_ip = 0x0a000201;
	l->client_ip = 0x0a000202;
	l->netmask = 0xffffff00;
	l->router = 0x0a000201;
	l->dns[0] = 0x08080808;
	l->dns[1] = 0x01010101;
	l->n_dns = 2;
	strcpy(l->search, "default.svc.cluster.local svc.cluster.local");
	strcpy(l->hostname, "testvm");
	l->mtu = 1450;
	l->lease_secs = 3600;
}

/* A client message as udhcpc would send it: broadcast, options as given. */
static size_t make_client_msg(uint8_t *f, uint8_t type, uint32_t ciaddr, uint32_t req_ip,
			      uint32_t server_id, uint16_t flags)
{
	uint8_t *b = f + PKT_UDP_HLEN, *o;
	static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	memset(f, 0, PKT_UDP_HLEN + 300);
	b[0] = 1;
	b[1] = 1;
	b[2] = 6;
	pkt_put32(b + 4, 0xdeadbeef);
	pkt_put16(b + 10, flags);
	pkt_put32(b + 12, ciaddr);
	memcpy(b + 28, guest_mac, 6);
	b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
	o = b + 240;
	*o++ = 53, *o++ = 1, *o++ = type;
	*o++ = 0; /* a pad */
	if (req_ip) {
		*o++ = 50, *o++ = 4;
		pkt_put32(o, req_ip);
		o += 4;
	}
	if (server_id) {
		*o++ = 54, *o++ = 4;
		pkt_put32(o, server_id);
		o += 4;
	}
	*o++ = 55, *o++ = 3, *o++ = 1, *o++ = 3, *o++ = 6;
	*o++ = 255;
	return pkt_udp4_finish(f, bc, guest_mac, ciaddr, 0xffffffff, 68, 67, 300);
}

/* Find option code in a reply; returns its data or NULL. */
/* A client message (make_client_msg's arguments), parsed into *r (which
 * must succeed), answered for l into out (DHCP_FRAME_MAX bytes): the
 * reply's length or dhcp_build_reply's result. */
static int exchange(const struct dhcp_lease *l, struct dhcp_request *r, uint8_t *out, uint8_t type,
		    uint32_t ciaddr, uint32_t req_ip, uint32_t server, uint16_t flags)
{
	uint8_t f[600];
	size_t len = make_client_msg(f, type, ciaddr, req_ip, server, flags);

	CHECK(dhcp_parse(f, len, r) == 0);
	return dhcp_build_reply(l, r, out, DHCP_FRAME_MAX);
}

static const uint8_t *find_opt(const uint8_t *f, size_t len, uint8_t code, uint8_t *olen)
{
	const uint8_t *p = f + PKT_UDP_HLEN + 240, *end = f + len;

	while (p < end && *p != 255) {
		if (*p == 0) {
			p++;
			continue;
		}
		if (p + 2 > end || p + 2 + p[1] > end)
			return NULL;
		if (*p == code) {
			*olen = p[1];
			return p + 2;
		}
		p += 2 + p[1];
	}
	return NULL;
}

static bool checksums_ok(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + PKT_ETH_HLEN, *udp = ip + 20;
	uint16_t ulen = pkt_be16(udp + 4);
	uint8_t pseudo[12];
	uint32_t sum;

	if (len < PKT_UDP_HLEN || pkt_csum_fold(pkt_csum_add(0, ip, 20)) != 0)
		return false;
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = 17;
	pkt_put16(pseudo + 10, ulen);
	sum = pkt_csum_add(pkt_csum_add(0, pseudo, 12), udp, ulen);
	return pkt_csum_fold(sum) == 0 && (size_t)ulen + 20 + PKT_ETH_HLEN == len;
}

static void test_discover_offer(void)
{
	struct dhcp_lease l;
	struct dhcp_request r;
	uint8_t f[600], out[DHCP_FRAME_MAX], n;
	const uint8_t *o;
	size_t len;
	int rl;

	make_lease(&l);
	len = make_client_msg(f, DHCP_DISCOVER, 0, 0, 0, 0);
	CHECK(dhcp_parse(f, len, &r) == 0);
	CHECK(r.type == DHCP_DISCOVER);
	CHECK_EQ_U64(r.xid, 0xdeadbeef);
	CHECK(!memcmp(r.chaddr, guest_mac, 6));

	rl = dhcp_build_reply(&l, &r, out, sizeof(out));
	CHECK(rl >= PKT_UDP_HLEN + 300);
	if (rl <= 0)
		return;
	CHECK(checksums_ok(out, (size_t)rl));
	CHECK(!memcmp(out, guest_mac, 6)); /* unicast to chaddr */
	CHECK(!memcmp(out + 6, gw_mac, 6));
	CHECK_EQ_U64(pkt_be32(out + PKT_ETH_HLEN + 12), 0x0a000201);
	CHECK_EQ_U64(pkt_be32(out + PKT_ETH_HLEN + 16), 0x0a000202);
	CHECK_EQ_U64(pkt_be16(out + PKT_ETH_HLEN + 20), 67);
	CHECK_EQ_U64(pkt_be16(out + PKT_ETH_HLEN + 22), 68);
	CHECK_EQ_U64(out[PKT_UDP_HLEN], 2); /* BOOTREPLY */
	CHECK_EQ_U64(pkt_be32(out + PKT_UDP_HLEN + 4), 0xdeadbeef);
	CHECK_EQ_U64(pkt_be32(out + PKT_UDP_HLEN + 16), 0x0a000202); /* yiaddr */
	CHECK(!memcmp(out + PKT_UDP_HLEN + 28, guest_mac, 6));

	o = find_opt(out, (size_t)rl, 53, &n);
	CHECK(o && n == 1 && o[0] == DHCP_OFFER);
	o = find_opt(out, (size_t)rl, 54, &n);
	CHECK(o && n == 4 && pkt_be32(o) == 0x0a000201);
	o = find_opt(out, (size_t)rl, 51, &n);
	CHECK(o && n == 4 && pkt_be32(o) == 3600);
	o = find_opt(out, (size_t)rl, 58, &n);
	CHECK(o && n == 4 && pkt_be32(o) == 1800);
	o = find_opt(out, (size_t)rl, 1, &n);
	CHECK(o && n == 4 && pkt_be32(o) == 0xffffff00);
	o = find_opt(out, (size_t)rl, 28, &n);
	CHECK(o && n == 4 && pkt_be32(o) == 0x0a0002ff);
	o = find_opt(out, (size_t)rl, 3, &n);
	CHECK(o && n == 4 && pkt_be32(o) == 0x0a000201);
	o = find_opt(out, (size_t)rl, 6, &n);
	CHECK(o && n == 8 && pkt_be32(o) == 0x08080808 && pkt_be32(o + 4) == 0x01010101);
	o = find_opt(out, (size_t)rl, 26, &n);
	CHECK(o && n == 2 && pkt_be16(o) == 1450);
	o = find_opt(out, (size_t)rl, 12, &n);
	CHECK(o && n == 6 && !memcmp(o, "testvm", 6));
	o = find_opt(out, (size_t)rl, 15, &n);
	CHECK(o && n == 25 && !memcmp(o, "default.svc.cluster.local", 25));
	o = find_opt(out, (size_t)rl, 119, &n);
	CHECK(o && n == 27 + 19);
	if (o && n >= 27)
		CHECK(!memcmp(o, "\7default\3svc\7cluster\5local\0", 27));
}

/* A /32 address with the gateway outside it: classless static routes. */
static void test_classless_routes(void)
{
	struct dhcp_lease l;
	struct dhcp_request r;
	uint8_t out[DHCP_FRAME_MAX], n;
	const uint8_t *o;
	int rl;

	make_lease(&l);
	rl = exchange(&l, &r, out, DHCP_DISCOVER, 0, 0, 0, 0);
	CHECK(rl > 0 && !find_opt(out, (size_t)rl, 121, &n)); /* on-link gateway: none */
	l.client_ip = 0x0a0b0c0d;
	l.netmask = 0xffffffff;
	l.router = 0xa9fe0101; /* 169.254.1.1, as Calico does */
	rl = exchange(&l, &r, out, DHCP_DISCOVER, 0, 0, 0, 0);
	o = rl > 0 ? find_opt(out, (size_t)rl, 121, &n) : NULL;
	CHECK(o && n == 14);
	if (o && n == 14)
		CHECK(!memcmp(o, "\x20\xa9\xfe\x01\x01\0\0\0\0\0\xa9\xfe\x01\x01", 14));
}

static void test_request_ack_nak(void)
{
	struct dhcp_lease l;
	struct dhcp_request r;
	uint8_t f[600], out[DHCP_FRAME_MAX], n;
	const uint8_t *o;
	size_t len;
	int rl;

	make_lease(&l);
	/* SELECTING: server id + requested ip, broadcast flag */
	rl = exchange(&l, &r, out, DHCP_REQUEST, 0, 0x0a000202, 0x0a000201, 0x8000);
	CHECK_EQ_U64(r.requested_ip, 0x0a000202);
	CHECK_EQ_U64(r.server_id, 0x0a000201);
	CHECK(rl > 0);
	o = find_opt(out, (size_t)rl, 53, &n);
	CHECK(o && o[0] == DHCP_ACK);
	CHECK(!memcmp(out, "\xff\xff\xff\xff\xff\xff", 6));
	CHECK_EQ_U64(pkt_be32(out + PKT_ETH_HLEN + 16), 0xffffffff);

	/* wrong address: NAK, broadcast, no yiaddr, no lease options */
	rl = exchange(&l, &r, out, DHCP_REQUEST, 0, 0x0a000263, 0, 0);
	CHECK(rl > 0);
	o = find_opt(out, (size_t)rl, 53, &n);
	CHECK(o && o[0] == DHCP_NAK);
	CHECK(!find_opt(out, (size_t)rl, 51, &n));
	CHECK_EQ_U64(pkt_be32(out + PKT_UDP_HLEN + 16), 0);
	CHECK_EQ_U64(pkt_be32(out + PKT_ETH_HLEN + 16), 0xffffffff);

	/* RENEWING: ciaddr set, unicast back to ciaddr */
	rl = exchange(&l, &r, out, DHCP_REQUEST, 0x0a000202, 0, 0, 0);
	o = rl > 0 ? find_opt(out, (size_t)rl, 53, &n) : NULL;
	CHECK(o && o[0] == DHCP_ACK);
	CHECK(rl > 0 && pkt_be32(out + PKT_ETH_HLEN + 16) == 0x0a000202);
	CHECK(rl > 0 && pkt_be32(out + PKT_UDP_HLEN + 12) == 0x0a000202);

	/* another server was chosen: silence */
	CHECK(exchange(&l, &r, out, DHCP_REQUEST, 0, 0x0a000202, 0x0a000909, 0) == 0);

	/* RELEASE and DECLINE: silence */
	CHECK(exchange(&l, &r, out, DHCP_RELEASE, 0x0a000202, 0, 0x0a000201, 0) == 0);

	/* INFORM: ACK with config, no yiaddr and no lease time */
	rl = exchange(&l, &r, out, DHCP_INFORM, 0x0a000202, 0, 0, 0);
	CHECK(rl > 0 && !find_opt(out, (size_t)rl, 51, &n) && find_opt(out, (size_t)rl, 3, &n));
	CHECK(rl > 0 && pkt_be32(out + PKT_UDP_HLEN + 16) == 0);

	/* a different client MAC: silence */
	len = make_client_msg(f, DHCP_DISCOVER, 0, 0, 0, 0);
	f[PKT_UDP_HLEN + 28] ^= 1;
	CHECK(dhcp_parse(f, len, &r) == 0);
	CHECK(dhcp_build_reply(&l, &r, out, sizeof(out)) == 0);

	/* too small an output buffer */
	f[PKT_UDP_HLEN + 28] ^= 1;
	CHECK(dhcp_parse(f, len, &r) == 0);
	CHECK(dhcp_build_reply(&l, &r, out, 200) == -ENOSPC);
	CHECK(dhcp_build_reply(&l, &r, out, PKT_UDP_HLEN + 300) == -ENOSPC);
}

static void test_malformed(void)
{
	struct dhcp_request r;
	uint8_t f[600], g[600];
	size_t len, i;

	len = make_client_msg(f, DHCP_DISCOVER, 0, 0, 0, 0);
	/* every truncation is rejected (the IP total length no longer fits) */
	for (i = 0; i < len; i++)
		CHECK(dhcp_parse(f, i, &r) == -EINVAL);
	/* trailing Ethernet padding is fine */
	CHECK(dhcp_parse(f, len + 20, &r) == 0);

#define MUTATE(off, val)                                                                           \
	do {                                                                                       \
		memcpy(g, f, len);                                                                 \
		g[off] = (val);                                                                    \
		CHECK(dhcp_parse(g, len, &r) == -EINVAL);                                          \
	} while (0)
	MUTATE(12, 0x86);		 /* not IPv4 */
	MUTATE(PKT_ETH_HLEN, 0x44);	 /* IHL 4 */
	MUTATE(PKT_ETH_HLEN, 0x65);	 /* IPv6 version */
	MUTATE(PKT_ETH_HLEN, 0x4f);	 /* IHL beyond the packet */
	MUTATE(PKT_ETH_HLEN + 6, 0x20);	 /* more fragments */
	MUTATE(PKT_ETH_HLEN + 9, 6);	 /* TCP */
	MUTATE(PKT_ETH_HLEN + 23, 68);	 /* not to port 67 */
	MUTATE(PKT_ETH_HLEN + 24, 0xff); /* UDP length > IP */
	MUTATE(PKT_UDP_HLEN, 2);	 /* BOOTREPLY */
	MUTATE(PKT_UDP_HLEN + 2, 16);	 /* hlen */
	MUTATE(PKT_UDP_HLEN + 236, 0);	 /* cookie */
	MUTATE(PKT_UDP_HLEN + 242, 9);	 /* unknown message type */
	MUTATE(PKT_UDP_HLEN + 241, 200); /* type option overruns */
	MUTATE(PKT_UDP_HLEN + 240, 12);	 /* type replaced: no type */
	/* options without END: fill the option area with pads */
	memcpy(g, f, len);
	memset(g + PKT_UDP_HLEN + 244, 0, len - PKT_UDP_HLEN - 244);
	CHECK(dhcp_parse(g, len, &r) == -EINVAL);
	/* a length byte as the very last byte */
	memset(g + PKT_UDP_HLEN + 244, 0, len - PKT_UDP_HLEN - 244);
	g[len - 1] = 12;
	CHECK(dhcp_parse(g, len, &r) == -EINVAL);
#undef MUTATE
}

/* Random mutations: parse and reply must stay in bounds (ASan build). */
static void test_mutations(void)
{
	struct dhcp_lease l;
	struct dhcp_request r;
	uint8_t f[600], g[600], out[DHCP_FRAME_MAX];
	uint32_t seed = 12345;
	size_t len;
	int i, j, parsed = 0;

	make_lease(&l);
	len = make_client_msg(f, DHCP_REQUEST, 0, 0x0a000202, 0x0a000201, 0);
	for (i = 0; i < 20000; i++) {
		size_t glen = len;

		memcpy(g, f, len);
		for (j = 0; j < 1 + i % 4; j++) {
			seed = seed * 1103515245 + 12345;
			g[(seed >> 8) % len] = (uint8_t)(seed >> 20);
		}
		if (i % 7 == 0)
			glen = (seed >> 4) % len;
		if (dhcp_parse(g, glen, &r) == 0) {
			parsed++;
			CHECK(dhcp_build_reply(&l, &r, out, sizeof(out)) >= 0);
		}
		CHECK(dhcp_arp_reply(&l, g, glen, out, sizeof(out)) >= 0);
	}
	CHECK(parsed > 1000); /* many mutations leave a valid message */
}

static void test_arp(void)
{
	struct dhcp_lease l;
	uint8_t f[60] = {0}, out[64];
	struct pkt_arp *a = (struct pkt_arp *)(f + PKT_ETH_HLEN);
	struct pkt_arp *ao = (struct pkt_arp *)(out + PKT_ETH_HLEN);

	make_lease(&l);
	memset(f, 0xff, 6);
	memcpy(f + 6, guest_mac, 6);
	pkt_put16(f + 12, PKT_ETHERTYPE_ARP);
	pkt_put16(a->htype, 1);
	pkt_put16(a->ptype, 0x0800);
	a->hlen = 6;
	a->plen = 4;
	pkt_put16(a->op, 1);
	memcpy(a->sha, guest_mac, 6);
	pkt_put32(a->spa, 0x0a000202);
	pkt_put32(a->tpa, 0x0a000201);
	CHECK(dhcp_arp_reply(&l, f, sizeof(f), out, sizeof(out)) == 42);
	CHECK(!memcmp(out, guest_mac, 6) && !memcmp(out + 6, gw_mac, 6));
	CHECK(pkt_be16(ao->op) == 2 && !memcmp(ao->sha, gw_mac, 6));
	CHECK(pkt_be32(ao->spa) == 0x0a000201 && pkt_be32(ao->tpa) == 0x0a000202);
	CHECK(!memcmp(ao->tha, guest_mac, 6));
	CHECK(dhcp_arp_reply(&l, f, sizeof(f), out, 30) == -ENOSPC);
	CHECK(dhcp_arp_reply(&l, f, 41, out, sizeof(out)) == 0);
	pkt_put32(a->tpa, 0x0a000203); /* not the gateway */
	CHECK(dhcp_arp_reply(&l, f, sizeof(f), out, sizeof(out)) == 0);
	pkt_put32(a->tpa, 0x0a000201);
	pkt_put16(a->op, 2); /* a reply, not a request */
	CHECK(dhcp_arp_reply(&l, f, sizeof(f), out, sizeof(out)) == 0);
}

static void test_resolv_conf(void)
{
	struct dhcp_lease l;
	char longsearch[1000];
	size_t i;

	memset(&l, 0, sizeof(l));
	CHECK(
	    dhcp_parse_resolv_conf("# generated\n"
				   "nameserver 10.96.0.10\n"
				   "nameserver fd00::10\n"
				   "; comment\n"
				   "nameserver\t192.168.1.1 # lab\n"
				   "domain ignored.example\n"
				   "search ns1.svc.cluster.local  svc.cluster.local cluster.local\n"
				   "options ndots:5\n",
				   &l) == 2);
	CHECK_EQ_U64(l.dns[0], 0x0a60000a);
	CHECK_EQ_U64(l.dns[1], 0xc0a80101);
	CHECK_STR(l.search, "ns1.svc.cluster.local svc.cluster.local cluster.local");

	CHECK(dhcp_parse_resolv_conf("nameserver 1.1.1.1\nnameserver 1.1.1.2\n"
				     "nameserver 1.1.1.3\nnameserver 1.1.1.4\n"
				     "nameserver 1.1.1.5\nnameserver 300.1.1.1\ndomain x.y",
				     &l) == 4);
	CHECK_STR(l.search, "x.y");
	CHECK(dhcp_parse_resolv_conf("", &l) == 0 && l.search[0] == 0);

	/* an oversized search line keeps whole words only */
	strcpy(longsearch, "search");
	for (i = 0; i < 40; i++)
		strcat(longsearch, " abcdefghij.example");
	CHECK(dhcp_parse_resolv_conf(longsearch, &l) == 0);
	CHECK(strlen(l.search) < DHCP_SEARCH_MAX);
	CHECK(strlen(l.search) % 19 == 18 && strlen(l.search) > 200);
}

static void test_ip4(void)
{
	uint32_t ip;

	CHECK(dhcp_parse_ip4("10.0.2.2", &ip) == 0 && ip == 0x0a000202);
	CHECK(dhcp_parse_ip4("255.255.255.255", &ip) == 0 && ip == 0xffffffff);
	CHECK(dhcp_parse_ip4("256.1.1.1", &ip) == -EINVAL);
	CHECK(dhcp_parse_ip4("1.2.3", &ip) == -EINVAL);
	CHECK(dhcp_parse_ip4("1.2.3.4.5", &ip) == -EINVAL);
	CHECK(dhcp_parse_ip4("1.2.3.4 ", &ip) == -EINVAL);
	CHECK(dhcp_parse_ip4("0001.2.3.4", &ip) == -EINVAL);
	CHECK(dhcp_parse_ip4("", &ip) == -EINVAL);
	CHECK_EQ_U64(dhcp_prefix_mask(24), 0xffffff00);
	CHECK_EQ_U64(dhcp_prefix_mask(0), 0);
	CHECK_EQ_U64(dhcp_prefix_mask(32), 0xffffffff);
	CHECK_EQ_U64(dhcp_prefix_mask(17), 0xffff8000);
}

int main(void)
{
	TEST_RUN(test_discover_offer);
	TEST_RUN(test_request_ack_nak);
	TEST_RUN(test_classless_routes);
	TEST_RUN(test_malformed);
	TEST_RUN(test_mutations);
	TEST_RUN(test_arp);
	TEST_RUN(test_resolv_conf);
	TEST_RUN(test_ip4);
	return test_summary();
}
