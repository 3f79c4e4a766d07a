// SPDX-License-Identifier: MIT
/*
 * e1000e_rx.c - the 82574L's receive ring (datasheet §7.1): the address
 * filter (RAL/RAH, MTA, RCTL.UPE/MPE/BAM), legacy and extended receive
 * descriptors (RFCTL.EXTEN; RCTL.DTYP packet split is not implemented:
 * the ring takes nothing), frames spanning several buffers of RCTL's
 * size, the checksum status of RXCSUM computed here, statistics.
 *
 * The ring's size and indices are checked against RDLEN, each descriptor
 * is read through guest_mem_ptr() and copied, each buffer written only
 * through guest_mem_ptr() for the bytes it gets (a buffer outside RAM gets
 * none and its descriptor reports RXE).
 */
#include <errno.h>
#include <string.h>

#include "vmm/net/pkt.h"
#include "vmm/nic/e1000e_int.h"
#include "vmm/util/log.h"
#include "vmm/vm/guest_mem.h"

#define RX_MIN_FRAME 60	  /* shorter frames are padded, as the wire pads them */
#define RX_MAX_STD   1522 /* 1500 bytes + Ethernet header + a VLAN tag + FCS */
#define RX_MAX_LPE   16384

#define RXDEXT_ERR_RXE	0x80000000u
#define RXDEXT_ERR_IPE	0x40000000u
#define RXDEXT_ERR_TCPE 0x20000000u

static bool rx_ps(const struct e1000e *e)
{
	return (e1000e_reg(e, E_RCTL) & RCTL_DTYP) == RCTL_DTYP_PS;
}

/* The ring's size in 16-byte units: RDH and RDT count those whatever the
 * descriptor format (a packet-split descriptor is two of them: Linux
 * writes RDT as its index << 1). */
static uint32_t rx_ring_size(const struct e1000e *e)
{
	return e1000e_reg(e, E_RDLEN) / 16;
}

static uint32_t rx_free(const struct e1000e *e)
{
	uint32_t n = rx_ring_size(e), h = e1000e_reg(e, E_RDH), t = e1000e_reg(e, E_RDT);

	if (!n || h >= n || t >= n)
		return 0; /* a ring the guest set up wrong takes nothing */
	return (t + n - h) % n;
}

bool e1000e_rx_ready(struct e1000e *e)
{
	if ((e1000e_reg(e, E_RCTL) & RCTL_DTYP) > RCTL_DTYP_PS) {
		log_warn_once("e1000e: %s: reserved receive descriptor type", e->name);
		return false;
	}
	return e->link_up && (e1000e_reg(e, E_RCTL) & RCTL_EN) && rx_free(e);
}

static uint32_t rx_buf_size(uint32_t rctl)
{
	unsigned int bs = (rctl >> 16) & 3;

	if (rctl & RCTL_BSEX)
		return bs ? 32768u >> bs : 2048u;
	return 2048u >> bs;
}

/* RCTL.MO's 12 bits of the destination address index the MTA. */
static bool rx_mta_hit(const struct e1000e *e, const uint8_t *d)
{
	static const unsigned int shift[4] = {4, 3, 2, 0};
	unsigned int mo = (e1000e_reg(e, E_RCTL) >> 12) & 3;
	uint32_t h = ((uint32_t)d[4] >> shift[mo] | (uint32_t)d[5] << (8 - shift[mo])) & 0xfff;

	return e->reg[E_MTA / 4 + (h >> 5)] & (1u << (h & 31));
}

static bool rx_accept(const struct e1000e *e, const uint8_t *d)
{
	uint32_t rctl = e1000e_reg(e, E_RCTL);

	if (d[0] & 1) {
		if (!memcmp(d, "\xff\xff\xff\xff\xff\xff", 6))
			return (rctl & (RCTL_BAM | RCTL_MPE)) != 0;
		return (rctl & RCTL_MPE) || rx_mta_hit(e, d);
	}
	if (rctl & RCTL_UPE)
		return true;
	for (unsigned int i = 0; i < 16; i++) {
		uint32_t lo = e->reg[E_RAL0 / 4 + 2 * i], hi = e->reg[E_RAH0 / 4 + 2 * i];
		uint8_t a[6] = {(uint8_t)lo,	     (uint8_t)(lo >> 8), (uint8_t)(lo >> 16),
				(uint8_t)(lo >> 24), (uint8_t)hi,	 (uint8_t)(hi >> 8)};

		if ((hi & RAH_AV) && !memcmp(a, d, 6))
			return true;
	}
	return false;
}

