// SPDX-License-Identifier: MIT
/*
 * report_net.c - the probe report's nic= lines (firmware/abi.h):
 * parsing (bounded: the guest is untrusted), the NICs a configuration and
 * its attachments promise, the comparison and the "nics" JSON member.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/json_out.h"
#include "vmm/net/mac.h"
#include "vmm/probe/report.h"

#define NIC_FIELDS 11

/* Split line (NUL-terminated, modified) at single spaces into exactly
 * want words. */
static int nic_split(char *line, char **w, int want)
{
	int n = 0;

	for (char *c = line; n < want; n++) {
		w[n] = c;
		c = strchr(c, ' ');
		if (!c)
			break;
		*c++ = 0;
	}
	return n == want - 1 && !strchr(w[n], ' ') && *w[n] ? 0 : -EBADMSG;
}

/* A decimal without sign or garbage, at most max. */
static int nic_num(const char *w, uint64_t max, uint64_t *out)
{
	char *stop;

	if (*w < '0' || *w > '9' || strlen(w) > 20)
		return -EBADMSG;
	errno = 0;
	*out = strtoull(w, &stop, 10);
	return errno || *stop || *out > max ? -EBADMSG : 0;
}

/* "ok" or "-" */
static int nic_flag(const char *w, bool *out)
{
	*out = !strcmp(w, "ok");
	return *out || !strcmp(w, "-") ? 0 : -EBADMSG;
}

/* A word into a field: "-" is empty; too long is malformed. */
static int nic_str(const char *w, char *out, size_t cap, bool dash_empty)
{
	if (!*w || strlen(w) >= cap)
		return -EBADMSG;
	snprintf(out, cap, "%s", dash_empty && !strcmp(w, "-") ? "" : w);
	return 0;
}

/* nic6=<bdf> <link-local> <ok|-> <peer|->: for the nic= line of bdf. */
static int nic6_line(struct probe_report *r, char *line)
{
	char *w[4];

	if (nic_split(line, w, 4))
		return -EBADMSG;
	for (uint32_t i = r->n_nics; i-- > 0;) {
		struct probe_nic *n = &r->nics[i];

		if (strcmp(n->bdf, w[0]))
			continue;
		return nic_str(w[1], n->ll6, sizeof(n->ll6), false) ||
			       nic_flag(w[2], &n->ping6_ok) ||
			       nic_str(w[3], n->peer6, sizeof(n->peer6), true)
			   ? -EBADMSG
			   : 0;
	}
	return 0; /* no such NIC (or beyond the limit): ignored */
}

/* nic=<bdf> <mac> <link> <mtu> <addr/prefix|-> <router|-> <arp> <ping>
 *     <rxOk> <txOk> <echoed> */
