/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a guest-supplied Ethernet frame through the DHCP parser,
 * the reply builder and the ARP helper; the same bytes as resolv.conf text.
 * Run by scripts/fuzz.sh (make fuzz).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vmm/net/dhcp.h"
#include "vmm/net/pkt.h"

/* Odd first byte: the rest are the options of a well-formed BOOTREQUEST,
 * so the fuzzer spends its time in option parsing and reply building. */
static size_t wrap_options(const uint8_t *data, size_t size, uint8_t *f, size_t cap)
{
	static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t *b = f + PKT_UDP_HLEN;

	if (PKT_UDP_HLEN + 240 + size > cap)
		size = cap - PKT_UDP_HLEN - 240;
	memset(f, 0, PKT_UDP_HLEN + 240);
	b[0] = 1, b[1] = 1, b[2] = 6;
	memcpy(b + 28, "\x02\0\0\0\0\x01", 6);
	b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
	memcpy(b + 240, data, size);
	return pkt_udp4_finish(f, bc, b + 28, 0, 0xffffffff, 68, 67, 240 + size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dhcp_lease lease = {
	    .client_mac = {0x02, 0, 0, 0, 0, 1},
	    .server_mac = {0x02, 0, 0, 0, 0, 2},
	    .server_ip = 0x0a000201,
	    .client_ip = 0x0a000202,
	    .netmask = 0xffffff00,
	    .router = 0x0a000201,
	    .dns = {0x0a000203},
	    .n_dns = 1,
	    .search = "a.example b.example",
	    .hostname = "fuzz",
	    .mtu = 1500,
	};
	struct dhcp_request req;
	struct dhcp_lease l = lease;
	uint8_t out[DHCP_FRAME_MAX], wrapped[1500];
	char text[512];

	/* the same bytes as resolv.conf text feed the lease's DNS and search */
	if (size < sizeof(text)) {
		memcpy(text, data, size);
		text[size] = 0;
		dhcp_parse_resolv_conf(text, &l);
	}
	/* vary the lease a little: /32 with an off-subnet gateway, no router */
	if (size % 3 == 1) {
		l.netmask = 0xffffffff;
		l.router = 0xa9fe0101;
	} else if (size % 3 == 2) {
		l.router = 0;
		l.mtu = 0;
	}
	if (size && (data[0] & 1)) {
		size = wrap_options(data + 1, size - 1, wrapped, sizeof(wrapped));
		data = wrapped;
	}
	if (dhcp_parse(data, size, &req) == 0) {
		/* answer whatever MAC asked so the builder always runs */
		memcpy(l.client_mac, req.chaddr, 6);
		if (dhcp_build_reply(&l, &req, out, sizeof(out)) < 0)
			__builtin_trap(); /* DHCP_FRAME_MAX must always suffice */
	}
	dhcp_arp_reply(&lease, data, size, out, sizeof(out));
	return 0;
}
