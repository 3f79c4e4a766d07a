// SPDX-License-Identifier: MIT
/*
 * e1000e_snap.c - the 82574L in a snapshot (e1000e.h, docs/snapshot.md).
 *
 * Saved, with the I/O thread held between two turns (e1000e_freeze): the
 * register file (its non-zero registers: rings' bases, lengths, heads and
 * tails, ICR, IMS, IAM, EIAC, IVAR, ITR and EITR, the receive addresses
 * and filters, the statistics...), the PHY's pages, the link, the
 * interrupt causes moderation held back and the offload context of the
 * last context descriptor. The PCI function (config space, MSI-X table
 * and pending bits, INTx) is saved by the PCI path (pci_snap.c). A packet
 * the TX ring was gathering when the thread was held (its descriptors
 * already handed back) and the replies vmlet owed the guest (DHCP, ARP)
 * are dropped, as on a wire; the backend is the restoring vmlet's own,
 * and a link that differs from the saved one is told to the guest (LSC).
 *
 * A load takes only what the guest could have made of the device: ring
 * lengths and bases as the registers keep them, heads and tails inside
 * their ring, a ring with a length inside guest RAM, no bit the device
 * never sets in STATUS, IMS, CTRL, CTRL_EXT, EERD or EEWR, the PHY's
 * read-only registers as the device has them, an offload context whose
 * fields fit the descriptor's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/nic/e1000e_int.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/log.h"
#include "vmm/vm/guest_mem.h"

enum { E1000E_SNAP_REGS = 1, E1000E_SNAP_PHY, E1000E_SNAP_STATE };

/* E1000E_SNAP_STATE: u32 values */
enum {
	ST_LINK,
	ST_DEFER_RX,
	ST_DEFER_TX,
	ST_TX_PARTIAL, /* a packet was being gathered: its rest is dropped */
	ST_IPCSS,
	ST_IPCSO,
	ST_IPCSE,
	ST_TUCSS,
	ST_TUCSO,
	ST_TUCSE,
	ST_PAYLEN,
	ST_HDR_LEN,
	ST_TUCMD,
	ST_MSS,
	ST_N
};

