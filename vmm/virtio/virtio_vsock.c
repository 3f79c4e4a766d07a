// SPDX-License-Identifier: MIT
/*
 * virtio_vsock.c - virtio-vsock (virtio_vsock.h): the device, its config
 * space, the packets on the receive and transmit queues. Connections and
 * host sockets are in virtio_vsock_conn.c.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/vm/device.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"
#include "vmm/virtio/virtio_vsock_int.h"

void vsock_owe_rst(struct virtio_vsock *v, uint32_t local_port, uint32_t peer_port)
{
	if (v->rst_len == VSOCK_RST_BACKLOG)
		return; /* vsock_tx stops before this can happen */
	v->rst[(v->rst_head + v->rst_len++) % VSOCK_RST_BACKLOG] =
	    (struct vsock_rst){local_port, peer_port};
}

static void vsock_hdr(const struct virtio_vsock *v, struct virtio_vsock_hdr *h, uint32_t local,
		      uint32_t peer, uint16_t op)
{
	*h = (struct virtio_vsock_hdr){
	    .src_cid = htole64(VIRTIO_VSOCK_HOST_CID),
	    .dst_cid = htole64(v->guest_cid),
	    .src_port = htole32(local),
	    .dst_port = htole32(peer),
	    .type = htole16(VIRTIO_VSOCK_TYPE_STREAM),
	    .op = htole16(op),
	    .buf_alloc = htole32(VIRTIO_VSOCK_BUF_ALLOC),
	};
}

/* The next receive buffer with room for a header: 1, or 0 when the driver
 * posted none (rx_wait set) or broke the ring. */
static int vsock_rx_pop(struct virtio_vsock *v, struct virtq *q, struct virtq_elem *e, bool *done)
{
	int r;

	for (;;) {
		*e = (struct virtq_elem){.out = v->out,
					 .in = v->in,
					 .cap_out = VSOCK_QUEUE_SIZE,
					 .cap_in = VSOCK_QUEUE_SIZE};
		r = virtq_pop(q, e);
		if (r == VIRTQ_POP_EMPTY && virtq_enable_notify(q))
			continue;
		if (r == VIRTQ_POP_EMPTY) {
			v->rx_wait = true;
			return 0;
		}
		if (r < 0) {
			virtio_pci_needs_reset(&v->vp);
			return 0;
		}
		if (r == VIRTQ_POP_OK && e->in_bytes >= sizeof(struct virtio_vsock_hdr))
			return 1;
		/* outside RAM or too small for a header: returned unused */
		log_warn_once("%s: a receive buffer of %llu bytes skipped", v->vp.name,
			      (unsigned long long)e->in_bytes);
		if (virtq_push(q, e->head, 0))
			virtio_pci_needs_reset(&v->vp);
		*done = true;
	}
}

/* One header-only packet: false when there is no buffer for it. */
static bool vsock_rx_ctl(struct virtio_vsock *v, struct virtq *q, const struct virtio_vsock_hdr *h,
			 bool *done)
{
	struct virtq_elem e;

	if (!vsock_rx_pop(v, q, &e, done))
		return false;
	iov_from_buf(e.in, e.n_in, 0, h, sizeof(*h));
	if (virtq_push(q, e.head, sizeof(*h)))
		virtio_pci_needs_reset(&v->vp);
	*done = true;
	return true;
}

/* The control packets c owes, lowest bit first. */
static bool vsock_rx_conn_ctl(struct virtio_vsock *v, struct virtq *q, struct vsock_conn *c,
			      bool *done)
{
	while (c->pending) {
		unsigned int bit = c->pending & -c->pending;
		struct virtio_vsock_hdr h;
		uint16_t op = bit == VS_SEND_REQUEST	? VIRTIO_VSOCK_OP_REQUEST
			      : bit == VS_SEND_RESPONSE ? VIRTIO_VSOCK_OP_RESPONSE
			      : bit == VS_SEND_CREDIT	? VIRTIO_VSOCK_OP_CREDIT_UPDATE
			      : bit == VS_SEND_SHUTDOWN ? VIRTIO_VSOCK_OP_SHUTDOWN
							: VIRTIO_VSOCK_OP_RST;

		vsock_hdr(v, &h, c->local_port, c->peer_port, op);
		h.fwd_cnt = htole32(c->fwd_cnt);
		if (bit == VS_SEND_SHUTDOWN) /* the host sends no more */
			h.flags = htole32(VIRTIO_VSOCK_SHUTDOWN_SEND);
		if (!vsock_rx_ctl(v, q, &h, done))
			return false;
		c->fwd_sent = c->fwd_cnt;
		c->pending &= ~bit;
		if (bit == VS_SEND_RST) {
			vsock_conn_free(v, c);
			return true;
		}
	}
	return true;
}

