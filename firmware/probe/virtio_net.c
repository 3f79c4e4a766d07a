// SPDX-License-Identifier: MIT
/*
 * virtio_net.c - the probe's polled virtio-net driver and its DHCP, ARP and
 * ICMP exchanges (virtio_net.h). Queue 0 receives, queue 1 transmits; every
 * buffer is one descriptor: the 12-byte virtio_net_hdr, then the frame.
 * Frames from the network are untrusted: every length is checked.
 */
#include "firmware/lib/io.h"
#include "firmware/lib/virtio.h"
#include "firmware/probe/virtio_net.h"
#include "firmware/probe/virtio_net_int.h"

static struct fw_vq rxq, txq;
static uint8_t rxbuf[NQ][BUFSZ] FW_ALIGNED(64);
static uint8_t txbuf[NQ][BUFSZ] FW_ALIGNED(64);
static struct fw_net_opts opts;

static struct net nic;

void fw_virtio_net_configure(const struct fw_net_opts *o)
{
	opts = *o;
}

static void barrier(void)
{
	__asm__ volatile("" ::: "memory");
}

uint32_t fw_inet_sum(uint32_t sum, const void *data, size_t n)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += be16(p + i);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static uint16_t csum(const void *p, size_t n)
{
	return (uint16_t)~fw_inet_sum(0, p, n);
}

/* ---- the queues -------------------------------------------------------------- */

static void rx_post(struct net *n, uint16_t id)
{
	rxq.avail.ring[n->rx_avail % n->r[0].qsize] = id;
	n->rx_avail++;
}

static void tx_reclaim(struct net *n)
{
	while (*(volatile uint16_t *)&txq.used.idx != n->tx_seen) {
		uint32_t id;

		barrier();
		id = txq.used.ring[n->tx_seen % n->r[1].qsize].id;
		if (id < NQ && n->tx_busy[id]) {
			n->tx_busy[id] = false;
			n->tx_ok++;
		}
		n->tx_seen++;
	}
}

/* A free transmit buffer (frame area after the header), or NULL. */
uint8_t *net_tx_get(struct net *n, uint16_t *slot)
{
	for (uint64_t t0 = rdtsc(); rdtsc() - t0 < WAIT_TICKS;) {
		tx_reclaim(n);
		for (uint16_t i = 0; i < n->r[1].qsize; i++)
			if (!n->tx_busy[i]) {
				*slot = i;
				memset(txbuf[i], 0, HDR);
				return txbuf[i] + HDR;
			}
		__asm__ volatile("pause");
	}
	return NULL;
}

void net_tx_send(struct net *n, uint16_t slot, size_t len)
{
	txq.desc[slot].addr = (uint64_t)(uintptr_t)txbuf[slot];
	txq.desc[slot].len = (uint32_t)(HDR + len);
	txq.desc[slot].flags = 0;
	n->tx_busy[slot] = true;
	txq.avail.ring[n->tx_avail % n->r[1].qsize] = slot;
	barrier();
	*(volatile uint16_t *)&txq.avail.idx = ++n->tx_avail;
	barrier();
	*n->r[1].notify = 1;
}

/* ---- frames ---------------------------------------------------------------- */

uint8_t *net_eth(uint8_t *f, const uint8_t *dst, const struct net *n, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, n->mac, 6);
	put16(f + 12, type);
	return f + ETH;
}

/* An IPv4 header (20 bytes) before payload bytes; returns the payload. */
static uint8_t *ip4(uint8_t *p, uint8_t proto, uint32_t src, uint32_t dst, size_t payload)
{
	static uint16_t id;

	memset(p, 0, 20);
	p[0] = 0x45;
	put16(p + 2, (uint16_t)(20 + payload));
	put16(p + 4, ++id);
	p[8] = 64;
	p[9] = proto;
	put32(p + 12, src);
	put32(p + 16, dst);
	put16(p + 10, csum(p, 20));
	return p + 20;
}

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static void send_arp(struct net *n, int op, const uint8_t *tha, uint32_t tpa)
{
	uint16_t slot;
	uint8_t *f = net_tx_get(n, &slot), *a;

	if (!f)
		return;
	a = net_eth(f, op == 1 ? bcast : tha, n, 0x0806);
	put16(a, 1);
	put16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, (uint16_t)op);
	memcpy(a + 8, n->mac, 6);
	put32(a + 14, n->ip);
	memcpy(a + 18, op == 1 ? (const uint8_t[6]){0} : tha, 6);
	put32(a + 24, tpa);
	net_tx_send(n, slot, 60); /* padded to the Ethernet minimum */
}