void e1000e_rx_fix_csum(uint8_t *f, size_t len, uint16_t start, uint16_t off)
{
	uint32_t at = (uint32_t)start + off;

	if (start >= len || at + 2 > len)
		return;
	pkt_put16(f + at, pkt_csum_fold(pkt_csum_add(0, f + start, len - start)));
}

/* The L4 checksum of [l4, end) with its pseudo-header sum: 0 when good. */
static bool rx_l4_good(const uint8_t *l4, size_t l4len, uint32_t pseudo)
{
	return pkt_csum_fold(pkt_csum_add(pseudo, l4, l4len)) == 0;
}

/* Checksum status bits (low byte) and error bits (<< 24) for the frame. */
static uint32_t rx_csum(const struct e1000e *e, const uint8_t *f, size_t len, uint8_t vflags)
{
	uint32_t rx = e1000e_reg(e, E_RXCSUM), st = 0, pseudo;
	const uint8_t *ip = f + PKT_ETH_HLEN, *l4;
	size_t ihl, l4len;
	uint8_t proto;

	if (!(rx & (RXCSUM_IPOFL | RXCSUM_TUOFL)))
		return RXD_STAT_IXSM;
	if (len >= PKT_ETH_HLEN + 20 && pkt_be16(f + 12) == PKT_ETHERTYPE_IPV4 &&
	    (ip[0] >> 4) == 4) {
		ihl = (size_t)(ip[0] & 15) * 4;
		l4len = (size_t)pkt_be16(ip + 2);
		if (ihl < 20 || l4len < ihl || PKT_ETH_HLEN + l4len > len)
			return 0;
		if (rx & RXCSUM_IPOFL)
			st |= RXD_STAT_IPCS |
			      (pkt_csum_fold(pkt_csum_add(0, ip, ihl)) ? (uint32_t)RXD_ERR_IPE << 24
								       : 0);
		if (pkt_be16(ip + 6) & 0x3fff)
			return st; /* a fragment: no L4 checksum */
		proto = ip[9];
		l4 = ip + ihl;
		l4len -= ihl;
		pseudo = pkt_csum_add(0, ip + 12, 8);
	} else if (len >= PKT_ETH_HLEN + 40 && pkt_be16(f + 12) == 0x86dd) {
		proto = ip[6];
		l4 = ip + 40;
		l4len = pkt_be16(ip + 4);
		if (PKT_ETH_HLEN + 40 + l4len > len)
			return 0;
		pseudo = pkt_csum_add(0, ip + 8, 32);
	} else {
		return 0;
	}
	if (!(rx & RXCSUM_TUOFL) || (proto != PKT_IPPROTO_TCP && proto != PKT_IPPROTO_UDP))
		return st;
	if (proto == PKT_IPPROTO_UDP && (l4len < 8 || !pkt_be16(l4 + 6)))
		return st; /* no UDP checksum to check */
	st |= proto == PKT_IPPROTO_TCP ? RXD_STAT_TCPCS : RXD_STAT_UDPCS;
	if (vflags & 2) /* the backend says it is good (DATA_VALID) */
		return st;
	pseudo += proto + (uint32_t)(l4len >> 16) + (uint32_t)(l4len & 0xffff);
	if (!rx_l4_good(l4, l4len, pseudo))
		st |= (uint32_t)RXD_ERR_TCPE << 24;
	return st;
}

