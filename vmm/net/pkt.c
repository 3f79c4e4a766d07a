/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "vmm/net/pkt.h"

uint32_t pkt_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t s = sum;

	while (len >= 2) {
		s += pkt_be16(p);
		p += 2;
		len -= 2;
	}
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 32)
		s = (s & 0xffffffff) + (s >> 32);
	return (uint32_t)s;
}

uint16_t pkt_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t pkt_udp4_finish(uint8_t *buf, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		       uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport,
		       size_t payload_len)
{
	struct pkt_eth *eth = (struct pkt_eth *)buf;
	struct pkt_ip4 *ip = (struct pkt_ip4 *)(buf + PKT_ETH_HLEN);
	struct pkt_udp *udp = (struct pkt_udp *)(buf + PKT_ETH_HLEN + sizeof(*ip));
	size_t udp_len = sizeof(*udp) + payload_len;
	uint8_t pseudo[12];
	uint32_t sum;
	uint16_t c;

	memcpy(eth->dst, dst_mac, 6);
	memcpy(eth->src, src_mac, 6);
	pkt_put16(eth->type, PKT_ETHERTYPE_IPV4);

	memset(ip, 0, sizeof(*ip));
	ip->ver_ihl = 0x45;
	pkt_put16(ip->tot_len, (uint16_t)(sizeof(*ip) + udp_len));
	ip->ttl = 64;
	ip->proto = PKT_IPPROTO_UDP;
	pkt_put32(ip->saddr, saddr);
	pkt_put32(ip->daddr, daddr);
	pkt_put16(ip->csum, pkt_csum_fold(pkt_csum_add(0, ip, sizeof(*ip))));

	pkt_put16(udp->sport, sport);
	pkt_put16(udp->dport, dport);
	pkt_put16(udp->len, (uint16_t)udp_len);
	memset(udp->csum, 0, 2);
	/* RFC 768 pseudo header: saddr, daddr, zero, proto, udp length */
	memcpy(pseudo, ip->saddr, 4);
	memcpy(pseudo + 4, ip->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = PKT_IPPROTO_UDP;
	pkt_put16(pseudo + 10, (uint16_t)udp_len);
	sum = pkt_csum_add(0, pseudo, sizeof(pseudo));
	sum = pkt_csum_add(sum, udp, udp_len);
	c = pkt_csum_fold(sum);
	pkt_put16(udp->csum, c ? c : 0xffff); /* 0 means "no checksum" */
	return PKT_ETH_HLEN + sizeof(*ip) + udp_len;
}
