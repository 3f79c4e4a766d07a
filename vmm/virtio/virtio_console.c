// SPDX-License-Identifier: MIT
/*
 * virtio_console.c - virtio-console with MULTIPORT (virtio_console.h): the
 * device, its config space and the control queues. The data queues and
 * the host sockets are in virtio_console_io.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/vm/device.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/virtio/virtio_console_int.h"

struct vcon_port *vcon_port_by_id(struct virtio_console *c, uint32_t id)
{
	/* ids are 1..n_ports; anything else the guest says is no port */
	return id >= 1 && id <= c->n_ports ? &c->port[id - 1] : NULL;
}

/* One control message (and the name after it) into the next c_ivq
 * buffer: false when the driver has none posted now. */
static bool vcon_ctrl_send(struct virtio_console *c, struct virtq *q, uint32_t id, uint16_t event,
			   uint16_t value, const char *name)
{
	struct virtio_console_control m = {.id = id, .event = event, .value = value};
	struct virtq_elem e = {
	    .out = c->out, .in = c->in, .cap_out = VCON_QUEUE_SIZE, .cap_in = VCON_QUEUE_SIZE};
	size_t len = 0;
	int r;

	for (;;) {
		r = virtq_pop(q, &e);
		if (r == VIRTQ_POP_EMPTY && virtq_enable_notify(q))
			continue;
		if (r != VIRTQ_POP_BAD)
			break;
		/* a chain outside RAM carries nothing: the message waits */
		if (virtq_push(q, e.head, 0)) {
			r = -EIO;
			break;
		}
	}
	if (r <= 0) {
		if (r < 0)
			virtio_pci_needs_reset(&c->vp);
		return false;
	}
	len = iov_from_buf(e.in, e.n_in, 0, &m, sizeof(m));
	if (name && len == sizeof(m))
		len += iov_from_buf(e.in, e.n_in, len, name, strlen(name));
	/* a buffer too small for the message gets what fits: the driver's
	 * own mistake, and the port still comes up without its name */
	if (virtq_push(q, e.head, (uint32_t)len))
		virtio_pci_needs_reset(&c->vp);
	return true;
}

void vcon_ctrl_flush(struct virtio_console *c)
{
	struct virtq *q = virtio_pci_queue(&c->vp, VCON_CTRL_RX);
	bool sent = false;

	if (!q || !c->ctrl_ready)
		return;
	for (unsigned int i = 0; i < c->n_ports; i++) {
		struct vcon_port *p = &c->port[i];

		while (p->pending && !q->broken) {
			unsigned int bit = p->pending & -p->pending; /* lowest first */
			uint16_t ev = bit == VCON_SEND_ADD    ? VIRTIO_CONSOLE_PORT_ADD
				      : bit == VCON_SEND_NAME ? VIRTIO_CONSOLE_PORT_NAME
							      : VIRTIO_CONSOLE_PORT_OPEN;
			/* PORT_OPEN tells the host side's state when it is sent */
			uint16_t val = bit == VCON_SEND_OPEN ? p->conn_fd >= 0 : 1;

			if (!vcon_ctrl_send(c, q, p->id, ev, val,
					    bit == VCON_SEND_NAME ? p->name : NULL))
				goto out;
			p->pending &= ~bit;
			sent = true;
		}
	}
out:
	if (sent && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&c->vp, VCON_CTRL_RX);
}

/* One driver -> device control message. */
static void vcon_ctrl_msg(struct virtio_console *c, const struct virtio_console_control *m)
{
	struct vcon_port *p;

	if (m->event == VIRTIO_CONSOLE_DEVICE_READY) {
		if (m->value != 1) {
			log_warn_once("%s: the guest's driver failed to set up", c->vp.name);
			return;
		}
		c->ctrl_ready = true;
		for (unsigned int i = 0; i < c->n_ports; i++)
			c->port[i].pending |= VCON_SEND_ADD;
		return;
	}
	p = vcon_port_by_id(c, m->id);
	if (!p) {
		log_warn_once("%s: control message %u for port %u, which is not there", c->vp.name,
			      m->event, m->id);
		return;
	}
	switch (m->event) {
	case VIRTIO_CONSOLE_PORT_READY:
		p->guest_ready = m->value == 1;
		if (p->guest_ready)
			p->pending |= VCON_SEND_NAME | VCON_SEND_OPEN;
		break;
	case VIRTIO_CONSOLE_PORT_OPEN:
		p->guest_open = p->guest_ready && m->value;
		vcon_publish(p);
		if (p->guest_open) /* host bytes may be waiting */
			vcon_port_rx(c, p);
		break;
	default: /* device -> driver events, or unknown: ignored */
		log_warn_once("%s: control message %u from the guest ignored", c->vp.name,
			      m->event);
	}
}

