/* SPDX-License-Identifier: MIT */
/*
 * dhcp.c - DHCP responder and gateway ARP helper (see dhcp.h).
 *
 * BOOTP message layout (RFC 2131 §2, figure 1): op, htype, hlen, hops, xid,
 * secs, flags, ciaddr, yiaddr, siaddr, giaddr, chaddr[16], sname[64],
 * file[128], then the magic cookie 99.130.83.99 and the options (RFC 2132).
 */
#include <errno.h>
#include <string.h>

#include "vmm/net/dhcp.h"
#include "vmm/net/pkt.h"

#define BOOTP_FIXED	    236
#define BOOTP_MIN	    300 /* RFC 1542 §3.5: minimum BOOTP message size */
#define BOOTREQUEST	    1
#define BOOTREPLY	    2
#define DHCP_SERVER_PORT    67
#define DHCP_CLIENT_PORT    68
#define DHCP_DEFAULT_LEASE  86400
#define DHCP_FLAG_BROADCAST 0x8000

/* Offsets inside the BOOTP message */
#define B_OP	 0
#define B_HTYPE	 1
#define B_HLEN	 2
#define B_XID	 4
#define B_FLAGS	 10
#define B_CIADDR 12
#define B_YIADDR 16
#define B_CHADDR 28
#define B_COOKIE 236

enum {
	OPT_PAD = 0,
	OPT_NETMASK = 1,
	OPT_ROUTER = 3,
	OPT_DNS = 6,
	OPT_HOSTNAME = 12,
	OPT_DOMAIN = 15,
	OPT_MTU = 26,
	OPT_BROADCAST = 28,
	OPT_REQ_IP = 50,
	OPT_LEASE = 51,
	OPT_MSG_TYPE = 53,
	OPT_SERVER_ID = 54,
	OPT_T1 = 58,
	OPT_T2 = 59,
	OPT_SEARCH = 119,
	OPT_CLASSLESS_ROUTES = 121,
	OPT_END = 255,
};

static const uint8_t cookie[4] = {99, 130, 83, 99};
static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* Locate the UDP payload of an IPv4/UDP frame; -EINVAL if malformed. */
static int udp4_payload(const uint8_t *f, size_t len, uint16_t dport, const uint8_t **ip_out,
			const uint8_t **pl, size_t *pl_len)
{
	const struct pkt_ip4 *ip;
	const struct pkt_udp *udp;
	size_t ihl, tot, ulen;

	if (len < PKT_ETH_HLEN + sizeof(*ip) + sizeof(*udp))
		return -EINVAL;
	if (pkt_be16(((const struct pkt_eth *)f)->type) != PKT_ETHERTYPE_IPV4)
		return -EINVAL;
	ip = (const struct pkt_ip4 *)(f + PKT_ETH_HLEN);
	ihl = (size_t)(ip->ver_ihl & 0x0f) * 4;
	tot = pkt_be16(ip->tot_len);
	if ((ip->ver_ihl >> 4) != 4 || ihl < sizeof(*ip) || ip->proto != PKT_IPPROTO_UDP)
		return -EINVAL;
	if (tot > len - PKT_ETH_HLEN || tot < ihl + sizeof(*udp))
		return -EINVAL;
	if (pkt_be16(ip->frag) & 0x3fff) /* MF or a fragment offset */
		return -EINVAL;
	udp = (const struct pkt_udp *)((const uint8_t *)ip + ihl);
	ulen = pkt_be16(udp->len);
	if (pkt_be16(udp->dport) != dport || ulen < sizeof(*udp) || ulen > tot - ihl)
		return -EINVAL;
	*ip_out = (const uint8_t *)ip;
	*pl = (const uint8_t *)udp + sizeof(*udp);
	*pl_len = ulen - sizeof(*udp);
	return 0;
}

/* Walk the options in [p, end); every option must fit before end. */
static int parse_options(const uint8_t *p, const uint8_t *end, struct dhcp_request *req)
{
	bool have_type = false;

	while (p < end) {
		uint8_t code = *p++, olen;

		if (code == OPT_PAD)
			continue;
		if (code == OPT_END)
			return have_type ? 0 : -EINVAL;
		if (p >= end)
			return -EINVAL;
		olen = *p++;
		if ((size_t)(end - p) < olen)
			return -EINVAL;
		switch (code) {
		case OPT_MSG_TYPE:
			if (olen != 1 || p[0] < DHCP_DISCOVER || p[0] > DHCP_INFORM)
				return -EINVAL;
			req->type = (enum dhcp_msg)p[0];
			have_type = true;
			break;
		case OPT_REQ_IP:
			if (olen == 4)
				req->requested_ip = pkt_be32(p);
			break;
		case OPT_SERVER_ID:
			if (olen == 4)
				req->server_id = pkt_be32(p);
			break;
		}
		p += olen;
	}
	return -EINVAL; /* no END option */
}

