/* SPDX-License-Identifier: MIT */
/*
 * binding.c - bridge and masquerade bindings inside a pod's network
 * namespace (see net.h for what each promises the guest).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/util/log.h"
#include "vmm/net/binding.h"
#include "vmm/net/mac.h"
#include "vmm/net/net.h"
#include "vmm/net/netlink.h"
#include "vmm/net/tap.h"
#include "vmm/vm_config.h"

/* What the pod interface had before vmlet took it over. */
struct pod_if {
	struct nl_link link;
	struct nl_addr4 addr;
	uint32_t gw;
};

static int pod_if_read(int nl, const char *name, struct pod_if *p)
{
	int err, n, rt_if = 0;

	err = nl_link_get(nl, name, &p->link);
	if (err)
		return error_errno(err, "net: pod interface '%s'", name);
	n = nl_addr4_list(nl, p->link.index, &p->addr, 1);
	if (n < 0)
		return error_errno(n, "net: addresses of '%s'", name);
	if (n == 0)
		return net_fail(-EADDRNOTAVAIL,
				"net: pod interface '%s' has no IPv4 address (already taken by "
				"an earlier run?)",
				name);
	p->gw = 0;
	if (nl_route4_default(nl, &p->gw, &rt_if) == 0 && rt_if != p->link.index)
		p->gw = 0; /* the default route leaves through another link */
	return 0;
}

static void tap_name(char out[IFNAMSIZ], const char *prefix, const char *nic)
{
	snprintf(out, IFNAMSIZ, "%s%.*s", prefix, (int)(IFNAMSIZ - 1 - strlen(prefix)), nic);
}

/* Open (creating) the binding's tap with the pod's MTU, up. */
static int open_tap(struct net_attach *a, unsigned int n_queues, unsigned int mtu)
{
	struct tap_info info;
	int err;

	tap_name(a->tap, "vt-", a->name);
	err = tap_open(a->tap, n_queues, a->be, &info);
	if (err)
		return err;
	a->n_queues = info.n_queues;
	memcpy(a->tap, info.name, IFNAMSIZ);
	return tap_set_up(a->tap, mtu);
}

/*
 * The guest becomes the pod: it takes the pod's address and, unless
 * macAddress says otherwise, the pod interface's MAC (CNIs may filter on
 * it); the pod interface gets a stable MAC of its own.
 */
static int bridge_take_pod(int nl, const struct vm_config *cfg, const struct vm_nic *nic,
			   const struct net_env *env, const struct pod_if *pod,
			   struct net_attach *a)
{
	uint8_t pod_new_mac[6];
	int err;

	err = nl_addr4_del(nl, pod->link.index, &pod->addr);
	if (err)
		return error_errno(err, "net: remove the address of '%s'", env->pod_iface);
	if (nic->mac_set)
		return 0;
	memcpy(a->mac, pod->link.mac, 6);
	net_mac_derive(cfg->namespace, cfg->name, "vmlet-pod-interface", pod_new_mac);
	err = nl_link_set(nl, pod->link.index, 0, 0, pod_new_mac, false);
	if (err)
		return error_errno(err, "net: set the MAC of '%s'", env->pod_iface);
	return 0;
}

/* The DHCP lease of the bridge binding: the pod's address, its gateway. */
static void bridge_lease(const struct vm_config *cfg, const struct net_env *env,
			 const struct pod_if *pod, struct net_attach *a)
{
	a->dhcp = true;
	net_lease_common(cfg, env, &a->lease);
	a->lease.client_ip = pod->addr.addr;
	a->lease.netmask = dhcp_prefix_mask(pod->addr.prefix);
	a->lease.router = pod->gw;
	/* replies come from the gateway's address (renewals go there) with a
	 * MAC of our own; the real gateway answers the guest's ARP */
	a->lease.server_ip = pod->gw ? pod->gw : pod->addr.addr;
	net_mac_derive(cfg->namespace, cfg->name, "vmlet-dhcp", a->lease.server_mac);
}

