/* SPDX-License-Identifier: MIT */
/*
 * virtio_console_int.h - what virtio_console.c (transport, control queues)
 * and virtio_console_io.c (sockets, data queues) share. Every field below
 * the transport is touched by the device's I/O thread only, or by the
 * vCPU thread in ops->reset once that thread is paused.
 */
#ifndef VMLET_VIRTIO_CONSOLE_INT_H
#define VMLET_VIRTIO_CONSOLE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include "vmm/virtio/virtio_console.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/virtio/virtio_worker.h"

#define VCON_QUEUE_SIZE 128
#define VCON_CTRL_RX	2 /* c_ivq: device -> driver control messages */
#define VCON_CTRL_TX	3 /* c_ovq: driver -> device */

/* the control messages a port still owes the driver (bits of pending) */
#define VCON_SEND_ADD  1u
#define VCON_SEND_NAME 2u
#define VCON_SEND_OPEN 4u

struct vcon_port {
	uint32_t id; /* 1..n */
	char name[VIRTIO_CONSOLE_NAME_MAX + 1];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* "" none */
	int listen_fd, conn_fd;					/* -1 none */
	bool guest_ready; /* PORT_READY 1 seen since the last reset */
	bool guest_open;  /* the guest has the port open (PORT_OPEN 1) */
	bool rx_wait;	  /* host bytes wait for the guest's buffers */
	unsigned int pending;
	/* a transmit chain partly written to the host (tx_busy) */
	bool tx_busy;
	uint16_t tx_head;
	uint64_t tx_off, tx_len;
	unsigned int tx_n;
	struct iovec tx_iov[VCON_QUEUE_SIZE];
	/* for the metrics (any thread reads them): atomic copies */
	uint64_t st_rx_bytes, st_tx_bytes;
	bool st_guest_open, st_host_connected;
};

/* Publish p's open/connected state for the metrics (worker thread). */
static inline void vcon_publish(struct vcon_port *p)
{
	__atomic_store_n(&p->st_guest_open, p->guest_open, __ATOMIC_RELAXED);
	__atomic_store_n(&p->st_host_connected, p->conn_fd >= 0, __ATOMIC_RELAXED);
}

struct virtio_console {
	struct virtio_pci vp;
	struct virtio_worker worker;
	struct virtio_console_config cfg; /* max_nr_ports */
	bool ctrl_ready;		  /* DEVICE_READY 1 seen */
	unsigned int n_ports;
	struct vcon_port port[VIRTIO_CONSOLE_MAX_PORTS];
	struct iovec out[VCON_QUEUE_SIZE], in[VCON_QUEUE_SIZE];
};

/* Queue numbers of port id (§5.3.2: port 0 at 0/1, port n at 2n+2/2n+3). */
static inline unsigned int vcon_rxq(uint32_t id)
{
	return id ? 2 * id + 2 : 0;
}

/* The port with this id, NULL for any other (guest-given) value. */
struct vcon_port *vcon_port_by_id(struct virtio_console *c, uint32_t id);
/* Send what ports owe the driver on the control receive queue, as far as
 * it posted buffers. */
void vcon_ctrl_flush(struct virtio_console *c);

/* virtio_console_io.c */
int vcon_port_open(struct vcon_port *p, const char *prefix);
void vcon_port_close(struct vcon_port *p);
/* Serve port p's transmit (guest -> host) or receive queue. */
void vcon_port_tx(struct virtio_console *c, struct vcon_port *p);
void vcon_port_rx(struct virtio_console *c, struct vcon_port *p);
/* The worker's socket hooks (virtio_worker.h). */
unsigned int vcon_poll_fds(void *opaque, struct pollfd *pfd, unsigned int max);
void vcon_poll_events(void *opaque, const struct pollfd *pfd, unsigned int n);

#endif /* VMLET_VIRTIO_CONSOLE_INT_H */
