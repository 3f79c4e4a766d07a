/* SPDX-License-Identifier: MIT */
/*
 * virtio_net_rx.c - virtio-net's receive path, on its I/O thread
 * (virtio_net_io.c): frames read from a queue pair's backend into the
 * buffers the guest posted on its receive queue, merged buffers
 * (MRG_RXBUF) or one buffer a frame, a budget per wakeup (virtio 1.2
 * §5.1.6.3).
 */
#include <errno.h>
#include <string.h>

#include "vmm/util/iov.h"
#include "vmm/virtio/virtio_net_int.h"
#include "vmm/util/log.h"
#include "vmm/net/pkt.h"

#define RX_BUDGET 256 /* frames per queue per wakeup, then poll again */

enum rx_result { RX_NO_BUFFERS = 0, RX_DONE = 1, RX_BROKEN = -1 };

static bool rx_mrg(const struct virtio_net *n)
{
	return net_has(n, VIRTIO_NET_F_MRG_RXBUF);
}

/*
 * Bytes the held buffers should reach before a read, so that in the steady
 * state no frame spills: the largest frame the guest accepts (a GSO frame
 * when it took TSO, else its MTU's). Without MRG_RXBUF a frame goes into
 * one buffer, whatever its size: one held buffer is enough.
 */
static uint64_t rx_want(const struct virtio_net *n)
{
	unsigned int mtu = n->cfg.mtu > 1500 ? n->cfg.mtu : 1500;

	if (!rx_mrg(n))
		return 1;
	if (net_has(n, VIRTIO_NET_F_GUEST_TSO4) || net_has(n, VIRTIO_NET_F_GUEST_TSO6))
		return NET_FRAME_MAX;
	return NET_VNET_HDR_LEN + PKT_ETH_HLEN + 4 + mtu;
}

/* Pop RX buffers until the held ones reach want bytes or a limit. A bad
 * buffer (device-readable, under a header, unmappable) goes back empty. */
static int rx_top_up(struct virtio_net *n, struct net_pair *p, struct virtq *q, uint64_t want)
{
	unsigned int max_chains = rx_mrg(n) ? NET_RX_CHAINS : 1;

	while (p->held_cap < want && p->n_held < max_chains && NET_RX_IOV - p->n_iov >= NET_SEGS) {
		struct virtq_elem e = {.out = n->out,
				       .in = p->iov + p->n_iov,
				       .cap_out = NET_SEGS,
				       .cap_in = NET_SEGS};
		int r = virtq_pop(q, &e);

		if (r < 0)
			return r;
		if (r == VIRTQ_POP_EMPTY)
			break;
		if (r != VIRTQ_POP_OK || e.n_out || e.in_bytes < NET_VNET_HDR_LEN) {
			log_warn_once("virtio-net: %s: bad receive buffer", n->name);
			if (virtq_push(q, e.head, 0))
				return -EIO;
			p->rx_pushed++;
			continue;
		}
		p->held[p->n_held++] =
		    (struct net_rx_chain){e.head, (uint16_t)e.n_in, (uint32_t)e.in_bytes};
		p->n_iov += e.n_in;
		p->held_cap += e.in_bytes;
	}
	return 0;
}

/* The first k held buffers went to the guest: forget them. */
static void rx_consume(struct net_pair *p, unsigned int k)
{
	unsigned int segs = 0, i;

	for (i = 0; i < k; i++) {
		segs += p->held[i].n_iov;
		p->held_cap -= p->held[i].cap;
	}
	memmove(p->iov, p->iov + segs, (p->n_iov - segs) * sizeof(*p->iov));
	memmove(p->held, p->held + k, (p->n_held - k) * sizeof(*p->held));
	p->n_iov -= segs;
	p->n_held -= k;
}

/* Kicks off while the device has buffers to fill (the guest then adds
 * more without exits); on when it waits for them. */
static void rx_quiet(struct net_pair *p, struct virtq *q)
{
	if (p->rx_notify) {
		virtq_disable_notify(q);
		p->rx_notify = false;
	}
}

/* Before waiting for buffers: ask for a kick; true if some came meanwhile. */
static bool rx_arm(struct net_pair *p, struct virtq *q)
{
	p->rx_notify = true;
	if (!virtq_enable_notify(q))
		return false;
	rx_quiet(p, q);
	return true;
}

/* The frame read cannot be delivered: gone. Without MRG_RXBUF the buffer
 * that was too small goes back empty; merged buffers stay for the next. */
static enum rx_result rx_drop(struct virtio_net *n, struct net_pair *p, struct virtq *q)
{
	if (!rx_mrg(n) && p->n_held) {
		if (virtq_push(q, p->held[0].head, 0))
			return RX_BROKEN;
		p->rx_pushed++;
		rx_consume(p, 1);
	}
	p->rx_len = 0;
	NET_STAT_ADD(n, rx_dropped, 1);
	return RX_DONE;
}

/*
 * Hand the frame read (p->rx_len bytes, header first, already in the held
 * buffers but for what spilled) to the guest: the buffers it fills, all
 * published at once, num_buffers set in the first.
 */
static enum rx_result rx_deliver(struct virtio_net *n, struct net_pair *p, struct virtq *q)
{
	size_t len = p->rx_len, off = 0;
	uint16_t nbuf;
	unsigned int k;

