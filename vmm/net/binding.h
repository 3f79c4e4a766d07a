/* SPDX-License-Identifier: MIT */
/*
 * binding.h - the pod-side plumbing of the bridge and masquerade bindings
 * (what they do is described in net.h). Internal to vmm/net/.
 */
#ifndef VMLET_NET_BINDING_H
#define VMLET_NET_BINDING_H

#include <stddef.h>

struct net_attach;
struct net_env;
struct vm_config;
struct vm_nic;
struct dhcp_lease;

/* Fill a (tap backends, lease, mtu); a->mac holds the configured/derived
 * MAC on entry (bridge may replace it with the pod interface's). */
int binding_bridge(const struct vm_config *cfg, const struct vm_nic *nic, const struct net_env *env,
		   unsigned int n_queues, struct net_attach *a);
int binding_masquerade(const struct vm_config *cfg, const struct vm_nic *nic,
		       const struct net_env *env, unsigned int n_queues, struct net_attach *a);

/* Log an error message (error level) and return err (a -errno). */
int net_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* DNS and search list from env->resolv_conf, hostname, lease time. */
void net_lease_common(const struct vm_config *cfg, const struct net_env *env, struct dhcp_lease *l);

/*
 * The nftables script of the masquerade binding for table, the pod
 * interface, the tap and the forwarded ports (all TCP/UDP when none).
 * Returns its length, or -ENOSPC.
 */
int binding_nft_script(char *buf, size_t cap, const char *table, const char *pod_if,
		       const char *tap, const struct vm_nic *nic);

#endif /* VMLET_NET_BINDING_H */
