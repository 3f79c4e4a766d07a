// SPDX-License-Identifier: MIT
/*
 * e1000e_tx.c - the 82574L's transmit ring (datasheet §7.2): legacy
 * descriptors (with the legacy checksum insertion), extended context and
 * data descriptors with IP and TCP/UDP checksum insertion and TCP
 * segmentation, done here on the gathered packet.
 *
 * Nothing read from the guest is trusted: the ring's size and indices are
 * checked against TDLEN (a head or tail outside the ring stops it), each
 * descriptor is copied out of guest memory before use, each buffer is
 * copied through guest_mem_ptr() into a bounded packet buffer, and the
 * offsets and lengths of an offload context are checked against the
 * packet before a byte is read or written at them: a packet that breaks
 * any of this is dropped (counted), the ring goes on.
 */
#include <errno.h>
#include <string.h>

#include "vmm/net/pkt.h"
#include "vmm/nic/e1000e_int.h"
#include "vmm/util/log.h"
#include "vmm/vm/guest_mem.h"

#define TX_BUDGET 1024 /* descriptors per pass, then the thread looks at RX */
/* The smallest MSS TSO takes (Linux's TCP never goes below 88): a packet
 * cut into 1-byte segments would be 64 Ki frames from 64 KiB of guest
 * data. */
#define TX_MSS_MIN 64

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Ones'-complement checksum of f[start, end) stored at f + at; udp: a
 * zero result is sent as 0xffff (RFC 768). */
static void tx_csum_insert(uint8_t *f, size_t start, size_t end, size_t at, uint32_t seed, bool udp)
{
	uint16_t c = pkt_csum_fold(pkt_csum_add(seed, f + start, end - start));

	if (udp && !c)
		c = 0xffff;
	pkt_put16(f + at, c);
}

/* A range of the packet given by start, an inclusive end (0: the packet's
 * end) and a 2-byte field at: all inside len, or false. */
static bool tx_range_ok(size_t len, size_t start, size_t end_incl, size_t at, size_t *end)
{
	*end = end_incl ? end_incl + 1 : len;
	return start < *end && *end <= len && at + 2 <= len;
}

/* Checksums of a packet sent whole (no TSO). */
static void tx_csum_whole(struct e1000e *e, uint8_t *f, size_t len)
{
	const struct e1000e_txctx *c = &e->ctx_run;
	struct e1000e_txpkt *p = &e->tx;
	size_t end;

	if (!p->ext) {
		if (p->ic && tx_range_ok(len, p->css, 0, p->cso, &end))
			tx_csum_insert(f, p->css, end, p->cso, 0, false);
		return;
	}
	if ((p->popts & TXD_POPTS_IXSM) && tx_range_ok(len, c->ipcss, c->ipcse, c->ipcso, &end)) {
		pkt_put16(f + c->ipcso, 0);
		tx_csum_insert(f, c->ipcss, end, c->ipcso, 0, false);
	}
	/* the field holds the pseudo-header sum the driver put there */
	if ((p->popts & TXD_POPTS_TXSM) && tx_range_ok(len, c->tucss, c->tucse, c->tucso, &end))
		tx_csum_insert(f, c->tucss, end, c->tucso, 0, !(c->tucmd & TXD_TUCMD_TCP));
}

/* Is the context fit to cut this packet into segments? */
static bool tx_tso_ok(const struct e1000e_txctx *c, size_t len)
{
	bool v4 = c->tucmd & TXD_TUCMD_IP, tcp = c->tucmd & TXD_TUCMD_TCP;
	size_t l4min = tcp ? 20 : 8;

	/* a segment (header <= 255, MSS <= 65535 bytes) always fits e->seg */
	_Static_assert(255 + 65535 <= E1000E_TX_MAX, "TSO segment buffer");
	return c->hdr_len <= len && c->mss >= TX_MSS_MIN &&
	       c->ipcss + (v4 ? 20u : 40u) <= c->tucss && c->tucss + l4min <= c->hdr_len &&
	       c->tucso + 2u <= c->hdr_len && c->tucso >= c->tucss &&
	       (!v4 || c->ipcso + 2u <= c->tucss);
}

