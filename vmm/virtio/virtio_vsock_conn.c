// SPDX-License-Identifier: MIT
/*
 * virtio_vsock_conn.c - virtio-vsock's connections (virtio_vsock.h): the
 * host socket and its CONNECT handshake, the state of each stream, the
 * guest -> host bytes and the device's I/O loop. Runs on the device's I/O
 * thread (and at destroy on the main thread, that thread joined).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/iov.h"
#include "vmm/util/log.h"
#include "vmm/virtio/virtio_vsock_int.h"
#include "vmm/util/unix_addr.h"

int vsock_listen(struct virtio_vsock *v, const char *path)
{
	int fd, r;

	/* 0600 from the start; a stale socket of an earlier run is replaced,
	 * anything else (a file, a planted link) refused: nothing is followed */
	r = unix_listen(path, 16, SOCK_NONBLOCK, &fd);
	if (r == -EEXIST)
		return error_errno(r, "virtio-vsock: %s exists and is not a socket", path);
	if (r)
		return error_errno(r, "virtio-vsock: listening on %s", path);
	v->listen_fd = fd;
	strcpy(v->path, path);
	return 0;
}

struct vsock_conn *vsock_conn_find(struct virtio_vsock *v, uint32_t local, uint32_t peer)
{
	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conn[i];

		if (c->state > VS_LINE && c->local_port == local && c->peer_port == peer)
			return c;
	}
	return NULL;
}

struct vsock_conn *vsock_conn_new(struct virtio_vsock *v, int fd, enum vsock_state st)
{
	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conn[i];

		if (c->state != VS_FREE)
			continue;
		*c = (struct vsock_conn){.state = st, .fd = fd};
		v->n_conns++;
		return c;
	}
	return NULL;
}

static void vsock_conn_close_host(struct vsock_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->buf_len = c->buf_head = 0;
}

void vsock_conn_free(struct virtio_vsock *v, struct vsock_conn *c)
{
	vsock_conn_close_host(c);
	c->state = VS_FREE;
	v->n_conns--;
}

void vsock_conn_reset(struct virtio_vsock *v, struct vsock_conn *c)
{
	if (c->dying)
		return;
	/* a client whose request the guest never saw: nothing to tell it */
	if (c->state == VS_LINE || (c->state == VS_CONNECTING && (c->pending & VS_SEND_REQUEST))) {
		vsock_conn_free(v, c);
		return;
	}
	vsock_conn_close_host(c);
	c->dying = true;
	c->pending = VS_SEND_RST;
	__atomic_add_fetch(&v->st_resets, 1, __ATOMIC_RELAXED);
}

void vsock_conn_drop_all(struct virtio_vsock *v)
{
	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++)
		if (v->conn[i].state != VS_FREE)
			vsock_conn_free(v, &v->conn[i]);
	v->rst_len = v->rst_head = 0;
	v->rx_wait = v->tx_wait = false;
}

uint32_t vsock_conn_rx_room(const struct vsock_conn *c)
{
	uint32_t in_flight = c->tx_cnt - c->peer_fwd_cnt, room;

	if (c->state != VS_ESTABLISHED || c->dying || c->guest_no_rcv || c->host_eof)
		return 0;
	/* a peer_fwd_cnt ahead of what was sent wraps to a huge in_flight:
	 * no room, only that guest's own stream stalls */
	if (in_flight >= c->peer_buf_alloc)
		return 0;
	room = c->peer_buf_alloc - in_flight;
	return room < VSOCK_MAX_PKT ? room : VSOCK_MAX_PKT;
}

/* Half of the buffer freed since the guest last heard: tell it (it never
 * waits on a zero credit for long: see virtio_vsock.h). */
static void vsock_conn_credit(struct vsock_conn *c)
{
	if (c->fwd_cnt - c->fwd_sent >= VIRTIO_VSOCK_BUF_ALLOC / 2)
		c->pending |= VS_SEND_CREDIT;
}

void vsock_conn_check_done(struct vsock_conn *c)
{
	if (c->dying || c->state != VS_ESTABLISHED || !c->guest_no_send || c->buf_len)
		return;
	if (c->host_eof || c->guest_no_rcv) { /* nothing either way: RST ends it */
		vsock_conn_close_host(c);
		c->dying = true;
		c->pending = VS_SEND_RST;
		return;
	}
	if (!c->host_wr_shut && shutdown(c->fd, SHUT_WR) == 0)
		c->host_wr_shut = true; /* the host reads its end of stream */
}