static uint64_t rx_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void rx_put_le(uint8_t *p, uint32_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* An extended or packet-split descriptor's status_error word. */
static uint32_t rx_staterr(uint32_t st, bool eop, bool bad)
{
	uint32_t err = st >> 24;

	return (st & 0xff) | RXD_STAT_DD | (eop ? RXD_STAT_EOP : 0) |
	       (err & RXD_ERR_IPE ? RXDEXT_ERR_IPE : 0) |
	       (err & RXD_ERR_TCPE ? RXDEXT_ERR_TCPE : 0) | (bad ? RXDEXT_ERR_RXE : 0);
}

/*
 * Write the descriptor at g back: length, status (st: status bits, error
 * bits << 24) and, last, the status word with DD, so the driver never sees
 * DD before the rest.
 */
static void rx_writeback(uint8_t *g, bool ext, uint32_t chunk, uint32_t st, bool eop, bool bad)
{
	uint8_t w[16] = {0};
	uint32_t err = st >> 24;

	st = (st & 0xff) | RXD_STAT_DD | (eop ? RXD_STAT_EOP : 0);
	if (ext) { /* mrq, rss/csum, status_error, length, vlan */
		rx_put_le(w + 8,
			  st | (err & RXD_ERR_IPE ? RXDEXT_ERR_IPE : 0) |
			      (err & RXD_ERR_TCPE ? RXDEXT_ERR_TCPE : 0) |
			      (bad ? RXDEXT_ERR_RXE : 0),
			  4);
		rx_put_le(w + 12, chunk, 2);
		memcpy(g, w, 8);
		memcpy(g + 12, w + 12, 4);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		memcpy(g + 8, w + 8, 4);
		return;
	}
	/* legacy: address, length, checksum, status, errors, special */
	st = (st & 0xff) | RXD_STAT_DD | (eop ? RXD_STAT_EOP : 0);
	rx_put_le(w + 8, chunk, 2);
	w[13] = (uint8_t)(err | (bad ? 0x80 : 0));
	memcpy(g + 8, w + 8, 4);
	memcpy(g + 13, w + 13, 3);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(g + 12, (uint8_t)st, __ATOMIC_RELEASE);
}

static void rx_count(struct e1000e *e, const uint8_t *f, size_t len)
{
	e1000e_stat(e, E_GPRC, 1);
	e1000e_stat(e, E_TPR, 1);
	e1000e_stat64(e, E_GORCL, len);
	e1000e_stat64(e, E_TORL, len);
	if (f[0] & 1)
		e1000e_stat(e, memcmp(f, "\xff\xff\xff\xff\xff\xff", 6) ? E_MPRC : E_BPRC, 1);
	E1000E_STAT_ADD(e, rx_packets, 1);
	E1000E_STAT_ADD(e, rx_bytes, len);
}

/*
 * Packet split (RCTL.DTYP 1, 32-byte descriptors: two units of RDH/RDT,
 * datasheet §7.1.4.3): the
 * frame fills buffer 0 (PSRCTL.BSIZE0, 128-byte units: the header buffer)
 * and then buffers 1-3 (1 KiB units) of one descriptor, in order; the
 * driver finds their byte counts in length0 and length[0..2]. A frame the
 * four cannot hold is dropped (oversize).
 */
static int rx_put_ps(struct e1000e *e, const uint8_t *frame, size_t len, size_t total, uint32_t st)
{
	uint32_t ps = e1000e_reg(e, E_PSRCTL), h = e1000e_reg(e, E_RDH), n = rx_ring_size(e);
	uint64_t base = (uint64_t)e1000e_reg(e, E_RDBAH) << 32 | e1000e_reg(e, E_RDBAL);
	size_t size[4] = {(ps & 0x7f) * 128u, (ps >> 8 & 0x3f) * 1024u, (ps >> 16 & 0x3f) * 1024u,
			  (ps >> 24 & 0x3f) * 1024u};
	uint8_t w[32] = {0}, *g, *buf;
	size_t off = 0;
	bool bad = false;

	if (size[0] + size[1] + size[2] + size[3] < total) {
		e1000e_stat(e, E_ROC, 1);
		E1000E_STAT_ADD(e, rx_dropped, 1);
		return -EINVAL;
	}
	e->reg[E_RDH / 4] = (h + 2) % n;
	g = guest_mem_ptr(e->mem, base + 16ull * h, 32);
	if (!g) {
		log_warn_once("e1000e: %s: receive ring outside RAM", e->name);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < 4 && off < total && !bad; i++) {
		size_t c = total - off < size[i] ? total - off : size[i];
		size_t data = off < len ? (len - off < c ? len - off : c) : 0;

		if (!c)
			continue;
		buf = guest_mem_ptr(e->mem, rx_le64(g + 8 * i), c);
		bad = !buf;
		if (bad)
			break;
		memcpy(buf, frame + off, data);
		memset(buf + data, 0, c - data);
		rx_put_le(i ? w + 18 + 2 * (i - 1) : w + 12, (uint32_t)c, 2);
		off += c;
	}
	if (bad)
		log_warn_once("e1000e: %s: receive buffer outside RAM", e->name);
	/* lower, middle (status_error, length0, vlan), upper (header status,
	 * length[3]); status_error, with DD, last */
	memcpy(g, w, 8);
	memcpy(g + 12, w + 12, 20);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	rx_put_le(w + 8, rx_staterr(st, true, bad), 4);
	memcpy(g + 8, w + 8, 4);
	return 0;
}

int e1000e_rx_put(struct e1000e *e, const uint8_t *frame, size_t len, uint8_t vflags)
{
	uint32_t rctl = e1000e_reg(e, E_RCTL), bsz = rx_buf_size(rctl), n = rx_ring_size(e);
	uint64_t base = (uint64_t)e1000e_reg(e, E_RDBAH) << 32 | e1000e_reg(e, E_RDBAL);
	bool ext = e1000e_reg(e, E_RFCTL) & RFCTL_EXTEN;
	uint8_t pad[RX_MIN_FRAME + 4] = {0};
	size_t total, off = 0, crc = rctl & RCTL_SECRC ? 0 : 4;
	uint32_t st, need;

	if (len < PKT_ETH_HLEN || len + crc > (rctl & RCTL_LPE ? RX_MAX_LPE : RX_MAX_STD)) {
		e1000e_stat(e, len < PKT_ETH_HLEN ? E_RUC : E_ROC, 1); /* undersize, oversize */
		E1000E_STAT_ADD(e, rx_dropped, 1);
		return -EINVAL;
	}
	if (!rx_accept(e, frame)) /* not for this NIC: no error, as on a wire */
		return -EINVAL;
	if (len < RX_MIN_FRAME) {
		memcpy(pad, frame, len);
		frame = pad;
		len = RX_MIN_FRAME;
	}
	total = len + crc; /* the FCS the driver strips, as zeros */
	need = rx_ps(e) ? 2 : (uint32_t)((total + bsz - 1) / bsz); /* 16-byte units */
	if (!e1000e_rx_ready(e) || need > rx_free(e)) {
		e1000e_stat(e, E_RNBC, 1);
		return -ENOSPC;
	}
	st = rx_csum(e, frame, len, vflags);
	if (rx_ps(e)) {
		int r = rx_put_ps(e, frame, len, total, st);

		if (!r)
			rx_count(e, frame, len);
		return r;
	}
	for (uint32_t i = 0; i < need; i++) {
		uint32_t h = e1000e_reg(e, E_RDH),
			 chunk = (uint32_t)(total - off < bsz ? total - off : bsz);
		uint8_t *g = guest_mem_ptr(e->mem, base + 16ull * h, 16), *buf;
		size_t data = off < len ? (len - off < chunk ? len - off : chunk) : 0;

		e->reg[E_RDH / 4] = (h + 1) % n;
		if (!g) {
			log_warn_once("e1000e: %s: receive ring outside RAM", e->name);
			return -EINVAL;
		}
		buf = guest_mem_ptr(e->mem, rx_le64(g), chunk);
		if (buf) {
			memcpy(buf, frame + off, data);
			memset(buf + data, 0, chunk - data);
		} else {
			log_warn_once("e1000e: %s: receive buffer outside RAM", e->name);
		}
		rx_writeback(g, ext, chunk, i + 1 == need ? st : 0, i + 1 == need, !buf);
		off += chunk;
	}
	rx_count(e, frame, len);
	return 0;
}
