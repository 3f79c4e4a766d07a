/* SPDX-License-Identifier: MIT */
/*
 * virtio_vsock.h - virtio-vsock (virtio 1.2 §5.10, device id 19) with its
 * host side as Firecracker's: one Unix socket per VM, no vhost, no kernel
 * module on the host.
 *
 * The guest has the context id guest_cid (config space); the host is CID 2.
 * Stream sockets only (no SEQPACKET feature offered).
 *
 * Host-initiated connections: a client connects to the VM's socket PATH
 * (listening, mode 0600, bound at create time) and writes
 * "CONNECT <port>\n"; the device sends the guest a connection request to
 * <port> and, once the guest accepts, answers "OK <hostport>\n" (hostport:
 * the host-side port the device picked); from then on the socket carries
 * the stream both ways. A refused request (no guest listener) or a bad line
 * closes the client's socket.
 * Guest-initiated connections: a guest connecting to CID 2 port P reaches
 * the Unix socket PATH_P if something listens there (opened through the
 * connector process, vmm/sandbox/connector.h: vmlet's threads never call
 * connect()), else the guest gets a reset.
 *
 * Flow control (§5.10.6.3): the device advertises VIRTIO_VSOCK_BUF_ALLOC
 * bytes of receive buffer per connection; bytes from the guest go to the
 * host socket directly, and what a full host socket does not take waits
 * in that buffer (allocated only then), so a guest that honours its
 * credit never loses a byte, and one that does not gets its connection
 * reset. Bytes from the host are read only into buffers the guest posted
 * and only as far as the guest's credit allows. Nothing ever blocks: the
 * vCPU rings a doorbell, the device's I/O thread (the net-io sandbox role)
 * polls its sockets. Everything the guest writes (headers, lengths, ports,
 * CIDs, operations in any state) is untrusted.
 */
#ifndef VMLET_VIRTIO_VSOCK_H
#define VMLET_VIRTIO_VSOCK_H

#include <stdint.h>

struct virtio_vsock;
struct virtio_pci;
struct pci_host;

#define VIRTIO_VSOCK_HOST_CID  2u
#define VIRTIO_VSOCK_BUF_ALLOC (64u << 10) /* per connection, guest -> host */
#define VIRTIO_VSOCK_MAX_CONNS 128u	   /* open at once; more are reset */
/* The socket's name in the VM's runtime directory (--channel-dir DIR), or
 * the suffix next to the control socket (API_SOCKET.vsock.sock). */
#define VIRTIO_VSOCK_SOCKET_NAME "vsock.sock"

/*
 * Create the device for guest_cid (3..0xfffffffe) and add it to host. With
 * path (at most CONNECTOR_PREFIX_MAX bytes) its Unix socket is bound there
 * (a stale socket is replaced, any other file refused) and a connector is
 * started for PATH_P; without, the guest has the device and no host peer.
 * 0 or -errno (logged).
 */
int virtio_vsock_create(struct virtio_vsock **out, struct pci_host *host, uint64_t guest_cid,
			const char *path);
/* Stop the device, close every connection and its socket (the file
 * stays, as virtio-console's). NULL is a no-op. */
void virtio_vsock_destroy(struct virtio_vsock *v);
struct virtio_pci *virtio_vsock_pci(struct virtio_vsock *v);
/* The host socket's path, NULL without. */
const char *virtio_vsock_path(const struct virtio_vsock *v);

#endif /* VMLET_VIRTIO_VSOCK_H */