/* The pseudo-header sum of one segment (RFC 793 §3.1, RFC 8200 §8.1). */
static uint32_t tx_pseudo(const struct e1000e_txctx *c, const uint8_t *f, size_t l4len)
{
	bool v4 = c->tucmd & TXD_TUCMD_IP;
	uint32_t sum =
	    v4 ? pkt_csum_add(0, f + c->ipcss + 12, 8) : pkt_csum_add(0, f + c->ipcss + 8, 32);

	sum += (c->tucmd & TXD_TUCMD_TCP) ? PKT_IPPROTO_TCP : PKT_IPPROTO_UDP;
	sum += (uint32_t)(l4len >> 16) + (uint32_t)(l4len & 0xffff);
	return sum;
}

/* Segment i (payload [off, off + n) of the packet) made whole in s. */
static void tx_tso_fix(struct e1000e *e, uint8_t *s, unsigned int i, size_t off, size_t n,
		       bool last)
{
	const struct e1000e_txctx *c = &e->ctx_run;
	size_t h = c->hdr_len, l4len = h - c->tucss + n;
	uint8_t *ip = s + c->ipcss, *l4 = s + c->tucss;

	if (c->tucmd & TXD_TUCMD_IP) {
		pkt_put16(ip + 2, (uint16_t)(h - c->ipcss + n));
		pkt_put16(ip + 4, (uint16_t)(pkt_be16(ip + 4) + i));
		if (e->tx.popts & TXD_POPTS_IXSM) {
			pkt_put16(s + c->ipcso, 0);
			tx_csum_insert(s, c->ipcss, c->tucss, c->ipcso, 0, false);
		}
	} else {
		pkt_put16(ip + 4, (uint16_t)(h - c->ipcss - 40 + n));
	}
	if (c->tucmd & TXD_TUCMD_TCP) {
		pkt_put32(l4 + 4, pkt_be32(l4 + 4) + (uint32_t)off);
		if (!last)
			l4[13] &= (uint8_t)~0x09; /* FIN, PSH: the last segment's */
		if (i)
			l4[13] &= (uint8_t)~0x80; /* CWR: the first's */
	} else {
		pkt_put16(l4 + 4, (uint16_t)l4len);
	}
	if (e->tx.popts & TXD_POPTS_TXSM) {
		pkt_put16(s + c->tucso, 0);
		tx_csum_insert(s, c->tucss, h + n, c->tucso, tx_pseudo(c, s, l4len),
			       !(c->tucmd & TXD_TUCMD_TCP));
	}
}

/* TCP segmentation: MSS-sized segments, each with the headers fixed. */
static void tx_tso(struct e1000e *e, size_t len)
{
	const struct e1000e_txctx *c = &e->ctx_run;
	uint8_t *f = e->tx.buf + NET_VNET_HDR_LEN, *s = e->seg + NET_VNET_HDR_LEN;
	size_t pay, off, n;
	unsigned int i;

	if (!tx_tso_ok(c, len)) {
		log_warn_once("e1000e: %s: TSO context does not fit the packet, dropped", e->name);
		E1000E_STAT_ADD(e, tx_dropped, 1);
		return;
	}
	pay = len - c->hdr_len;
	for (i = 0, off = 0; off < pay || (!pay && !i); i++, off += n) {
		n = pay - off < c->mss ? pay - off : c->mss;
		memcpy(s, f, c->hdr_len);
		memcpy(s + c->hdr_len, f + c->hdr_len + off, n);
		tx_tso_fix(e, s, i, off, n, off + n >= pay);
		e1000e_tx_emit(e, e->seg, c->hdr_len + n);
		if (!pay)
			break;
	}
}

/* Count the frame and send it (lock dropped around the backend). */
static void tx_finish(struct e1000e *e)
{
	struct e1000e_txpkt *p = &e->tx;
	uint8_t *f = p->buf + NET_VNET_HDR_LEN;
	size_t len = p->len;
	bool tso = p->ext && p->tse;

	p->len = 0;
	if (p->bad || len < PKT_ETH_HLEN) {
		E1000E_STAT_ADD(e, tx_dropped, 1);
		p->bad = false;
		return;
	}
	e1000e_stat(e, E_GPTC, 1);
	e1000e_stat(e, E_TPT, 1);
	e1000e_stat64(e, E_GOTCL, len);
	e1000e_stat64(e, E_TOTL, len);
	if (f[0] & 1)
		e1000e_stat(e, memcmp(f, "\xff\xff\xff\xff\xff\xff", 6) ? E_MPTC : E_BPTC, 1);
	if (tso)
		e1000e_stat(e, E_TSCTC, 1);
	/* the context as of this packet: a vCPU's reset (CTRL.RST) clears
	 * e->ctx while the lock is dropped, and TSO must not see it change */
	e->ctx_run = e->ctx;
	pthread_mutex_unlock(&e->lock);
	if (tso) {
		tx_tso(e, len);
	} else {
		tx_csum_whole(e, f, len);
		e1000e_tx_emit(e, p->buf, len);
	}
	pthread_mutex_lock(&e->lock);
}