/* Is there something to read? 1 yes, 0 not now, -1 end of stream, -2 error. */
static int vsock_peek(int fd)
{
	char b;
	ssize_t n;

	do
		n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return 1;
	if (n == 0)
		return -1;
	return errno == EAGAIN ? 0 : -2;
}

/* Host bytes of c into the guest's buffers, as far as its credit goes. */
static bool vsock_rx_conn_data(struct virtio_vsock *v, struct virtq *q, struct vsock_conn *c,
			       bool *done)
{
	const size_t hl = sizeof(struct virtio_vsock_hdr);
	struct msghdr mh = {.msg_iov = v->tmp};
	struct virtio_vsock_hdr h;
	struct virtq_elem e;
	uint32_t room;
	ssize_t n;
	int r;

	while (c->readable && (room = vsock_conn_rx_room(c)) > 0) {
		r = vsock_peek(c->fd);
		if (r == 0) {
			c->readable = false;
			break;
		}
		if (r == -1) { /* the host sends no more */
			c->readable = false;
			c->host_eof = true;
			c->pending |= VS_SEND_SHUTDOWN;
			vsock_conn_check_done(c);
			break;
		}
		if (r < 0) {
			vsock_conn_reset(v, c);
			break;
		}
		if (!vsock_rx_pop(v, q, &e, done))
			return false;
		if (room > e.in_bytes - hl)
			room = (uint32_t)(e.in_bytes - hl);
		mh.msg_iovlen = (size_t)iov_slice(e.in, (int)e.n_in, hl, room, v->tmp);
		/* the peek saw data and only this thread reads: no wait */
		do
			n = recvmsg(c->fd, &mh, MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		vsock_hdr(v, &h, c->local_port, c->peer_port,
			  n > 0 ? VIRTIO_VSOCK_OP_RW : VIRTIO_VSOCK_OP_RST);
		h.fwd_cnt = htole32(c->fwd_cnt);
		h.len = htole32(n > 0 ? (uint32_t)n : 0);
		iov_from_buf(e.in, e.n_in, 0, &h, hl);
		if (virtq_push(q, e.head, (uint32_t)hl + (n > 0 ? (uint32_t)n : 0)))
			virtio_pci_needs_reset(&v->vp);
		*done = true;
		if (n <= 0) { /* the RST just went out in this buffer */
			__atomic_add_fetch(&v->st_resets, 1, __ATOMIC_RELAXED);
			vsock_conn_free(v, c);
			break;
		}
		c->fwd_sent = c->fwd_cnt;
		c->tx_cnt += (uint32_t)n;
		__atomic_add_fetch(&v->st_rx_bytes, (uint64_t)n, __ATOMIC_RELAXED);
	}
	return true;
}

static bool vsock_rx_pass(struct virtio_vsock *v, struct virtq *q, bool *done)
{
	struct virtio_vsock_hdr h;

	while (v->rst_len) {
		const struct vsock_rst *r = &v->rst[v->rst_head];

		vsock_hdr(v, &h, r->local_port, r->peer_port, VIRTIO_VSOCK_OP_RST);
		if (!vsock_rx_ctl(v, q, &h, done))
			return false;
		v->rst_head = (v->rst_head + 1) % VSOCK_RST_BACKLOG;
		v->rst_len--;
	}
	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conn[i];

		if (c->state == VS_FREE)
			continue;
		if (!vsock_rx_conn_ctl(v, q, c, done))
			return false;
		if (c->state != VS_FREE && !vsock_rx_conn_data(v, q, c, done))
			return false;
		/* an end of stream read just now owes a SHUTDOWN */
		if (c->state != VS_FREE && !vsock_rx_conn_ctl(v, q, c, done))
			return false;
	}
	return true;
}

static void vsock_tx(struct virtio_vsock *v);

void vsock_rx_flush(struct virtio_vsock *v)
{
	struct virtq *q = virtio_pci_queue(&v->vp, VSOCK_RXQ);
	bool done = false;

	for (;;) {
		if (q && !q->broken && !v->rx_wait)
			vsock_rx_pass(v, q, &done);
		/* the transmit queue waited for room to owe resets */
		if (!v->tx_wait || v->rst_len == VSOCK_RST_BACKLOG)
			break;
		v->tx_wait = false;
		vsock_tx(v);
	}
	if (done && q && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&v->vp, VSOCK_RXQ);
}