int binding_bridge(const struct vm_config *cfg, const struct vm_nic *nic, const struct net_env *env,
		   unsigned int n_queues, struct net_attach *a)
{
	struct pod_if pod;
	struct nl_link br, tap;
	int nl, err;

	nl = nl_open();
	if (nl < 0)
		return nl;
	err = pod_if_read(nl, env->pod_iface, &pod);
	if (err)
		goto out;
	a->mtu = nic->mtu ? nic->mtu : pod.link.mtu;
	err = open_tap(a, n_queues, a->mtu);
	if (err)
		goto out;
	tap_name(a->bridge, "vb-", a->name);
	err = nl_bridge_create(nl, a->bridge);
	if (err && err != -EEXIST) {
		error_errno(err, "net: create bridge '%s'", a->bridge);
		goto out;
	}
	err = nl_link_get(nl, a->bridge, &br);
	if (!err)
		err = nl_link_get(nl, a->tap, &tap);
	if (err)
		goto out;

	err = bridge_take_pod(nl, cfg, nic, env, &pod, a);
	if (err)
		goto out;
	err = nl_link_set(nl, br.index, 0, a->mtu, NULL, true);
	if (!err)
		err = nl_link_set(nl, pod.link.index, br.index, 0, NULL, true);
	if (!err)
		err = nl_link_set(nl, tap.index, br.index, 0, NULL, true);
	if (err) {
		error_errno(err, "net: bridge '%s' with '%s'", env->pod_iface, a->tap);
		goto out;
	}

	bridge_lease(cfg, env, &pod, a);
	log_info("net: interface '%s': bridge binding, guest takes %u.%u.%u.%u/%u from '%s' "
		 "(tap '%s', bridge '%s')",
		 a->name, pod.addr.addr >> 24, (pod.addr.addr >> 16) & 255,
		 (pod.addr.addr >> 8) & 255, pod.addr.addr & 255, pod.addr.prefix, env->pod_iface,
		 a->tap, a->bridge);
out:
	nl_close(nl);
	return err;
}

static void sanitize(char *out, size_t cap, const char *prefix, const char *s)
{
	size_t n = (size_t)snprintf(out, cap, "%s", prefix), i;

	for (i = 0; s[i] && n + 1 < cap; i++) {
		char c = s[i];

		out[n++] =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
			? c
			: '_';
	}
	out[n] = 0;
}

static int append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= cap)
		return -ENOSPC;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len)
		return -ENOSPC;
	*len += (size_t)n;
	return 0;
}

/* Comma list of the ports of one protocol; false when there are none. */
static bool port_list(const struct vm_nic *nic, bool udp, char *out, size_t cap)
{
	size_t n = 0;
	unsigned int i;

	out[0] = 0;
	for (i = 0; i < nic->n_ports; i++) {
		bool is_udp = nic->ports[i].protocol && !strcasecmp(nic->ports[i].protocol, "UDP");

		if (is_udp != udp || !nic->ports[i].port || n + 8 >= cap)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%s%u", n ? ", " : "", nic->ports[i].port);
	}
	return n > 0;
}

int binding_nft_script(char *buf, size_t cap, const char *table, const char *pod_if,
		       const char *tap, const struct vm_nic *nic)
{
	char tcp[512], udp[512];
	size_t len = 0;
	int err = 0;

	/* "table; delete table; table {...}" replaces an earlier run's table
	 * atomically (nft -f applies a file as one transaction) */
	err |= append(buf, cap, &len, "table ip %s\ndelete table ip %s\n", table, table);
	err |= append(buf, cap, &len,
		      "table ip %s {\n"
		      "\tchain prerouting {\n"
		      "\t\ttype nat hook prerouting priority dstnat; policy accept;\n",
		      table);
	if (!nic->n_ports) {
		err |= append(buf, cap, &len,
			      "\t\tiifname \"%s\" meta l4proto { tcp, udp } dnat to 10.0.2.2\n",
			      pod_if);
	} else {
		if (port_list(nic, false, tcp, sizeof(tcp)))
			err |= append(buf, cap, &len,
				      "\t\tiifname \"%s\" tcp dport { %s } dnat to 10.0.2.2\n",
				      pod_if, tcp);
		if (port_list(nic, true, udp, sizeof(udp)))
			err |= append(buf, cap, &len,
				      "\t\tiifname \"%s\" udp dport { %s } dnat to 10.0.2.2\n",
				      pod_if, udp);
	}
	err |= append(buf, cap, &len,
		      "\t}\n"
		      "\tchain postrouting {\n"
		      "\t\ttype nat hook postrouting priority srcnat; policy accept;\n"
		      "\t\tip saddr 10.0.2.2 oifname != \"%s\" masquerade\n"
		      "\t}\n"
		      "}\n",
		      tap);
	return err ? -ENOSPC : (int)len;
}

