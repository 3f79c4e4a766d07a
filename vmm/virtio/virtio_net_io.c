/* SPDX-License-Identifier: MIT */
/*
 * virtio_net_io.c - virtio-net's I/O thread: TX from the transmit queues
 * to the backends, the control queue (virtio 1.2 §5.1.6), and the loop
 * that serves them, RX (virtio_net_rx.c) and the backends' hangups.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "vmm/util/iov.h"
#include "vmm/virtio/virtio_net_int.h"
#include "vmm/util/log.h"
#include "vmm/net/pkt.h"
#include "vmm/util/thread.h"

#define TX_BATCH     16			     /* TX completions published together */
#define TX_BATCH_MAX (32 * 1024)	     /* ... or fewer, once their frames reach this */
#define TX_PEEK_HDRS (PKT_ETH_HLEN + 60 + 4) /* what tx_maybe_ours() reads */

/* ---- TX ---------------------------------------------------------------- */

/* Could this frame be one vmlet answers (DHCP to port 67, ARP)? */
static bool tx_maybe_ours(const struct virtio_net *n, const uint8_t *f, size_t len)
{
	size_t ihl;

	if (!n->att.dhcp || len < PKT_ETH_HLEN + 20 + 8)
		return false;
	if (pkt_be16(f + 12) == PKT_ETHERTYPE_ARP)
		return n->att.arp_gateway;
	if (pkt_be16(f + 12) != PKT_ETHERTYPE_IPV4 || f[PKT_ETH_HLEN + 9] != PKT_IPPROTO_UDP)
		return false;
	ihl = (size_t)(f[PKT_ETH_HLEN] & 15) * 4;
	return len >= PKT_ETH_HLEN + ihl + 4 && pkt_be16(f + PKT_ETH_HLEN + ihl + 2) == 67;
}

static void inject(struct virtio_net *n, const void *frame, size_t len)
{
	unsigned int slot;

	if (n->inject_n == NET_INJECT_SLOTS || len + NET_VNET_HDR_LEN > NET_INJECT_MAX) {
		NET_STAT_ADD(n, rx_dropped, 1);
		return;
	}
	slot = (n->inject_head + n->inject_n++) % NET_INJECT_SLOTS;
	memset(n->inject[slot], 0, NET_VNET_HDR_LEN);
	memcpy(n->inject[slot] + NET_VNET_HDR_LEN, frame, len);
	n->inject_len[slot] = len + NET_VNET_HDR_LEN;
}

/* One transmit chain: header + frame, device-readable only. */
static void tx_one(struct virtio_net *n, struct net_pair *p, const struct virtq_elem *e)
{
	uint64_t flen = e->out_bytes - NET_VNET_HDR_LEN;
	int r;

	if (e->n_in || e->out_bytes < NET_VNET_HDR_LEN + PKT_ETH_HLEN ||
	    e->out_bytes > NET_FRAME_MAX) {
		log_warn_once("virtio-net: %s: bad transmit chain", n->name);
		NET_STAT_ADD(n, tx_dropped, 1);
		return;
	}
	if (n->att.dhcp && flen <= NET_PEEK) {
		/* the headers first (Ethernet, IPv4 with options, UDP ports):
		 * the whole frame only when it may be ours */
		size_t h = flen < TX_PEEK_HDRS ? flen : TX_PEEK_HDRS;

		iov_to_buf(e->out, e->n_out, NET_VNET_HDR_LEN, n->peek, h);
		if (tx_maybe_ours(n, n->peek, flen)) {
			iov_to_buf(e->out, e->n_out, NET_VNET_HDR_LEN + h, n->peek + h, flen - h);
			r = net_intercept(&n->att, n->peek, flen, n->reply, sizeof(n->reply));
			if (r >= 0) {
				if (r > 0)
					inject(n, n->reply, (size_t)r);
				NET_STAT_ADD(n, intercepted, 1);
				return;
			}
		}
	}
	r = p->be->ops->send(p->be, e->out, (int)e->n_out);
	if (r) {
		NET_STAT_ADD(n, tx_dropped, 1);
		if (r != -ENOTCONN && r != -EAGAIN && r != -ENOBUFS)
			log_warn_once("virtio-net: %s: %s backend send failed: %s", n->name,
				      p->be->kind, strerror(-r));
		return;
	}
	NET_STAT_ADD(n, tx_packets, 1);
	NET_STAT_ADD(n, tx_bytes, flen);
}

/*
 * Send what the transmit queue holds. Completions are published in
 * batches of up to TX_BATCH (and when the ring runs dry), so a polling
 * guest refills several slots per doorbell instead of one; a batch ends
 * sooner once its frames reach TX_BATCH_MAX bytes: a guest with a few
 * large buffers (16 of 64 KiB) would otherwise have all of them in
 * flight and none to refill while the batch is sent, and one publication
 * per 32 KiB written is nothing next to the copy.
 */
