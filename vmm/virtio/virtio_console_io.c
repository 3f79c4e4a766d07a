// SPDX-License-Identifier: MIT
/*
 * virtio_console_io.c - virtio-console's data queues and the host sockets
 * behind its ports (virtio_console.h). Runs on the device's I/O thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/iov.h"
#include "vmm/util/log.h"
#include "vmm/virtio/virtio_console_int.h"
#include "vmm/util/unix_addr.h"

int vcon_port_open(struct vcon_port *p, const char *prefix)
{
	struct sockaddr_un sa;
	int fd, r;

	r = snprintf(p->path, sizeof(p->path), "%s%s", prefix, p->name);
	if (r < 0 || (size_t)r >= sizeof(p->path) || unix_addr_fill(&sa, p->path)) {
		p->path[0] = 0;
		return error_errno(-ENAMETOOLONG, "virtio-console: socket path %s%s", prefix,
				   p->name);
	}
	/* a stale socket of an earlier run is replaced; anything else (a
	 * file, a link planted there) is refused, and nothing is followed;
	 * 0600 from the start (setup is single-threaded as far as files go:
	 * the process-wide umask touches nothing else), named once listening */
	r = unix_listen(p->path, 4, SOCK_NONBLOCK, &fd);
	if (r) {
		r = r == -EEXIST
			? error_errno(r, "virtio-console: %s exists and is not a socket", p->path)
			: error_errno(r, "virtio-console: listening on %s", p->path);
		goto fail;
	}
	p->listen_fd = fd;
	log_info("virtio-console: port '%s' on %s", p->name, p->path);
	return 0;
fail:
	p->path[0] = 0;
	return r;
}

void vcon_port_close(struct vcon_port *p)
{
	if (p->conn_fd >= 0)
		close(p->conn_fd);
	if (p->listen_fd >= 0)
		close(p->listen_fd);
	p->conn_fd = p->listen_fd = -1;
}

/* The host client left (or broke): the guest hears PORT_OPEN 0. A chain in
 * flight stays for the next client: the guest wrote it, nobody read it. */
static void vcon_host_gone(struct virtio_console *c, struct vcon_port *p)
{
	close(p->conn_fd);
	p->conn_fd = -1;
	p->rx_wait = false;
	vcon_publish(p);
	if (p->guest_ready) {
		p->pending |= VCON_SEND_OPEN;
		vcon_ctrl_flush(c);
	}
}

static void vcon_host_accept(struct virtio_console *c, struct vcon_port *p)
{
	int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn_once("virtio-console: accept on %s: %s", p->path, strerror(errno));
		return;
	}
	p->conn_fd = fd;
	vcon_publish(p);
	if (p->guest_ready) {
		p->pending |= VCON_SEND_OPEN;
		vcon_ctrl_flush(c);
	}
	vcon_port_tx(c, p); /* what the guest queued meanwhile */
	vcon_port_rx(c, p);
}

