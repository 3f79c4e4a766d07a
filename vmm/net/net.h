/* SPDX-License-Identifier: MIT */
/*
 * net.h - a VM interface (struct vm_nic) made real: its MAC, its MTU, the
 * backend(s) its frames go to, and whether vmlet answers its DHCP.
 *
 * What each KubeVirt binding means here:
 *
 *   --tap / nic->tap   the named tap (existing, or created with
 *                      CAP_NET_ADMIN); the user owns the rest, no DHCP.
 *   bridge (in a pod)  the guest takes the pod's IPv4 address: vmlet moves
 *                      the address off the pod interface, bridges that
 *                      interface with a new tap, gives the guest the pod
 *                      interface's MAC (the pod interface gets a derived
 *                      one) and answers the guest's DHCP itself with the
 *                      pod's address, gateway, /etc/resolv.conf DNS and
 *                      search list, MTU and hostname.
 *   masquerade (pod)   the guest gets 10.0.2.2/24 (gateway 10.0.2.1 on the
 *                      tap) from vmlet's DHCP; its traffic is NATed out of
 *                      the pod interface with nftables (`nft`), and the
 *                      interface's `ports` (all TCP/UDP ports when none are
 *                      listed, as in KubeVirt) are forwarded to the guest.
 *   passt              Debian's passt, supervised (passt.h); passt answers
 *                      DHCP with the namespace's own addresses and forwards
 *                      the interface's `ports` (in a pod, all TCP and UDP
 *                      ports when none are listed, as in KubeVirt).
 *
 * Pod or not: vmlet is "in a pod" when KUBERNETES_SERVICE_HOST or
 * VMLET_POD_INTERFACE is set; the pod interface is VMLET_POD_INTERFACE,
 * else eth0. Outside a pod, and without CAP_NET_ADMIN anywhere, bridge and
 * masquerade fall back to passt (which gives the guest the host's
 * connectivity the way the pod bindings give it the pod's) and say so.
 *
 * Models other than virtio and e1000e (vmm/nic/e1000e.h) and the bindings sriov, macvtap, slirp and
 * binding plugins other than "passt" are refused with an error naming the
 * interface; so is a second interface on the pod network.
 *
 * net_attach() runs during setup (it forks, execs `nft`, opens netlink and
 * tap fds): before the sandbox. The pod-side changes are not undone by
 * net_detach(): the pod's network namespace ends with the pod, and a new
 * attach replaces what an earlier one left.
 */
#ifndef VMLET_NET_NET_H
#define VMLET_NET_NET_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/net/dhcp.h"
#include "vmm/net/tap.h"

struct net_backend;
struct vm_config;

enum net_mode { NET_MODE_TAP = 0, NET_MODE_BRIDGE, NET_MODE_MASQUERADE, NET_MODE_PASST };

/* KubeVirt's masquerade addressing (vmNetworkCIDR default 10.0.2.0/24) */
#define NET_MASQ_GATEWAY 0x0a000201 /* 10.0.2.1 */
#define NET_MASQ_GUEST	 0x0a000202 /* 10.0.2.2 */
#define NET_MASQ_PREFIX	 24

struct net_attach {
	const char *name; /* the interface name (borrowed from the config) */
	enum net_mode mode;
	uint8_t mac[6];	       /* the guest's MAC */
	unsigned int mtu;      /* the guest's MTU (virtio-net config, DHCP) */
	unsigned int n_queues; /* queue pairs = backends */
	struct net_backend *be[TAP_MAX_QUEUES];
	bool dhcp; /* vmlet answers DHCP (and ARP for the gateway
		    * when arp_gateway) with lease */
	bool arp_gateway;
	struct dhcp_lease lease;
	char tap[IFNAMSIZ];    /* tap name (tap/bridge/masquerade) */
	char bridge[IFNAMSIZ]; /* bridge binding */
};

/* Environment-derived knobs, separated so tests can set them directly. */
struct net_env {
	bool in_pod;
	bool cap_net_admin;
	const char *pod_iface;	 /* "eth0" */
	const char *resolv_conf; /* "/etc/resolv.conf" */
	const char *nft;	 /* "nft" */
};

/* Read the environment (KUBERNETES_SERVICE_HOST, VMLET_POD_INTERFACE,
 * the effective CAP_NET_ADMIN). */
void net_env_detect(struct net_env *env);

/* Refuse unsupported models and bindings: 0 or -ENOTSUP with a message
 * naming the interface. Checks every NIC of cfg. */
int net_validate(const struct vm_config *cfg);

/*
 * Attach cfg->nics[idx] with up to n_queues queue pairs (the backend may
 * give fewer: passt has one; check a->n_queues). Fills *a; on failure
 * everything attached so far is released.
 */
int net_attach(const struct vm_config *cfg, unsigned int idx, unsigned int n_queues,
	       const struct net_env *env, struct net_attach *a);
void net_detach(struct net_attach *a);

/*
 * The guest TX hook: a frame (no vnet header) the guest sent. When vmlet
 * answers it (DHCP; ARP for the gateway), the reply is written to reply
 * and its length returned; 0 means "consumed, no reply" (DHCP not for
 * us); -1 means "not vmlet's: send it to the backend".
 */
int net_intercept(const struct net_attach *a, const void *frame, size_t len, void *reply,
		  size_t cap);

const char *net_mode_name(enum net_mode m);

#endif /* VMLET_NET_NET_H */