static void send_dhcp(struct net *n, int type)
{
	uint16_t slot;
	uint8_t *f = net_tx_get(n, &slot), *u, *b, *o;
	const size_t blen = 300;

	if (!f)
		return;
	u = ip4(net_eth(f, bcast, n, 0x0800), 17, 0, 0xffffffffu, 8 + blen);
	put16(u, DHCP_CLIENT);
	put16(u + 2, DHCP_SERVER);
	put16(u + 4, (uint16_t)(8 + blen));
	put16(u + 6, 0); /* no UDP checksum */
	b = u + 8;
	memset(b, 0, blen);
	b[0] = 1; /* BOOTREQUEST */
	b[1] = 1;
	b[2] = 6;
	put32(b + 4, n->xid);
	put16(b + 10, 0x8000); /* broadcast replies: we have no address yet */
	memcpy(b + 28, n->mac, 6);
	put32(b + 236, 0x63825363);
	o = b + 240;
	*o++ = 53, *o++ = 1, *o++ = (uint8_t)type;
	if (type == 3) {
		*o++ = 50, *o++ = 4, put32(o, n->offered), o += 4;
		*o++ = 54, *o++ = 4, put32(o, n->server), o += 4;
	}
	*o++ = 55, *o++ = 4, *o++ = 1, *o++ = 3, *o++ = 26, *o++ = 54;
	*o = 255;
	net_tx_send(n, slot, ETH + 20 + 8 + blen);
}

static uint32_t ping_target(const struct net *n)
{
	return opts.ping ? opts.ping : n->router;
}

static void send_ping(struct net *n)
{
	uint16_t slot;
	uint8_t *f = net_tx_get(n, &slot), *c;

	if (!f)
		return;
	c = ip4(net_eth(f, n->gw_mac, n, 0x0800), 1, n->ip, ping_target(n), 8 + 32);
	memset(c, 0, 8 + 32);
	c[0] = 8;
	put16(c + 4, 0x766d); /* "vm" */
	put16(c + 6, ++n->ping_seq);
	for (int i = 0; i < 32; i++)
		c[8 + i] = (uint8_t)('a' + i % 26);
	put16(c + 2, csum(c, 8 + 32));
	net_tx_send(n, slot, ETH + 20 + 8 + 32);
}

/* An echo reply to the request at f (len bytes, IPv4 header ihl bytes). */
static void answer_ping(struct net *n, const uint8_t *f, size_t len, size_t ihl)
{
	uint16_t slot;
	uint8_t *o, *c;
	size_t icmp = len - ETH - ihl;

	if (len > BUFSZ - HDR || !(o = net_tx_get(n, &slot)))
		return;
	c = ip4(net_eth(o, f + 6, n, 0x0800), 1, n->ip, be32(f + ETH + 12), icmp);
	memcpy(c, f + ETH + ihl, icmp);
	c[0] = 0;
	put16(c + 2, 0);
	put16(c + 2, csum(c, icmp));
	net_tx_send(n, slot, ETH + 20 + icmp);
	n->echoed++;
}

