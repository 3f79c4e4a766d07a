/* SPDX-License-Identifier: MIT */
/*
 * admit_net.c - KubeVirt's network rules (spec/admit.h): Validator.Validate
 * and ValidateCreation of pkg/network/admitter/ (netsource.go, netiface.go,
 * binding.go, passt.go, discontinued.go; one binding per interface stays in
 * resolve_validate.c). Feature-gate rules (passtBinding, portRanges, bridge
 * on the pod network, DRA) are cluster settings and not checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/admit.h"

static const char *ifp(const struct admit *a, unsigned int i, const char *field)
{
	return admit_path(a, "domain.devices.interfaces[%u]%s%s", i, *field ? "." : "", field);
}

static void check_networks(const struct admit *a, const struct admit_ix *nets,
			   const struct admit_ix *ifs)
{
	const struct node *seq = node_get(a->spec, "networks"), *n, *m;
	unsigned int i, pods = 0, mdef = 0, kinds;

	for (i = 0; node_is_seq(seq) && i < seq->n; i++) {
		n = seq->items[i];
		m = node_get(n, "multus");
		pods += !node_is_null(node_get(n, "pod"));
		mdef += !node_is_null(m) && node_bval(node_get(m, "default"), false);
		kinds = !node_is_null(node_get(n, "pod")) + !node_is_null(m) +
			!node_is_null(node_get(n, "resourceClaim"));
		if (kinds != 1)
			admit_err(a, n, admit_path(a, "networks[%u]", i),
				  kinds ? "should have only one network type"
					: "should have a network type");
	}
	if (pods > 1)
		admit_err(a, seq, admit_path(a, "interfaces"),
			  "more than one interface is connected to a pod network in %s",
			  admit_path(a, "interfaces"));
	if (mdef > 1)
		admit_err(a, seq, admit_path(a, "networks"),
			  "Multus CNI should only have one default network");
	if (pods && mdef)
		admit_err(a, seq, admit_path(a, "networks"),
			  "Pod network cannot be defined when Multus default network is defined");
	for (i = 0; node_is_seq(seq) && i < seq->n; i++) {
		m = node_get(seq->items[i], "multus");
		if (!node_is_null(m) && !*resolve_str(node_get(m, "networkName"))) {
			admit_err(a, m, admit_path(a, "networks[%u]", i),
				  "CNI delegating plugin must have a networkName");
			break;
		}
	}
	for (i = 0; i < nets->n; i++) {
		n = node_get(seq->items[i], "name");
		if (nets->first[i] != i)
			admit_err(
			    a, n, admit_path(a, "networks[%u].name", i),
			    "Network with name \"%s\" already exists, every network must have a "
			    "unique name",
			    resolve_str(n));
		if (!admit_lookup(ifs, resolve_str(n)))
			admit_err(a, n, admit_path(a, "networks[%u].name", i), "%s '%s' not found.",
				  admit_path(a, "networks[%u].name", i), resolve_str(n));
	}
}

static void check_state(const struct admit *a, const struct node *f, unsigned int i,
			const struct node *dflt)
{
	const struct node *sn = node_get(f, "state");
	const char *s = resolve_str(sn), *name = resolve_str(node_get(f, "name"));

	if (*s && strcmp(s, "absent") && strcmp(s, "down") && strcmp(s, "up"))
		admit_err(a, sn, ifp(a, i, "state"),
			  "logical %s interface state value is unsupported: %s", name, s);
	if (!node_is_null(node_get(f, "sriov")) && (!strcmp(s, "down") || !strcmp(s, "up")))
		admit_err(a, sn, ifp(a, i, "state"),
			  "\"%s\" interface's state \"%s\" is not supported for SR-IOV NICs", name,
			  s);
	if (strcmp(s, "absent"))
		return;
	if (node_is_null(node_get(f, "bridge")))
		admit_err(a, sn, ifp(a, i, "state"),
			  "\"%s\" interface's state \"%s\" is supported only for bridge binding",
			  name, s);
	if (dflt && strcmp(resolve_str(node_get(dflt, "name")), name) == 0)
		admit_err(a, sn, ifp(a, i, "state"),
			  "\"%s\" interface's state \"%s\" is not supported on default networks",
			  name, s);
}

/* Go's net.ParseMAC: 6, 8 or 20 groups of two hex digits split by ':' or
 * '-', or 3, 4 or 10 groups of four split by '.'. The octet count, or 0. */