int e1000e_freeze(struct e1000e *e)
{
	if (!e->started)
		return 0; /* the caller turns e1000e_io_turn() itself */
	pthread_mutex_lock(&e->lock);
	e->hold = true;
	pthread_mutex_unlock(&e->lock);
	e1000e_kick(e);
	pthread_mutex_lock(&e->lock);
	while (!e->held && !e->quit)
		pthread_cond_wait(&e->hold_cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
	return 0;
}

void e1000e_thaw(struct e1000e *e)
{
	pthread_mutex_lock(&e->lock);
	e->hold = false;
	pthread_cond_broadcast(&e->hold_cond);
	pthread_mutex_unlock(&e->lock);
	e1000e_kick(e);
}

static void e1000e_save_state(const struct e1000e *e, uint32_t *st)
{
	const struct e1000e_txctx *c = &e->ctx;

	st[ST_LINK] = e->link_up;
	st[ST_DEFER_RX] = e->irq_deferred[0];
	st[ST_DEFER_TX] = e->irq_deferred[1];
	st[ST_TX_PARTIAL] = e->tx.len || e->tx.bad;
	st[ST_IPCSS] = c->ipcss;
	st[ST_IPCSO] = c->ipcso;
	st[ST_IPCSE] = c->ipcse;
	st[ST_TUCSS] = c->tucss;
	st[ST_TUCSO] = c->tucso;
	st[ST_TUCSE] = c->tucse;
	st[ST_PAYLEN] = c->paylen;
	st[ST_HDR_LEN] = c->hdr_len;
	st[ST_TUCMD] = c->tucmd;
	st[ST_MSS] = c->mss;
}

int e1000e_save(struct e1000e *e, struct snap_buf *b)
{
	uint32_t st[ST_N], pair[2];
	size_t mark;
	int ret = 0;

	pthread_mutex_lock(&e->lock);
	if (e->started && !e->held) {
		ret = error_errno(-ENOTSUP, "snapshot: e1000e %s: its I/O thread was not held",
				  e->name);
		goto out;
	}
	mark = snap_buf_open(b, E1000E_SNAP_REGS);
	for (uint32_t i = 0; i < E1000E_REGS; i++) {
		if (!e->reg[i])
			continue;
		pair[0] = 4 * i;
		pair[1] = e->reg[i];
		snap_buf_put(b, pair, sizeof(pair));
	}
	snap_buf_close(b, mark);
	snap_buf_item(b, E1000E_SNAP_PHY, e->phy, sizeof(e->phy));
	e1000e_save_state(e, st);
	snap_buf_item(b, E1000E_SNAP_STATE, st, sizeof(st));
	ret = b->err;
out:
	pthread_mutex_unlock(&e->lock);
	return ret;
}

/* The register file's pairs: offsets aligned, inside, increasing. */
static int e1000e_load_regs(struct snap_cur *c, uint32_t *r)
{
	struct snap_cur body;
	uint32_t pair[2];
	int64_t last = -1;

	if (snap_cur_want_any(c, E1000E_SNAP_REGS, &body) || body.left % sizeof(pair))
		return -EBADMSG;
	while (body.left) {
		snap_cur_bytes(&body, pair, sizeof(pair));
		if (pair[0] % 4 || pair[0] >= E1000E_MMIO_SIZE || (int64_t)pair[0] <= last)
			return -EBADMSG;
		last = pair[0];
		r[pair[0] / 4] = pair[1];
	}
	return 0;
}

/* A ring (its base register at bal): NULL, or what is wrong with it. */
static const char *e1000e_ring_bad(const struct e1000e *e, const uint32_t *r, uint32_t bal)
{
	uint32_t len = r[(bal + 8) / 4], h = r[(bal + 0x10) / 4], t = r[(bal + 0x18) / 4];
	uint64_t base = (uint64_t)r[(bal + 4) / 4] << 32 | r[bal / 4];

	if ((len & ~0xfff80u) || (base & 0xf) || h > 0xffff || t > 0xffff)
		return "a ring register the device never holds";
	if (!len)
		return h || t ? "a head or tail in a ring without length" : NULL;
	if (h >= len / 16 || t >= len / 16)
		return "a head or tail outside its ring";
	return guest_mem_ptr(e->mem, base, len) ? NULL : "a ring outside guest RAM";
}

static const char *e1000e_regs_bad(const struct e1000e *e, const uint32_t *r, bool link)
{
	const uint32_t status_bits =
	    STATUS_ASDV_1000 | STATUS_GIO_MASTER_EN | STATUS_LU | STATUS_FD | STATUS_SPEED_1000;
	const char *why = e1000e_ring_bad(e, r, E_RDBAL);

	if (!why)
		why = e1000e_ring_bad(e, r, E_TDBAL);
	if (why)
		return why;
	if ((r[E_STATUS / 4] & ~status_bits) || !(r[E_STATUS / 4] & STATUS_LU) != !link)
		return "STATUS bits the device never sets";
	if (r[E_IMS / 4] & ~0x01ffffffu)
		return "IMS bits the device never sets";
	if ((r[E_CTRL / 4] & (CTRL_RST | CTRL_PHY_RST)) || (r[E_CTRL_EXT / 4] & CTRL_EXT_PBA_CLR))
		return "a self-clearing CTRL or CTRL_EXT bit set";
	if ((r[E_EERD / 4] & 3) != EERD_DONE || r[E_EEWR / 4] != EERD_DONE)
		return "an EEPROM access in flight";
	return NULL;
}

/* Can the guest write PHY register reg of page? (e1000e.c's
 * e1000e_phy_write: the page selects registers 16..31 but 22 itself.) */
static bool e1000e_phy_writable(unsigned int page, unsigned int reg)
{
	if (reg < 16)
		return !page && reg != PHY_STATUS && reg != PHY_ID1 && reg != PHY_ID2 && reg != 5 &&
		       reg != 10 && reg != 15;
	return reg != PHY_COPPER_STAT1 && (reg != PHY_PAGE || !page);
}

/* The saved PHY against e's (as created, link up): the read-only
 * registers equal but for the link bits, which must say link. */
static const char *e1000e_phy_bad(const struct e1000e *e, uint16_t phy[][32], bool link)
{
	const uint16_t sr = MII_SR_LINK | MII_SR_AUTONEG_DONE;

	if (phy[0][PHY_CTRL] & (MII_CR_RESET | MII_CR_RESTART_AUTONEG))
		return "a self-clearing PHY control bit set";
	if ((phy[0][PHY_STATUS] & sr) != (link ? sr : 0) ||
	    !(phy[0][PHY_COPPER_STAT1] & M88_PSSR_LINK) != !link)
		return "PHY link bits that do not match the link";
	for (unsigned int p = 0; p < E1000E_PHY_PAGES; p++)
		for (unsigned int i = 0; i < 32; i++) {
			uint16_t mask = 0xffff;

			if (!p && i == PHY_STATUS)
				mask = (uint16_t)~sr;
			if (!p && i == PHY_COPPER_STAT1)
				mask = (uint16_t)~M88_PSSR_LINK;
			if (!e1000e_phy_writable(p, i) && ((phy[p][i] ^ e->phy[p][i]) & mask))
				return "a read-only PHY register changed";
		}
	return NULL;
}

static const char *e1000e_state_bad(const uint32_t *st)
{
	if (st[ST_LINK] > 1 || st[ST_TX_PARTIAL] > 1)
		return "a flag that is neither 0 nor 1";
	if (st[ST_IPCSS] > 0xff || st[ST_IPCSO] > 0xff || st[ST_TUCSS] > 0xff ||
	    st[ST_TUCSO] > 0xff || st[ST_HDR_LEN] > 0xff || st[ST_TUCMD] > 0xff ||
	    st[ST_IPCSE] > 0xffff || st[ST_TUCSE] > 0xffff || st[ST_MSS] > 0xffff ||
	    st[ST_PAYLEN] > 0xfffff)
		return "an offload context a descriptor cannot hold";
	return NULL;
}

/* Everything checked: make it the device's (lock held). */
static void e1000e_load_set(struct e1000e *e, const uint32_t *r, uint16_t phy[][32],
			    const uint32_t *st)
{
	memcpy(e->reg, r, sizeof(e->reg));
	memcpy(e->phy, phy, sizeof(e->phy));
	e->link_up = st[ST_LINK];
	e->irq_deferred[0] = st[ST_DEFER_RX];
	e->irq_deferred[1] = st[ST_DEFER_TX];
	e->irq_last_ns[0] = e->irq_last_ns[1] = 0; /* what was held back is due */
	e->ctx = (struct e1000e_txctx){
	    .ipcss = (uint8_t)st[ST_IPCSS],
	    .ipcso = (uint8_t)st[ST_IPCSO],
	    .ipcse = (uint16_t)st[ST_IPCSE],
	    .tucss = (uint8_t)st[ST_TUCSS],
	    .tucso = (uint8_t)st[ST_TUCSO],
	    .tucse = (uint16_t)st[ST_TUCSE],
	    .paylen = st[ST_PAYLEN],
	    .hdr_len = (uint8_t)st[ST_HDR_LEN],
	    .tucmd = (uint8_t)st[ST_TUCMD],
	    .mss = (uint16_t)st[ST_MSS],
	};
	e->tx.len = 0;
	e->tx.bad = st[ST_TX_PARTIAL]; /* the rest of that packet goes nowhere */
	e->inject_head = e->inject_n = 0;
}

int e1000e_load(struct e1000e *e, struct snap_cur *c)
{
	uint16_t phy[E1000E_PHY_PAGES][32];
	uint32_t st[ST_N], *r = calloc(E1000E_REGS, sizeof(*r));
	const char *why = NULL;
	bool link_now;
	int ret;

	if (!r)
		return -ENOMEM;
	ret = e1000e_load_regs(c, r);
	if (!ret && (snap_cur_want(c, E1000E_SNAP_PHY, phy, sizeof(phy)) ||
		     snap_cur_want(c, E1000E_SNAP_STATE, st, sizeof(st))))
		ret = -EBADMSG;
	if (ret)
		goto out;
	pthread_mutex_lock(&e->lock);
	why = e1000e_state_bad(st);
	if (!why)
		why = e1000e_regs_bad(e, r, st[ST_LINK]);
	if (!why)
		why = e1000e_phy_bad(e, phy, st[ST_LINK]);
	link_now = e->link_up;
	if (!why)
		e1000e_load_set(e, r, phy, st);
	pthread_mutex_unlock(&e->lock);
	if (why) {
		ret = error_errno(-EBADMSG, "restore: e1000e %s: %s", e->name, why);
		goto out;
	}
	/* the restoring vmlet's link: a change is an LSC, and a kick */
	e1000e_set_link(e, link_now);
out:
	free(r);
	return ret;
}