static int tx_pass(struct virtio_net *n, unsigned int pi, struct virtq *q, unsigned int *done)
{
	struct virtq_elem e = {.out = n->out, .in = n->in, .cap_out = NET_SEGS, .cap_in = NET_SEGS};
	unsigned int pend = 0;
	uint64_t bytes = 0;
	int r;

	while ((r = virtq_pop(q, &e)) > 0) {
		if (r == VIRTQ_POP_OK)
			tx_one(n, &n->pair[pi], &e);
		else
			NET_STAT_ADD(n, tx_dropped, 1);
		if (virtq_fill(q, pend++, e.head, 0))
			return -EIO;
		bytes += e.out_bytes;
		if (pend == TX_BATCH || bytes >= TX_BATCH_MAX) {
			if (virtq_flush(q, pend))
				return -EIO;
			*done += pend;
			pend = 0;
			bytes = 0;
		}
	}
	if (pend && virtq_flush(q, pend))
		return -EIO;
	*done += pend;
	return r;
}

static void tx_drain(struct virtio_net *n, unsigned int pi)
{
	struct virtq *q = virtio_pci_queue(&n->vp, 2 * pi + 1);
	unsigned int done;

	if (!q)
		return;
	do {
		virtq_disable_notify(q);
		done = 0;
		if (tx_pass(n, pi, q, &done) < 0) {
			virtio_pci_needs_reset(&n->vp);
			return;
		}
		if (done && virtq_should_notify(q))
			virtio_pci_queue_interrupt(&n->vp, 2 * pi + 1);
	} while (virtq_enable_notify(q));
	if (n->inject_n)
		virtio_net_rx_pump(n, 0); /* replies vmlet made */
}

/* ---- the thread ---------------------------------------------------------- */

static void drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn_once("virtio-net: eventfd read failed");
}

/* The guest negotiated features: tell the taps what it accepts. */
static void io_set_offloads(struct virtio_net *n)
{
	unsigned int off = 0, i;

	if (net_has(n, VIRTIO_NET_F_GUEST_CSUM))
		off |= NET_OFF_CSUM;
	if (net_has(n, VIRTIO_NET_F_GUEST_TSO4))
		off |= NET_OFF_TSO4;
	if (net_has(n, VIRTIO_NET_F_GUEST_TSO6))
		off |= NET_OFF_TSO6;
	if (net_has(n, VIRTIO_NET_F_GUEST_ECN))
		off |= NET_OFF_ECN;
	for (i = 0; i < n->pairs; i++)
		if (n->pair[i].be->ops->set_offload)
			n->pair[i].be->ops->set_offload(n->pair[i].be, off);
}

/*
 * Only the queue pairs the guest enabled take part in the tap's receive
 * steering: frames the kernel put on a queue nobody reads would be lost.
 */
void virtio_net_io_set_pairs(struct virtio_net *n, unsigned int pairs)
{
	unsigned int i;

	for (i = 0; i < n->pairs; i++) {
		struct net_backend *be = n->pair[i].be;

		if (be->ops->set_enabled && n->pairs > 1)
			be->ops->set_enabled(be, i < pairs);
	}
	n->active_pairs = pairs;
}

/* The worker turns active (under its lock, on the I/O thread): take the
 * negotiated features, start from one pair and empty RX state. */
static void io_on_activate(void *opaque)
{
	struct virtio_net *n = opaque;
	unsigned int i;

	if (n->keep_rx) { /* a thaw after a snapshot: as it was */
		n->keep_rx = false;
		return;
	}
	n->features = n->want_features;
	n->active_pairs = 1;
	n->inject_n = 0;
	for (i = 0; i < n->pairs; i++) {
		struct net_pair *p = &n->pair[i];

		p->n_held = p->n_iov = 0;
		p->held_cap = 0;
		p->rx_len = 0;
		p->rx_notify = true;
		p->rx_wait_guest = false;
	}
	if (n->restored_pairs > 1) /* a restored snapshot's pairs */
		virtio_net_io_set_pairs(n, n->restored_pairs);
	n->restored_pairs = 0;
}

struct io_fds {
	struct pollfd pfd[2 * VIRTIO_PCI_MAX_QUEUES + 2];
	int kind[2 * VIRTIO_PCI_MAX_QUEUES + 2]; /* -1 ctl, 0 kick, 1 backend, 2 hangup */
	unsigned int queue[2 * VIRTIO_PCI_MAX_QUEUES + 2];
	unsigned int n;
};

static void fds_add(struct io_fds *f, int fd, int kind, unsigned int queue)
{
	f->pfd[f->n] = (struct pollfd){.fd = fd, .events = kind == 2 ? 0 : POLLIN};
	f->kind[f->n] = kind;
	f->queue[f->n++] = queue;
}

/* What to sleep on: the control fd, then (when active) every active
 * queue's kick fd and every backend that has somewhere to put a frame. */
