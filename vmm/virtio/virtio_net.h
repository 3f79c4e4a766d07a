/* SPDX-License-Identifier: MIT */
/*
 * virtio_net.h - virtio network device (virtio 1.2 §5.1) on the virtio PCI
 * transport, over the backends of vmm/net (tap, passt).
 *
 * Features: VERSION_1, MAC, STATUS (link always up), MTU, MRG_RXBUF,
 * CTRL_VQ (+ CTRL_RX, accepted and ignored: a tap sees every frame), MQ
 * when the attachment has more than one queue pair, and, only when the
 * backend carries a vnet header (tap), CSUM/GUEST_CSUM and TSO4/TSO6/ECN
 * both ways: the 12-byte virtio_net_hdr goes to and from the tap as is,
 * and the guest's negotiated GUEST_* set becomes the tap's TUNSETOFFLOAD.
 *
 * Queues: rx0, tx0, rx1, tx1, ..., then the control queue.
 *
 * I/O: one thread per NIC (THREAD_NET_IO) sleeps in poll() on the queues'
 * kick eventfds and the backends' fds; no busy polling. RX reads at most
 * one frame per queue pair ahead: when the guest posts no RX buffers the
 * thread stops reading that backend (the kernel's tap queue drops, as a
 * full NIC ring would), so a stuck guest grows no memory and blocks
 * nothing else. TX frames go to the backend straight from guest memory,
 * except the few vmlet answers itself (net_intercept: DHCP, gateway ARP),
 * whose replies are queued (bounded) for the guest's RX.
 *
 * Every descriptor is untrusted: chains are walked by virtqueue.c, a bad
 * RX or TX chain is returned empty and counted, a broken ring sets
 * NEEDS_RESET; nothing a guest writes stops vmlet.
 */
#ifndef VMLET_VIRTIO_NET_H
#define VMLET_VIRTIO_NET_H

#include <stdbool.h>
#include <stdint.h>

struct net_attach;
struct pci_host;
struct virtio_net;
struct virtio_pci;
struct vm_config;

struct virtio_net_stats {
	uint64_t rx_packets, tx_packets;
	uint64_t rx_bytes, tx_bytes; /* frames without the virtio-net header */
	uint64_t rx_dropped;	     /* frames that found no or too small buffers */
	uint64_t tx_dropped;	     /* bad chains, backend errors */
	uint64_t intercepted;	     /* guest frames vmlet answered itself */
};

/*
 * Create the device on host for an attachment (net.h). The attachment is
 * moved into the device (its backends are closed by destroy; *att is
 * zeroed). The I/O thread starts here, before the sandbox.
 */
int virtio_net_create(struct virtio_net **out, struct pci_host *host, struct net_attach *att);
/*
 * The whole job for cfg->nics[index]: validate it, attach its binding
 * (net_attach() with the environment's pod/capability facts) with one
 * queue pair per vCPU when cfg->net_multi_queue, and create the device.
 * Call during setup, before the sandbox.
 */
int virtio_net_create_nic(struct virtio_net **out, struct pci_host *host,
			  const struct vm_config *cfg, unsigned int index);
void virtio_net_destroy(struct virtio_net *n);
/* After a live migration (vmm/snapshot/migrate.h): ask the guest to
 * announce itself on the network (VIRTIO_NET_F_GUEST_ANNOUNCE: status
 * VIRTIO_NET_S_ANNOUNCE and a config interrupt; the driver sends its
 * gratuitous ARPs and neighbour advertisements and acks on the control
 * queue, which clears the bit). -ENOTSUP when the driver did not take
 * the feature. */
int virtio_net_announce(struct virtio_net *n);

struct virtio_pci *virtio_net_pci(struct virtio_net *n);

/* What the guest should find on this NIC (vmm/probe/report.h). */
struct virtio_net_info {
	uint8_t mac[6];
	unsigned int mtu;
	const char *binding; /* net_mode_name() */
	uint32_t lease_ip;   /* vmlet's DHCP responder hands out; 0 none */
	unsigned int lease_prefix;
	bool want_dhcp; /* the binding promises an address by DHCP */
};
void virtio_net_get_info(struct virtio_net *n, struct virtio_net_info *info);
void virtio_net_get_stats(struct virtio_net *n, struct virtio_net_stats *st);

#endif /* VMLET_VIRTIO_NET_H */
