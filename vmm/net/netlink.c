/* SPDX-License-Identifier: MIT */
/*
 * netlink.c - rtnetlink requests (see netlink.h). Message layout per
 * rtnetlink(7): nlmsghdr, the family header (ifinfomsg, ifaddrmsg, rtmsg),
 * then NLA-aligned route attributes.
 */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/util/log.h"
#include "vmm/net/netlink.h"

#define NL_BUF 32768

struct nl_req {
	struct nlmsghdr *h;
	bool dump; /* (NLM_F_DUMP shares bits with NLM_F_CREATE/EXCL) */
	char buf[1024] __attribute__((aligned(NLMSG_ALIGNTO)));
};

static struct nlmsghdr *req_init(struct nl_req *r, uint16_t type, uint16_t flags, size_t fam)
{
	memset(r->buf, 0, sizeof(r->buf));
	r->h = (struct nlmsghdr *)r->buf;
	r->h->nlmsg_len = (uint32_t)NLMSG_LENGTH(fam);
	r->h->nlmsg_type = type;
	r->h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	r->dump = flags == NLM_F_DUMP;
	return r->h;
}

static void *req_fam(struct nl_req *r)
{
	return NLMSG_DATA(r->h);
}

static struct rtattr *req_attr(struct nl_req *r, uint16_t type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(r->buf + NLMSG_ALIGN(r->h->nlmsg_len));
	size_t total = NLMSG_ALIGN(r->h->nlmsg_len) + RTA_SPACE(len);

	if (total > sizeof(r->buf))
		return NULL; /* requests are small and fixed: cannot happen */
	a->rta_type = type;
	a->rta_len = (uint16_t)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	r->h->nlmsg_len = (uint32_t)total;
	return a;
}

/* Close a nested attribute opened with req_attr(r, type, NULL, 0). */
static void req_nest_end(struct nl_req *r, struct rtattr *nest)
{
	nest->rta_len = (uint16_t)(r->buf + r->h->nlmsg_len - (char *)nest);
}

int nl_open(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return error_errno(-errno, "netlink: socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = -errno;

		close(fd);
		return error_errno(err, "netlink: bind");
	}
	return fd;
}

void nl_close(int nl)
{
	if (nl >= 0)
		close(nl);
}

typedef int (*nl_msg_fn)(const struct nlmsghdr *h, void *ctx);

/*
 * Send r and read answers until the ACK (or DONE for a dump), handing each
 * data message to fn. Returns 0 or the kernel's -errno.
 */
static int nl_talk(int nl, struct nl_req *r, nl_msg_fn fn, void *ctx)
{
	static uint32_t seq;
	char buf[NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	uint32_t s = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);

	r->h->nlmsg_seq = s;
	if (!r->dump)
		r->h->nlmsg_flags |= NLM_F_ACK;
	if (send(nl, r->buf, r->h->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		struct nlmsghdr *h;
		size_t left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		left = (size_t)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq != s)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EIO;
				return e->error; /* 0 is the ACK */
			}
			if (fn) {
				int err = fn(h, ctx);

				if (err)
					return err;
			}
		}
	}
}

struct link_ctx {
	struct nl_link *out;
	bool found;
};

static int link_msg(const struct nlmsghdr *h, void *ctx)
{
	struct link_ctx *c = ctx;
	const struct ifinfomsg *ifi = NLMSG_DATA(h);
	const struct rtattr *a;
	int len;

	if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return 0;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));
	c->found = true;
	c->out->index = ifi->ifi_index;
	c->out->up = ifi->ifi_flags & IFF_UP;
	for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == IFLA_ADDRESS && RTA_PAYLOAD(a) == 6)
			memcpy(c->out->mac, RTA_DATA(a), 6);
		else if (a->rta_type == IFLA_MTU && RTA_PAYLOAD(a) == 4)
			memcpy(&c->out->mtu, RTA_DATA(a), 4);
	}
	return 0;
}

int nl_link_get(int nl, const char *name, struct nl_link *out)
{
	struct nl_req r;
	struct link_ctx c = {.out = out};
	struct ifinfomsg *ifi;
	int err;

	if (!name || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	req_init(&r, RTM_GETLINK, 0, sizeof(*ifi));
	ifi = req_fam(&r);
	ifi->ifi_family = AF_UNSPEC;
	req_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
	err = nl_talk(nl, &r, link_msg, &c);
	if (err)
		return err;
	return c.found ? 0 : -ENODEV;
}

struct addr_ctx {
	int ifindex;
	struct nl_addr4 *out;
	unsigned int max, n;
};

static int addr_msg(const struct nlmsghdr *h, void *ctx)
{
	struct addr_ctx *c = ctx;
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	const struct rtattr *a;
	int len;

	if (h->nlmsg_type != RTM_NEWADDR || h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return 0;
	if (ifa->ifa_family != AF_INET || (int)ifa->ifa_index != c->ifindex || c->n >= c->max)
		return 0;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa)));
	for (a = IFA_RTA(ifa); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		const uint8_t *p = RTA_DATA(a);

		if (a->rta_type != IFA_LOCAL || RTA_PAYLOAD(a) != 4)
			continue;
		c->out[c->n].addr =
		    (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		c->out[c->n++].prefix = ifa->ifa_prefixlen;
		break;
	}
	return 0;
}

