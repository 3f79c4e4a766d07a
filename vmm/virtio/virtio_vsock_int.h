/* SPDX-License-Identifier: MIT */
/*
 * virtio_vsock_int.h - what virtio_vsock.c (transport, queues, packets)
 * and virtio_vsock_conn.c (connections, host sockets) share. Everything
 * below the transport belongs to the device's I/O thread; the vCPU thread
 * only flags a reset (ops->reset, with that thread paused), and the
 * connections are dropped by the I/O thread itself.
 */
#ifndef VMLET_VIRTIO_VSOCK_INT_H
#define VMLET_VIRTIO_VSOCK_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include <linux/virtio_vsock.h>

#include "vmm/sandbox/connector.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_vsock.h"
#include "vmm/virtio/virtio_worker.h"

#define VSOCK_QUEUE_SIZE 256
#define VSOCK_RXQ	 0
#define VSOCK_TXQ	 1
#define VSOCK_EVQ	 2
#define VSOCK_NQ	 3
/* the largest payload one guest packet may carry (Linux sends <= 64 KiB) */
#define VSOCK_MAX_PKT (64u << 10)
/* resets owed for packets that belong to no connection */
#define VSOCK_RST_BACKLOG 64
#define VSOCK_LINE_MAX	  32 /* "CONNECT 4294967295\n" fits */
#define VSOCK_CONNECT_MS  1000
/* a host client's CONNECT line and the guest's answer, together (as
 * Firecracker's connect timeout: the client may retry) */
#define VSOCK_HANDSHAKE_MS 5000
/* host-initiated connections take host ports from here up */
#define VSOCK_LOCAL_PORT_BASE 0x40000000u

enum vsock_state {
	VS_FREE = 0,
	VS_LINE,	/* host client: reading "CONNECT <port>\n" */
	VS_CONNECTING,	/* host client: REQUEST owed or sent, awaiting RESPONSE */
	VS_ESTABLISHED, /* either way: the stream */
};

/* control packets a connection owes the guest (bits of pending) */
#define VS_SEND_REQUEST	 1u
#define VS_SEND_RESPONSE 2u
#define VS_SEND_CREDIT	 4u
#define VS_SEND_SHUTDOWN 8u
#define VS_SEND_RST	 16u /* then the connection is freed */

struct vsock_conn {
	enum vsock_state state;
	int fd;
	uint32_t local_port; /* the host side's port */
	uint32_t peer_port;  /* the guest's */
	unsigned int pending;
	/* guest -> host: what the host socket did not take yet */
	uint8_t *buf; /* VIRTIO_VSOCK_BUF_ALLOC bytes, allocated on demand */
	uint32_t buf_head, buf_len;
	uint32_t fwd_cnt;  /* bytes handed to the host socket */
	uint32_t fwd_sent; /* fwd_cnt as last told to the guest */
	/* host -> guest */
	uint32_t tx_cnt; /* bytes sent to the guest */
	uint32_t peer_buf_alloc, peer_fwd_cnt;
	bool guest_no_rcv, guest_no_send; /* the guest's SHUTDOWN flags */
	bool host_eof;			  /* read 0 from the host socket */
	bool host_wr_shut;		  /* shutdown(SHUT_WR) done on it */
	bool readable;			  /* poll saw the host socket readable */
	bool dying;			  /* closed; only its RST is owed */
	int64_t deadline_ms;		  /* host client: handshake done by then */
	char line[VSOCK_LINE_MAX];
	unsigned int line_len;
};

struct vsock_rst {
	uint32_t local_port, peer_port;
};

