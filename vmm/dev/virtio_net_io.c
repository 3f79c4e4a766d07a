/* SPDX-License-Identifier: MIT */
/*
 * virtio_net_io.c - virtio-net's I/O thread: RX from the backends into
 * the guest's receive queues, TX from the transmit queues to the
 * backends, the control queue (virtio 1.2 §5.1.6).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vmm/dev/virtio_net_int.h"
#include "vmm/log.h"
#include "vmm/net/pkt.h"
#include "vmm/thread.h"

#define RX_BUDGET 256 /* frames per queue per wakeup, then poll again */

/* ---- RX ---------------------------------------------------------------- */

/*
 * Give back chains popped for a frame that does not fit yet: virtq_pop()
 * only advances last_avail, so stepping it back makes the same chains
 * available again (they are re-read and re-checked on the next pop).
 */
static void rx_unpop(struct virtq *q, unsigned int n)
{
	q->last_avail = (uint16_t)(q->last_avail - n);
}

enum rx_result { RX_NO_BUFFERS = 0, RX_DONE = 1, RX_RETRY = 2, RX_BROKEN = -1 };

/*
 * Copy one frame (header included) into the guest's RX buffers: one chain,
 * or with MRG_RXBUF as many as it takes (num_buffers says how many). A
 * frame the buffers cannot hold is dropped; a bad chain drops the frame
 * and is returned empty.
 */
static enum rx_result rx_deliver(struct virtio_net *n, struct virtq *q, uint8_t *frame, size_t len)
{
	struct virtq_elem e = {.out = n->out, .in = n->in, .cap_out = NET_SEGS, .cap_in = NET_SEGS};
	uint16_t heads[NET_RX_CHAINS];
	uint32_t lens[NET_RX_CHAINS];
	unsigned int k = 0, first_n = 0, i;
	bool mrg = net_has(n, VIRTIO_NET_F_MRG_RXBUF), drop = false;
	uint16_t nbuf = 1;
	size_t off = 0;
	int r;

	memcpy(frame + 10, &nbuf, 2); /* num_buffers: 1 unless merged */
	while (off < len && !drop) {
		r = virtq_pop(q, &e);
		if (r < 0)
			return RX_BROKEN;
		if (r == VIRTQ_POP_EMPTY) {
			/* Ask for a kick once the guest adds buffers past the ones
			 * seen (virtq_enable_notify arms at last_avail, which is
			 * exactly that point now), then put back the partial set. */
			bool more = virtq_enable_notify(q);

			rx_unpop(q, k);
			return more ? RX_RETRY : RX_NO_BUFFERS;
		}
		heads[k] = e.head;
		lens[k] = 0;
		k++;
		if (r != VIRTQ_POP_OK || e.n_out || e.in_bytes < (off ? 1 : NET_VNET_HDR_LEN)) {
			log_warn_once("virtio-net: %s: bad receive buffer", n->name);
			drop = true;
			break;
		}
		if (!mrg && e.in_bytes < len) {
			drop = true; /* too small and nothing to merge with */
			break;
		}
		lens[k - 1] = (uint32_t)virtq_buf_to_iov(e.in, e.n_in, 0, frame + off, len - off);
		if (k == 1 && mrg) {
			memcpy(n->first_in, e.in, e.n_in * sizeof(*e.in));
			first_n = e.n_in;
		}
		off += lens[k - 1];
		if (off < len && k == NET_RX_CHAINS)
			drop = true;
	}
	if (drop) {
		for (i = 0; i < k; i++)
			lens[i] = 0;
		NET_STAT_ADD(n, rx_dropped, 1);
	} else {
		if (mrg && k > 1) {
			nbuf = (uint16_t)k;
			virtq_buf_to_iov(n->first_in, first_n, 10, &nbuf, 2);
		}
		NET_STAT_ADD(n, rx_packets, 1);
		NET_STAT_ADD(n, rx_bytes, len > NET_VNET_HDR_LEN ? len - NET_VNET_HDR_LEN : 0);
	}
	for (i = 0; i < k; i++)
		if (virtq_push(q, heads[i], lens[i]))
			return RX_BROKEN;
	return RX_DONE;
}

