/* SPDX-License-Identifier: MIT */
/*
 * virtio_net_fuzz.c - libFuzzer target for virtio-net's RX and TX paths
 * (vmm/virtio/virtio_net*.c), the control queue and the DHCP/ARP intercept,
 * as a hostile guest and a hostile network drive them.
 *
 * The device is the real one on the real virtio-pci transport, over the
 * fake VM of virtio_fuzz.h with no thread: the fuzzer turns the I/O
 * thread's loop by hand (virtio_net_io_turn), so a run is deterministic.
 * Guest RAM is one exact-size allocation (ASan sees every byte the device
 * touches outside it) and the backend is a fake tap fed by the input.
 *
 * Input: 2 bytes of setup (features, offloads, DHCP, queue pairs, queue
 * size), 2 bytes (little-endian) n, n bytes of guest RAM from gpa 0 (the
 * rings of every queue are at fixed places near the start: vfz_*()),
 * then events until the input ends: 'k' q (kick queue q), 'f' p len16
 * bytes (a frame, vnet header first, arrives on pair p's backend), 'e' p
 * code (the backend's next receive fails), 'w' off16 len8 bytes (the
 * guest writes RAM), 't' (the loop turns). Frames the device sends must
 * be whole: header and an Ethernet header at least, NET_FRAME_MAX at
 * most.
 *
 * FUZZ_ARGS: -close_fd_mask=2
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/virtio_fuzz.h"
#include "vmm/virtio/virtio_net.h"
#include "vmm/virtio/virtio_net_int.h"
#include "vmm/util/log.h"
#include "vmm/net/backend.h"
#include "vmm/net/net.h"

#define FRAMES_MAX 8u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the fake tap ---- */
struct fbe {
	struct net_backend be;
	const uint8_t *frame[FRAMES_MAX]; /* into the input */
	size_t len[FRAMES_MAX];
	unsigned int head, n;
	int fail;  /* the next recv's result when non-zero */
	bool dead; /* it failed for good: the device must not read again */
};

static void fbe_ready(struct fbe *f)
{
	uint64_t v = 1;

	if (f->n || f->fail) {
		if (write(f->be.fd, &v, sizeof(v)) < 0)
			abort();
	} else if (read(f->be.fd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
		abort();
	}
}

static ssize_t fbe_recv(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	struct fbe *f = (struct fbe *)be;
	size_t l, done = 0;
	const uint8_t *p;
	int r = f->fail;

	if (f->dead)
		__builtin_trap(); /* a guest's kicks would flood the log */
	if (r) {
		f->fail = 0;
		f->dead = r == -EIO || r == 1;
		fbe_ready(f);
		return r == 1 ? 0 : r;
	}
	if (!f->n)
		return -EAGAIN;
	if (iovcnt < 1 || iovcnt > 1024)
		__builtin_trap(); /* readv()'s contract */
	p = f->frame[f->head];
	l = f->len[f->head];
	f->head = (f->head + 1) % FRAMES_MAX;
	f->n--;
	for (int i = 0; i < iovcnt && done < l; i++) {
		size_t c = iov[i].iov_len < l - done ? iov[i].iov_len : l - done;

		memcpy(iov[i].iov_base, p + done, c);
		done += c;
	}
	fbe_ready(f);
	return (ssize_t)l; /* the whole length, even when truncated (a tap's) */
}

static int fbe_send(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	volatile uint8_t x = 0;
	size_t len = 0;

	(void)be;
	for (int i = 0; i < iovcnt; i++) {
		len += iov[i].iov_len;
		for (size_t j = 0; j < iov[i].iov_len; j += 97)
			x ^= ((const uint8_t *)iov[i].iov_base)[j];
		if (iov[i].iov_len)
			x ^= ((const uint8_t *)iov[i].iov_base)[iov[i].iov_len - 1];
	}
	if (len < NET_VNET_HDR_LEN + 14 || len > NET_FRAME_MAX)
		__builtin_trap(); /* not a frame */
	return x & 1 ? 0 : -EAGAIN;
}

static int fbe_offload(struct net_backend *be, unsigned int flags)
{
	(void)be;
	return flags > 15 ? -EINVAL : 0;
}

static int fbe_enabled(struct net_backend *be, bool on)
{
	(void)be;
	(void)on;
	return 0;
}

static void fbe_destroy(struct net_backend *be)
{
	close(be->fd);
	free(be);
}

static const struct net_backend_ops fbe_ops = {
    .recv = fbe_recv,
    .send = fbe_send,
    .set_offload = fbe_offload,
    .set_enabled = fbe_enabled,
    .destroy = fbe_destroy,
};

static struct fbe *fbe_new(bool vnet)
{
	struct fbe *f = calloc(1, sizeof(*f));

	if (!f)
		abort();
	f->be =
	    (struct net_backend){&fbe_ops, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), vnet, "fuzz"};
	if (f->be.fd < 0)
		abort();
	return f;
}

/* ---- the guest ---- */
struct guest {
	struct pci_host h;
	struct guest_mem mem;
	uint8_t *ram;
	struct virtio_net *net;
	struct tvdev v;
	struct fbe *be[2];
	unsigned int pairs, nq;
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "net-fuzz", NULL);
	return 0;
}