static void dhcp_input(struct net *n, const uint8_t *b, size_t len)
{
	uint32_t mask = 0, router = 0, server = 0, mtu = 0;
	int type = 0;

	if (len < 240 || b[0] != 2 || be32(b + 4) != n->xid || memcmp(b + 28, n->mac, 6) ||
	    be32(b + 236) != 0x63825363)
		return;
	for (size_t i = 240; i < len && b[i] != 255;) {
		uint8_t code = b[i], l;

		if (code == 0) {
			i++;
			continue;
		}
		if (i + 2 > len || i + 2 + (l = b[i + 1]) > len)
			return;
		if (code == 53 && l == 1)
			type = b[i + 2];
		else if (code == 1 && l == 4)
			mask = be32(b + i + 2);
		else if (code == 3 && l >= 4)
			router = be32(b + i + 2);
		else if (code == 54 && l == 4)
			server = be32(b + i + 2);
		else if (code == 26 && l == 2)
			mtu = be16(b + i + 2);
		i += 2u + l;
	}
	if (type == 2 && n->dhcp_state == 0) {
		n->offered = be32(b + 16);
		n->server = server;
		n->dhcp_state = 2;
	} else if (type == 5 && n->dhcp_state == 2) {
		n->ip = be32(b + 16);
		n->mask = mask;
		n->router = router;
		n->dhcp_mtu = mtu;
		n->dhcp_state = 5;
	} else if (type == 6 && n->dhcp_state == 2) {
		n->dhcp_state = 6;
	}
}

static void ip_input(struct net *n, const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + ETH, *l4;
	size_t ihl, tot;

	if (len < ETH + 20 || (ip[0] >> 4) != 4)
		return;
	ihl = (size_t)(ip[0] & 15) * 4;
	tot = be16(ip + 2);
	if (ihl < 20 || tot < ihl || ETH + tot > len || (be16(ip + 6) & 0x3fff))
		return; /* short, or a fragment */
	l4 = ip + ihl;
	if (ip[9] == 17 && tot >= ihl + 8 && be16(l4 + 2) == DHCP_CLIENT)
		dhcp_input(n, l4 + 8, tot - ihl - 8);
	if (ip[9] != 1 || tot < ihl + 8 || !n->ip || be32(ip + 16) != n->ip)
		return;
	if (l4[0] == 8 && fw_inet_sum(0, l4, tot - ihl) == 0xffff)
		answer_ping(n, f, ETH + tot, ihl);
	else if (l4[0] == 0 && be32(ip + 12) == ping_target(n) && be16(l4 + 4) == 0x766d)
		n->ping_ok = true;
}

static void arp_input(struct net *n, const uint8_t *f, size_t len)
{
	const uint8_t *a = f + ETH;

	if (len < ETH + 28 || be16(a) != 1 || be16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4)
		return;
	if (be16(a + 6) == 1 && n->ip && be32(a + 24) == n->ip)
		send_arp(n, 2, a + 8, be32(a + 14));
	else if (be16(a + 6) == 2 && n->router && be32(a + 14) == n->router) {
		memcpy(n->gw_mac, a + 8, 6);
		n->gw_known = true;
	}
}

static void frame_input(struct net *n, const uint8_t *f, size_t len)
{
	if (len < ETH ||
	    (memcmp(f, n->mac, 6) && memcmp(f, bcast, 6) && (f[0] != 0x33 || f[1] != 0x33)))
		return; /* ours, broadcast, or IPv6 multicast */
	if (be16(f + 12) == 0x86dd)
		net6_input(n, f, len);
	if (be16(f + 12) == 0x0806)
		arp_input(n, f, len);
	else if (be16(f + 12) == 0x0800)
		ip_input(n, f, len);
}

/* Take every received frame, give its buffer back. */
static void rx_poll(struct net *n)
{
	bool posted = false;

	while (*(volatile uint16_t *)&rxq.used.idx != n->rx_seen) {
		uint32_t id, len;

		barrier();
		id = rxq.used.ring[n->rx_seen % n->r[0].qsize].id;
		len = rxq.used.ring[n->rx_seen % n->r[0].qsize].len;
		n->rx_seen++;
		if (id >= NQ)
			continue; /* not ours: a broken device, nothing to give back */
		if (len >= HDR + ETH && len <= BUFSZ) {
			n->rx_ok++;
			frame_input(n, rxbuf[id] + HDR, len - HDR);
		}
		rx_post(n, (uint16_t)id);
		posted = true;
	}
	if (posted) {
		barrier();
		*(volatile uint16_t *)&rxq.avail.idx = n->rx_avail;
		barrier();
		*n->r[0].notify = 0;
	}
}

