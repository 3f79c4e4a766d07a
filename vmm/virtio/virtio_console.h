/* SPDX-License-Identifier: MIT */
/*
 * virtio_console.h - virtio-console with VIRTIO_CONSOLE_F_MULTIPORT
 * (virtio 1.2 §5.3): the virtio-serial controller of QEMU and KubeVirt,
 * carrying named ports such as the guest-agent channel
 * "org.qemu.guest_agent.0".
 *
 * Ports get ids 1..n in the order given (id 0 is left for a console, as
 * QEMU's virtio-serial-bus does); the guest learns them through the
 * control queues (PORT_ADD, PORT_NAME, PORT_OPEN) once its driver says
 * DEVICE_READY and PORT_READY. Each port is backed by a listening Unix
 * stream socket PREFIX + NAME (mode 0600, bound at create time, before
 * the sandbox; vmlet run's prefix is "DIR/" for --channel-dir DIR, else
 * "API_SOCKET." next to the control socket); one host client at a time is
 * served (others wait in the backlog), and its connecting and leaving
 * reach the guest as PORT_OPEN 1/0. Without a prefix the ports exist but
 * no host ever connects.
 *
 * Flow control: bytes move between the guest's buffers and the socket
 * directly (no host-side buffer). A guest buffer the host reader has not
 * taken yet stays in flight until it has, and the port's transmit queue is
 * not served meanwhile; host bytes are read only into buffers the guest
 * posted, while it has the port open. So nothing is dropped and no vCPU
 * ever waits: the vCPU only rings a doorbell, one I/O thread (the net-io
 * sandbox role) does the rest. Everything read from the guest (control
 * messages, port ids, descriptors) is untrusted.
 */
#ifndef VMLET_VIRTIO_CONSOLE_H
#define VMLET_VIRTIO_CONSOLE_H

#include <linux/virtio_console.h>

struct virtio_console;
struct virtio_pci;
struct pci_host;

/* Named ports per device: 2 * (ports + 2) queues fit the transport. */
#define VIRTIO_CONSOLE_MAX_PORTS 8
/* A port name: [A-Za-z0-9._-], not starting with '.', at most this long. */
#define VIRTIO_CONSOLE_NAME_MAX 63

/*
 * Create the device with the n named ports names[] (n >= 1), each backed by
 * the socket prefix + NAME when prefix is not NULL (a stale socket there is
 * replaced; any other file makes it fail), and add it to host. 0 or -errno
 * (logged).
 */
int virtio_console_create(struct virtio_console **out, struct pci_host *host,
			  const char *const *names, unsigned int n, const char *prefix);
/* Stop the device, close its sockets (the socket files stay: a sandboxed
 * vmlet may not unlink; the next start replaces them). NULL is a no-op. */
void virtio_console_destroy(struct virtio_console *c);
struct virtio_pci *virtio_console_pci(struct virtio_console *c);
/* The socket path of port i (0-based, in names[] order), NULL without. */
const char *virtio_console_port_path(const struct virtio_console *c, unsigned int i);

#endif /* VMLET_VIRTIO_CONSOLE_H */
