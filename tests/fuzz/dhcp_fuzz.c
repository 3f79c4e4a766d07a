/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a guest-supplied Ethernet frame through the DHCP parser,
 * the reply builder and the ARP helper. Build (see scripts/fuzz.sh):
 *   clang -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *         tests/fuzz/dhcp_fuzz.c vmm/net/dhcp.c vmm/net/pkt.c
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vmm/net/dhcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dhcp_lease lease = {
		.client_mac = { 0x02, 0, 0, 0, 0, 1 },
		.server_mac = { 0x02, 0, 0, 0, 0, 2 },
		.server_ip = 0x0a000201,
		.client_ip = 0x0a000202,
		.netmask = 0xffffff00,
		.router = 0x0a000201,
		.dns = { 0x0a000203 },
		.n_dns = 1,
		.search = "a.example b.example",
		.hostname = "fuzz",
		.mtu = 1500,
	};
	struct dhcp_request req;
	struct dhcp_lease l = lease;
	uint8_t out[DHCP_FRAME_MAX];
	char text[512];

	/* the same bytes as resolv.conf text feed the lease's DNS and search */
	if (size < sizeof(text)) {
		memcpy(text, data, size);
		text[size] = 0;
		dhcp_parse_resolv_conf(text, &l);
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