/* Serve the queues until done(n) or ticks pass. */
static bool wait_for(struct net *n, bool (*done)(const struct net *), uint64_t ticks)
{
	for (uint64_t t0 = rdtsc(); rdtsc() - t0 < ticks;) {
		rx_poll(n);
		tx_reclaim(n);
		if (done(n))
			return true;
		__asm__ volatile("pause");
	}
	return false;
}

static bool got_offer(const struct net *n)
{
	return n->dhcp_state != 0;
}

static bool got_ack(const struct net *n)
{
	return n->dhcp_state > 2;
}

static bool got_gw(const struct net *n)
{
	return n->gw_known;
}

static bool got_pong(const struct net *n)
{
	return n->ping_ok;
}

static bool got_pong6(const struct net *n)
{
	return n->ping6_ok;
}

static bool echo_done(const struct net *n)
{
	return n->echoed >= opts.echo;
}

static bool tx_idle(const struct net *n)
{
	for (int i = 0; i < NQ; i++)
		if (n->tx_busy[i])
			return false;
	return true;
}

/* ---- the exchanges and the report ------------------------------------------- */

static int net_init(struct net *n, const struct fw_pci_fn *f, uint64_t *next)
{
	memset(n, 0, sizeof(*n));
	memset(&rxq, 0, sizeof(rxq));
	memset(&txq, 0, sizeof(txq));
	n->r[0] = (struct fw_virtio_ring){NQ, rxq.desc, &rxq.avail, &rxq.used, NULL};
	n->r[1] = (struct fw_virtio_ring){NQ, txq.desc, &txq.avail, &txq.used, NULL};
	if (fw_virtio_init_queues(
		&n->v, f, FW_VIRTIO_NET_F_MAC | FW_VIRTIO_NET_F_STATUS | FW_VIRTIO_NET_F_MTU, next,
		n->r, 2) ||
	    !n->v.device)
		return -1;
	for (uint16_t i = 0; i < n->r[0].qsize; i++) {
		rxq.desc[i] = (typeof(rxq.desc[0])){(uint64_t)(uintptr_t)rxbuf[i], BUFSZ, 2, 0};
		rx_post(n, i);
	}
	barrier();
	*(volatile uint16_t *)&rxq.avail.idx = n->rx_avail;
	barrier();
	*n->r[0].notify = 0;
	n->xid = (uint32_t)rdtsc() ^ 0x766d6c74u;
	return 0;
}

/* The CMOS RTC's seconds (0-59), or -1 if there is no RTC. */
static int rtc_seconds(void)
{
	uint8_t v, b;

	outb(RTC_INDEX, 0x0b);
	b = inb(RTC_INDEX + 1);
	outb(RTC_INDEX, 0x00);
	v = inb(RTC_INDEX + 1);
	if (!(b & 4)) /* BCD */
		v = (uint8_t)((v >> 4) * 10 + (v & 15));
	return v < 60 ? v : -1;
}

/*
 * One DHCP exchange: send the message (1 DISCOVER, 3 REQUEST) every
 * WAIT_TICKS until done(n) or DHCP_SECONDS seconds of the RTC passed. A
 * server may take seconds to answer: before it offers an address it checks
 * that no one uses it (busybox udhcpd: an ARP probe, 2 s by default; ISC
 * dhcpd: an ICMP echo, 1 s). A budget in TSC ticks, whose rate differs per
 * host, gave up after 1.7 s on a 2.6 GHz host, before udhcpd's offer.
 * Without an RTC (its seconds never move) DHCP_TRIES_MAX tries bound it.
 */
static void dhcp_exchange(struct net *n, int type, bool (*done)(const struct net *))
{
	int last = rtc_seconds(), secs = 0;

	for (int i = 0; i < DHCP_TRIES_MAX && secs < DHCP_SECONDS && !done(n); i++) {
		int now;

		send_dhcp(n, type);
		wait_for(n, done, WAIT_TICKS);
		now = rtc_seconds();
		if (now >= 0 && last >= 0)
			secs += (now - last + 60) % 60;
		last = now;
	}
}