int probe_report_net_line(struct probe_report *r, const char *key, const char *v, size_t n)
{
	char line[256], *w[NIC_FIELDS];
	struct probe_nic *c;
	uint64_t link, mtu;

	if (strcmp(key, "nic") && strcmp(key, "nic6"))
		return 0;
	if (n >= sizeof(line))
		return -EBADMSG;
	memcpy(line, v, n);
	line[n] = 0;
	for (char *p = line; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\')
			return -EBADMSG;
	if (!strcmp(key, "nic6"))
		return nic6_line(r, line);
	if (r->n_nics >= PROBE_MAX_NICS)
		return 0;
	c = &r->nics[r->n_nics];
	if (nic_split(line, w, NIC_FIELDS) || nic_str(w[0], c->bdf, sizeof(c->bdf), false) ||
	    nic_str(w[1], c->mac, sizeof(c->mac), false) || nic_num(w[2], 1, &link) ||
	    nic_num(w[3], 65535, &mtu) || nic_str(w[4], c->dhcp, sizeof(c->dhcp), true) ||
	    nic_str(w[5], c->router, sizeof(c->router), true) || nic_flag(w[6], &c->arp_ok) ||
	    nic_flag(w[7], &c->ping_ok) || nic_num(w[8], UINT64_MAX, &c->rx_ok) ||
	    nic_num(w[9], UINT64_MAX, &c->tx_ok) || nic_num(w[10], UINT64_MAX, &c->echoed))
		return -EBADMSG;
	c->link_up = link;
	c->mtu = (uint32_t)mtu;
	r->n_nics++;
	return 0;
}

static void mac_str(char out[18], const uint8_t m[6])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

void probe_report_net_expected(const struct vm_config *cfg, struct probe_report *r)
{
	for (unsigned int i = 0; i < cfg->n_nics && r->n_nics < PROBE_MAX_NICS; i++) {
		const struct vm_nic *nic = &cfg->nics[i];
		struct probe_nic *e;
		uint8_t mac[6];

		if (nic->model && !strcmp(nic->model, "e1000e"))
			continue; /* the probe guest drives virtio-net only */
		e = &r->nics[r->n_nics++];

		snprintf(e->name, sizeof(e->name), "%s", nic->name ? nic->name : "");
		if (nic->mac_set)
			memcpy(mac, nic->mac, 6);
		else
			net_mac_derive(cfg->namespace, cfg->name, nic->name, mac);
		mac_str(e->mac, mac);
		e->link_up = true;
		e->mtu = nic->mtu ? nic->mtu : 1500;
	}
}

void probe_report_net_attached(struct probe_report *r, unsigned int i, const uint8_t mac[6],
			       unsigned int mtu, const char *binding, uint32_t lease_ip,
			       unsigned int lease_prefix, bool want_dhcp)
{
	struct probe_nic *e;

	if (i >= r->n_nics)
		return;
	e = &r->nics[i];
	mac_str(e->mac, mac);
	e->mtu = mtu >= 68 && mtu <= 65535 ? mtu : 0; /* the device offers none otherwise */
	snprintf(e->binding, sizeof(e->binding), "%s", binding);
	e->want_dhcp = want_dhcp;
	e->dhcp[0] = 0;
	if (lease_ip)
		snprintf(e->dhcp, sizeof(e->dhcp), "%u.%u.%u.%u/%u", lease_ip >> 24,
			 lease_ip >> 16 & 255, lease_ip >> 8 & 255, lease_ip & 255, lease_prefix);
}

static void nic_note(FILE *diff, bool *match, const struct probe_nic *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void nic_note(FILE *diff, bool *match, const struct probe_nic *e, const char *fmt, ...)
{
	va_list ap;

	*match = false;
	if (!diff)
		return;
	fprintf(diff, "nic '%s': ", e->name);
	va_start(ap, fmt);
	vfprintf(diff, fmt, ap);
	va_end(ap);
	fputc('\n', diff);
}

bool probe_report_net_compare(const struct probe_report *exp, const struct probe_report *got,
			      FILE *diff)
{
	bool match = true;

	if (exp->n_nics != got->n_nics) {
		match = false;
		if (diff)
			fprintf(diff, "nics: %u expected, the guest reports %u\n", exp->n_nics,
				got->n_nics);
	}
	for (uint32_t i = 0; i < exp->n_nics && i < got->n_nics; i++) {
		const struct probe_nic *e = &exp->nics[i], *g = &got->nics[i];

		if (strcmp(e->mac, g->mac))
			nic_note(diff, &match, e, "mac: expected %s, guest %s", e->mac, g->mac);
		if (!g->link_up)
			nic_note(diff, &match, e, "link down");
		if (e->mtu != g->mtu)
			nic_note(diff, &match, e, "mtu: expected %u, guest %u", e->mtu, g->mtu);
		if (e->dhcp[0] && strcmp(e->dhcp, g->dhcp))
			nic_note(diff, &match, e, "dhcpAddress: expected %s, guest %s", e->dhcp,
				 g->dhcp[0] ? g->dhcp : "none");
		if (e->want_dhcp && !g->dhcp[0])
			nic_note(diff, &match, e, "no address by DHCP (%s binding)", e->binding);
		if (e->want_dhcp && g->router[0] && !g->arp_ok)
			nic_note(diff, &match, e, "router %s did not answer ARP", g->router);
		if (e->want_dhcp && (!g->rx_ok || !g->tx_ok))
			nic_note(diff, &match, e, "no frames %s", !g->rx_ok ? "received" : "sent");
	}
	return match;
}

static int nic_json(struct json_object *o, const struct probe_nic *c, const char *name, bool guest)
{
	int e = json_out_add_str(o, "name", name);

	e = e ?: json_out_add_str(o, "mac", c->mac);
	e = e ?: json_out_add_u64(o, "mtu", c->mtu);
	e = e ?: json_out_add_str(o, "dhcpAddress", c->dhcp);
	if (!guest) {
		e = e ?: json_out_add_str(o, "binding", c->binding);
		return e ?: json_out_add_bool(o, "dhcp", c->want_dhcp);
	}
	e = e ?: json_out_add_str(o, "address", c->bdf);
	e = e ?: json_out_add_str(o, "router", c->router);
	e = e ?: json_out_add_bool(o, "linkUp", c->link_up);
	e = e ?: json_out_add_bool(o, "arp", c->arp_ok);
	e = e ?: json_out_add_bool(o, "ping", c->ping_ok);
	e = e ?: json_out_add_u64(o, "rxOk", c->rx_ok);
	e = e ?: json_out_add_u64(o, "txOk", c->tx_ok);
	e = e ?: json_out_add_u64(o, "echoed", c->echoed);
	e = e ?: json_out_add_str(o, "linkLocal6", c->ll6);
	e = e ?: json_out_add_bool(o, "ping6", c->ping6_ok);
	return e ?: json_out_add_str(o, "peer6", c->peer6);
}

int probe_report_net_json(struct json_object *o, const struct probe_report *r,
			  const struct probe_report *names, bool guest)
{
	struct json_object *a = json_object_new_array();
	int e = 0;

	for (uint32_t i = 0; a && !e && i < r->n_nics; i++) {
		const struct probe_nic *c = &r->nics[i];
		const char *name = names && i < names->n_nics ? names->nics[i].name : c->name;
		struct json_object *nic = json_object_new_object();

		e = nic_json(nic, c, name, guest);
		e = e ? (json_object_put(nic), e) : json_out_append(a, nic);
	}
	if (e) {
		json_object_put(a);
		return e;
	}
	return json_out_add(o, "nics", a);
}