/* Append [addr, addr + len) of guest memory to the packet. */
static void tx_gather(struct e1000e *e, uint64_t addr, uint32_t len)
{
	struct e1000e_txpkt *p = &e->tx;
	const void *src;

	if (p->bad || !len)
		return;
	src = len <= E1000E_TX_MAX - p->len ? guest_mem_ptr(e->mem, addr, len) : NULL;
	if (!src) {
		log_warn_once("e1000e: %s: transmit buffer outside RAM or packet too long",
			      e->name);
		p->bad = true;
		return;
	}
	memcpy(p->buf + NET_VNET_HDR_LEN + p->len, src, len);
	p->len += len;
}

static void tx_context(struct e1000e *e, const uint8_t *d, uint32_t cl)
{
	struct e1000e_txctx *c = &e->ctx;

	c->ipcss = d[0];
	c->ipcso = d[1];
	c->ipcse = le16(d + 2);
	c->tucss = d[4];
	c->tucso = d[5];
	c->tucse = le16(d + 6);
	c->paylen = cl & 0xfffff;
	c->tucmd = (uint8_t)(cl >> 24);
	c->hdr_len = d[13];
	c->mss = le16(d + 14);
}

/* One descriptor (a copy); true when it ended a packet. */
static bool tx_desc(struct e1000e *e, const uint8_t *d)
{
	struct e1000e_txpkt *p = &e->tx;
	uint32_t cl = le32(d + 8);
	uint8_t cmd = (uint8_t)(cl >> 24);

	if (!(cmd & TXD_CMD_DEXT)) { /* legacy: length, cso, cmd, status, css */
		if (!p->len && !p->bad) {
			p->ext = false;
			p->ic = cmd & TXD_CMD_IC;
			p->cso = d[10];
			p->css = d[13];
		}
		tx_gather(e, le64(d), le16(d + 8));
		return cmd & TXD_CMD_EOP;
	}
	switch ((cl >> 20) & 0xf) {
	case TXD_DTYP_CTX:
		tx_context(e, d, cl);
		return false;
	case TXD_DTYP_DATA:
		if (!p->len && !p->bad) {
			p->ext = true;
			p->tse = cmd & TXD_CMD_TSE;
			p->popts = d[13];
		}
		tx_gather(e, le64(d), cl & 0xfffff);
		return cmd & TXD_CMD_EOP;
	}
	log_warn_once("e1000e: %s: unknown transmit descriptor type", e->name);
	p->bad = true;
	return false;
}

bool e1000e_tx_run(struct e1000e *e)
{
	unsigned int budget = TX_BUDGET, done = 0;
	uint8_t d[16], *g;
	bool eop;

	pthread_mutex_lock(&e->lock);
	for (; budget; budget--) {
		uint32_t n = e1000e_reg(e, E_TDLEN) / 16, h = e1000e_reg(e, E_TDH);
		uint64_t base = (uint64_t)e1000e_reg(e, E_TDBAH) << 32 | e1000e_reg(e, E_TDBAL);

		if (!(e1000e_reg(e, E_TCTL) & TCTL_EN) || h >= n || e1000e_reg(e, E_TDT) >= n ||
		    h == e1000e_reg(e, E_TDT))
			break;
		g = guest_mem_ptr(e->mem, base + 16ull * h, 16);
		e->reg[E_TDH / 4] = (h + 1) % n;
		done++;
		if (!g) {
			log_warn_once("e1000e: %s: transmit ring outside RAM", e->name);
			e->tx.bad = true;
			continue;
		}
		memcpy(d, g, 16);
		eop = tx_desc(e, d); /* its buffer is copied before DD hands it back */
		if (d[11] & TXD_CMD_RS)
			g[12] |= TXD_STAT_DD; /* status byte of all three formats */
		if (eop)
			tx_finish(e);
	}
	if (done)
		e1000e_raise_moderated(
		    e, ICR_TXDW | (e1000e_reg(e, E_TDH) == e1000e_reg(e, E_TDT) ? ICR_TXQE : 0), 1);
	pthread_mutex_unlock(&e->lock);
	if (!budget)
		e1000e_kick(e); /* more to do: come back after RX had its turn */
	return done > 0;
}