struct virtio_vsock {
	struct virtio_pci vp;
	struct virtio_worker worker;
	struct virtio_vsock_config cfg;
	uint64_t guest_cid;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* "" none */
	int listen_fd;
	struct connector connector;
	bool active;  /* the worker serves the queues (worker thread's view) */
	bool rx_wait; /* the guest posted no receive buffer: wait for a kick */
	bool tx_wait; /* transmit queue left alone until resets can be sent */
	/* the driver's reset asked for the pause the worker sees next: it
	 * drops the connections then (set by ops->reset, taken by the worker
	 * at each control request); a snapshot's pause keeps them */
	bool reset_drop;
	/* a restored device owes the guest a transport reset
	 * (virtio_vsock_snap.c) */
	bool reset_owed;
	uint32_t next_local_port;
	struct vsock_conn conn[VIRTIO_VSOCK_MAX_CONNS];
	unsigned int n_conns; /* in use (not VS_FREE) */
	struct vsock_rst rst[VSOCK_RST_BACKLOG];
	unsigned int rst_head, rst_len;
	struct iovec out[VSOCK_QUEUE_SIZE], in[VSOCK_QUEUE_SIZE], tmp[VSOCK_QUEUE_SIZE];
	/* statistics (any thread reads them) */
	/* st_resets: streams reset (not the clean close's RST) and guest
	 * connections refused */
	uint64_t st_rx_bytes, st_tx_bytes, st_resets;
};

/* virtio_vsock.c: the receive queue */
/* Send what is owed the guest (resets, control packets, host bytes) as far
 * as it posted buffers; then serve the transmit queue if it waited. */
void vsock_rx_flush(struct virtio_vsock *v);
/* Owe the guest a reset for ports with no connection (dropped when the
 * backlog is full: the transmit queue stops before that). */
void vsock_owe_rst(struct virtio_vsock *v, uint32_t local_port, uint32_t peer_port);

/* A doorbell on queue qi (worker thread). */
void vsock_kick(struct virtio_vsock *v, unsigned int qi);

/* virtio_vsock_snap.c: the snapshot ops (virtio_pci.h), and the
 * transport reset a restore owes, into the event queue's next buffer
 * (worker thread; waits for a buffer when there is none) */
void vsock_snap_freeze(void *dev);
void vsock_snap_thaw(void *dev);
int vsock_snap_save(void *dev, struct snap_buf *b);
int vsock_snap_load(void *dev, struct snap_cur *c);
void vsock_event_flush(struct virtio_vsock *v);

/* virtio_vsock_conn.c */
int vsock_listen(struct virtio_vsock *v, const char *path);
struct vsock_conn *vsock_conn_find(struct virtio_vsock *v, uint32_t local, uint32_t peer);
struct vsock_conn *vsock_conn_new(struct virtio_vsock *v, int fd, enum vsock_state st);
/* Close the host socket and free the slot (no packet). */
void vsock_conn_free(struct virtio_vsock *v, struct vsock_conn *c);
/* Reset: owe the guest an RST, close the host side now. */
void vsock_conn_reset(struct virtio_vsock *v, struct vsock_conn *c);
void vsock_conn_drop_all(struct virtio_vsock *v);
/* Both directions ended and nothing is left to forward: the clean close
 * (RST owed, host socket closed); one ended: the host hears it. */
void vsock_conn_check_done(struct vsock_conn *c);
/* The guest's packet for c (header read once into h, payload in iov). */
void vsock_conn_packet(struct virtio_vsock *v, struct vsock_conn *c,
		       const struct virtio_vsock_hdr *h, const struct iovec *iov, int n);
/* A guest REQUEST (header h) to host port dst_port from its src_port. */
void vsock_guest_connect(struct virtio_vsock *v, const struct virtio_vsock_hdr *h);
/* Host bytes the guest may take now (credit, state), 0 none. */
uint32_t vsock_conn_rx_room(const struct vsock_conn *c);
/* What poll said of c's host socket (revents), and a host client on the
 * listening socket: the loop's handlers (the fuzzer calls them too). */
void vsock_conn_event(struct virtio_vsock *v, struct vsock_conn *c, short rev);
void vsock_accept(struct virtio_vsock *v);
/* CLOCK_MONOTONIC in milliseconds. */
int64_t vsock_now_ms(void);
/* The worker's loop (virtio_worker.h turn). */
int vsock_turn(void *opaque);

#endif /* VMLET_VIRTIO_VSOCK_INT_H */