/* The next frame for pair p: a queued reply (pair 0) or the backend's. */
static ssize_t rx_next(struct virtio_net *n, unsigned int pi)
{
	struct net_pair *p = &n->pair[pi];
	ssize_t r;

	if (pi == 0 && n->inject_n) {
		size_t l = n->inject_len[n->inject_head];

		memcpy(p->rxbuf, n->inject[n->inject_head], l);
		n->inject_head = (n->inject_head + 1) % NET_INJECT_SLOTS;
		n->inject_n--;
		return (ssize_t)l;
	}
	do
		r = p->be->ops->recv(p->be, p->rxbuf, NET_FRAME_MAX);
	while (r == NET_BE_RECONNECTED);
	if (r == 0 || (r < 0 && r != -EAGAIN && r != -EINTR)) {
		/* not retried: a dead fd would make poll() spin. The guest
		 * sees the link go down (STATUS, config interrupt). */
		error("virtio-net: %s: %s backend %s, link down", n->name, p->be->kind,
		      r ? strerror((int)-r) : "closed");
		p->be_dead = true;
		n->cfg.status = 0;
		virtio_pci_config_interrupt(&n->vp);
		return -EIO;
	}
	return r;
}

static void rx_pump(struct virtio_net *n, unsigned int pi)
{
	struct net_pair *p = &n->pair[pi];
	struct virtq *q = virtio_pci_queue(&n->vp, 2 * pi);
	unsigned int budget, done = 0;

	if (!q)
		return;
	p->rx_more = false;
	for (budget = RX_BUDGET; budget; budget--) {
		enum rx_result r;

		if (!p->rx_len) {
			ssize_t l = rx_next(n, pi);

			if (l < NET_VNET_HDR_LEN)
				break;
			p->rx_len = (size_t)l;
		}
		r = rx_deliver(n, q, p->rxbuf, p->rx_len);
		if (r == RX_BROKEN) {
			virtio_pci_needs_reset(&n->vp);
			return;
		}
		if (r == RX_RETRY)
			continue; /* buffers came meanwhile */
		if (r == RX_NO_BUFFERS) {
			p->rx_wait_guest = true; /* until the guest kicks */
			break;
		}
		p->rx_len = 0;
		done++;
	}
	/* out of budget: come back without sleeping (a stream backend may
	 * hold whole frames that no poll() would report) */
	p->rx_more = !budget;
	if (done && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&n->vp, 2 * pi);
}

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
		virtq_iov_to_buf(e->out, e->n_out, NET_VNET_HDR_LEN, n->peek, flen);
		if (tx_maybe_ours(n, n->peek, flen)) {
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

struct tx_ctx {
	struct virtio_net *n;
	struct net_pair *p;
};

static void tx_serve(void *opaque, struct virtq *q, struct virtq_elem *e, bool good)
{
	struct tx_ctx *c = opaque;

	if (good)
		tx_one(c->n, c->p, e);
	else
		NET_STAT_ADD(c->n, tx_dropped, 1);
	virtq_push(q, e->head, 0);
}

static void tx_drain(struct virtio_net *n, unsigned int pi)
{
	struct virtq_elem e = {.out = n->out, .in = n->in, .cap_out = NET_SEGS, .cap_in = NET_SEGS};
	struct tx_ctx c = {n, &n->pair[pi]};

	if (!virtio_pci_drain(&n->vp, 2 * pi + 1, &e, tx_serve, &c) && n->inject_n)
		rx_pump(n, 0); /* replies vmlet made */
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

/* Apply a control request; false when the thread must quit. */
static bool io_update(struct virtio_net *n, bool *activated)
{
	bool run;
	unsigned int i;

	drain_fd(n->ctl_fd);
	pthread_mutex_lock(&n->lock);
	run = !n->quit;
	*activated = run && n->want_active && !n->active;
	n->active = run && n->want_active;
	if (*activated) {
		n->features = n->want_features;
		n->active_pairs = 1;
		n->inject_n = 0;
		for (i = 0; i < n->pairs; i++) {
			n->pair[i].rx_len = 0;
			n->pair[i].rx_wait_guest = false;
		}
	}
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	return run;
}

struct io_fds {
	struct pollfd pfd[2 * VIRTIO_PCI_MAX_QUEUES + 2];
	int kind[2 * VIRTIO_PCI_MAX_QUEUES + 2]; /* -1 ctl, 0 kick, 1 backend */
	unsigned int queue[2 * VIRTIO_PCI_MAX_QUEUES + 2];
	unsigned int n;
};

static void fds_add(struct io_fds *f, int fd, int kind, unsigned int queue)
{
	f->pfd[f->n] = (struct pollfd){.fd = fd, .events = POLLIN};
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
	fds_add(f, n->ctl_fd, -1, 0);
	if (!active)
		return -1;
	for (i = 0; i < n->active_pairs; i++) {
		fds_add(f, virtio_pci_kick_fd(&n->vp, 2 * i), 0, 2 * i);
		fds_add(f, virtio_pci_kick_fd(&n->vp, 2 * i + 1), 0, 2 * i + 1);
		if (n->pair[i].rx_wait_guest || n->pair[i].be_dead)
			continue;
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
		rx_pump(n, i);
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
		rx_pump(n, q / 2);
	}
}

static void *io_main(void *arg)
{
	struct virtio_net *n = arg;
	struct io_fds f;
	bool active = false, activated;
	unsigned int i;

	for (;;) {
		int tmo = io_fds_build(n, active, &f);
		int r = poll(f.pfd, f.n, tmo);

		if (r < 0 && errno != EINTR) {
			error_errno(-errno, "virtio-net: %s: poll", n->name);
			break;
		}
		if (r < 0)
			continue;
		if (f.pfd[0].revents) {
			if (!io_update(n, &activated))
				break;
			active = n->active;
			if (activated) {
				io_set_offloads(n);
				virtio_net_io_set_pairs(n, 1);
				io_drain_all(n); /* buffers posted before DRIVER_OK */
			}
			continue; /* the fd set may have changed */
		}
		for (i = 1; active && i < f.n; i++) {
			if (f.kind[i] == 0 && f.pfd[i].revents) {
				drain_fd(f.pfd[i].fd);
				io_kick(n, f.queue[i]);
			} else if (f.kind[i] == 1 && f.pfd[i].revents) {
				rx_pump(n, f.queue[i]);
			}
		}
		for (i = 0; active && i < n->active_pairs; i++) {
			struct net_pair *p = &n->pair[i];

			if (p->be_dead || p->rx_wait_guest)
				continue;
			if (p->rx_more || (r == 0 && p->be->fd < 0))
				rx_pump(n, i); /* more to do, or let the backend reconnect */
		}
	}
	return NULL;
}

static void io_signal(struct virtio_net *n)
{
	uint64_t one = 1;

	if (write(n->ctl_fd, &one, sizeof(one)) < 0)
		log_warn("virtio-net: cannot signal the i/o thread");
}

int virtio_net_io_start(struct virtio_net *n)
{
	int r;

	n->ctl_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (n->ctl_fd < 0)
		return -errno;
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	r = thread_start(&n->thread, THREAD_NET_IO, "vmlet-net", io_main, n);
	if (r) {
		close(n->ctl_fd);
		return r;
	}
	n->started = true;
	return 0;
}

/* Ask for a state and wait until the thread took it. */
static void io_request(struct virtio_net *n, bool active, bool quit, uint64_t features)
{
	pthread_mutex_lock(&n->lock);
	n->want_active = active;
	n->want_features = features;
	n->quit = quit;
	io_signal(n);
	while (!quit && n->active != active)
		pthread_cond_wait(&n->cond, &n->lock);
	pthread_mutex_unlock(&n->lock);
}

void virtio_net_io_activate(struct virtio_net *n, uint64_t features)
{
	/* not waiting here: activate runs on a vCPU thread under the
	 * transport lock, and the thread starts with a full drain */
	pthread_mutex_lock(&n->lock);
	n->want_active = true;
	n->want_features = features;
	io_signal(n);
	pthread_mutex_unlock(&n->lock);
}

void virtio_net_io_pause(struct virtio_net *n)
{
	if (n->started)
		io_request(n, false, false, 0);
}

void virtio_net_io_stop(struct virtio_net *n)
{
	if (!n->started)
		return;
	io_request(n, false, true, 0);
	pthread_join(n->thread, NULL);
	n->started = false;
	close(n->ctl_fd);
	pthread_mutex_destroy(&n->lock);
	pthread_cond_destroy(&n->cond);
}