static unsigned int mac_octets(const char *s)
{
	size_t len = strlen(s), i, group;
	char sep;

	if (len < 14)
		return 0;
	sep = s[2] == ':' || s[2] == '-' ? s[2] : s[4] == '.' ? '.' : 0;
	group = sep == '.' ? 4 : 2;
	if (!sep || (len + 1) % (group + 1))
		return 0;
	for (i = 0; i < len; i++) {
		if ((i + 1) % (group + 1) == 0) {
			if (s[i] != sep)
				return 0;
		} else if (!strchr("0123456789abcdefABCDEF", s[i])) {
			return 0;
		}
	}
	i = (len + 1) / (group + 1) * (group / 2);
	return i == 6 || i == 8 || i == 20 ? (unsigned int)i : 0;
}

static bool pci_ok(const char *s)
{
	static const char shape[] = "xxxx:xx:xx.f";
	unsigned int i;

	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (i = 0; shape[i]; i++)
		if (shape[i] == 'x'   ? !strchr("0123456789abcdefABCDEF", s[i])
		    : shape[i] == 'f' ? s[i] < '0' || s[i] > '7'
				      : s[i] != shape[i])
			return false;
	return true;
}

static void check_ports(const struct admit *a, const struct node *f, unsigned int i)
{
	const struct node *ports = node_get(f, "ports"), *p, *pn;
	struct admit_ix names;
	const char *name, *proto;
	long long port = 0;
	unsigned int j;

	admit_index(a, ports, "name", &names);
	for (j = 0; node_is_seq(ports) && j < ports->n; j++) {
		p = ports->items[j];
		name = resolve_str(node_get(p, "name"));
		if (*name && names.first[j] != j)
			admit_err(
			    a, node_get(p, "name"),
			    admit_path(a, "domain.devices.interfaces[%u].ports[%u].name", i, j),
			    "Duplicate name of the port: %s", name);
		pn = node_get(p, "port");
		port = 0;
		if (pn)
			node_ival(pn, -2147483648LL, 2147483647LL, &port);
		if (port == 0)
			admit_err(
			    a, pn ? pn : p,
			    admit_path(a, "domain.devices.interfaces[%u].ports[%u].port", i, j),
			    "Port field is mandatory.");
		if (port < 0 || port >= 65536)
			admit_err(
			    a, pn,
			    admit_path(a, "domain.devices.interfaces[%u].ports[%u].port", i, j),
			    "Port field must be in range 0 < x < 65536.");
		proto = resolve_str(node_get(p, "protocol"));
		if (*proto && strcmp(proto, "TCP") && strcmp(proto, "UDP"))
			admit_err(
			    a, node_get(p, "protocol"),
			    admit_path(a, "domain.devices.interfaces[%u].ports[%u].protocol", i, j),
			    "Unknown protocol, only TCP or UDP allowed");
	}
}

static void check_dhcp(const struct admit *a, const struct node *f, unsigned int i)
{
	const struct node *dh = node_get(f, "dhcpOptions"), *po = node_get(dh, "privateOptions");
	const struct node *ntp = node_get(dh, "ntpServers");
	bool seen[256] = {false}, dup = false;
	unsigned int j, a4[4];
	long long opt;
	char tail;

	if (node_is_null(dh))
		return;
	for (j = 0; node_is_seq(po) && j < po->n; j++) {
		opt = -1;
		node_ival(node_get(po->items[j], "option"), -2147483648LL, 2147483647LL, &opt);
		if (opt >= 0 && opt < 256) {
			dup |= seen[opt];
			seen[opt] = true;
		}
	}
	if (dup)
		admit_err(a, po, a->pfx,
			  "Found Duplicates: you have provided duplicate DHCPPrivateOptions");
	for (j = 0; node_is_seq(po) && j < po->n; j++) {
		opt = -1;
		node_ival(node_get(po->items[j], "option"), -2147483648LL, 2147483647LL, &opt);
		if (opt < 224 || opt > 254)
			admit_err(
			    a, po->items[j], a->pfx,
			    "provided DHCPPrivateOptions are out of range, must be in range 224 "
			    "to 254");
	}
	for (j = 0; node_is_seq(ntp) && j < ntp->n; j++)
		if (sscanf(resolve_str(ntp->items[j]), "%3u.%3u.%3u.%3u%c", &a4[0], &a4[1], &a4[2],
			   &a4[3], &tail) != 4 ||
		    a4[0] > 255 || a4[1] > 255 || a4[2] > 255 || a4[3] > 255)
			admit_err(a, ntp->items[j],
				  admit_path(
				      a, "domain.devices.interfaces[%u].dhcpOptions.ntpServers[%u]",
				      i, j),
				  "NTP servers must be a list of valid IPv4 addresses.");
}

