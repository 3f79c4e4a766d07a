/* SPDX-License-Identifier: MIT */
/*
 * dhcp.h - vmlet's DHCP responder (RFC 2131, options RFC 2132) and gateway
 * ARP helper, as pure functions on Ethernet frames.
 *
 * vmlet answers its guest's DHCP itself for the bridge and masquerade
 * bindings: the virtio-net TX path hands each frame to dhcp_parse(); a
 * DHCPDISCOVER/REQUEST/INFORM addressed to us is answered with
 * dhcp_build_reply() into the guest's RX queue and never reaches the
 * backend. There is one lease per NIC (struct dhcp_lease): one client MAC,
 * one address.
 *
 * Frames come from the guest and are untrusted: every length, offset and
 * option is bounded by the frame length; a malformed frame is simply "not
 * DHCP" (-EINVAL), never a crash.
 *
 * Addresses in the API are IPv4 in host byte order (10.0.2.2 = 0x0a000202).
 */
#ifndef VMLET_NET_DHCP_H
#define VMLET_NET_DHCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DHCP_MAX_DNS	  4
#define DHCP_SEARCH_MAX	  256 /* bytes of space-separated search domains */
#define DHCP_HOSTNAME_MAX 64
/* A reply always fits this (Ethernet + IP + UDP + BOOTP + options). */
#define DHCP_FRAME_MAX 1024

/* DHCP message types (RFC 2132 §9.6) */
enum dhcp_msg {
	DHCP_DISCOVER = 1,
	DHCP_OFFER = 2,
	DHCP_REQUEST = 3,
	DHCP_DECLINE = 4,
	DHCP_ACK = 5,
	DHCP_NAK = 6,
	DHCP_RELEASE = 7,
	DHCP_INFORM = 8,
};

/* What the responder hands out; filled by the network binding. */
struct dhcp_lease {
	uint8_t client_mac[6];	    /* answer only this chaddr */
	uint8_t server_mac[6];	    /* source MAC of replies (the gateway's) */
	uint32_t server_ip;	    /* server identifier (option 54) and source IP */
	uint32_t client_ip;	    /* yiaddr */
	uint32_t netmask;	    /* option 1 */
	uint32_t router;	    /* option 3; 0 = none. Outside the subnet
				     * (a /32 address), option 121 also makes
				     * it an on-link route (RFC 3442) */
	uint32_t dns[DHCP_MAX_DNS]; /* option 6 */
	unsigned int n_dns;
	char search[DHCP_SEARCH_MAX];	  /* option 15 (first) and 119 (all) */
	char hostname[DHCP_HOSTNAME_MAX]; /* option 12; "" = none */
	uint16_t mtu;			  /* option 26; 0 = none */
	uint32_t lease_secs;		  /* option 51; 0 = default one day */
};

/* The parts of a client message the responder uses. */
struct dhcp_request {
	enum dhcp_msg type;
	uint32_t xid;
	uint16_t flags; /* bit 15 = broadcast */
	uint8_t chaddr[6];
	uint32_t ciaddr;
	uint32_t requested_ip; /* option 50; 0 = absent */
	uint32_t server_id;    /* option 54; 0 = absent */
};

/*
 * Parse an Ethernet frame. Returns 0 and fills *req when it is a well-formed
 * IPv4/UDP BOOTREQUEST to port 67 carrying a message type; -EINVAL for
 * anything else (not DHCP, truncated, bad lengths, fragments, unterminated
 * or overrunning options). Never reads outside [frame, frame+len).
 */
int dhcp_parse(const void *frame, size_t len, struct dhcp_request *req);

/*
 * Build the reply to req for lease into out (cap bytes, DHCP_FRAME_MAX is
 * always enough). Returns the frame length, 0 when the right answer is
 * silence (another client's MAC, a REQUEST for another server, RELEASE,
 * DECLINE), or -ENOSPC. DISCOVER → OFFER; REQUEST for our address → ACK,
 * for another address → NAK; INFORM → ACK without a lease.
 */
int dhcp_build_reply(const struct dhcp_lease *lease, const struct dhcp_request *req, void *out,
		     size_t cap);

/*
 * Answer an ARP request for lease->server_ip from the lease's client (the
 * gateway ARP helper, for bindings where nothing else owns that address).
 * Returns the reply length (42), 0 when the frame is not such a request,
 * or -ENOSPC.
 */
int dhcp_arp_reply(const struct dhcp_lease *lease, const void *frame, size_t len, void *out,
		   size_t cap);

/*
 * Take DNS servers (IPv4 "nameserver" lines, up to DHCP_MAX_DNS) and the
 * search list ("search", else "domain") from resolv.conf text into lease.
 * Unknown lines, IPv6 servers and comments are skipped. Returns the number
 * of servers found.
 */
int dhcp_parse_resolv_conf(const char *text, struct dhcp_lease *lease);

/* Parse dotted-quad IPv4 into host order. Returns 0 or -EINVAL. */
int dhcp_parse_ip4(const char *s, uint32_t *ip);

/* Netmask for a prefix length 0..32. */
uint32_t dhcp_prefix_mask(unsigned int prefix);

#endif /* VMLET_NET_DHCP_H */