static void vcon_ctrl_serve(void *opaque, struct virtq *q, struct virtq_elem *e, bool good)
{
	struct virtio_console *c = opaque;
	struct virtio_console_control m;

	/* read once into host memory; a short message is ignored */
	if (good && iov_to_buf(e->out, e->n_out, 0, &m, sizeof(m)) == sizeof(m))
		vcon_ctrl_msg(c, &m);
	virtq_push(q, e->head, 0);
}

static void vcon_drain(void *opaque, unsigned int qi)
{
	struct virtio_console *c = opaque;
	struct virtq_elem e = {
	    .out = c->out, .in = c->in, .cap_out = VCON_QUEUE_SIZE, .cap_in = VCON_QUEUE_SIZE};
	struct vcon_port *p;

	if (qi == VCON_CTRL_TX) {
		virtio_pci_drain(&c->vp, qi, &e, vcon_ctrl_serve, c);
		vcon_ctrl_flush(c);
		return;
	}
	if (qi == VCON_CTRL_RX) {
		vcon_ctrl_flush(c);
		return;
	}
	/* port 0 (queues 0 and 1) is never added: its buffers stay unused */
	p = vcon_port_by_id(c, qi >= 4 ? (qi - 2) / 2 : 0);
	if (!p)
		return;
	if (qi & 1)
		vcon_port_tx(c, p);
	else
		vcon_port_rx(c, p);
}

static uint64_t vcon_features(void *dev)
{
	(void)dev;
	return 1ull << VIRTIO_CONSOLE_F_MULTIPORT;
}

static void vcon_config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	struct virtio_console *c = dev;

	virtio_pci_config_copy(&c->cfg, sizeof(c->cfg), off, data, len);
}

static int vcon_activate(void *dev, struct virtio_pci *vp, uint64_t features)
{
	struct virtio_console *c = dev;

	(void)vp;
	/* a driver without MULTIPORT would use port 0 as a console: we have
	 * no console there, so its bytes would go nowhere */
	if (!(features & (1ull << VIRTIO_CONSOLE_F_MULTIPORT)))
		log_warn_once("%s: the guest's driver does not use MULTIPORT: no ports",
			      c->vp.name);
	virtio_worker_activate(&c->worker);
	return 0;
}

/* The driver starts over: forget its state, keep the host connections. */
static void vcon_reset(void *dev)
{
	struct virtio_console *c = dev;

	virtio_worker_pause(&c->worker);
	c->ctrl_ready = false;
	for (unsigned int i = 0; i < c->n_ports; i++) {
		struct vcon_port *p = &c->port[i];

		p->guest_ready = p->guest_open = p->rx_wait = p->tx_busy = false;
		p->pending = 0;
		vcon_publish(p);
	}
}

/*
 * Snapshot: whether the driver said DEVICE_READY, and per port PORT_READY,
 * the guest's PORT_OPEN and the control messages still to send. The host
 * clients are this process's: a restored port has none, and a port the
 * guest had ready is told the host's state again (PORT_OPEN). A transmit
 * chain half written to a host client cannot be captured yet: refused
 * (-EAGAIN: the next try may find it done).
 */
enum { VCON_SNAP_CTRL = 1, VCON_SNAP_PORT };

static void vcon_freeze(void *dev)
{
	virtio_worker_pause(&((struct virtio_console *)dev)->worker);
}

static void vcon_thaw(void *dev)
{
	virtio_worker_activate(&((struct virtio_console *)dev)->worker);
}

static int vcon_save(void *dev, struct snap_buf *out)
{
	struct virtio_console *c = dev;
	uint32_t ready = c->ctrl_ready, n = c->n_ports;

	for (unsigned int i = 0; i < c->n_ports; i++)
		if (c->port[i].tx_busy)
			return error_errno(-EAGAIN,
					   "snapshot: %s: port %s is sending to its host client: "
					   "try again",
					   c->vp.name, c->port[i].name);
	snap_buf_u32(out, VCON_SNAP_CTRL);
	snap_buf_u32(out, 8);
	snap_buf_u32(out, ready);
	snap_buf_u32(out, n);
	for (unsigned int i = 0; i < c->n_ports; i++) {
		const struct vcon_port *p = &c->port[i];
		uint32_t v[3] = {p->guest_ready, p->guest_open, p->pending};

		snap_buf_item(out, VCON_SNAP_PORT, v, sizeof(v));
	}
	return out->err;
}

static int vcon_load(void *dev, struct snap_cur *c)
{
	struct virtio_console *con = dev;
	uint32_t ctrl[2], v[VIRTIO_CONSOLE_MAX_PORTS][3];
	const uint32_t all = VCON_SEND_ADD | VCON_SEND_NAME | VCON_SEND_OPEN;

	if (snap_cur_want(c, VCON_SNAP_CTRL, ctrl, sizeof(ctrl)) || ctrl[0] > 1 ||
	    ctrl[1] != con->n_ports)
		return -EBADMSG;
	for (unsigned int i = 0; i < con->n_ports; i++)
		if (snap_cur_want(c, VCON_SNAP_PORT, v[i], sizeof(v[i])) || v[i][0] > 1 ||
		    v[i][1] > 1 || (v[i][2] & ~all))
			return -EBADMSG;
	con->ctrl_ready = ctrl[0];
	for (unsigned int i = 0; i < con->n_ports; i++) {
		struct vcon_port *p = &con->port[i];

		p->guest_ready = v[i][0];
		p->guest_open = v[i][1];
		p->pending = v[i][2] | (p->guest_ready ? VCON_SEND_OPEN : 0);
		vcon_publish(p);
	}
	return 0;
}