int dhcp_parse(const void *frame, size_t len, struct dhcp_request *req)
{
	const uint8_t *ip, *b;
	size_t blen;

	if (udp4_payload(frame, len, DHCP_SERVER_PORT, &ip, &b, &blen))
		return -EINVAL;
	if (blen < BOOTP_FIXED + sizeof(cookie) || b[B_OP] != BOOTREQUEST || b[B_HTYPE] != 1 ||
	    b[B_HLEN] != 6 || memcmp(b + B_COOKIE, cookie, sizeof(cookie)))
		return -EINVAL;
	memset(req, 0, sizeof(*req));
	req->xid = pkt_be32(b + B_XID);
	req->flags = pkt_be16(b + B_FLAGS);
	req->ciaddr = pkt_be32(b + B_CIADDR);
	memcpy(req->chaddr, b + B_CHADDR, 6);
	return parse_options(b + B_COOKIE + sizeof(cookie), b + blen, req);
}

struct opt_buf {
	uint8_t *p, *end;
	bool overflow;
};

static void opt_put(struct opt_buf *o, uint8_t code, const void *data, size_t len)
{
	if (len > 255 || (size_t)(o->end - o->p) < len + 2 + 1 /* keep room for END */) {
		o->overflow = true;
		return;
	}
	*o->p++ = code;
	*o->p++ = (uint8_t)len;
	memcpy(o->p, data, len);
	o->p += len;
}

static void opt_put32(struct opt_buf *o, uint8_t code, uint32_t v)
{
	uint8_t b[4];

	pkt_put32(b, v);
	opt_put(o, code, b, 4);
}

/*
 * RFC 3397 domain search: each domain as length-prefixed labels and a zero,
 * uncompressed. Domains that are malformed or do not fit are left out.
 */
static size_t encode_search(const char *list, uint8_t *out, size_t cap)
{
	size_t n = 0;
	const char *s = list;

	while (*s) {
		uint8_t tmp[256];
		size_t t = 0, dl = strcspn(s, " "), i = 0;
		bool ok = dl > 0 && dl < 254;

		while (ok && i < dl) {
			size_t ll = strcspn(s + i, ". ");

			if (ll > dl - i)
				ll = dl - i;
			if (ll == 0 || ll > 63) {
				ok = false;
				break;
			}
			tmp[t++] = (uint8_t)ll;
			memcpy(tmp + t, s + i, ll);
			t += ll;
			i += ll + 1;
		}
		tmp[t++] = 0;
		if (ok && t > 1 && n + t <= cap) {
			memcpy(out + n, tmp, t);
			n += t;
		}
		s += dl;
		while (*s == ' ')
			s++;
	}
	return n;
}

static void put_config_options(struct opt_buf *o, const struct dhcp_lease *l)
{
	uint8_t buf[255];
	size_t n, i;

	opt_put32(o, OPT_NETMASK, l->netmask);
	opt_put32(o, OPT_BROADCAST, (l->client_ip & l->netmask) | ~l->netmask);
	if (l->router)
		opt_put32(o, OPT_ROUTER, l->router);
	if (l->router && (l->router & l->netmask) != (l->client_ip & l->netmask)) {
		/* RFC 3442: a gateway outside the subnet (a /32 pod address):
		 * the gateway on-link, then the default route through it */
		buf[0] = 32;
		pkt_put32(buf + 1, l->router);
		pkt_put32(buf + 5, 0);
		buf[9] = 0;
		pkt_put32(buf + 10, l->router);
		opt_put(o, OPT_CLASSLESS_ROUTES, buf, 14);
	}
	if (l->n_dns) {
		for (i = 0; i < l->n_dns && i < DHCP_MAX_DNS; i++)
			pkt_put32(buf + 4 * i, l->dns[i]);
		opt_put(o, OPT_DNS, buf, 4 * i);
	}
	if (l->search[0]) {
		n = strnlen(l->search, sizeof(l->search));
		i = strcspn(l->search, " ");
		opt_put(o, OPT_DOMAIN, l->search, i < n ? i : n);
		n = encode_search(l->search, buf, sizeof(buf));
		if (n)
			opt_put(o, OPT_SEARCH, buf, n);
	}
	n = strnlen(l->hostname, sizeof(l->hostname));
	if (n)
		opt_put(o, OPT_HOSTNAME, l->hostname, n);
	if (l->mtu >= 68) {
		pkt_put16(buf, l->mtu);
		opt_put(o, OPT_MTU, buf, 2);
	}
}