	if (len > p->held_cap) {
		if (!rx_mrg(n) || len - p->rx_spilled_at > NET_FRAME_MAX)
			return rx_drop(n, p, q); /* cannot fit / truncated */
		if (rx_top_up(n, p, q, len) < 0)
			return RX_BROKEN;
		if (len > p->held_cap) {
			if (p->n_held == NET_RX_CHAINS || NET_RX_IOV - p->n_iov < NET_SEGS)
				return rx_drop(n, p, q); /* would need too many */
			return RX_NO_BUFFERS;
		}
		iov_from_buf(p->iov, p->n_iov, p->rx_spilled_at, p->spill, len - p->rx_spilled_at);
	}
	/* held buffers may predate a live migration's tracking: mark them */
	for (k = 0; k < p->n_iov; k++)
		guest_mem_mark_host(q->mem, p->iov[k].iov_base, p->iov[k].iov_len);
	for (k = 0; off < len; k++) {
		uint32_t l = len - off < p->held[k].cap ? (uint32_t)(len - off) : p->held[k].cap;

		if (virtq_fill(q, k, p->held[k].head, l))
			return RX_BROKEN;
		off += l;
	}
	nbuf = (uint16_t)k;
	iov_from_buf(p->iov, p->held[0].n_iov, 10, &nbuf, 2);
	if (virtq_flush(q, k))
		return RX_BROKEN;
	p->rx_pushed += k;
	rx_consume(p, k);
	p->rx_len = 0;
	NET_STAT_ADD(n, rx_packets, 1);
	NET_STAT_ADD(n, rx_bytes, len - NET_VNET_HDR_LEN);
	return RX_DONE;
}

/* Receive from pair p's backend into iov; on failure for good, the link
 * goes down (STATUS, config interrupt). Length or -errno. */
static ssize_t rx_backend(struct virtio_net *n, struct net_pair *p, int cnt)
{
	ssize_t r;

	do
		r = p->be->ops->recv(p->be, p->iov, cnt);
	while (r == NET_BE_RECONNECTED);
	if (r == 0 || (r < 0 && r != -EAGAIN && r != -EINTR)) {
		/* not retried: a dead fd would make poll() spin */
		error("virtio-net: %s: %s backend %s, link down", n->name, p->be->kind,
		      r ? strerror((int)-r) : "closed");
		p->be_dead = true;
		n->cfg.status = 0;
		virtio_pci_config_interrupt(&n->vp);
		return -EIO;
	}
	return r;
}

/*
 * Read the next frame for pair pi into its held buffers (spill last): a
 * queued reply (pair 0) or the backend's. Its length, or -errno.
 */
static ssize_t rx_read(struct virtio_net *n, unsigned int pi)
{
	struct net_pair *p = &n->pair[pi];
	int cnt = (int)p->n_iov + 1;

	p->iov[p->n_iov] = (struct iovec){p->spill, NET_FRAME_MAX};
	if (pi == 0 && n->inject_n) {
		size_t l = n->inject_len[n->inject_head];

		iov_from_buf(p->iov, (unsigned int)cnt, 0, n->inject[n->inject_head], l);
		n->inject_head = (n->inject_head + 1) % NET_INJECT_SLOTS;
		n->inject_n--;
		return (ssize_t)l;
	}
	if (p->be_dead)
		return -EIO; /* not read again: each guest kick would log it */
	return rx_backend(n, p, cnt);
}

/*
 * The backend hung up while the guest gives no buffers: read what it still
 * has (dropped: nowhere to put it) until it reports the end, or reconnects.
 */
void virtio_net_rx_hangup(struct virtio_net *n, unsigned int pi)
{
	struct net_pair *p = &n->pair[pi];

	if (p->rx_len || p->n_held || p->be_dead)
		return;
	p->iov[0] = (struct iovec){p->spill, NET_FRAME_MAX};
	if (rx_backend(n, p, 1) >= 0)
		NET_STAT_ADD(n, rx_dropped, 1);
}

/* One step of virtio_net_rx_pump: RX_DONE to go on, RX_NO_BUFFERS to stop. */
static enum rx_result rx_step(struct virtio_net *n, unsigned int pi, struct virtq *q, bool *idle)
{
	struct net_pair *p = &n->pair[pi];
	ssize_t l;

	if (!p->rx_len) {
		if (rx_top_up(n, p, q, rx_want(n)) < 0)
			return RX_BROKEN;
		if (!p->n_held)
			return RX_NO_BUFFERS;
		l = rx_read(n, pi);
		if (l < 0) {
			*idle = true;
			return RX_DONE;
		}
		if (l < NET_VNET_HDR_LEN)
			return RX_DONE; /* not a frame: skip it */
		p->rx_len = (size_t)l;
		p->rx_spilled_at = p->held_cap;
	}
	return rx_deliver(n, p, q);
}

void virtio_net_rx_pump(struct virtio_net *n, unsigned int pi)
{
	struct net_pair *p = &n->pair[pi];
	struct virtq *q = virtio_pci_queue(&n->vp, 2 * pi);
	unsigned int budget;
	bool idle = false;

	if (!q)
		return;
	p->rx_more = false;
	p->rx_pushed = 0;
	rx_quiet(p, q);
	for (budget = RX_BUDGET; budget && !idle; budget--) {
		enum rx_result r = rx_step(n, pi, q, &idle);

		if (r == RX_BROKEN) {
			virtio_pci_needs_reset(&n->vp);
			return;
		}
		if (r == RX_NO_BUFFERS && !rx_arm(p, q)) {
			p->rx_wait_guest = true; /* until the guest kicks */
			break;
		}
	}
	/* out of budget: come back without sleeping (a stream backend may
	 * hold whole frames that no poll() would report) */
	p->rx_more = !budget && !idle;
	if (p->rx_pushed && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&n->vp, 2 * pi);
}
