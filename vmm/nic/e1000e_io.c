// SPDX-License-Identifier: MIT
/*
 * e1000e_io.c - the 82574L's I/O thread (one per NIC): it sleeps in
 * poll() on its eventfd (doorbells, state changes, stop) and on the
 * backend's fd while the RX ring has room, and runs TX then RX; plus the
 * device's creation and teardown.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vmm/nic/e1000e_int.h"
#include "vmm/util/log.h"
#include "vmm/util/thread.h"
#include "vmm/vm/device.h"
#include "vmm/vm_config.h"

#define RX_BUDGET 256 /* frames per pass, then poll again */

void e1000e_kick(struct e1000e *e)
{
	uint64_t one = 1;

	if (e->kick_fd >= 0 && write(e->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn_once("e1000e: %s: eventfd write failed", e->name);
}

/* A reply vmlet made (DHCP, gateway ARP), for the guest's RX. */
static void e1000e_inject(struct e1000e *e, const void *frame, size_t len)
{
	unsigned int slot;

	if (e->inject_n == E1000E_INJECT_SLOTS || len > DHCP_FRAME_MAX) {
		E1000E_STAT_ADD(e, rx_dropped, 1);
		return;
	}
	slot = (e->inject_head + e->inject_n++) % E1000E_INJECT_SLOTS;
	memcpy(e->inject[slot], frame, len);
	e->inject_len[slot] = len;
}

void e1000e_tx_emit(struct e1000e *e, uint8_t *buf, size_t flen)
{
	const uint8_t *frame = buf + NET_VNET_HDR_LEN;
	struct iovec iov = {buf, flen + NET_VNET_HDR_LEN};
	int r;

	if (e->att.dhcp && flen <= DHCP_FRAME_MAX) {
		r = net_intercept(&e->att, frame, flen, e->reply, DHCP_FRAME_MAX);
		if (r >= 0) {
			if (r > 0)
				e1000e_inject(e, e->reply, (size_t)r);
			E1000E_STAT_ADD(e, intercepted, 1);
			return;
		}
	}
	memset(buf, 0, NET_VNET_HDR_LEN);
	r = e->be_dead ? -EPIPE : e->be->ops->send(e->be, &iov, 1);
	if (r) {
		E1000E_STAT_ADD(e, tx_dropped, 1);
		if (r != -ENOTCONN && r != -EAGAIN && r != -ENOBUFS && r != -EPIPE)
			log_warn_once("e1000e: %s: %s backend send failed: %s", e->name,
				      e->be->kind, strerror(-r));
		return;
	}
	E1000E_STAT_ADD(e, tx_packets, 1);
	E1000E_STAT_ADD(e, tx_bytes, flen);
}

/* One frame from the backend; its length (vnet header included), 0 none,
 * -1 the backend failed for good (the link goes down). */
static ssize_t e1000e_rx_read(struct e1000e *e)
{
	struct iovec iov = {e->rxbuf, E1000E_RX_MAX};
	ssize_t r;

	do
		r = e->be->ops->recv(e->be, &iov, 1);
	while (r == NET_BE_RECONNECTED);
	if (r == -EAGAIN || r == -EINTR)
		return 0;
	if (r <= 0) {
		error("e1000e: %s: %s backend %s, link down", e->name, e->be->kind,
		      r ? strerror((int)-r) : "closed");
		e->be_dead = true;
		e1000e_set_link(e, false);
		return -1;
	}
	return r;
}

/* Hand one backend frame to the ring (lock held). false: no room. */
static bool e1000e_rx_one(struct e1000e *e, size_t len)
{
	const struct net_vnet_hdr *h = (const void *)e->rxbuf;
	uint8_t *f = e->rxbuf + NET_VNET_HDR_LEN;
	size_t flen = len - NET_VNET_HDR_LEN;

	if (len > E1000E_RX_MAX || h->gso_type) {
		E1000E_STAT_ADD(e, rx_dropped, 1); /* truncated, or GSO nobody asked for */
		return true;
	}
	if (h->flags & 1) /* NEEDS_CSUM */
		e1000e_rx_fix_csum(f, flen, h->csum_start, h->csum_offset);
	return e1000e_rx_put(e, f, flen, h->flags) != -ENOSPC;
}

/* RX: replies first, then the backend, while the ring has room. */
static bool e1000e_rx_run(struct e1000e *e)
{
	unsigned int n = 0;
	ssize_t len;

	pthread_mutex_lock(&e->lock);
	while (e->inject_n && e1000e_rx_ready(e)) {
		unsigned int s = e->inject_head;

		if (e1000e_rx_put(e, e->inject[s], e->inject_len[s], 0) == -ENOSPC)
			break;
		e->inject_head = (s + 1) % E1000E_INJECT_SLOTS;
		e->inject_n--;
		n++;
	}
	for (; n < RX_BUDGET && !e->be_dead && e->be->fd >= 0; n++) {
		e->rx_wait = !e1000e_rx_ready(e);
		if (e->rx_wait)
			break;
		pthread_mutex_unlock(&e->lock);
		len = e1000e_rx_read(e);
		pthread_mutex_lock(&e->lock);
		if (len <= 0)
			break;
		if (len < NET_VNET_HDR_LEN + 14)
			continue;
		if (!e1000e_rx_one(e, (size_t)len)) {
			E1000E_STAT_ADD(e, rx_dropped, 1); /* the ring filled meanwhile */
			break;
		}
	}
	if (n)
		e1000e_raise_moderated(e, ICR_RXT0, 0);
	pthread_mutex_unlock(&e->lock);
	return n > 0;
}

void e1000e_hold_wait(struct e1000e *e)
{
	while (e->hold && !e->quit) {
		e->held = true;
		pthread_cond_broadcast(&e->hold_cond);
		pthread_cond_wait(&e->hold_cond, &e->lock);
	}
	e->held = false;
}

int e1000e_io_turn(struct e1000e *e, int max_wait)
{
	struct pollfd p[2] = {{.fd = e->kick_fd, .events = POLLIN}};
	nfds_t n = 1;
	uint64_t v;
	bool did;
	int due;

	pthread_mutex_lock(&e->lock);
	e1000e_hold_wait(e);
	if (e->quit) {
		pthread_mutex_unlock(&e->lock);
		return -1;
	}
	due = e1000e_moderation_due(e); /* held-back interrupts: wake for them */
	if (due >= 0 && (max_wait < 0 || due < max_wait))
		max_wait = due;
	e->rx_wait = !e1000e_rx_ready(e);
	if (!e->be_dead && !e->rx_wait && e->be->fd >= 0)
		p[n++] = (struct pollfd){.fd = e->be->fd, .events = POLLIN};
	else if (!e->be_dead && !e->rx_wait && max_wait < 0)
		max_wait = 100; /* a reconnecting backend (passt): look again */
	pthread_mutex_unlock(&e->lock);
	if (poll(p, n, max_wait) < 0 && errno != EINTR)
		return error_errno(-errno, "e1000e: %s: poll", e->name);
	if (p[0].revents && read(e->kick_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn_once("e1000e: %s: eventfd read failed", e->name);
	did = e1000e_tx_run(e);
	did |= e1000e_rx_run(e);
	pthread_mutex_lock(&e->lock);
	e1000e_moderation_due(e);
	pthread_mutex_unlock(&e->lock);
	return did;
}

static void *e1000e_thread(void *arg)
{
	struct e1000e *e = arg;

	while (e1000e_io_turn(e, -1) >= 0)
		;
	return NULL;
}

/* ---- lifecycle ------------------------------------------------------------- */

static void e1000e_read_counters(void *opaque, struct device_counters *c)
{
	struct e1000e_stats st;

	e1000e_get_stats(opaque, &st);
	c->rx_packets = st.rx_packets;
	c->rx_bytes = st.rx_bytes;
	c->tx_packets = st.tx_packets;
	c->tx_bytes = st.tx_bytes;
	c->rx_dropped = st.rx_dropped;
	c->tx_dropped = st.tx_dropped;
}

static void e1000e_free(struct e1000e *e)
{
	if (e->kick_fd >= 0)
		close(e->kick_fd);
	free(e->tx.buf);
	free(e->seg);
	free(e->rxbuf);
	free(e->reply);
	net_detach(&e->att);
	pthread_cond_destroy(&e->hold_cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

static int e1000e_alloc(struct e1000e *e, struct net_attach *att)
{
	e->att = *att;
	memset(att->be, 0, sizeof(att->be));
	att->n_queues = 0;
	for (unsigned int i = 1; i < TAP_MAX_QUEUES; i++) { /* one queue pair */
		net_backend_destroy(e->att.be[i]);
		e->att.be[i] = NULL;
	}
	e->att.n_queues = 1;
	e->be = e->att.be[0];
	snprintf(e->name, sizeof(e->name), "%s", e->att.name ? e->att.name : "?");
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->hold_cond, NULL);
	e->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->tx.buf = malloc(NET_VNET_HDR_LEN + E1000E_TX_MAX);
	e->seg = malloc(NET_VNET_HDR_LEN + E1000E_TX_MAX);
	e->rxbuf = malloc(E1000E_RX_MAX);
	e->reply = malloc(DHCP_FRAME_MAX);
	if (e->kick_fd < 0 || !e->tx.buf || !e->seg || !e->rxbuf || !e->reply)
		return -ENOMEM;
	/* whole, checksummed frames from the backend: no offloads asked */
	if (e->be->ops->set_offload)
		e->be->ops->set_offload(e->be, 0);
	return 0;
}

int e1000e_create(struct e1000e **out, struct pci_host *host, struct net_attach *att, bool start_io)
{
	struct e1000e *e;
	int r;

	if (!att->n_queues || !att->be[0])
		return error("e1000e: interface '%s' has no backend", att->name);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->kick_fd = -1;
	r = e1000e_alloc(e, att);
	if (!r)
		r = e1000e_pci_setup(e, host);
	if (r) {
		if (e->pci.slot >= 0 && e->pci.host)
			pci_dev_remove(host, &e->pci);
		e1000e_free(e);
		return error_errno(r, "e1000e: interface '%s': cannot create the device",
				   att->name ? att->name : "?");
	}
	device_add_counters(host->vm, "net", e->name, e1000e_read_counters, e);
	if (start_io) {
		r = thread_start(&e->thread, THREAD_NET_IO, "vmlet-e1000e", e1000e_thread, e);
		if (r) {
			pci_dev_remove(host, &e->pci);
			e1000e_free(e);
			return error_errno(r, "e1000e: cannot start the i/o thread");
		}
		e->started = true;
	}
	log_info("interface '%s': e1000e (82574L) on 00:%02x.0 (%s binding)", e->name, e->pci.slot,
		 net_mode_name(e->att.mode));
	*out = e;
	return 0;
}

int e1000e_create_nic(struct e1000e **out, struct pci_host *host, const struct vm_config *cfg,
		      unsigned int index)
{
	struct net_env env;
	struct net_attach att;
	int r;

	net_env_detect(&env);
	r = net_attach(cfg, index, 1, &env, &att);
	if (r)
		return r;
	r = e1000e_create(out, host, &att, true);
	if (r)
		net_detach(&att);
	return r;
}

void e1000e_destroy(struct e1000e *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->quit = true;
	pthread_cond_broadcast(&e->hold_cond); /* a thread a snapshot held */
	pthread_mutex_unlock(&e->lock);
	e1000e_kick(e);
	if (e->started)
		pthread_join(e->thread, NULL);
	if (e->pci.slot >= 0 && e->pci.host)
		pci_dev_remove(e->pci.host, &e->pci);
	e1000e_free(e);
}

struct pci_dev *e1000e_pci(struct e1000e *e)
{
	return &e->pci;
}

void e1000e_get_stats(struct e1000e *e, struct e1000e_stats *st)
{
	st->rx_packets = __atomic_load_n(&e->st.rx_packets, __ATOMIC_RELAXED);
	st->tx_packets = __atomic_load_n(&e->st.tx_packets, __ATOMIC_RELAXED);
	st->rx_bytes = __atomic_load_n(&e->st.rx_bytes, __ATOMIC_RELAXED);
	st->tx_bytes = __atomic_load_n(&e->st.tx_bytes, __ATOMIC_RELAXED);
	st->rx_dropped = __atomic_load_n(&e->st.rx_dropped, __ATOMIC_RELAXED);
	st->tx_dropped = __atomic_load_n(&e->st.tx_dropped, __ATOMIC_RELAXED);
	st->intercepted = __atomic_load_n(&e->st.intercepted, __ATOMIC_RELAXED);
}