static enum dhcp_msg reply_type(const struct dhcp_lease *l, const struct dhcp_request *r)
{
	uint32_t want;

	switch (r->type) {
	case DHCP_DISCOVER:
		return DHCP_OFFER;
	case DHCP_INFORM:
		return DHCP_ACK;
	case DHCP_REQUEST:
		/* a SELECTING client that chose another server: stay quiet */
		if (r->server_id && r->server_id != l->server_ip)
			return 0;
		want = r->requested_ip ? r->requested_ip : r->ciaddr;
		return want == l->client_ip ? DHCP_ACK : DHCP_NAK;
	default:
		return 0; /* RELEASE, DECLINE, or a server message */
	}
}

int dhcp_build_reply(const struct dhcp_lease *l, const struct dhcp_request *r, void *out,
		     size_t cap)
{
	uint8_t *f = out, *b = f + PKT_UDP_HLEN;
	enum dhcp_msg type = reply_type(l, r);
	uint32_t lease = l->lease_secs ? l->lease_secs : DHCP_DEFAULT_LEASE, dst_ip;
	const uint8_t *dst_mac = r->chaddr;
	struct opt_buf o;
	size_t blen;
	uint8_t t8;

	if (!type || memcmp(r->chaddr, l->client_mac, 6))
		return 0;
	if (cap < PKT_UDP_HLEN + BOOTP_MIN)
		return -ENOSPC;
	memset(f, 0, PKT_UDP_HLEN + BOOTP_MIN);
	b[B_OP] = BOOTREPLY;
	b[B_HTYPE] = 1;
	b[B_HLEN] = 6;
	pkt_put32(b + B_XID, r->xid);
	pkt_put16(b + B_FLAGS, r->flags);
	if (r->type == DHCP_INFORM || (type == DHCP_ACK && r->ciaddr))
		pkt_put32(b + B_CIADDR, r->ciaddr);
	if (type != DHCP_NAK && r->type != DHCP_INFORM)
		pkt_put32(b + B_YIADDR, l->client_ip);
	memcpy(b + B_CHADDR, r->chaddr, 6);
	memcpy(b + B_COOKIE, cookie, sizeof(cookie));

	o.p = b + B_COOKIE + sizeof(cookie);
	o.end = f + cap;
	o.overflow = false;
	t8 = (uint8_t)type;
	opt_put(&o, OPT_MSG_TYPE, &t8, 1);
	opt_put32(&o, OPT_SERVER_ID, l->server_ip);
	if (type != DHCP_NAK) {
		if (r->type != DHCP_INFORM) {
			opt_put32(&o, OPT_LEASE, lease);
			opt_put32(&o, OPT_T1, lease / 2);
			opt_put32(&o, OPT_T2, (uint32_t)((uint64_t)lease * 7 / 8));
		}
		put_config_options(&o, l);
	}
	if (o.overflow)
		return -ENOSPC;
	*o.p++ = OPT_END;
	blen = (size_t)(o.p - b);
	if (blen < BOOTP_MIN)
		blen = BOOTP_MIN;

	/* RFC 2131 §4.1, "giaddr is zero" cases */
	if (type == DHCP_NAK || (!r->ciaddr && (r->flags & DHCP_FLAG_BROADCAST))) {
		dst_ip = 0xffffffff;
		dst_mac = bcast_mac;
	} else {
		dst_ip = r->ciaddr ? r->ciaddr : l->client_ip;
	}
	return (int)pkt_udp4_finish(f, dst_mac, l->server_mac, l->server_ip, dst_ip,
				    DHCP_SERVER_PORT, DHCP_CLIENT_PORT, blen);
}

