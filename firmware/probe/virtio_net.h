/* SPDX-License-Identifier: MIT */
/*
 * virtio_net.h - the probe's virtio-net driver (virtio 1.2 §5.1, modern
 * PCI transport, polled, CPL3): it reads the device's MAC, link status and
 * MTU, gets an IPv4 address by DHCP (RFC 2131: DISCOVER, OFFER, REQUEST,
 * ACK), resolves the router by ARP, pings it, answers ARP and ICMP echo
 * requests for its own address all along, and reports one nic= line
 * (firmware/abi.h). DHCP waits are in seconds of the CMOS RTC: at CPL3 the
 * caller grants ports 0x70-0x71 (fw_cpl3_allow_io).
 */
#ifndef FW_PROBE_VIRTIO_NET_H
#define FW_PROBE_VIRTIO_NET_H

#include "firmware/lib/fw.h"
#include "firmware/lib/pci.h"

struct fw_net_opts {
	/* after the checks, keep answering until this many ICMP echo
	 * requests to the guest's address were answered (bounded wait);
	 * "vmlet.netecho=N" on the probe's command line */
	uint32_t echo;
	/* the address to ping through the router instead of the router
	 * itself (host order, 0: the router); "vmlet.netping=A.B.C.D" */
	uint32_t ping;
	/* only the device's own facts: no DHCP, ARP or ping (benchmarks;
	 * "vmlet.netquick") */
	bool quick;
};

/* Options for the next fw_virtio_net_report() calls (default: none). */
void fw_virtio_net_configure(const struct fw_net_opts *o);

/* Drive the virtio-net function f and append its nic= line (or an error=
 * line). mmio_next: where to place unprogrammed BARs (pci.h). */
void fw_virtio_net_report(struct fw_buf *out, const struct fw_pci_fn *f, uint64_t *mmio_next);

/* Attack the virtio-net function f with malformed transmit chains
 * (virtio_net_hostile.c) and append hostileNic=<bb:dd.f> ok|<failed step>. */
void fw_virtio_net_hostile(struct fw_buf *out, const struct fw_pci_fn *f, uint64_t *mmio_next);

/* The Internet checksum (RFC 1071) of p[0..n), folded, not inverted,
 * continuing from sum. */
uint32_t fw_inet_sum(uint32_t sum, const void *p, size_t n);

#endif /* FW_PROBE_VIRTIO_NET_H */
