/* SPDX-License-Identifier: MIT */
/*
 * virtio_net_int.h - what the probe's virtio-net driver (virtio_net.c)
 * shares with its IPv6 part (virtio_net6.c). Not for other users.
 */
#ifndef FW_PROBE_VIRTIO_NET_INT_H
#define FW_PROBE_VIRTIO_NET_INT_H

#include "firmware/lib/virtio.h"
#include "firmware/probe/virtio_net.h"

#define NQ	       FW_VIRTIO_QSIZE
#define BUFSZ	       2048
#define HDR	       12 /* virtio_net_hdr with num_buffers (VERSION_1) */
#define ETH	       14
#define WAIT_TICKS     (1ull << 30) /* ~0.3-0.5 s: one DHCP/ARP/ping attempt */
#define ECHO_TICKS     (1ull << 35) /* ~10-17 s: the whole echo window */
#define TRIES	       4
#define DHCP_SECONDS   8    /* the longest wait for an OFFER or an ACK */
#define DHCP_TRIES_MAX 64   /* the bound if there is no RTC */
#define RTC_INDEX      0x70 /* CMOS RTC index port; data at 0x71 */
#define DHCP_CLIENT    68
#define DHCP_SERVER    67

struct net {
	struct fw_virtio v;
	struct fw_virtio_ring r[2]; /* rx, tx */
	uint16_t rx_avail, rx_seen, tx_avail, tx_seen;
	bool tx_busy[NQ];
	uint8_t mac[6], gw_mac[6];
	uint32_t xid, offered, server, ip, mask, router, dhcp_mtu;
	int dhcp_state; /* 0, 2 OFFER seen, 5 ACK, 6 NAK */
	bool gw_known, ping_ok;
	uint16_t ping_seq;
	uint64_t rx_ok, tx_ok, echoed;
	/* IPv6: link-local address, the answer to our echo to ff02::1 */
	uint8_t ll6[16], peer6[16];
	bool ping6_ok;
};

/* ---- bytes ------------------------------------------------------------------ */

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* A free transmit buffer (the frame area after the header), or NULL. */
uint8_t *net_tx_get(struct net *n, uint16_t *slot);
/* Transmit the len bytes of frame in slot. */
void net_tx_send(struct net *n, uint16_t slot, size_t len);
/* An Ethernet header from n to dst; returns where the payload goes. */
uint8_t *net_eth(uint8_t *f, const uint8_t *dst, const struct net *n, uint16_t type);

/* virtio_net6.c: set up the link-local address (RFC 4291 EUI-64 from the
 * MAC); take an IPv6 frame (answer neighbor solicitations for it, note
 * echo replies); send an echo request to ff02::1 (all nodes). */
void net6_init(struct net *n);
void net6_input(struct net *n, const uint8_t *f, size_t len);
void net6_ping(struct net *n);

#endif /* FW_PROBE_VIRTIO_NET_INT_H */
