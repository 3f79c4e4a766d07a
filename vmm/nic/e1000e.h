/* SPDX-License-Identifier: MIT */
/*
 * e1000e.h - the Intel 82574L gigabit NIC, what KubeVirt's interface
 * model "e1000e" is in QEMU: PCI 8086:10d3, subsystem 8086:0000,
 * revision 0, class 02/00/00; BAR0 the 128 KiB register file, BAR1 a
 * 128 KiB flash window that reads as zeros (not implemented: the Linux
 * and Windows drivers use the EEPROM through EERD), BAR3 MSI-X with
 * QEMU's five vectors (RX0, RX1, TX0, TX1, other; the IVAR register maps
 * the causes onto them), INTA# when MSI-X is off. There is no I/O BAR
 * (vmlet's PCI bus decodes memory BARs only; neither driver needs it).
 *
 * The device as the drivers see it (82574 datasheet, QEMU's e1000e as the
 * reference for reset values): a 64-word EEPROM read through EERD that
 * holds the MAC and sums to 0xBABA; the PHY behind MDIC at address 1
 * (ID 0141:0cb1, link up, autonegotiation complete, 1000 Mb/s full
 * duplex); the interrupt causes ICR/ICS/IMS/IMC/IAM/EIAC with the 82574's
 * MSI-X auto-clear and auto-mask; one RX and one TX queue (ring 1 is
 * accepted and never used); legacy and extended TX descriptors with IP
 * and TCP/UDP checksum insertion and TCP segmentation (done in vmlet,
 * IPv4 and IPv6); legacy and extended RX descriptors (RFCTL.EXTEN) and
 * packet-split ones (RCTL.DTYP 1: a frame in the four buffers of one
 * descriptor) with RX checksum status computed in vmlet (RXCSUM);
 * statistics that clear on read.
 *
 * Frames go to and come from the network backends virtio-net uses
 * (vmm/net/backend.h: tap, bridge, masquerade, passt) through the same
 * attachment (net_attach(): one queue) and the same DHCP/ARP intercept;
 * the vnet header stays zero both ways (no offloads asked of the backend:
 * every frame is whole and checksummed when it crosses).
 *
 * Threads: registers are read and written on vCPU threads under one
 * lock; one I/O thread per NIC (THREAD_NET_IO) runs the rings: woken by
 * an eventfd when the guest writes TDT or RDT (or changes RCTL/TCTL) and
 * by the backend's fd. Each pass raises at most one interrupt per cause,
 * and RX and TX interrupts are spaced by the driver's EITR (MSI-X) or ITR
 * (the thread wakes to send one it held back); RDTR/RADV and TIDV/TADV
 * are kept as written and do not delay.
 *
 * Every value the guest writes is untrusted: ring bases, lengths, heads
 * and tails are bounded (a tail outside the ring stops the ring), every
 * descriptor and buffer is reached through guest_mem_ptr() and copied
 * before use, a packet longer than E1000E_TX_MAX or a TSO context whose
 * header length, MSS or offsets do not fit the packet is dropped and
 * counted, never trusted.
 */
#ifndef VMLET_NIC_E1000E_H
#define VMLET_NIC_E1000E_H

#include <stdbool.h>
#include <stdint.h>

struct e1000e;
struct net_attach;
struct pci_dev;
struct pci_host;
struct vm_config;

#define E1000E_VENDOR_ID 0x8086
#define E1000E_DEVICE_ID 0x10d3 /* 82574L */

struct e1000e_stats {
	uint64_t rx_packets, tx_packets, rx_bytes, tx_bytes;
	uint64_t rx_dropped; /* no descriptors, filtered out, too long */
	uint64_t tx_dropped; /* bad descriptors or contexts, backend errors */
	uint64_t intercepted;
};

/*
 * Create the NIC on host for an attachment (net.h; its first backend is
 * used, the others closed). The attachment moves into the device (*att
 * is zeroed). start_io: start the I/O thread (false: the caller turns
 * e1000e_io_turn() itself: tests, fuzzers).
 */
int e1000e_create(struct e1000e **out, struct pci_host *host, struct net_attach *att,
		  bool start_io);
/* The whole job for cfg->nics[index] (net_attach() with one queue, then
 * e1000e_create()); setup, before the sandbox. */
int e1000e_create_nic(struct e1000e **out, struct pci_host *host, const struct vm_config *cfg,
		      unsigned int index);
void e1000e_destroy(struct e1000e *e);

struct pci_dev *e1000e_pci(struct e1000e *e);
void e1000e_get_stats(struct e1000e *e, struct e1000e_stats *st);

/* The cable: link up or down (STATUS.LU, the PHY's link bits, an LSC
 * interrupt when it changes). */
void e1000e_set_link(struct e1000e *e, bool up);

/*
 * Snapshot (e1000e_snap.c, docs/snapshot.md). freeze() holds the I/O
 * thread between two turns (a no-op without one: start_io false) and
 * thaw() lets it go on; save() appends the device's state beside its PCI
 * function's (pci_dev_save) as snap_buf.h items: refused (-ENOTSUP) for
 * a thread that was not held. load(), on a device created from the same
 * config whose vCPUs have not run, after pci_dev_load(): every value is
 * checked as guest input (-EBADMSG, the reason logged) and nothing is
 * set unless all of it is taken; a packet being gathered and the replies
 * owed are dropped, a link that changed raises LSC.
 */
struct snap_buf;
struct snap_cur;
int e1000e_freeze(struct e1000e *e);
void e1000e_thaw(struct e1000e *e);
int e1000e_save(struct e1000e *e, struct snap_buf *b);
int e1000e_load(struct e1000e *e, struct snap_cur *c);

/* One turn of the I/O thread: wait up to max_wait ms (-1: until woken)
 * for a doorbell or the backend, then run TX and RX. 1 when something was
 * done, 0 when not, -1 when the device is stopping. */
int e1000e_io_turn(struct e1000e *e, int max_wait);

#endif /* VMLET_NIC_E1000E_H */