/* One packet from the guest: its header read once into host memory. */
static void vsock_tx_packet(struct virtio_vsock *v, const struct virtq_elem *e)
{
	const size_t hl = sizeof(struct virtio_vsock_hdr);
	struct virtio_vsock_hdr h;
	struct vsock_conn *c;
	uint32_t len, local, peer;
	uint16_t op;
	int n;

	if (iov_to_buf(e->out, e->n_out, 0, &h, hl) != hl) {
		log_warn_once("%s: a packet shorter than its header dropped", v->vp.name);
		return;
	}
	if (le64toh(h.src_cid) != v->guest_cid || le64toh(h.dst_cid) != VIRTIO_VSOCK_HOST_CID) {
		log_warn_once("%s: a packet from CID %llu to CID %llu dropped", v->vp.name,
			      (unsigned long long)le64toh(h.src_cid),
			      (unsigned long long)le64toh(h.dst_cid));
		return;
	}
	len = le32toh(h.len);
	op = le16toh(h.op);
	local = le32toh(h.dst_port);
	peer = le32toh(h.src_port);
	c = vsock_conn_find(v, local, peer);
	if (len > VSOCK_MAX_PKT || len > e->out_bytes - hl ||
	    le16toh(h.type) != VIRTIO_VSOCK_TYPE_STREAM) {
		log_warn_once("%s: a packet of type %u and %u bytes (%llu given) reset", v->vp.name,
			      le16toh(h.type), len, (unsigned long long)(e->out_bytes - hl));
		if (c)
			vsock_conn_reset(v, c);
		else if (op != VIRTIO_VSOCK_OP_RST)
			vsock_owe_rst(v, local, peer);
		return;
	}
	if (op == VIRTIO_VSOCK_OP_REQUEST) {
		if (c) /* a second request on live ports: both go */
			vsock_conn_reset(v, c);
		else
			vsock_guest_connect(v, &h);
		return;
	}
	if (!c) {
		if (op != VIRTIO_VSOCK_OP_RST)
			vsock_owe_rst(v, local, peer);
		return;
	}
	n = iov_slice(e->out, (int)e->n_out, hl, len, v->tmp);
	vsock_conn_packet(v, c, &h, v->tmp, n);
}

static void vsock_tx(struct virtio_vsock *v)
{
	struct virtq *q = virtio_pci_queue(&v->vp, VSOCK_TXQ);
	struct virtq_elem e;
	bool done = false;
	int r;

	while (q && !q->broken) {
		/* every packet may owe a reset: stop while none can be owed */
		if (v->rst_len == VSOCK_RST_BACKLOG) {
			v->tx_wait = true;
			break;
		}
		e = (struct virtq_elem){.out = v->out,
					.in = v->in,
					.cap_out = VSOCK_QUEUE_SIZE,
					.cap_in = VSOCK_QUEUE_SIZE};
		r = virtq_pop(q, &e);
		if (r == VIRTQ_POP_EMPTY && virtq_enable_notify(q))
			continue;
		if (r == VIRTQ_POP_EMPTY)
			break;
		if (r < 0) {
			virtio_pci_needs_reset(&v->vp);
			break;
		}
		if (r == VIRTQ_POP_OK)
			vsock_tx_packet(v, &e);
		else
			log_warn_once("%s: a packet outside RAM dropped", v->vp.name);
		if (virtq_push(q, e.head, 0))
			virtio_pci_needs_reset(&v->vp);
		done = true;
	}
	if (done && q && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&v->vp, VSOCK_TXQ);
}

void vsock_kick(struct virtio_vsock *v, unsigned int qi)
{
	if (qi == VSOCK_RXQ)
		v->rx_wait = false;
	else if (qi == VSOCK_TXQ)
		vsock_tx(v);
	else if (qi == VSOCK_EVQ)
		vsock_event_flush(v); /* buffers wait there but for a restore's reset */
	vsock_rx_flush(v);
}

static uint64_t vsock_features(void *dev)
{
	(void)dev;
	return 0; /* stream sockets only (§5.10.3: no VIRTIO_VSOCK_F_SEQPACKET) */
}

static void vsock_config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	struct virtio_vsock *v = dev;

	virtio_pci_config_copy(&v->cfg, sizeof(v->cfg), off, data, len);
}

static int vsock_activate(void *dev, struct virtio_pci *vp, uint64_t features)
{
	struct virtio_vsock *v = dev;

	(void)vp;
	(void)features;
	virtio_worker_activate(&v->worker);
	return 0;
}

