// SPDX-License-Identifier: MIT
/*
 * virtio_net6.c - the probe's IPv6 exchange (virtio_net_int.h): an
 * ICMPv6 echo request (RFC 4443) from the link-local address to ff02::1,
 * neighbor advertisements (RFC 4861) for the link-local address so the
 * answer can come back. Frames from the network are untrusted.
 */
#include "firmware/probe/virtio_net_int.h"

#define IP6	 40
#define ICMP6	 58
#define ECHO6_ID 0x766e /* "vn" */
#define ETH_IPV6 0x86dd

static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};

void net6_init(struct net *n)
{
	memset(n->ll6, 0, 16);
	n->ll6[0] = 0xfe;
	n->ll6[1] = 0x80;
	n->ll6[8] = n->mac[0] ^ 2;
	n->ll6[9] = n->mac[1];
	n->ll6[10] = n->mac[2];
	n->ll6[11] = 0xff;
	n->ll6[12] = 0xfe;
	memcpy(n->ll6 + 13, n->mac + 3, 3);
}

/* ICMPv6 checksum: pseudo-header (RFC 8200 §8.1) and the message. */
static uint16_t csum6(const uint8_t *ip6, const uint8_t *msg, uint32_t len)
{
	uint8_t tail[8] = {(uint8_t)(len >> 24),
			   (uint8_t)(len >> 16),
			   (uint8_t)(len >> 8),
			   (uint8_t)len,
			   0,
			   0,
			   0,
			   ICMP6};
	uint32_t sum = fw_inet_sum(0, ip6 + 8, 32);

	sum = fw_inet_sum(sum, tail, 8);
	return (uint16_t)~fw_inet_sum(sum, msg, len);
}

/* Ethernet + IPv6 header for an ICMPv6 message of len bytes; returns it. */
static uint8_t *ip6(struct net *n, uint8_t *f, const uint8_t *dmac, const uint8_t *dst,
		    uint16_t len, uint8_t hops)
{
	uint8_t *p = net_eth(f, dmac, n, ETH_IPV6);

	memset(p, 0, IP6);
	p[0] = 0x60;
	put16(p + 4, len);
	p[6] = ICMP6;
	p[7] = hops;
	memcpy(p + 8, n->ll6, 16);
	memcpy(p + 24, dst, 16);
	return p + IP6;
}

void net6_ping(struct net *n)
{
	static const uint8_t mmac[6] = {0x33, 0x33, 0, 0, 0, 1};
	uint16_t slot;
	uint8_t *f = net_tx_get(n, &slot), *m;

	if (!f)
		return;
	m = ip6(n, f, mmac, all_nodes, 8 + 16, 64);
	memset(m, 0, 8 + 16);
	m[0] = 128;
	put16(m + 4, ECHO6_ID);
	put16(m + 6, 1);
	memcpy(m + 8, "vmlet-probe-ipv6", 16);
	put16(m + 2, csum6(m - IP6, m, 8 + 16));
	net_tx_send(n, slot, ETH + IP6 + 8 + 16);
}

/* A neighbor advertisement for our address to the solicitation's sender. */
static void advertise(struct net *n, const uint8_t *f)
{
	uint16_t slot;
	uint8_t *o = net_tx_get(n, &slot), *m;

	if (!o)
		return;
	m = ip6(n, o, f + 6, f + ETH + 8, 32, 255);
	memset(m, 0, 32);
	m[0] = 136;
	m[4] = 0x60; /* solicited, override */
	memcpy(m + 8, n->ll6, 16);
	m[24] = 2; /* target link-layer address */
	m[25] = 1;
	memcpy(m + 26, n->mac, 6);
	put16(m + 2, csum6(m - IP6, m, 32));
	net_tx_send(n, slot, ETH + IP6 + 32);
}

void net6_input(struct net *n, const uint8_t *f, size_t len)
{
	const uint8_t *p = f + ETH, *m = p + IP6;
	uint32_t plen;

	if (len < ETH + IP6 + 8 || (p[0] >> 4) != 6 || p[6] != ICMP6)
		return;
	plen = be16(p + 4);
	if (plen < 8 || ETH + IP6 + plen > len || csum6(p, m, plen) != 0)
		return;
	if (m[0] == 135 && plen >= 24 && p[7] == 255 && !memcmp(m + 8, n->ll6, 16))
		advertise(n, f);
	else if (m[0] == 129 && be16(m + 4) == ECHO6_ID && !memcmp(p + 24, n->ll6, 16)) {
		memcpy(n->peer6, p + 8, 16);
		n->ping6_ok = true;
	}
}