/* Write what waits in c's buffer: false when c was reset. */
static bool vsock_conn_flush(struct virtio_vsock *v, struct vsock_conn *c)
{
	while (c->buf_len) {
		uint32_t first = VIRTIO_VSOCK_BUF_ALLOC - c->buf_head;
		struct iovec iov[2] = {
		    {c->buf + c->buf_head, first < c->buf_len ? first : c->buf_len},
		    {c->buf, first < c->buf_len ? c->buf_len - first : 0}};
		struct msghdr mh = {.msg_iov = iov, .msg_iovlen = iov[1].iov_len ? 2 : 1};
		ssize_t n;

		do
			n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		while (n < 0 && errno == EINTR);
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			vsock_conn_reset(v, c);
			return false;
		}
		c->buf_head = (c->buf_head + (uint32_t)n) % VIRTIO_VSOCK_BUF_ALLOC;
		c->buf_len -= (uint32_t)n;
		c->fwd_cnt += (uint32_t)n;
		__atomic_add_fetch(&v->st_tx_bytes, (uint64_t)n, __ATOMIC_RELAXED);
	}
	if (!c->buf_len) { /* the memory is held only while bytes wait */
		free(c->buf);
		c->buf = NULL;
		c->buf_head = 0;
	}
	vsock_conn_credit(c);
	vsock_conn_check_done(c);
	return true;
}

/* The guest's len payload bytes of an RW packet to the host socket; what
 * it does not take now waits in c's buffer (the caller checked the
 * credit: buf_len + len <= VIRTIO_VSOCK_BUF_ALLOC). */
static void vsock_conn_to_host(struct virtio_vsock *v, struct vsock_conn *c,
			       const struct iovec *iov, int n, uint32_t len)
{
	struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
	ssize_t w = 0;
	uint32_t rest, tail, first;

	if (!c->buf_len && len) {
		do
			w = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		while (w < 0 && errno == EINTR);
		if (w < 0 && errno != EAGAIN) {
			vsock_conn_reset(v, c);
			return;
		}
		w = w < 0 ? 0 : w;
		c->fwd_cnt += (uint32_t)w;
		__atomic_add_fetch(&v->st_tx_bytes, (uint64_t)w, __ATOMIC_RELAXED);
	}
	rest = len - (uint32_t)w;
	if (rest) {
		if (!c->buf && !(c->buf = malloc(VIRTIO_VSOCK_BUF_ALLOC))) {
			vsock_conn_reset(v, c);
			return;
		}
		tail = (c->buf_head + c->buf_len) % VIRTIO_VSOCK_BUF_ALLOC;
		first = VIRTIO_VSOCK_BUF_ALLOC - tail < rest ? VIRTIO_VSOCK_BUF_ALLOC - tail : rest;
		iov_to_buf(iov, (unsigned int)n, (size_t)w, c->buf + tail, first);
		iov_to_buf(iov, (unsigned int)n, (size_t)w + first, c->buf, rest - first);
		c->buf_len += rest;
	}
	vsock_conn_credit(c);
}

/* The guest accepted a host client's connection: tell the client. */
static void vsock_conn_accepted(struct virtio_vsock *v, struct vsock_conn *c)
{
	char ok[24];
	int k = snprintf(ok, sizeof(ok), "OK %u\n", c->local_port);
	ssize_t n;

	c->state = VS_ESTABLISHED;
	do
		n = send(c->fd, ok, (size_t)k, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != k) /* a fresh socket takes 20 bytes, or the client left */
		vsock_conn_reset(v, c);
}

void vsock_conn_packet(struct virtio_vsock *v, struct vsock_conn *c,
		       const struct virtio_vsock_hdr *h, const struct iovec *iov, int n)
{
	uint32_t len = le32toh(h->len), flags = le32toh(h->flags);

	if (c->dying)
		return; /* its RST is owed already */
	/* every packet carries the guest's credit */
	c->peer_buf_alloc = le32toh(h->buf_alloc);
	c->peer_fwd_cnt = le32toh(h->fwd_cnt);
	switch (le16toh(h->op)) {
	case VIRTIO_VSOCK_OP_RESPONSE:
		if (c->state == VS_CONNECTING && !(c->pending & VS_SEND_REQUEST))
			vsock_conn_accepted(v, c);
		else
			vsock_conn_reset(v, c);
		break;
	case VIRTIO_VSOCK_OP_RST: /* the guest ends it: no answer */
		vsock_conn_free(v, c);
		break;
	case VIRTIO_VSOCK_OP_SHUTDOWN:
		if (c->state != VS_ESTABLISHED) {
			vsock_conn_reset(v, c);
			break;
		}
		c->guest_no_rcv |= !!(flags & VIRTIO_VSOCK_SHUTDOWN_RCV);
		c->guest_no_send |= !!(flags & VIRTIO_VSOCK_SHUTDOWN_SEND);
		vsock_conn_check_done(c);
		break;
	case VIRTIO_VSOCK_OP_RW:
		if (c->state != VS_ESTABLISHED || c->guest_no_send ||
		    len > VIRTIO_VSOCK_BUF_ALLOC - c->buf_len) {
			log_warn_once("%s: %u bytes beyond the credit or out of state: reset",
				      v->vp.name, len);
			vsock_conn_reset(v, c);
			break;
		}
		vsock_conn_to_host(v, c, iov, n, len);
		break;
	case VIRTIO_VSOCK_OP_CREDIT_UPDATE:
		break; /* taken above */
	case VIRTIO_VSOCK_OP_CREDIT_REQUEST:
		c->pending |= VS_SEND_CREDIT;
		break;
	default: /* unknown, or REQUEST handled by the caller */
		vsock_conn_reset(v, c);
	}
}