/* The driver starts over: the worker drops every connection itself once
 * it sees the pause (vsock_turn: reset_drop), this (vCPU) thread closes
 * nothing. */
static void vsock_reset(void *dev)
{
	struct virtio_vsock *v = dev;

	__atomic_store_n(&v->reset_drop, true, __ATOMIC_RELEASE);
	virtio_worker_pause(&v->worker);
}

static const struct virtio_dev_ops virtio_vsock_ops = {
    .device_id = VIRTIO_ID_VSOCK,
    .class_code = 0x088000, /* base system peripheral, other (as QEMU's) */
    .features = vsock_features,
    .config_read = vsock_config_read,
    .activate = vsock_activate,
    .reset = vsock_reset,
    .freeze = vsock_snap_freeze,
    .thaw = vsock_snap_thaw,
    .save = vsock_snap_save,
    .load = vsock_snap_load,
};

static void vsock_read_counters(void *opaque, struct device_counters *dc)
{
	struct virtio_vsock *v = opaque;

	dc->rx_bytes = __atomic_load_n(&v->st_rx_bytes, __ATOMIC_RELAXED);
	dc->tx_bytes = __atomic_load_n(&v->st_tx_bytes, __ATOMIC_RELAXED);
	dc->rx_dropped = __atomic_load_n(&v->st_resets, __ATOMIC_RELAXED);
}

static void vsock_free(struct virtio_vsock *v)
{
	vsock_conn_drop_all(v);
	if (v->listen_fd >= 0)
		close(v->listen_fd);
	connector_stop(&v->connector);
	free(v);
}

static int vsock_setup(struct virtio_vsock *v, uint64_t guest_cid, const char *path)
{
	int r;

	v->listen_fd = v->connector.fd = -1;
	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++)
		v->conn[i].fd = -1;
	if (guest_cid < 3 || guest_cid > 0xfffffffeu)
		return error_errno(-EINVAL, "virtio-vsock: guest CID %llu (3..4294967294)",
				   (unsigned long long)guest_cid);
	v->guest_cid = guest_cid;
	v->cfg.guest_cid = htole64(guest_cid);
	v->next_local_port = VSOCK_LOCAL_PORT_BASE;
	if (!path)
		return 0;
	if (strlen(path) > CONNECTOR_PREFIX_MAX)
		return error_errno(-ENAMETOOLONG, "virtio-vsock: socket path %s too long", path);
	r = vsock_listen(v, path);
	if (!r)
		r = connector_start(&v->connector, path);
	return r;
}

int virtio_vsock_create(struct virtio_vsock **out, struct pci_host *host, uint64_t guest_cid,
			const char *path)
{
	struct virtio_vsock *v;
	int r;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	r = vsock_setup(v, guest_cid, path);
	if (r)
		goto fail;
	r = virtio_pci_init(&v->vp, host, "virtio-vsock", &virtio_vsock_ops, v, VSOCK_NQ,
			    VSOCK_QUEUE_SIZE, sizeof(v->cfg));
	if (r)
		goto fail;
	v->worker =
	    (struct virtio_worker){.vp = &v->vp, .nq = VSOCK_NQ, .turn = vsock_turn, .opaque = v};
	/* the net-io role: socket I/O with sendmsg/recvmsg, accept4 */
	r = virtio_worker_start(&v->worker, THREAD_NET_IO, "vmlet-vsock");
	if (r) {
		virtio_pci_release(&v->vp);
		goto fail;
	}
	r = device_add_counters(host->vm, "vsock", v->path[0] ? v->path : "-", vsock_read_counters,
				v);
	if (r) {
		virtio_vsock_destroy(v);
		return error_errno(r, "virtio-vsock: cannot register its counters");
	}
	log_info("virtio-vsock: guest CID %llu%s%s", (unsigned long long)guest_cid,
		 v->path[0] ? ", host socket " : "", v->path);
	*out = v;
	return 0;
fail:
	vsock_free(v);
	return error_errno(r, "virtio-vsock: cannot create the device");
}

void virtio_vsock_destroy(struct virtio_vsock *v)
{
	if (!v)
		return;
	virtio_pci_release(&v->vp);
	virtio_worker_stop(&v->worker);
	vsock_free(v);
}

struct virtio_pci *virtio_vsock_pci(struct virtio_vsock *v)
{
	return &v->vp;
}

const char *virtio_vsock_path(const struct virtio_vsock *v)
{
	return v->path[0] ? v->path : NULL;
}
