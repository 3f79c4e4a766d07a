/* SPDX-License-Identifier: MIT */
/*
 * vsock_fuzz.c - libFuzzer target for virtio-vsock (vmm/virtio/virtio_vsock.c,
 * virtio_vsock_conn.c): packet headers (CIDs, ports, lengths, types,
 * operations in and out of state), receive buffers, the credit both ways,
 * and host sides that send, stall, leave or write CONNECT lines, as a
 * hostile guest and host client drive them.
 *
 * The device is the real one on the real virtio-pci transport, over the
 * fake VM of virtio_fuzz.h with no thread: the fuzzer is the device's I/O
 * thread (it rings the device's doorbells and says what poll saw). Host
 * sockets are socket pairs the fuzzer makes (the device has no path: no
 * listening socket, no connector, every guest REQUEST is refused), the
 * device's end with a small send buffer so that its own buffer fills.
 *
 * Input: 2 bytes of setup (EVENT_IDX, INDIRECT; queue size), 2 bytes
 * (little-endian) n, n bytes of guest RAM from gpa 0 (rings at vfz_*()),
 * then events: 'k' q (a doorbell on queue q), 'w' off16 len8 bytes (the
 * guest writes RAM), 'c' lport pport credit (a stream the guest opened,
 * host ports 1000+lport, guest 2000+pport, its credit credit KiB), 'l' (a
 * host client, still to write its CONNECT line), 'h' i len8 bytes (the
 * host writes to connection slot i), 'd' i (the host reads all of slot i),
 * 'x' i (the host closes slot i).
 */
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/virtio_fuzz.h"
#include "vmm/util/log.h"
#include "vmm/virtio/virtio_vsock_int.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int peer[VIRTIO_VSOCK_MAX_CONNS];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "vsock-fuzz", NULL);
	return 0;
}

/* A host side for a new connection: the device's end, or -1. */
static struct vsock_conn *host_pair(struct virtio_vsock *v, enum vsock_state st)
{
	int sv[2], small = 4096;
	struct vsock_conn *c;
	unsigned int i;

	if (v->n_conns >= VIRTIO_VSOCK_MAX_CONNS ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		return NULL;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	c = vsock_conn_new(v, sv[0], st);
	i = (unsigned int)(c - v->conn);
	if (peer[i] >= 0)
		close(peer[i]);
	peer[i] = sv[1];
	return c;
}

static void host_event(struct virtio_vsock *v, unsigned int i, short rev)
{
	struct vsock_conn *c = &v->conn[i % VIRTIO_VSOCK_MAX_CONNS];

	if (c->state != VS_FREE && c->fd >= 0)
		vsock_conn_event(v, c, rev);
	vsock_rx_flush(v);
}

static void stream(struct virtio_vsock *v, const uint8_t *d)
{
	struct vsock_conn *c;

	if (vsock_conn_find(v, 1000u + d[0], 2000u + d[1]))
		return;
	c = host_pair(v, VS_ESTABLISHED);
	if (!c)
		return;
	c->local_port = 1000u + d[0];
	c->peer_port = 2000u + d[1];
	c->peer_buf_alloc = (uint32_t)d[2] << 10;
	c->pending = VS_SEND_RESPONSE;
	vsock_rx_flush(v);
}

static void host_io(struct virtio_vsock *v, uint8_t op, unsigned int i, const uint8_t *d,
		    size_t len)
{
	char buf[4096];

	i %= VIRTIO_VSOCK_MAX_CONNS;
	if (peer[i] < 0)
		return;
	if (op == 'h') {
		if (send(peer[i], d, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			/* full or gone: the device still hears of it */
		}
		host_event(v, i, POLLIN);
	} else if (op == 'd') {
		while (recv(peer[i], buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
		host_event(v, i, POLLOUT);
	} else {
		close(peer[i]);
		peer[i] = -1;
		host_event(v, i, POLLIN | POLLHUP);
	}
}

static void events(struct virtio_vsock *v, uint8_t *ram, const uint8_t *d, size_t n)
{
	size_t i = 0, l;
	struct vsock_conn *c;

	while (i < n) {
		uint8_t op = d[i++];

		if (op == 'k' && i < n) {
			vsock_kick(v, d[i++] % VSOCK_NQ);
		} else if (op == 'w') {
			fuzz_ram_write(ram, VFZ_RAM, d, n, &i);
		} else if (op == 'c' && i + 3 <= n) {
			stream(v, d + i);
			i += 3;
		} else if (op == 'l') {
			c = host_pair(v, VS_LINE);
			if (c)
				c->local_port = VSOCK_LOCAL_PORT_BASE + (uint32_t)(c - v->conn);
		} else if (op == 'h' && i + 2 <= n) {
			l = d[i + 1] < n - i - 2 ? d[i + 1] : n - i - 2;
			host_io(v, op, d[i], d + i + 2, l);
			i += 2 + l;
		} else if ((op == 'd' || op == 'x') && i < n) {
			host_io(v, op, d[i++], NULL, 0);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t want = 1ull << 32;
	struct virtio_vsock *v;
	struct guest_mem mem;
	struct pci_host h;
	struct tvdev d;
	uint8_t *ram;
	size_t n;

	if (size < 4)
		return 0;
	want |= (data[0] & 1 ? 1ull << 29 : 0) | (data[0] & 2 ? 1ull << 28 : 0);
	n = data[2] | (size_t)data[3] << 8;
	n = n < size - 4 ? n : size - 4;
	ram = vfz_ram(&mem, data + 4, n);
	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++)
		peer[i] = -1;
	tbus_n = 0;
	/* guest CID 42: the seeds' packets come from it */
	if (thost_init(&h, &mem) || virtio_vsock_create(&v, &h, 42, NULL) || tvdev_probe(&d, 1))
		abort();
	tvdev_msix(&d, VSOCK_NQ + 1);
	vfz_start(&d, VSOCK_NQ, want, (uint16_t)(2u << (data[1] % 6)));
	v->active = true; /* what the worker's loop does at DRIVER_OK */
	vsock_kick(v, VSOCK_TXQ);
	events(v, ram, data + 4 + n, size - 4 - n);
	virtio_vsock_destroy(v);
	for (unsigned int i = 0; i < VIRTIO_VSOCK_MAX_CONNS; i++)
		if (peer[i] >= 0)
			close(peer[i]);
	pci_host_release(&h);
	free(ram);
	return 0;
}
