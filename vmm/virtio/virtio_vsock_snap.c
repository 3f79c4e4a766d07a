// SPDX-License-Identifier: MIT
/*
 * virtio_vsock_snap.c - virtio-vsock in a snapshot (virtio_pci.h's
 * snapshot ops, docs/snapshot.md).
 *
 * Connections cannot move: their host ends are this vmlet's sockets. What
 * QEMU's vhost-vsock does on a migration is done here too: the transport
 * (its queues' registers and indices, virtio_pci_snap.c) is saved, and the
 * restored device sends the guest VIRTIO_VSOCK_EVENT_TRANSPORT_RESET on
 * the event queue (virtio 1.2 §5.10.6.6) once it runs again: the driver
 * drops the connections it had (its sockets get ECONNRESET), reads the
 * CID again, and its listening sockets stay, so host clients connect anew.
 *
 * freeze holds the worker between two turns without dropping anything (a
 * snapshot with --resume goes on with every connection): the worker keeps
 * reading host clients' lines and sockets' states while held, never a
 * queue, and pops nothing it does not complete in the same turn, so the
 * indices saved and guest memory agree.
 */
#include <endian.h>
#include <errno.h>

#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"
#include "vmm/virtio/virtio_vsock_int.h"

enum { VSOCK_SNAP_CID = 1 };

/* A pause without reset_drop: the worker keeps the connections. */
void vsock_snap_freeze(void *dev)
{
	struct virtio_vsock *v = dev;

	virtio_worker_pause(&v->worker);
}

void vsock_snap_thaw(void *dev)
{
	struct virtio_vsock *v = dev;

	virtio_worker_activate(&v->worker);
}

int vsock_snap_save(void *dev, struct snap_buf *b)
{
	struct virtio_vsock *v = dev;

	snap_buf_item(b, VSOCK_SNAP_CID, &v->guest_cid, sizeof(v->guest_cid));
	if (v->n_conns)
		log_info("snapshot: %s: %u connections are not in it (a restore resets them)",
			 v->vp.name, v->n_conns);
	return b->err;
}

int vsock_snap_load(void *dev, struct snap_cur *c)
{
	struct virtio_vsock *v = dev;
	uint64_t cid;

	if (snap_cur_want(c, VSOCK_SNAP_CID, &cid, sizeof(cid)) || c->left)
		return -EBADMSG;
	if (cid != v->guest_cid)
		return error_errno(-EBADMSG, "restore: %s: guest CID %llu, the config's is %llu",
				   v->vp.name, (unsigned long long)cid,
				   (unsigned long long)v->guest_cid);
	/* a driver that had started is told its connections are gone */
	if (__atomic_load_n(&v->vp.status, __ATOMIC_ACQUIRE) & VIRTIO_CONFIG_S_DRIVER_OK) {
		v->reset_owed = true;
		log_info("restore: %s: the guest's connections are reset (transport reset event)",
			 v->vp.name);
	}
	return 0;
}

void vsock_event_flush(struct virtio_vsock *v)
{
	const struct virtio_vsock_event ev = {.id = htole32(VIRTIO_VSOCK_EVENT_TRANSPORT_RESET)};
	struct virtq *q = virtio_pci_queue(&v->vp, VSOCK_EVQ);
	struct virtq_elem e;
	bool done = false;
	int r;

	while (v->reset_owed && q && !q->broken) {
		e = (struct virtq_elem){.out = v->out,
					.in = v->in,
					.cap_out = VSOCK_QUEUE_SIZE,
					.cap_in = VSOCK_QUEUE_SIZE};
		r = virtq_pop(q, &e);
		if (r == VIRTQ_POP_EMPTY && virtq_enable_notify(q))
			continue;
		if (r == VIRTQ_POP_EMPTY)
			break; /* sent once the driver posts a buffer (its kick) */
		if (r < 0) {
			virtio_pci_needs_reset(&v->vp);
			break;
		}
		/* outside RAM or too small: returned unused, the next one */
		if (r == VIRTQ_POP_OK && e.in_bytes >= sizeof(ev)) {
			iov_from_buf(e.in, e.n_in, 0, &ev, sizeof(ev));
			v->reset_owed = false;
		}
		if (virtq_push(q, e.head, v->reset_owed ? 0 : (uint32_t)sizeof(ev)))
			virtio_pci_needs_reset(&v->vp);
		done = true;
	}
	if (done && q && virtq_should_notify(q))
		virtio_pci_queue_interrupt(&v->vp, VSOCK_EVQ);
}