void vsock_guest_connect(struct virtio_vsock *v, const struct virtio_vsock_hdr *h)
{
	uint32_t local = le32toh(h->dst_port), peer = le32toh(h->src_port);
	struct vsock_conn *c;
	int fd;

	fd = !v->path[0] || v->n_conns >= VIRTIO_VSOCK_MAX_CONNS
		 ? -ECONNREFUSED
		 : connector_connect(&v->connector, local, VSOCK_CONNECT_MS);
	if (fd < 0) { /* nothing listens on PATH_<local>, or too many: refused */
		vsock_owe_rst(v, local, peer);
		__atomic_add_fetch(&v->st_resets, 1, __ATOMIC_RELAXED);
		return;
	}
	c = vsock_conn_new(v, fd, VS_ESTABLISHED);
	c->local_port = local;
	c->peer_port = peer;
	c->peer_buf_alloc = le32toh(h->buf_alloc);
	c->peer_fwd_cnt = le32toh(h->fwd_cnt);
	c->pending = VS_SEND_RESPONSE;
}

/* "CONNECT <port>\n" from a host client: the port, or -1. */
static int64_t vsock_parse_line(const char *s)
{
	uint64_t port = 0;
	size_t k;

	if (strncmp(s, "CONNECT ", 8))
		return -1;
	s += 8;
	for (k = 0; s[k] >= '0' && s[k] <= '9' && k < 10; k++)
		port = port * 10 + (uint64_t)(s[k] - '0');
	if (!k || s[k] || port > UINT32_MAX)
		return -1;
	return (int64_t)port;
}

/* A host client's line, as far as it came. */
static void vsock_conn_line(struct virtio_vsock *v, struct vsock_conn *c)
{
	char tmp[VSOCK_LINE_MAX];
	size_t want = VSOCK_LINE_MAX - c->line_len, take;
	const char *nl;
	ssize_t n;
	int64_t port;

	/* peek first: bytes after the line are the stream's, not ours */
	n = recv(c->fd, tmp, want, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		vsock_conn_free(v, c);
		return;
	}
	nl = memchr(tmp, '\n', (size_t)n);
	take = nl ? (size_t)(nl - tmp) + 1 : (size_t)n;
	if (recv(c->fd, c->line + c->line_len, take, MSG_DONTWAIT) != (ssize_t)take) {
		vsock_conn_free(v, c);
		return;
	}
	c->line_len += (unsigned int)take;
	if (!nl) {
		if (c->line_len == VSOCK_LINE_MAX)
			vsock_conn_free(v, c); /* no line this long is ours */
		return;
	}
	c->line[c->line_len - 1] = 0;
	if (c->line_len >= 2 && c->line[c->line_len - 2] == '\r')
		c->line[c->line_len - 2] = 0;
	port = vsock_parse_line(c->line);
	if (port < 0) {
		log_warn_once("virtio-vsock: a host client sent no CONNECT line: closed");
		vsock_conn_free(v, c);
		return;
	}
	c->peer_port = (uint32_t)port;
	c->state = VS_CONNECTING;
	c->pending = VS_SEND_REQUEST;
	/* the guest's credit is unknown until it answers */
}

/* A free host port for a host client (the counter skips ports in use). */
static uint32_t vsock_local_port(struct virtio_vsock *v)
{
	for (;;) {
		uint32_t p = v->next_local_port++;
		bool used = false;

		if (v->next_local_port < VSOCK_LOCAL_PORT_BASE)
			v->next_local_port = VSOCK_LOCAL_PORT_BASE;
		for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS && !used; i++)
			used = v->conn[i].state != VS_FREE && v->conn[i].local_port == p;
		if (!used) /* at most MAX_CONNS ports are in use: this ends */
			return p;
	}
}

int64_t vsock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Host clients still in their handshake past their deadline are closed
 * (the guest gets an RST if it saw the request); the poll timeout until
 * the next deadline, -1 none. */
static int vsock_expire(struct virtio_vsock *v)
{
	int64_t now = vsock_now_ms(), next = -1;

	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conn[i];

		if ((c->state != VS_LINE && c->state != VS_CONNECTING) || c->dying)
			continue;
		if (c->deadline_ms <= now) {
			vsock_conn_reset(v, c);
			continue;
		}
		if (next < 0 || c->deadline_ms - now < next)
			next = c->deadline_ms - now;
	}
	return (int)next;
}