static const struct virtio_dev_ops virtio_console_ops = {
    .device_id = VIRTIO_ID_CONSOLE,
    .class_code = 0x078000, /* simple communication controller, other */
    .features = vcon_features,
    .config_read = vcon_config_read,
    .activate = vcon_activate,
    .reset = vcon_reset,
    .freeze = vcon_freeze,
    .thaw = vcon_thaw,
    .save = vcon_save,
    .load = vcon_load,
};

static bool vcon_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > VIRTIO_CONSOLE_NAME_MAX || s[0] == '.')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int vcon_ports(struct virtio_console *c, const char *const *names, unsigned int n,
		      const char *prefix)
{
	int r;

	for (unsigned int i = 0; i < VIRTIO_CONSOLE_MAX_PORTS; i++)
		c->port[i].listen_fd = c->port[i].conn_fd = -1;
	if (!n || n > VIRTIO_CONSOLE_MAX_PORTS)
		return error_errno(-EINVAL, "virtio-console: %u ports (1..%u)", n,
				   VIRTIO_CONSOLE_MAX_PORTS);
	for (unsigned int i = 0; i < n; i++) {
		struct vcon_port *p = &c->port[i];

		if (!vcon_name_ok(names[i]))
			return error_errno(-EINVAL, "virtio-console: bad port name '%s'", names[i]);
		p->id = i + 1;
		strcpy(p->name, names[i]);
		c->n_ports++;
		r = prefix ? vcon_port_open(p, prefix) : 0;
		if (r)
			return r;
	}
	c->cfg.max_nr_ports = n + 1; /* port 0 unused */
	return 0;
}

static void vcon_read_counters(void *opaque, struct device_counters *dc)
{
	struct vcon_port *p = opaque;

	dc->rx_bytes = __atomic_load_n(&p->st_rx_bytes, __ATOMIC_RELAXED);
	dc->tx_bytes = __atomic_load_n(&p->st_tx_bytes, __ATOMIC_RELAXED);
	dc->channel_guest_open = __atomic_load_n(&p->st_guest_open, __ATOMIC_RELAXED);
	dc->channel_host_connected = __atomic_load_n(&p->st_host_connected, __ATOMIC_RELAXED);
}

static void vcon_free(struct virtio_console *c)
{
	for (unsigned int i = 0; i < c->n_ports; i++)
		vcon_port_close(&c->port[i]);
	free(c);
}

int virtio_console_create(struct virtio_console **out, struct pci_host *host,
			  const char *const *names, unsigned int n, const char *prefix)
{
	struct virtio_console *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = vcon_ports(c, names, n, prefix);
	if (r)
		goto fail;
	r = virtio_pci_init(&c->vp, host, "virtio-console", &virtio_console_ops, c, 2 * (n + 2),
			    VCON_QUEUE_SIZE, sizeof(c->cfg));
	if (r)
		goto fail;
	c->worker = (struct virtio_worker){.vp = &c->vp,
					   .nq = 2 * (n + 2),
					   .drain = vcon_drain,
					   .poll_fds = vcon_poll_fds,
					   .poll_events = vcon_poll_events,
					   .opaque = c};
	/* the net-io role: socket I/O with sendmsg/recvmsg, accept4 */
	r = virtio_worker_start(&c->worker, THREAD_NET_IO, "vmlet-console");
	if (r) {
		virtio_pci_release(&c->vp);
		goto fail;
	}
	for (unsigned int i = 0; i < n; i++) {
		r = device_add_counters(host->vm, "channel", c->port[i].name, vcon_read_counters,
					&c->port[i]);
		if (r) {
			virtio_console_destroy(c);
			return error_errno(r, "virtio-console: cannot register its counters");
		}
	}
	*out = c;
	return 0;
fail:
	vcon_free(c);
	return error_errno(r, "virtio-console: cannot create the device");
}

void virtio_console_destroy(struct virtio_console *c)
{
	if (!c)
		return;
	virtio_pci_release(&c->vp);
	virtio_worker_stop(&c->worker);
	vcon_free(c);
}

struct virtio_pci *virtio_console_pci(struct virtio_console *c)
{
	return &c->vp;
}

const char *virtio_console_port_path(const struct virtio_console *c, unsigned int i)
{
	return i < c->n_ports && c->port[i].path[0] ? c->port[i].path : NULL;
}
