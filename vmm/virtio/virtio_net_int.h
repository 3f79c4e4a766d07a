/* SPDX-License-Identifier: MIT */
/*
 * virtio_net_int.h - state shared by virtio_net.c (device ops, control
 * queue) and virtio_net_io.c (the I/O thread). Not for other modules.
 */
#ifndef VMLET_VIRTIO_NET_INT_H
#define VMLET_VIRTIO_NET_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* feature bits VIRTIO_NET_F_*, VIRTIO_NET_S_LINK_UP, the control queue's
 * classes and commands, the config layout (virtio 1.2 §5.1) */
#include <linux/virtio_net.h>

#include "vmm/virtio/virtio_net.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_worker.h"
#include "vmm/net/backend.h"
#include "vmm/net/net.h"

#define NET_QUEUE_SIZE	 256
#define NET_MAX_PAIRS	 ((VIRTIO_PCI_MAX_QUEUES - 1) / 2)
#define NET_SEGS	 64   /* iovecs per chain */
#define NET_RX_CHAINS	 64   /* RX buffers held (and merged into one frame) */
#define NET_RX_IOV	 1023 /* their segments; + the spill buffer <= IOV_MAX */
#define NET_INJECT_SLOTS 4
#define NET_INJECT_MAX	 (NET_VNET_HDR_LEN + DHCP_FRAME_MAX)
#define NET_PEEK	 2048 /* frames up to this size may be intercepted */

/* the config the guest sees: mac, status, max_virtqueue_pairs, mtu */
#define NET_CONFIG_LEN offsetof(struct virtio_net_config, speed)
_Static_assert(NET_CONFIG_LEN == 12, "virtio_net_config through mtu");

/* An RX buffer popped from the ring and not used yet. */
struct net_rx_chain {
	uint16_t head;
	uint16_t n_iov; /* its segments in net_pair.iov */
	uint32_t cap;	/* its bytes (<= VIRTQ_MAX_BYTES) */
};

/*
 * One queue pair. RX is single-copy: the backend reads a frame straight
 * into the guest buffers held here (their segments in iov[0, n_iov), in
 * ring order), with spill as the last segment for what does not fit; a
 * frame that spilled waits there until more buffers come.
 */
struct net_pair {
	struct net_backend *be;
	struct net_rx_chain held[NET_RX_CHAINS];
	unsigned int n_held, n_iov;
	uint64_t held_cap;	/* bytes the held buffers hold */
	struct iovec *iov;	/* NET_RX_IOV + 1 */
	uint8_t *spill;		/* NET_FRAME_MAX */
	size_t rx_len;		/* a frame read, not delivered yet (0 = none) */
	size_t rx_spilled_at;	/* its bytes from this offset on are in spill */
	unsigned int rx_pushed; /* used entries written in this pump */
	bool rx_notify;		/* the guest's RX kicks are asked for */
	bool rx_wait_guest;	/* no RX buffers: not reading the backend */
	bool be_dead;		/* the backend failed for good: not polled */
	bool rx_more;		/* stopped by the budget, not for lack of input */
};

struct virtio_net {
	struct virtio_pci vp;
	struct net_attach att;
	char name[64];
	struct virtio_net_config cfg;
	unsigned int pairs, nq;
	uint64_t features; /* negotiated; I/O thread only after activation */
	unsigned int active_pairs;
	struct net_pair pair[NET_MAX_PAIRS];

	/* replies vmlet makes for the guest, delivered on rx0 (I/O thread) */
	uint8_t inject[NET_INJECT_SLOTS][NET_INJECT_MAX];
	size_t inject_len[NET_INJECT_SLOTS];
	unsigned int inject_head, inject_n;

	/* the I/O thread: the shared worker, with its own turn (kicks,
	 * backends and control in one poll) */
	struct virtio_worker worker;
	uint64_t want_features; /* what activation takes (virtio_net_io_activate()) */
	bool io_active;		/* the I/O thread's copy of worker.active */
	/* snapshot (virtio_net_snap.c), read by the next activation: keep
	 * the RX state (a thaw after a snapshot), or start with this many
	 * queue pairs (a restore; 0: one) */
	bool keep_rx;
	unsigned int restored_pairs;

	struct virtio_net_stats st; /* updated atomically */

	/* I/O thread scratch */
	struct iovec out[NET_SEGS], in[NET_SEGS];
	uint8_t peek[NET_PEEK], reply[NET_INJECT_MAX];
};

#define NET_STAT_ADD(n, field, v) __atomic_add_fetch(&(n)->st.field, (v), __ATOMIC_RELAXED)

/* virtio_net_io.c */
int virtio_net_io_start(struct virtio_net *n);
void virtio_net_io_stop(struct virtio_net *n);
void virtio_net_io_activate(struct virtio_net *n, uint64_t features);
void virtio_net_io_pause(struct virtio_net *n);
/* The guest enabled pairs queue pairs (I/O thread). */
void virtio_net_io_set_pairs(struct virtio_net *n, unsigned int pairs);
/*
 * One turn of the I/O thread's loop: wait for a kick, a backend's input or
 * a control request, at most max_wait ms (-1: as long as the state asks
 * for), and serve what came. 1 when something was served, 0 when nothing
 * was, -1 when the thread must end. The thread is a loop over it; a test
 * whose thread_start() starts nothing can turn it by hand (no thread).
 */
int virtio_net_io_turn(struct virtio_net *n, int max_wait);

/* virtio_net_rx.c (I/O thread): receive on queue pair pi, up to a budget
 * of frames (net_pair.rx_more: stopped by it); its backend hung up. */
void virtio_net_rx_pump(struct virtio_net *n, unsigned int pi);
void virtio_net_rx_hangup(struct virtio_net *n, unsigned int pi);

/* virtio_net.c: serve the control queue (I/O thread). */
void virtio_net_ctrl(struct virtio_net *n);

/* Snapshot ops (virtio_net_snap.c, virtio_pci.h's freeze/thaw/save/load). */
void virtio_net_snap_freeze(void *dev);
void virtio_net_snap_thaw(void *dev);
struct snap_buf;
struct snap_cur;
int virtio_net_snap_save(void *dev, struct snap_buf *b);
int virtio_net_snap_load(void *dev, struct snap_cur *c);

static inline bool net_has(const struct virtio_net *n, unsigned int bit)
{
	return n->features & (1ull << bit);
}

#endif /* VMLET_VIRTIO_NET_INT_H */