void vsock_accept(struct virtio_vsock *v)
{
	int fd = accept4(v->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct vsock_conn *c;

	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn_once("virtio-vsock: accept on %s: %s", v->path, strerror(errno));
		return;
	}
	c = vsock_conn_new(v, fd, VS_LINE);
	if (!c) { /* polled only below the limit */
		close(fd);
		return;
	}
	c->local_port = vsock_local_port(v);
	c->deadline_ms = vsock_now_ms() + VSOCK_HANDSHAKE_MS;
}

static short vsock_conn_events(const struct virtio_vsock *v, const struct vsock_conn *c)
{
	short ev = 0;

	if (c->fd < 0)
		return -1;
	if (c->state == VS_LINE)
		return POLLIN;
	if (c->state == VS_CONNECTING)
		return 0; /* only a hang-up (POLLHUP) matters */
	if (!c->readable && !v->rx_wait && vsock_conn_rx_room(c))
		ev |= POLLIN;
	if (c->buf_len)
		ev |= POLLOUT;
	/* nothing to wait for: not polled, or a hang-up would spin */
	return ev ? ev : -1;
}

void vsock_conn_event(struct virtio_vsock *v, struct vsock_conn *c, short rev)
{
	if (c->state == VS_LINE) {
		vsock_conn_line(v, c);
		return;
	}
	if (c->state == VS_CONNECTING) {
		if (rev & (POLLHUP | POLLERR))
			vsock_conn_reset(v, c);
		return;
	}
	if (c->buf_len && (rev & (POLLOUT | POLLHUP | POLLERR)) && !vsock_conn_flush(v, c))
		return;
	if (c->fd >= 0 && (rev & (POLLIN | POLLHUP | POLLERR)))
		c->readable = true; /* vsock_rx_flush reads it, or its end */
}

int vsock_turn(void *opaque)
{
	struct virtio_vsock *v = opaque;
	struct pollfd pfd[VSOCK_NQ + 2 + VIRTIO_VSOCK_MAX_CONNS];
	struct vsock_conn *who[VIRTIO_VSOCK_MAX_CONNS];
	unsigned int n = 0, base, nc = 0;
	bool activated, listen = false;
	uint64_t cnt;
	int tmo = vsock_expire(v);

	for (unsigned int i = 0; i < VSOCK_NQ; i++)
		pfd[n++] = (struct pollfd){virtio_pci_kick_fd(&v->vp, i), POLLIN, 0};
	pfd[n++] = (struct pollfd){virtio_worker_ctl_fd(&v->worker), POLLIN, 0};
	base = n;
	/* host clients are taken (their lines read) before the driver is up
	 * too; their requests go out once it is */
	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++) {
		short ev = v->conn[i].state ? vsock_conn_events(v, &v->conn[i]) : -1;

		if (ev >= 0) {
			who[nc++] = &v->conn[i];
			pfd[n++] = (struct pollfd){v->conn[i].fd, ev, 0};
		}
	}
	if (v->listen_fd >= 0 && v->n_conns < VIRTIO_VSOCK_MAX_CONNS) {
		pfd[n++] = (struct pollfd){v->listen_fd, POLLIN, 0};
		listen = true;
	}
	if (poll(pfd, n, tmo) < 0) {
		if (errno == EINTR)
			return 0;
		return error_errno(-errno, "virtio-vsock: poll");
	}
	if (pfd[VSOCK_NQ].revents) {
		if (!virtio_worker_update(&v->worker, &activated))
			return -1;
		/* the driver reset the device (a snapshot's hold keeps them) */
		if (__atomic_exchange_n(&v->reset_drop, false, __ATOMIC_ACQ_REL) && v->active &&
		    !v->worker.active)
			vsock_conn_drop_all(v);
		v->active = v->worker.active;
		if (activated) { /* buffers may have come before DRIVER_OK */
			vsock_event_flush(v);
			vsock_kick(v, VSOCK_TXQ);
		}
		return 0; /* the fds above may be stale now */
	}
	/* the sockets first: nothing has touched a connection since poll */
	for (unsigned int k = 0; k < nc; k++)
		if (pfd[base + k].revents && who[k]->fd == pfd[base + k].fd)
			vsock_conn_event(v, who[k], pfd[base + k].revents);
	if (listen && pfd[n - 1].revents)
		vsock_accept(v);
	for (unsigned int i = 0; i < VSOCK_NQ; i++) {
		if (!pfd[i].revents)
			continue;
		if (read(pfd[i].fd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
			continue;
		if (v->active)
			vsock_kick(v, i);
	}
	vsock_expire(v);
	if (v->active)
		vsock_rx_flush(v);
	return 0;
}