int nl_addr4_list(int nl, int ifindex, struct nl_addr4 *out, unsigned int max)
{
	struct nl_req r;
	struct addr_ctx c = {.ifindex = ifindex, .out = out, .max = max};
	struct ifaddrmsg *ifa;
	int err;

	req_init(&r, RTM_GETADDR, NLM_F_DUMP, sizeof(*ifa));
	ifa = req_fam(&r);
	ifa->ifa_family = AF_INET;
	err = nl_talk(nl, &r, addr_msg, &c);
	return err ? err : (int)c.n;
}

static int addr4_change(int nl, uint16_t type, uint16_t flags, int ifindex,
			const struct nl_addr4 *a)
{
	struct nl_req r;
	struct ifaddrmsg *ifa;
	uint8_t ip[4] = {(uint8_t)(a->addr >> 24), (uint8_t)(a->addr >> 16),
			 (uint8_t)(a->addr >> 8), (uint8_t)a->addr};

	req_init(&r, type, flags, sizeof(*ifa));
	ifa = req_fam(&r);
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (uint8_t)a->prefix;
	ifa->ifa_index = (uint32_t)ifindex;
	req_attr(&r, IFA_LOCAL, ip, 4);
	req_attr(&r, IFA_ADDRESS, ip, 4);
	return nl_talk(nl, &r, NULL, NULL);
}

int nl_addr4_add(int nl, int ifindex, const struct nl_addr4 *a)
{
	return addr4_change(nl, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, ifindex, a);
}

int nl_addr4_del(int nl, int ifindex, const struct nl_addr4 *a)
{
	return addr4_change(nl, RTM_DELADDR, 0, ifindex, a);
}

struct route_ctx {
	uint32_t gw;
	int ifindex;
	bool found;
};

static int route_msg(const struct nlmsghdr *h, void *ctx)
{
	struct route_ctx *c = ctx;
	const struct rtmsg *rt = NLMSG_DATA(h);
	const struct rtattr *a;
	uint32_t gw = 0;
	int len, oif = 0;

	if (h->nlmsg_type != RTM_NEWROUTE || h->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
		return 0;
	if (rt->rtm_family != AF_INET || rt->rtm_dst_len != 0 || rt->rtm_table != RT_TABLE_MAIN ||
	    c->found)
		return 0;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*rt)));
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		const uint8_t *p = RTA_DATA(a);

		if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == 4)
			gw = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
			     p[3];
		else if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == 4)
			memcpy(&oif, p, 4);
	}
	c->gw = gw;
	c->ifindex = oif;
	c->found = true;
	return 0;
}

int nl_route4_default(int nl, uint32_t *gw, int *ifindex)
{
	struct nl_req r;
	struct route_ctx c = {0};
	struct rtmsg *rt;
	int err;

	req_init(&r, RTM_GETROUTE, NLM_F_DUMP, sizeof(*rt));
	rt = req_fam(&r);
	rt->rtm_family = AF_INET;
	err = nl_talk(nl, &r, route_msg, &c);
	if (err)
		return err;
	if (!c.found)
		return -ENOENT;
	*gw = c.gw;
	*ifindex = c.ifindex;
	return 0;
}

int nl_route4_add_default(int nl, uint32_t gw, int ifindex)
{
	struct nl_req r;
	struct rtmsg *rt;
	uint8_t ip[4] = {(uint8_t)(gw >> 24), (uint8_t)(gw >> 16), (uint8_t)(gw >> 8), (uint8_t)gw};
	uint32_t oif = (uint32_t)ifindex;

	req_init(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, sizeof(*rt));
	rt = req_fam(&r);
	rt->rtm_family = AF_INET;
	rt->rtm_table = RT_TABLE_MAIN;
	rt->rtm_protocol = RTPROT_BOOT;
	rt->rtm_scope = RT_SCOPE_UNIVERSE;
	rt->rtm_type = RTN_UNICAST;
	req_attr(&r, RTA_GATEWAY, ip, 4);
	req_attr(&r, RTA_OIF, &oif, 4);
	return nl_talk(nl, &r, NULL, NULL);
}

int nl_bridge_create(int nl, const char *name)
{
	struct nl_req r;
	struct ifinfomsg *ifi;
	struct rtattr *info;

	if (!name || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	req_init(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(*ifi));
	ifi = req_fam(&r);
	ifi->ifi_family = AF_UNSPEC;
	req_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
	info = req_attr(&r, IFLA_LINKINFO, NULL, 0);
	req_attr(&r, IFLA_INFO_KIND, "bridge", 6);
	req_nest_end(&r, info);
	return nl_talk(nl, &r, NULL, NULL);
}

int nl_link_set(int nl, int ifindex, int master, unsigned int mtu, const uint8_t *mac, bool up)
{
	struct nl_req r;
	struct ifinfomsg *ifi;
	uint32_t v;

	req_init(&r, RTM_NEWLINK, 0, sizeof(*ifi));
	ifi = req_fam(&r);
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (up) {
		ifi->ifi_flags = IFF_UP;
		ifi->ifi_change = IFF_UP;
	}
	if (master) {
		v = (uint32_t)master;
		req_attr(&r, IFLA_MASTER, &v, 4);
	}
	if (mtu) {
		v = mtu;
		req_attr(&r, IFLA_MTU, &v, 4);
	}
	if (mac)
		req_attr(&r, IFLA_ADDRESS, mac, 6);
	return nl_talk(nl, &r, NULL, NULL);
}

int nl_link_del(int nl, int ifindex)
{
	struct nl_req r;
	struct ifinfomsg *ifi;

	req_init(&r, RTM_DELLINK, 0, sizeof(*ifi));
	ifi = req_fam(&r);
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nl_talk(nl, &r, NULL, NULL);
}