/* Write the chain in flight: 1 done, 0 the socket is full, -1 host gone. */
static int vcon_tx_write(struct vcon_port *p)
{
	struct iovec iov[VCON_QUEUE_SIZE];
	struct msghdr mh = {.msg_iov = iov};
	ssize_t n;

	while (p->tx_off < p->tx_len) {
		mh.msg_iovlen = (size_t)iov_slice(p->tx_iov, (int)p->tx_n, p->tx_off,
						  p->tx_len - p->tx_off, iov);
		n = sendmsg(p->conn_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		p->tx_off += (uint64_t)n;
	}
	return 1;
}

void vcon_port_tx(struct virtio_console *c, struct vcon_port *p)
{
	unsigned int qi = vcon_rxq(p->id) + 1;
	struct virtq *q = virtio_pci_queue(&c->vp, qi);
	struct virtq_elem e = {
	    .out = p->tx_iov, .in = c->in, .cap_out = VCON_QUEUE_SIZE, .cap_in = VCON_QUEUE_SIZE};
	bool done = false;
	int r = 0;

	/* no reader: the chains stay on the ring (the guest sees the port
	 * closed on the host side and waits) */
	while (q && p->conn_fd >= 0) {
		if (!p->tx_busy) {
			r = virtq_pop(q, &e);
			if (r == VIRTQ_POP_EMPTY && virtq_enable_notify(q))
				continue;
			if (r <= 0)
				break;
			if (r == VIRTQ_POP_BAD) {
				virtq_push(q, e.head, 0);
				done = true;
				continue;
			}
			p->tx_busy = true;
			p->tx_head = e.head;
			p->tx_n = e.n_out;
			p->tx_off = 0;
			p->tx_len = e.out_bytes;
		}
		r = vcon_tx_write(p);
		if (r <= 0) { /* full: POLLOUT brings us back */
			if (r < 0)
				vcon_host_gone(c, p);
			r = 0;
			break;
		}
		p->tx_busy = false;
		__atomic_add_fetch(&p->st_tx_bytes, p->tx_len, __ATOMIC_RELAXED);
		virtq_push(q, p->tx_head, 0);
		done = true;
	}
	if (done && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&c->vp, qi);
	if (r < 0)
		virtio_pci_needs_reset(&c->vp);
}

/* Is there something to read? 1 yes, 0 not now, -1 the host left. */
static int vcon_rx_peek(struct vcon_port *p)
{
	char b;
	ssize_t n;

	do
		n = recv(p->conn_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return 1;
	return n < 0 && errno == EAGAIN ? 0 : -1;
}

void vcon_port_rx(struct virtio_console *c, struct vcon_port *p)
{
	unsigned int qi = vcon_rxq(p->id);
	struct virtq *q = virtio_pci_queue(&c->vp, qi);
	struct virtq_elem e = {
	    .out = c->out, .in = c->in, .cap_out = VCON_QUEUE_SIZE, .cap_in = VCON_QUEUE_SIZE};
	struct msghdr mh = {.msg_iov = c->in};
	bool done = false;
	ssize_t n;
	int r = 0;

	/* a receive queue the driver never enabled gets no buffers: wait
	 * (until a reset) instead of polling a readable socket in a loop */
	p->rx_wait = !q;
	/* host bytes go only into buffers of a port the guest has open */
	while (q && p->conn_fd >= 0 && p->guest_open) {
		r = vcon_rx_peek(p);
		if (r <= 0) {
			if (r < 0)
				vcon_host_gone(c, p);
			r = 0;
			break;
		}
		r = virtq_pop(q, &e);
		if (r == VIRTQ_POP_EMPTY && virtq_enable_notify(q))
			continue;
		if (r == VIRTQ_POP_EMPTY)
			p->rx_wait = true; /* the guest's kick brings us back */
		if (r <= 0)
			break;
		if (r == VIRTQ_POP_BAD || !e.in_bytes) {
			virtq_push(q, e.head, 0);
			done = true;
			continue;
		}
		mh.msg_iovlen = e.n_in;
		/* the peek saw data and nobody else reads: this cannot block,
		 * and a failure now is the host leaving */
		do
			n = recvmsg(p->conn_fd, &mh, MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		virtq_push(q, e.head, n > 0 ? (uint32_t)n : 0);
		if (n > 0)
			__atomic_add_fetch(&p->st_rx_bytes, (uint64_t)n, __ATOMIC_RELAXED);
		done = true;
		if (n <= 0)
			vcon_host_gone(c, p);
	}
	if (done && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&c->vp, qi);
	if (r < 0)
		virtio_pci_needs_reset(&c->vp);
}

unsigned int vcon_poll_fds(void *opaque, struct pollfd *pfd, unsigned int max)
{
	struct virtio_console *c = opaque;
	unsigned int n = 0;

	for (unsigned int i = 0; i < c->n_ports && n < max; i++) {
		struct vcon_port *p = &c->port[i];
		short ev = 0;

		if (p->conn_fd < 0) {
			if (p->listen_fd >= 0)
				pfd[n++] = (struct pollfd){p->listen_fd, POLLIN, 0};
			continue;
		}
		if (p->guest_open && !p->rx_wait)
			ev |= POLLIN;
		if (p->tx_busy)
			ev |= POLLOUT;
		/* waiting for guest buffers with nothing to send: not polled,
		 * or a hang-up would wake us in a loop */
		if (ev || !p->guest_open)
			pfd[n++] = (struct pollfd){p->conn_fd, ev, 0};
	}
	return n;
}

void vcon_poll_events(void *opaque, const struct pollfd *pfd, unsigned int n)
{
	struct virtio_console *c = opaque;

	for (unsigned int k = 0; k < n; k++) {
		struct vcon_port *p = NULL;

		if (!pfd[k].revents)
			continue;
		for (unsigned int i = 0; i < c->n_ports && !p; i++)
			if (pfd[k].fd == c->port[i].listen_fd || pfd[k].fd == c->port[i].conn_fd)
				p = &c->port[i];
		if (!p)
			continue;
		if (pfd[k].fd == p->listen_fd) {
			if (p->conn_fd < 0)
				vcon_host_accept(c, p);
			continue;
		}
		if (pfd[k].revents & POLLOUT)
			vcon_port_tx(c, p);
		if (p->conn_fd >= 0 && p->guest_open &&
		    (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
			vcon_port_rx(c, p);
		else if (p->conn_fd >= 0 && (pfd[k].revents & (POLLHUP | POLLERR)))
			vcon_host_gone(c, p);
	}
}