static bool name_format_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", *s))
			return false;
	return true;
}

static void check_binding(const struct admit *a, const struct node *f, unsigned int i,
			  const struct node *net)
{
	static const char *const gone[][2] = {{"slirp", "Slirp interface support"},
					      {"passt", "Passt network binding"},
					      {"macvtap", "Macvtap network binding"}};
	bool pod = !node_is_null(node_get(net, "pod"));
	unsigned int k;

	if (!node_is_null(node_get(f, "masquerade")) && !pod)
		admit_err(a, node_get(f, "name"), ifp(a, i, "name"),
			  "Masquerade interface only implemented with pod network");
	if (!node_is_null(node_get(f, "masquerade")) &&
	    strcmp(resolve_str(node_get(f, "macAddress")), "02:00:00:00:00:00") == 0)
		admit_err(a, node_get(f, "macAddress"), ifp(a, i, "macAddress"),
			  "The requested MAC address is reserved for the in-pod bridge. Please "
			  "choose another one.");
	if (!node_is_null(node_get(f, "passtBinding")) && !pod)
		admit_err(a, node_get(f, "name"), ifp(a, i, "name"),
			  "PasstBinding interface only implemented with pod network");
	for (k = 0; k < 3; k++)
		if (!node_is_null(node_get(f, gone[k][0])))
			admit_err(a, node_get(f, gone[k][0]), ifp(a, i, gone[k][0]),
				  "%s has been discontinued since v1.3", gone[k][1]);
}

static void check_fields(const struct admit *a, const struct node *f, unsigned int i,
			 const struct node *net)
{
	static const char *const models[] = {"e1000", "e1000e",	 "igb",	   "ne2k_pci",
					     "pcnet", "rtl8139", "virtio", NULL};
	const char *model = resolve_str(node_get(f, "model"));
	const char *mac = resolve_str(node_get(f, "macAddress"));
	const char *pci = resolve_str(node_get(f, "pciAddress"));
	unsigned int k, oct;
	bool ok = false;

	if (!name_format_ok(resolve_str(node_get(f, "name"))))
		admit_err(a, node_get(f, "name"), ifp(a, i, "name"),
			  "Network interface name can only contain alphabetical characters, "
			  "numbers, dashes (-) or underscores (_)");
	for (k = 0; models[k]; k++)
		ok |= strcmp(models[k], model) == 0;
	if (*model && !ok)
		admit_err(a, node_get(f, "model"), ifp(a, i, "model"),
			  "interface %s uses model %s that is not supported.", ifp(a, i, "name"),
			  model);
	oct = *mac ? mac_octets(mac) : 6;
	if (oct == 0 || oct > 6)
		admit_err(a, node_get(f, "macAddress"), ifp(a, i, "macAddress"),
			  "interface %s has %s MAC address (%s).", ifp(a, i, "name"),
			  oct ? "too long" : "malformed", mac);
	if (*pci && !pci_ok(pci))
		admit_err(a, node_get(f, "pciAddress"), ifp(a, i, "pciAddress"),
			  "interface %s has malformed PCI address (%s).", ifp(a, i, "name"), pci);
	if (!node_is_null(node_get(net, "pod")) && node_get(f, "ports"))
		check_ports(a, f, i);
	check_dhcp(a, f, i);
}

void admit_net(const struct admit *a)
{
	const struct node *ifs = node_path(a->dom, "devices.interfaces"), *f, *net, *dflt = NULL;
	const struct node *nets = node_get(a->spec, "networks");
	struct admit_ix ni, ii;
	unsigned int i;

	admit_index(a, nets, "name", &ni);
	admit_index(a, ifs, "name", &ii);
	check_networks(a, &ni, &ii);
	for (i = 0; node_is_seq(nets) && i < nets->n && !dflt; i++)
		if (!node_is_null(node_get(nets->items[i], "pod")) ||
		    node_bval(node_path(nets->items[i], "multus.default"), false))
			dflt = nets->items[i];
	for (i = 0; i < ii.n; i++) {
		f = ifs->items[i];
		net = admit_lookup(&ni, resolve_str(node_get(f, "name")));
		check_state(a, f, i, dflt);
		check_binding(a, f, i, net);
		if (ii.first[i] != i)
			admit_err(a, node_get(f, "name"), ifp(a, i, "name"),
				  "Only one interface can be connected to one specific network");
		if (!net)
			admit_err(a, node_get(f, "name"), ifp(a, i, "name"), "%s '%s' not found.",
				  ifp(a, i, "name"), resolve_str(node_get(f, "name")));
		check_fields(a, f, i, net);
	}
}