int dhcp_arp_reply(const struct dhcp_lease *l, const void *frame, size_t len, void *out, size_t cap)
{
	const uint8_t *f = frame;
	const struct pkt_arp *a = (const struct pkt_arp *)(f + PKT_ETH_HLEN);
	struct pkt_eth *eo = out;
	struct pkt_arp *ao = (struct pkt_arp *)((uint8_t *)out + PKT_ETH_HLEN);

	if (len < PKT_ETH_HLEN + sizeof(*a) ||
	    pkt_be16(((const struct pkt_eth *)f)->type) != PKT_ETHERTYPE_ARP)
		return 0;
	if (pkt_be16(a->htype) != 1 || pkt_be16(a->ptype) != PKT_ETHERTYPE_IPV4 || a->hlen != 6 ||
	    a->plen != 4 || pkt_be16(a->op) != 1)
		return 0;
	if (pkt_be32(a->tpa) != l->server_ip || memcmp(a->sha, l->client_mac, 6))
		return 0;
	if (cap < PKT_ETH_HLEN + sizeof(*ao))
		return -ENOSPC;
	memcpy(eo->dst, a->sha, 6);
	memcpy(eo->src, l->server_mac, 6);
	pkt_put16(eo->type, PKT_ETHERTYPE_ARP);
	pkt_put16(ao->htype, 1);
	pkt_put16(ao->ptype, PKT_ETHERTYPE_IPV4);
	ao->hlen = 6;
	ao->plen = 4;
	pkt_put16(ao->op, 2);
	memcpy(ao->sha, l->server_mac, 6);
	pkt_put32(ao->spa, l->server_ip);
	memcpy(ao->tha, a->sha, 6);
	memcpy(ao->tpa, a->spa, 4);
	return PKT_ETH_HLEN + (int)sizeof(*ao);
}

int dhcp_parse_ip4(const char *s, uint32_t *ip)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		unsigned int part = 0, digits = 0;

		while (*s >= '0' && *s <= '9' && digits < 4) {
			part = part * 10 + (unsigned int)(*s++ - '0');
			digits++;
		}
		if (!digits || digits > 3 || part > 255)
			return -EINVAL;
		v = v << 8 | part;
		if (i < 3 && *s++ != '.')
			return -EINVAL;
	}
	if (*s)
		return -EINVAL;
	*ip = v;
	return 0;
}

uint32_t dhcp_prefix_mask(unsigned int prefix)
{
	if (prefix == 0)
		return 0;
	if (prefix >= 32)
		return 0xffffffff;
	return ~((1u << (32 - prefix)) - 1);
}

/* Copy the rest of a "search"/"domain" line, words separated by one space. */
static void set_search(struct dhcp_lease *l, const char *p, const char *eol)
{
	size_t n = 0;

	while (p < eol) {
		size_t w;

		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		for (w = 0; p + w < eol && p[w] != ' ' && p[w] != '\t'; w++)
			;
		if (!w)
			break;
		/* keep whole words only; the separator and the NUL must fit */
		if (n + (n ? 1 : 0) + w >= sizeof(l->search))
			break;
		if (n)
			l->search[n++] = ' ';
		memcpy(l->search + n, p, w);
		n += w;
		p += w;
	}
	l->search[n] = 0;
}

int dhcp_parse_resolv_conf(const char *text, struct dhcp_lease *l)
{
	const char *p = text;

	l->n_dns = 0;
	l->search[0] = 0;
	while (*p) {
		const char *eol = p + strcspn(p, "\n");
		char word[64];
		size_t n;
		uint32_t ip;

		if (!strncmp(p, "nameserver", 10) && (p[10] == ' ' || p[10] == '\t')) {
			p += 11;
			p += strspn(p, " \t");
			n = strcspn(p, " \t\n#;");
			if (n < sizeof(word) && p + n <= eol) {
				memcpy(word, p, n);
				word[n] = 0;
				if (!dhcp_parse_ip4(word, &ip) && l->n_dns < DHCP_MAX_DNS)
					l->dns[l->n_dns++] = ip;
			}
		} else if ((!strncmp(p, "search", 6) && (p[6] == ' ' || p[6] == '\t')) ||
			   (!strncmp(p, "domain", 6) && (p[6] == ' ' || p[6] == '\t'))) {
			/* as in glibc, the last search/domain line wins */
			set_search(l, p + 7, eol);
		}
		p = *eol ? eol + 1 : eol;
	}
	return (int)l->n_dns;
}
