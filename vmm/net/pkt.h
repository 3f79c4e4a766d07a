/* SPDX-License-Identifier: MIT */
/*
 * pkt.h - the few Ethernet/ARP/IPv4/UDP wire formats vmlet itself reads and
 * writes (the DHCP responder, the gateway ARP helper, tests). Structures are
 * packed wire images: multi-byte fields are big-endian on the wire and are
 * read and written with the be16/be32 helpers, never through host integers.
 *
 * Nothing here allocates or trusts its input: every reader takes the frame
 * length and checks it before touching a byte.
 */
#ifndef VMLET_NET_PKT_H
#define VMLET_NET_PKT_H

#include <stddef.h>
#include <stdint.h>

#define PKT_ETH_HLEN	   14
#define PKT_ETHERTYPE_IPV4 0x0800
#define PKT_ETHERTYPE_ARP  0x0806
#define PKT_IPPROTO_ICMP   1
#define PKT_IPPROTO_TCP	   6
#define PKT_IPPROTO_UDP	   17

struct pkt_eth {
	uint8_t dst[6], src[6];
	uint8_t type[2];
} __attribute__((packed));

struct pkt_ip4 {
	uint8_t ver_ihl, tos;
	uint8_t tot_len[2], id[2], frag[2];
	uint8_t ttl, proto;
	uint8_t csum[2];
	uint8_t saddr[4], daddr[4];
} __attribute__((packed));

struct pkt_udp {
	uint8_t sport[2], dport[2], len[2], csum[2];
} __attribute__((packed));

/* RFC 826 ARP for Ethernet/IPv4 */
struct pkt_arp {
	uint8_t htype[2], ptype[2];
	uint8_t hlen, plen;
	uint8_t op[2];
	uint8_t sha[6], spa[4], tha[6], tpa[4];
} __attribute__((packed));

_Static_assert(sizeof(struct pkt_eth) == 14, "ethernet header");
_Static_assert(sizeof(struct pkt_ip4) == 20, "ipv4 header");
_Static_assert(sizeof(struct pkt_udp) == 8, "udp header");
_Static_assert(sizeof(struct pkt_arp) == 28, "arp body");

static inline uint16_t pkt_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t pkt_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void pkt_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void pkt_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Ones'-complement sum of len bytes added to sum (RFC 1071), not folded. */
uint32_t pkt_csum_add(uint32_t sum, const void *data, size_t len);
/* Fold a pkt_csum_add() sum and complement it: the value to store. */
uint16_t pkt_csum_fold(uint32_t sum);

/*
 * Write Ethernet + IPv4 + UDP headers in front of a payload already placed
 * at buf + PKT_UDP_HLEN (payload_len bytes) and fill both checksums. Addresses
 * are host-order IPv4. Returns the frame length.
 */
#define PKT_UDP_HLEN (PKT_ETH_HLEN + 20 + 8)
size_t pkt_udp4_finish(uint8_t *buf, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		       uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport,
		       size_t payload_len);

#endif /* VMLET_NET_PKT_H */
