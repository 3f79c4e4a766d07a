/* SPDX-License-Identifier: MIT */
/*
 * netlink.h - the few rtnetlink (NETLINK_ROUTE) requests the bridge and
 * masquerade bindings make, over a raw netlink socket (no libnl): read a
 * link's MAC/MTU, list/add/delete IPv4 addresses, find the IPv4 default
 * route, create a bridge, enslave and configure links.
 *
 * Each call sends one request and waits for its answer (an ACK, or a dump
 * ending in NLMSG_DONE); kernel errors come back as -errno. Answers are
 * parsed with every length checked. Used during setup only: the sandbox
 * forbids netlink sockets afterwards.
 */
#ifndef VMLET_NET_NETLINK_H
#define VMLET_NET_NETLINK_H

#include <stdbool.h>
#include <stdint.h>

struct nl_link {
	int index;
	uint8_t mac[6];
	unsigned int mtu;
	bool up;
};

struct nl_addr4 {
	uint32_t addr; /* host order */
	unsigned int prefix;
};

/* Open/close a NETLINK_ROUTE socket (fd, or -errno). */
int nl_open(void);
void nl_close(int nl);

/* Link by name: index, MAC, MTU, up. -ENODEV when it does not exist. */
int nl_link_get(int nl, const char *name, struct nl_link *out);

/* Up to max IPv4 addresses of a link; their count or -errno. */
int nl_addr4_list(int nl, int ifindex, struct nl_addr4 *out, unsigned int max);
int nl_addr4_add(int nl, int ifindex, const struct nl_addr4 *a);
int nl_addr4_del(int nl, int ifindex, const struct nl_addr4 *a);

/* Gateway and link of the main table's IPv4 default route; -ENOENT if none. */
int nl_route4_default(int nl, uint32_t *gw, int *ifindex);
/* Add a default route via gw on ifindex. */
int nl_route4_add_default(int nl, uint32_t gw, int ifindex);

/* Create a bridge (-EEXIST when the name is taken). */
int nl_bridge_create(int nl, const char *name);

/*
 * Change a link: master (bridge ifindex; 0 = leave), mtu (0 = leave),
 * mac (NULL = leave), up (true = set IFF_UP; false = leave).
 */
int nl_link_set(int nl, int ifindex, int master, unsigned int mtu, const uint8_t *mac, bool up);

int nl_link_del(int nl, int ifindex);

#endif /* VMLET_NET_NETLINK_H */
