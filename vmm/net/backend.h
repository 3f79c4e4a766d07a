/* SPDX-License-Identifier: MIT */
/*
 * backend.h - where a virtio-net queue pair's frames go: a tap fd (tap.c)
 * or passt's stream socket (passt.c), behind one small interface.
 *
 * Every frame crossing this interface starts with the 12-byte
 * struct net_vnet_hdr (virtio 1.2 §5.1.6, "struct virtio_net_hdr" with
 * num_buffers): a tap opened with IFF_VNET_HDR speaks it natively; a backend
 * without one (passt) adds a zeroed header on receive and drops it on send.
 * Only backends with has_vnet_hdr can carry checksum/TSO offloads, so the
 * device offers those features only then.
 *
 * A backend is used by one thread at a time (its NIC's I/O thread); fd is
 * what that thread polls for input, and can change (passt reconnects), so
 * the thread reads it again after every NET_BE_RECONNECTED.
 */
#ifndef VMLET_NET_BACKEND_H
#define VMLET_NET_BACKEND_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct net_vnet_hdr {
	uint8_t flags; /* VIRTIO_NET_HDR_F_NEEDS_CSUM 1, DATA_VALID 2 */
	uint8_t gso_type;
	uint16_t hdr_len, gso_size, csum_start, csum_offset; /* little-endian */
	uint16_t num_buffers;
} __attribute__((packed));
_Static_assert(sizeof(struct net_vnet_hdr) == 12, "virtio_net_hdr_v1");

#define NET_VNET_HDR_LEN 12
/* Largest frame plus header any backend hands over (64 KiB GSO + headers). */
#define NET_FRAME_MAX (65536 + 14 + 4 + NET_VNET_HDR_LEN)

/* TUNSETOFFLOAD-style flags: what the receiver (the guest) accepts. */
enum net_offload {
	NET_OFF_CSUM = 1 << 0, /* partial checksums (GUEST_CSUM) */
	NET_OFF_TSO4 = 1 << 1,
	NET_OFF_TSO6 = 1 << 2,
	NET_OFF_ECN = 1 << 3,
};

/* recv() results besides a length */
#define NET_BE_RECONNECTED (-EPIPE) /* fd changed: re-read be->fd */

struct net_backend;

struct net_backend_ops {
	/*
	 * Receive one frame (header included), scattered over iov in order
	 * (readv()'s contract: iovcnt <= IOV_MAX). Returns the frame's whole
	 * length, which is larger than the iov's total when the frame was
	 * truncated (the bytes past the end are lost), -EAGAIN when nothing
	 * is pending, NET_BE_RECONNECTED after the backend replaced its fd,
	 * or another -errno.
	 */
	ssize_t (*recv)(struct net_backend *be, const struct iovec *iov, int iovcnt);
	/* Send one frame (header included) gathered from iov. Returns 0 or
	 * -errno; a frame that cannot be sent now is dropped, not queued. */
	int (*send)(struct net_backend *be, const struct iovec *iov, int iovcnt);
	/* Which offloads the guest accepts; NULL when unsupported. */
	int (*set_offload)(struct net_backend *be, unsigned int flags);
	/* Take part in receive steering or not (a multiqueue tap's queue
	 * whose pair the guest has not enabled must get no flows); NULL
	 * when the backend has a single queue. */
	int (*set_enabled)(struct net_backend *be, bool enabled);
	void (*destroy)(struct net_backend *be);
};

struct net_backend {
	const struct net_backend_ops *ops;
	int fd;		   /* poll for input; -1 while disconnected */
	bool has_vnet_hdr; /* offloads possible */
	const char *kind;  /* "tap" / "passt" for messages */
};

static inline void net_backend_destroy(struct net_backend *be)
{
	if (be)
		be->ops->destroy(be);
}

#endif /* VMLET_NET_BACKEND_H */