static void dhcp(struct net *n)
{
	dhcp_exchange(n, 1, got_offer);
	if (n->dhcp_state == 2)
		dhcp_exchange(n, 3, got_ack);
	if (n->dhcp_state != 5)
		n->ip = 0;
}

static void ip_str(char *s, size_t cap, uint32_t ip)
{
	fw_snprintf(s, cap, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 255, ip >> 8 & 255, ip & 255);
}

/* Eight groups of hex, uncompressed: fe80:0:0:0:0:ff:fe00:1 */
static void ip6_str(char s[40], const uint8_t *a)
{
	fw_snprintf(s, 40, "%x:%x:%x:%x:%x:%x:%x:%x", be16(a), be16(a + 2), be16(a + 4),
		    be16(a + 6), be16(a + 8), be16(a + 10), be16(a + 12), be16(a + 14));
}

static unsigned int prefix_len(uint32_t mask)
{
	unsigned int p = 0;

	while (p < 32 && (mask & (1u << (31 - p))))
		p++;
	return p;
}

void fw_virtio_net_report(struct fw_buf *out, const struct fw_pci_fn *f, uint64_t *mmio_next)
{
	struct net *n = &nic;
	volatile uint8_t *cfg;
	uint16_t status = 0, mtu = 0;
	char addr[24] = "-", gw[16] = "-", ll[40], peer[40];

	if (net_init(n, f, mmio_next)) {
		fw_buf_printf(out, "error=virtio-net %02x: cannot initialize\n", f->dev);
		fw_virtio_reset(&n->v);
		return;
	}
	cfg = n->v.device;
	for (int i = 0; i < 6; i++)
		n->mac[i] = (n->v.features & FW_VIRTIO_NET_F_MAC) ? cfg[i] : 0;
	if (n->v.features & FW_VIRTIO_NET_F_STATUS)
		status = *(volatile uint16_t *)(cfg + 6);
	if (n->v.features & FW_VIRTIO_NET_F_MTU)
		mtu = *(volatile uint16_t *)(cfg + 10);
	if (!opts.quick)
		dhcp(n);
	for (int i = 0; i < TRIES && n->ip && n->router && !n->gw_known; i++) {
		send_arp(n, 1, NULL, n->router);
		wait_for(n, got_gw, WAIT_TICKS);
	}
	for (int i = 0; i < TRIES && n->gw_known && !n->ping_ok; i++) {
		send_ping(n);
		wait_for(n, got_pong, WAIT_TICKS);
	}
	net6_init(n);
	for (int i = 0; i < TRIES / 2 && !opts.quick && !n->ping6_ok; i++) {
		net6_ping(n);
		wait_for(n, got_pong6, WAIT_TICKS);
	}
	if (opts.echo && n->ip)
		wait_for(n, echo_done, ECHO_TICKS);
	wait_for(n, tx_idle, WAIT_TICKS);
	if (n->ip) {
		ip_str(addr, sizeof(addr), n->ip);
		fw_snprintf(addr + strlen(addr), 4, "/%u", prefix_len(n->mask));
	}
	if (n->router)
		ip_str(gw, sizeof(gw), n->router);
	fw_buf_printf(out,
		      "nic=00:%02x.%x %02x:%02x:%02x:%02x:%02x:%02x %u %u %s %s %s %s %llu %llu "
		      "%llu\n",
		      f->dev, f->fn, n->mac[0], n->mac[1], n->mac[2], n->mac[3], n->mac[4],
		      n->mac[5], status & 1, mtu, addr, gw, n->gw_known ? "ok" : "-",
		      n->ping_ok ? "ok" : "-", (unsigned long long)n->rx_ok,
		      (unsigned long long)n->tx_ok, (unsigned long long)n->echoed);
	ip6_str(ll, n->ll6);
	ip6_str(peer, n->peer6);
	fw_buf_printf(out, "nic6=00:%02x.%x %s %s %s\n", f->dev, f->fn, ll,
		      n->ping6_ok ? "ok" : "-", n->ping6_ok ? peer : "-");
	fw_virtio_reset(&n->v);
}
