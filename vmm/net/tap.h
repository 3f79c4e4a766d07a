/* SPDX-License-Identifier: MIT */
/*
 * tap.h - the tap backend: a /dev/net/tun queue in IFF_TAP mode with a
 * 12-byte vnet header (IFF_VNET_HDR + TUNSETVNETHDRSZ), non-blocking.
 *
 * tap_open() attaches to the tap named name: an existing one (a persistent
 * tap the user made, owned by our uid or opened with CAP_NET_ADMIN), or a
 * new one the kernel creates when vmlet holds CAP_NET_ADMIN (name NULL or
 * "": the kernel picks "tapN"). A tap vmlet created is not persistent: it
 * disappears with its last fd. Queue pairs beyond the first open the same
 * name again with IFF_MULTI_QUEUE.
 */
#ifndef VMLET_NET_TAP_H
#define VMLET_NET_TAP_H

#include <net/if.h>
#include <stdbool.h>

struct net_backend;

#define TAP_MAX_QUEUES 16

struct tap_info {
	char name[IFNAMSIZ];   /* the tap's name after open */
	bool created;	       /* the kernel created it for us */
	unsigned int n_queues; /* queues opened: fewer than asked when an
				* existing tap is single-queue */
};

/*
 * Open n_queues (1..TAP_MAX_QUEUES) queues of the tap name into be[], each
 * a struct net_backend to free with net_backend_destroy(); an existing
 * single-queue tap gives one (info->n_queues says how many). Fails with
 * -EPERM (no CAP_NET_ADMIN and not the tap's owner), -EBUSY (the tap is
 * attached elsewhere)... with an error message naming the tap.
 */
int tap_open(const char *name, unsigned int n_queues, struct net_backend **be,
	     struct tap_info *info);

/* Set the link up (and its MTU when mtu != 0) through an ioctl socket. */
int tap_set_up(const char *name, unsigned int mtu);

#endif /* VMLET_NET_TAP_H */
