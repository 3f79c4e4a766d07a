/* SPDX-License-Identifier: MIT */
/*
 * net.c - from a vm_nic to a working NIC backend (see net.h). The pod
 * plumbing (bridge, masquerade) lives in binding.c.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/log.h"
#include "vmm/net/backend.h"
#include "vmm/net/binding.h"
#include "vmm/net/mac.h"
#include "vmm/net/net.h"
#include "vmm/net/passt.h"
#include "vmm/net/pkt.h"
#include "vmm/sandbox/caps.h"
#include "vmm/vm_config.h"

static const char *const binding_names[] = {
    [VM_BIND_NONE] = "bridge", /* spec resolves the default; treat as bridge */
    [VM_BIND_BRIDGE] = "bridge", [VM_BIND_MASQUERADE] = "masquerade", [VM_BIND_PASST] = "passt",
    [VM_BIND_SRIOV] = "sriov",	 [VM_BIND_SLIRP] = "slirp",	      [VM_BIND_MACVTAP] = "macvtap",
    [VM_BIND_PLUGIN] = "plugin",
};

const char *net_mode_name(enum net_mode m)
{
	static const char *const names[] = {"tap", "bridge", "masquerade", "passt"};

	return (unsigned int)m < 4 ? names[m] : "?";
}

void net_env_detect(struct net_env *env)
{
	const char *pod_if = getenv("VMLET_POD_INTERFACE");

	memset(env, 0, sizeof(*env));
	env->in_pod = getenv("KUBERNETES_SERVICE_HOST") || (pod_if && *pod_if);
	env->pod_iface = pod_if && *pod_if ? pod_if : "eth0";
	env->resolv_conf = "/etc/resolv.conf";
	env->nft = "nft";
	env->cap_net_admin = sandbox_have_cap(CAP_NET_ADMIN);
}

int net_fail(int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(LOG_ERROR, "%s", msg);
	return err;
}

/* passt as a binding method or as KubeVirt's "passt" binding plugin */
static bool is_passt(const struct vm_nic *nic)
{
	return nic->binding == VM_BIND_PASST ||
	       (nic->binding == VM_BIND_PLUGIN && nic->binding_plugin &&
		!strcmp(nic->binding_plugin, "passt"));
}

static int validate_nic(const struct vm_nic *nic)
{
	const char *name = nic->name ? nic->name : "?";

	if (nic->model && strcmp(nic->model, "virtio") && strcmp(nic->model, "e1000e"))
		return net_fail(-ENOTSUP,
				"net: interface '%s': model '%s' is not supported (vmlet has "
				"virtio and e1000e)",
				name, nic->model);
	switch (nic->binding) {
	case VM_BIND_NONE:
	case VM_BIND_BRIDGE:
	case VM_BIND_MASQUERADE:
	case VM_BIND_PASST:
		break;
	case VM_BIND_PLUGIN:
		if (is_passt(nic))
			break;
		return net_fail(-ENOTSUP,
				"net: interface '%s': binding plugin '%s' is not supported", name,
				nic->binding_plugin ? nic->binding_plugin : "?");
	default:
		return net_fail(-ENOTSUP,
				"net: interface '%s': binding '%s' is not supported (use bridge, "
				"masquerade or passt)",
				name,
				(unsigned int)nic->binding <
					sizeof(binding_names) / sizeof(*binding_names)
				    ? binding_names[nic->binding]
				    : "?");
	}
	if (nic->network_type && !strcmp(nic->network_type, "multus") && !nic->tap)
		return net_fail(-ENOTSUP,
				"net: interface '%s': multus network '%s' is not supported (give "
				"it a tap with --tap %s=TAP)",
				name, nic->network_name ? nic->network_name : "?", name);
	return 0;
}

static bool on_pod_network(const struct vm_nic *nic)
{
	return !nic->tap && (!nic->network_type || !strcmp(nic->network_type, "pod"));
}

int net_validate(const struct vm_config *cfg)
{
	unsigned int i, pod = 0;
	int err;

	for (i = 0; i < cfg->n_nics; i++) {
		err = validate_nic(&cfg->nics[i]);
		if (err)
			return err;
		/* one pod interface, one guest address to hand out */
		if (on_pod_network(&cfg->nics[i]) && ++pod > 1)
			return net_fail(-ENOTSUP,
					"net: interface '%s': only one interface can use the pod "
					"network (give the others a tap with --tap)",
					cfg->nics[i].name ? cfg->nics[i].name : "?");
	}
	return 0;
}

