/* SPDX-License-Identifier: MIT */
/*
 * virtio_net_snap.c - virtio-net in a snapshot (virtio_pci.h's snapshot
 * ops). The I/O thread is held between two turns (freeze); what it holds
 * then is per pair the receive buffers it popped and has not filled. A
 * snapshot saves the pairs in use and those buffers' heads. Restored, the
 * buffers go back to the guest empty (used length 0: Linux counts a short
 * frame and posts them again), a frame read from the backend but not yet
 * delivered and vmlet's own pending replies (DHCP) are dropped, as on a
 * wire; the backend (tap, passt) is the restoring vmlet's own. A thaw
 * after a snapshot with --resume keeps everything as it was.
 */
#include <errno.h>

#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/log.h"
#include "vmm/virtio/virtio_net_int.h"

enum { NET_SNAP_PAIRS = 1, NET_SNAP_HELD };

void virtio_net_snap_freeze(void *dev)
{
	virtio_net_io_pause(dev);
}

void virtio_net_snap_thaw(void *dev)
{
	struct virtio_net *n = dev;

	n->keep_rx = true;
	virtio_worker_activate(&n->worker);
}

int virtio_net_snap_save(void *dev, struct snap_buf *b)
{
	struct virtio_net *n = dev;
	/* a device the driver reset keeps stale RX state until its next
	 * activation forgets it: nothing is held then */
	bool live = n->vp.active &&
		    (__atomic_load_n(&n->vp.status, __ATOMIC_ACQUIRE) & VIRTIO_CONFIG_S_DRIVER_OK);
	uint32_t pairs = live ? n->active_pairs : 1;

	snap_buf_item(b, NET_SNAP_PAIRS, &pairs, sizeof(pairs));
	for (unsigned int i = 0; i < n->pairs; i++) {
		const struct net_pair *p = &n->pair[i];
		uint16_t heads[NET_RX_CHAINS];

		for (unsigned int k = 0; live && k < p->n_held; k++)
			heads[k] = p->held[k].head;
		snap_buf_item(b, NET_SNAP_HELD, heads, live ? p->n_held * sizeof(heads[0]) : 0);
	}
	return b->err;
}

int virtio_net_snap_load(void *dev, struct snap_cur *c)
{
	struct virtio_net *n = dev;
	uint32_t pairs;

	if (snap_cur_want(c, NET_SNAP_PAIRS, &pairs, sizeof(pairs)) || pairs > n->pairs)
		return -EBADMSG;
	for (unsigned int i = 0; i < n->pairs; i++) {
		struct virtq *q = virtio_pci_queue(&n->vp, 2 * i);
		struct snap_cur held;
		uint16_t head;

		if (snap_cur_want_any(c, NET_SNAP_HELD, &held) || held.left % 2 ||
		    held.left / 2 > NET_RX_CHAINS || (held.left && !q))
			return -EBADMSG;
		while (held.left) {
			snap_cur_bytes(&held, &head, sizeof(head));
			if (head >= q->size || virtq_push(q, head, 0))
				return error_errno(-EBADMSG, "snapshot: %s: bad receive buffer",
						   n->vp.name);
		}
	}
	n->restored_pairs = pairs;
	return 0;
}