/* Run `nft -f -` with script on its stdin. The script (a few KiB) is in
 * the pipe before nft starts, so no write can meet a closed reader. */
static int run_nft(const char *nft, const char *script, size_t len)
{
	int pfd[2], st;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return error_errno(-errno, "net: pipe");
	if (write(pfd[1], script, len) != (ssize_t)len) {
		close(pfd[0]);
		close(pfd[1]);
		return error("net: nft script does not fit a pipe");
	}
	close(pfd[1]);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		return error_errno(-errno, "net: fork");
	}
	if (pid == 0) {
		dup2(pfd[0], 0);
		execlp(nft, nft, "-f", "-", (char *)NULL);
		_exit(127);
	}
	close(pfd[0]);
	if (waitpid(pid, &st, 0) < 0)
		return error_errno(-errno, "net: wait for nft");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return net_fail(
		    -EIO, "net: nft failed (status %d%s)", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
		    WIFEXITED(st) && WEXITSTATUS(st) == 127 ? ": install nftables" : "");
	return 0;
}

/* IPv4 forwarding is per network namespace; a pod may not be allowed to
 * write it (read-only /proc/sys): then it must be set by the pod spec. */
static int enable_forwarding(void)
{
	char c = 0;
	int fd = open("/proc/sys/net/ipv4/ip_forward", O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		fd = open("/proc/sys/net/ipv4/ip_forward", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_errno(-errno, "net: /proc/sys/net/ipv4/ip_forward");
	if (read(fd, &c, 1) == 1 && c == '1')
		goto out;
	if (pwrite(fd, "1", 1, 0) != 1)
		err = net_fail(-EPERM, "net: cannot enable IPv4 forwarding: set the sysctl "
				       "net.ipv4.ip_forward=1 for the pod");
out:
	close(fd);
	return err;
}

int binding_masquerade(const struct vm_config *cfg, const struct vm_nic *nic,
		       const struct net_env *env, unsigned int n_queues, struct net_attach *a)
{
	struct nl_addr4 gw = {NET_MASQ_GATEWAY, NET_MASQ_PREFIX};
	struct nl_link pod, tap;
	char table[64], script[4096];
	int nl, err, len;

	nl = nl_open();
	if (nl < 0)
		return nl;
	err = nl_link_get(nl, env->pod_iface, &pod);
	if (err) {
		error_errno(err, "net: pod interface '%s'", env->pod_iface);
		goto out;
	}
	a->mtu = nic->mtu ? nic->mtu : pod.mtu;
	err = open_tap(a, n_queues, a->mtu);
	if (!err)
		err = nl_link_get(nl, a->tap, &tap);
	if (!err)
		err = nl_addr4_add(nl, tap.index, &gw);
	if (err) {
		error_errno(err, "net: address 10.0.2.1/24 on '%s'", a->tap);
		goto out;
	}
	err = enable_forwarding();
	if (err)
		goto out;
	sanitize(table, sizeof(table), "vmlet_", a->name);
	len = binding_nft_script(script, sizeof(script), table, env->pod_iface, a->tap, nic);
	if (len < 0) {
		err = net_fail(-ENOSPC, "net: interface '%s': too many ports", a->name);
		goto out;
	}
	err = run_nft(env->nft, script, (size_t)len);
	if (err)
		goto out;

	a->dhcp = true;
	net_lease_common(cfg, env, &a->lease);
	a->lease.client_ip = NET_MASQ_GUEST;
	a->lease.netmask = dhcp_prefix_mask(NET_MASQ_PREFIX);
	a->lease.router = NET_MASQ_GATEWAY;
	a->lease.server_ip = NET_MASQ_GATEWAY;
	memcpy(a->lease.server_mac, tap.mac, 6); /* the kernel owns 10.0.2.1 */
	log_info("net: interface '%s': masquerade binding, guest 10.0.2.2/24 via '%s' "
		 "(tap '%s', nft table '%s')",
		 a->name, env->pod_iface, a->tap, table);
out:
	nl_close(nl);
	return err;
}