/* DNS, search list, hostname and lease time shared by both DHCP bindings. */
void net_lease_common(const struct vm_config *cfg, const struct net_env *env, struct dhcp_lease *l)
{
	const char *host = cfg->hostname ? cfg->hostname : cfg->name;
	char buf[8192];
	FILE *f = env->resolv_conf ? fopen(env->resolv_conf, "re") : NULL;
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	dhcp_parse_resolv_conf(buf, l);
	snprintf(l->hostname, sizeof(l->hostname), "%s", host ? host : "");
	l->lease_secs = 86400;
}

static int attach_tap(struct net_attach *a, const struct vm_nic *nic, unsigned int n_queues)
{
	struct tap_info info;
	int err;

	err = tap_open(nic->tap, n_queues, a->be, &info);
	if (err)
		return err;
	a->n_queues = info.n_queues;
	memcpy(a->tap, info.name, IFNAMSIZ);
	if (info.created) {
		err = tap_set_up(info.name, nic->mtu);
		if (err)
			return err;
	}
	a->mtu = nic->mtu ? nic->mtu : 1500;
	log_info("net: interface '%s': tap '%s'%s", a->name, a->tap,
		 info.created ? " (created)" : "");
	return 0;
}

static int attach_passt(struct net_attach *a, const struct vm_nic *nic, const struct net_env *env)
{
	struct passt_config pc = {
	    .mtu = nic->mtu ? nic->mtu : 1500,
	    .ports = nic->ports,
	    .n_ports = nic->n_ports,
	    .binary = getenv("VMLET_PASST"),
	    /* KubeVirt forwards every port when none is listed; on a bare
	     * host that would hand the host's ports to the guest: none */
	    .all_when_none = env->in_pod,
	};
	int err = passt_create(&pc, &a->be[0]);

	if (err)
		return err;
	a->n_queues = 1;
	a->mtu = pc.mtu;
	log_info("net: interface '%s': passt", a->name);
	return 0;
}

static enum net_mode choose_mode(const struct vm_nic *nic, const struct net_env *env)
{
	if (nic->tap)
		return NET_MODE_TAP;
	if (is_passt(nic))
		return NET_MODE_PASST;
	if (!env->in_pod || !env->cap_net_admin) {
		log_info("net: interface '%s': %s binding needs a pod and CAP_NET_ADMIN; "
			 "using passt",
			 nic->name ? nic->name : "?",
			 nic->binding == VM_BIND_MASQUERADE ? "masquerade" : "bridge");
		return NET_MODE_PASST;
	}
	return nic->binding == VM_BIND_MASQUERADE ? NET_MODE_MASQUERADE : NET_MODE_BRIDGE;
}

int net_attach(const struct vm_config *cfg, unsigned int idx, unsigned int n_queues,
	       const struct net_env *env, struct net_attach *a)
{
	const struct vm_nic *nic = &cfg->nics[idx];
	int err;

	memset(a, 0, sizeof(*a));
	a->name = nic->name ? nic->name : "?";
	err = validate_nic(nic);
	if (err)
		return err;
	if (n_queues < 1)
		n_queues = 1;
	if (n_queues > TAP_MAX_QUEUES)
		n_queues = TAP_MAX_QUEUES;
	if (nic->mac_set)
		memcpy(a->mac, nic->mac, 6);
	else
		net_mac_derive(cfg->namespace, cfg->name, nic->name, a->mac);
	a->mode = choose_mode(nic, env);
	switch (a->mode) {
	case NET_MODE_TAP:
		err = attach_tap(a, nic, n_queues);
		break;
	case NET_MODE_PASST:
		err = attach_passt(a, nic, env);
		break;
	case NET_MODE_BRIDGE:
		err = binding_bridge(cfg, nic, env, n_queues, a);
		break;
	case NET_MODE_MASQUERADE:
		err = binding_masquerade(cfg, nic, env, n_queues, a);
		break;
	}
	if (err) {
		net_detach(a);
		return err;
	}
	if (a->dhcp) {
		memcpy(a->lease.client_mac, a->mac, 6);
		if (!a->lease.mtu)
			a->lease.mtu = (uint16_t)a->mtu;
	}
	return 0;
}

void net_detach(struct net_attach *a)
{
	unsigned int i;

	for (i = 0; i < TAP_MAX_QUEUES; i++) {
		net_backend_destroy(a->be[i]);
		a->be[i] = NULL;
	}
	a->n_queues = 0;
}

int net_intercept(const struct net_attach *a, const void *frame, size_t len, void *reply,
		  size_t cap)
{
	struct dhcp_request req;
	int n;

	if (!a->dhcp)
		return -1;
	if (dhcp_parse(frame, len, &req) == 0) {
		n = dhcp_build_reply(&a->lease, &req, reply, cap);
		return n < 0 ? 0 : n;
	}
	if (a->arp_gateway) {
		n = dhcp_arp_reply(&a->lease, frame, len, reply, cap);
		if (n > 0)
			return n;
	}
	return -1;
}