static int io_fds_build(struct virtio_net *n, bool active, struct io_fds *f)
{
	unsigned int i;
	int tmo = -1;

	f->n = 0;
	fds_add(f, virtio_worker_ctl_fd(&n->worker), -1, 0);
	if (!active)
		return -1;
	for (i = 0; i < n->active_pairs; i++) {
		fds_add(f, virtio_pci_kick_fd(&n->vp, 2 * i), 0, 2 * i);
		fds_add(f, virtio_pci_kick_fd(&n->vp, 2 * i + 1), 0, 2 * i + 1);
		if (n->pair[i].be_dead)
			continue;
		if (n->pair[i].rx_wait_guest) {
			/* no frame pending: notice the backend closing */
			if (!n->pair[i].rx_len && !n->pair[i].n_held && n->pair[i].be->fd >= 0)
				fds_add(f, n->pair[i].be->fd, 2, i);
			continue;
		}
		if (n->pair[i].be->fd >= 0)
			fds_add(f, n->pair[i].be->fd, 1, i);
		else
			tmo = 100; /* a reconnecting backend (passt): look again */
		if (n->pair[i].rx_more)
			tmo = 0;
	}
	fds_add(f, virtio_pci_kick_fd(&n->vp, 2 * n->pairs), 0, 2 * n->pairs);
	return tmo;
}

static void io_drain_all(struct virtio_net *n)
{
	unsigned int i;

	virtio_net_ctrl(n);
	for (i = 0; i < n->active_pairs; i++) {
		tx_drain(n, i);
		virtio_net_rx_pump(n, i);
	}
}

static void io_kick(struct virtio_net *n, unsigned int q)
{
	if (q == 2 * n->pairs) {
		virtio_net_ctrl(n);
	} else if (q & 1) {
		tx_drain(n, q / 2);
	} else {
		n->pair[q / 2].rx_wait_guest = false;
		virtio_net_rx_pump(n, q / 2);
	}
}

int virtio_net_io_turn(struct virtio_net *n, int max_wait)
{
	struct io_fds f;
	bool activated;
	unsigned int i;
	int tmo = io_fds_build(n, n->io_active, &f), r;

	if (max_wait >= 0 && (tmo < 0 || tmo > max_wait))
		tmo = max_wait;
	r = poll(f.pfd, f.n, tmo);
	if (r < 0 && errno != EINTR)
		return error_errno(-errno, "virtio-net: %s: poll", n->name);
	if (r < 0)
		return 0;
	if (f.pfd[0].revents) {
		if (!virtio_worker_update(&n->worker, &activated))
			return -1;
		n->io_active = n->worker.active;
		if (activated) {
			io_set_offloads(n);
			/* one pair after a driver's start; the pairs it had after
			 * a thaw or a restore (io_on_activate) */
			virtio_net_io_set_pairs(n, n->active_pairs);
			io_drain_all(n); /* buffers posted before DRIVER_OK */
		}
		return 1; /* the fd set may have changed */
	}
	for (i = 1; n->io_active && i < f.n; i++) {
		if (f.kind[i] == 0 && f.pfd[i].revents) {
			drain_fd(f.pfd[i].fd);
			io_kick(n, f.queue[i]);
		} else if (f.kind[i] == 1 && f.pfd[i].revents) {
			virtio_net_rx_pump(n, f.queue[i]);
		} else if (f.kind[i] == 2 && f.pfd[i].revents) {
			virtio_net_rx_hangup(n, f.queue[i]);
		}
	}
	for (i = 0; n->io_active && i < n->active_pairs; i++) {
		struct net_pair *p = &n->pair[i];

		if (p->be_dead || p->rx_wait_guest)
			continue;
		if (p->rx_more || (r == 0 && p->be->fd < 0)) {
			virtio_net_rx_pump(n, i); /* more to do, or let the backend reconnect */
			r += p->rx_more;
		}
	}
	return r > 0;
}

static int io_thread_turn(void *opaque)
{
	return virtio_net_io_turn(opaque, -1);
}

int virtio_net_io_start(struct virtio_net *n)
{
	n->worker = (struct virtio_worker){
	    .vp = &n->vp,
	    .nq = n->nq,
	    .turn = io_thread_turn,
	    .on_activate = io_on_activate,
	    .opaque = n,
	};
	return virtio_worker_start(&n->worker, THREAD_NET_IO, "vmlet-net");
}

void virtio_net_io_activate(struct virtio_net *n, uint64_t features)
{
	/* not waiting here: activate runs on a vCPU thread under the
	 * transport lock, and the thread starts with a full drain; the
	 * worker reads want_features after it saw the activation, which
	 * virtio_worker_activate() publishes under its lock */
	n->want_features = features;
	virtio_worker_activate(&n->worker);
}

void virtio_net_io_pause(struct virtio_net *n)
{
	virtio_worker_pause(&n->worker);
}

void virtio_net_io_stop(struct virtio_net *n)
{
	virtio_worker_stop(&n->worker);
}