static int guest_up(struct guest *g, uint8_t setup, const uint8_t *ram, size_t n)
{
	struct net_attach att;

	memset(g, 0, sizeof(*g));
	tbus_n = 0;
	g->ram = vfz_ram(&g->mem, ram, n);
	memset(&att, 0, sizeof(att));
	att.name = "fuzz0";
	memcpy(att.mac, "\x02\x00\x00\x00\x00\x42", 6);
	att.mtu = (setup & 0x20) ? 9000 : 1500;
	g->pairs = att.n_queues = (setup & 0x40) ? 2 : 1;
	g->nq = 2 * g->pairs + 1;
	for (unsigned int i = 0; i < g->pairs; i++) {
		g->be[i] = fbe_new(setup & 0x10);
		att.be[i] = &g->be[i]->be;
	}
	if (setup & 0x80) { /* vmlet answers DHCP and the gateway's ARP */
		att.dhcp = att.arp_gateway = true;
		memcpy(att.lease.client_mac, att.mac, 6);
		memcpy(att.lease.server_mac, "\x02\x00\x00\x00\x00\x01", 6);
		att.lease.server_ip = 0x0a000201;
		att.lease.client_ip = 0x0a000202;
		att.lease.netmask = 0xffffff00;
		att.lease.router = 0x0a000201;
		att.lease.mtu = att.mtu;
	}
	if (thost_init(&g->h, &g->mem))
		abort();
	if (virtio_net_create(&g->net, &g->h, &att) || tvdev_probe(&g->v, 1))
		abort();
	tvdev_msix(&g->v, g->nq + 1);
	return 0;
}

static void guest_down(struct guest *g)
{
	struct virtio_net_stats st;

	if (getenv("NET_FUZZ_STATS")) { /* to see what a seed does */
		virtio_net_get_stats(g->net, &st);
		fprintf(stdout, "rx %llu/%llu dropped %llu, tx %llu/%llu dropped %llu, ours %llu\n",
			(unsigned long long)st.rx_packets, (unsigned long long)st.rx_bytes,
			(unsigned long long)st.rx_dropped, (unsigned long long)st.tx_packets,
			(unsigned long long)st.tx_bytes, (unsigned long long)st.tx_dropped,
			(unsigned long long)st.intercepted);
	}
	virtio_net_io_stop(g->net); /* joins the thread that never ran */
	virtio_net_destroy(g->net);
	pci_host_release(&g->h);
	free(g->ram);
}

/* Turn the loop until nothing is left to do (bounded). */
static void turn(struct guest *g)
{
	for (int i = 0; i < 64 && virtio_net_io_turn(g->net, 0) > 0; i++)
		;
}

static void events(struct guest *g, const uint8_t *d, size_t n)
{
	static const int fails[4] = {-EIO, 1 /* closed */, NET_BE_RECONNECTED, -EAGAIN};
	size_t i = 0;

	while (i < n) {
		uint8_t op = d[i++];

		if (op == 'k' && i < n) {
			tvdev_kick(&g->v, d[i++] % g->nq);
		} else if (op == 'f' && i + 3 <= n) {
			struct fbe *f = g->be[d[i] % g->pairs];
			size_t l = d[i + 1] | (size_t)d[i + 2] << 8;

			i += 3;
			if (l > n - i)
				l = n - i;
			if (f->n < FRAMES_MAX) {
				f->frame[(f->head + f->n) % FRAMES_MAX] = d + i;
				f->len[(f->head + f->n++) % FRAMES_MAX] = l;
				fbe_ready(f);
			}
			i += l;
		} else if (op == 'e' && i + 2 <= n) {
			struct fbe *f = g->be[d[i] % g->pairs];

			f->fail = fails[d[i + 1] & 3];
			fbe_ready(f);
			i += 2;
		} else if (op == 'w') {
			fuzz_ram_write(g->ram, VFZ_RAM, d, n, &i);
		} else if (op == 't') {
			turn(g);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* setup bit -> feature: MRG_RXBUF, EVENT_IDX, INDIRECT, GUEST_CSUM +
	 * GUEST_TSO4/6, CSUM + HOST_TSO4 (offered only with a vnet header) */
	uint64_t want =
	    1ull << 32 | 1ull << 5 | 1ull << 16 | 1ull << 3 | 1ull << 17 | 1ull << 18 | 1ull << 22;
	struct guest g;
	uint16_t qsize;
	size_t n;

	if (size < 4)
		return 0;
	qsize = (uint16_t)(2u << (data[1] % 6)); /* 2 .. 64 */
	want |= (data[0] & 1 ? 1ull << 15 : 0) | (data[0] & 2 ? 1ull << 29 : 0) |
		(data[0] & 4 ? 1ull << 28 : 0) | (data[0] & 8 ? 0x182ull : 0) |
		(data[1] & 0x80 ? 0x801ull : 0);
	n = data[2] | (size_t)data[3] << 8;
	n = n < size - 4 ? n : size - 4;
	guest_up(&g, data[0], data + 4, n);
	data += 4, size -= 4;
	vfz_start(&g.v, g.nq, want, qsize);
	turn(&g); /* activation: serves what was posted before DRIVER_OK */
	events(&g, data + n, size - n);
	turn(&g);
	guest_down(&g);
	return 0;
}
