// SPDX-License-Identifier: MIT
/*
 * e1000e.c - the 82574L's registers: reset values, the EEPROM behind
 * EERD, the PHY behind MDIC, the interrupt causes and their delivery
 * (MSI-X through IVAR with EIAC auto-clear and IAM auto-mask, or INTA#),
 * statistics, and the PCI function. The rings are e1000e_tx.c and
 * e1000e_rx.c, the thread e1000e_io.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/nic/e1000e_int.h"
#include "vmm/util/log.h"
#include "vmm/vm/irq.h"

/* EEPROM image: QEMU's 82574 template (words of the datasheet's table 36
 * that the drivers read), the MAC in words 0-2 and the device ID in 11
 * and 13 put in by e1000e_eeprom_init(), the checksum word last. */
static const uint16_t e1000e_eeprom_tmpl[E1000E_EEPROM_WORDS] = {
    0x0000, 0x0000, 0x0000, 0x0420, 0xf746, 0x2010, 0xffff, 0xffff, 0x0000, 0x0000, 0x026b,
    0x0000, 0x8086, 0x0000, 0x0000, 0x8058, 0x0000, 0x2001, 0x7e7c, 0xffff, 0x1000, 0x00c8,
    0x0000, 0x2704, 0x6cc9, 0x3150, 0x070e, 0x460b, 0x2d84, 0x0100, 0xf000, 0x0706, 0x6000,
    0x0080, 0x0f04, 0x7fff, 0x4f01, 0xc600, 0x0000, 0x20ff, 0x0028, 0x0003, 0x0000, 0x0000,
    0x0000, 0x0003, 0x0000, 0xffff, 0x0100, 0xc000, 0x121c, 0xc007, 0xffff, 0xffff, 0xffff,
    0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0x0000, 0x0120, 0xffff, 0x0000,
};

static void e1000e_eeprom_init(struct e1000e *e)
{
	uint16_t sum = 0;

	memcpy(e->eeprom, e1000e_eeprom_tmpl, sizeof(e->eeprom));
	for (unsigned int i = 0; i < 3; i++)
		e->eeprom[i] = (uint16_t)(e->att.mac[2 * i] | e->att.mac[2 * i + 1] << 8);
	e->eeprom[11] = e->eeprom[13] = E1000E_DEVICE_ID;
	for (unsigned int i = 0; i < E1000E_EEPROM_WORDS - 1; i++)
		sum = (uint16_t)(sum + e->eeprom[i]);
	e->eeprom[E1000E_EEPROM_WORDS - 1] = (uint16_t)(E1000E_EEPROM_SUM - sum);
}

static void e1000e_phy_link(struct e1000e *e)
{
	uint16_t *p0 = e->phy[0];

	if (e->link_up) {
		p0[PHY_STATUS] |= MII_SR_LINK | MII_SR_AUTONEG_DONE;
		p0[PHY_COPPER_STAT1] |= M88_PSSR_LINK;
	} else {
		p0[PHY_STATUS] &= (uint16_t) ~(MII_SR_LINK | MII_SR_AUTONEG_DONE);
		p0[PHY_COPPER_STAT1] &= (uint16_t)~M88_PSSR_LINK;
	}
}

static void e1000e_phy_reset(struct e1000e *e)
{
	uint16_t *p0 = e->phy[0];

	memset(e->phy, 0, sizeof(e->phy));
	p0[PHY_CTRL] = 0x1140;	 /* 1000 Mb/s, full duplex, autoneg enabled */
	p0[PHY_STATUS] = 0x7949; /* capabilities, preamble suppression */
	p0[PHY_ID1] = 0x0141;
	p0[PHY_ID2] = 0x0cb1; /* the 82574's PHY (BME1000) */
	p0[4] = 0x0de1;	      /* autoneg advertisement */
	p0[5] = 0x7e0;	      /* link partner ability */
	p0[6] = 0x4;
	p0[7] = 0x2001;
	p0[9] = 0x0f00;	 /* 1000BASE-T control */
	p0[10] = 0x3c00; /* 1000BASE-T status */
	p0[15] = 0x3000; /* extended status: 1000BASE-T */
	p0[16] = 0x3360;
	p0[PHY_COPPER_STAT1] = 0xa808; /* 1000 Mb/s, full duplex, resolved */
	e->phy[2][16] = 0x0088;
	e->phy[2][21] = 0x1046;
	e->phy[3][18] = 0x4005;
	e1000e_phy_link(e);
}

/* Registers 16..31 but the page select itself are paged; 0..15 are not. */
static uint16_t *e1000e_phy_reg(struct e1000e *e, unsigned int reg)
{
	unsigned int page = reg < 16 || reg == PHY_PAGE ? 0 : e->phy[0][PHY_PAGE];

	return page < E1000E_PHY_PAGES ? &e->phy[page][reg & 31] : NULL;
}

static void e1000e_phy_write(struct e1000e *e, unsigned int reg, uint16_t v)
{
	uint16_t *p = e1000e_phy_reg(e, reg);

	if (!p || reg == PHY_STATUS || reg == PHY_ID1 || reg == PHY_ID2 || reg == 5 || reg == 10 ||
	    reg == 15 || reg == PHY_COPPER_STAT1)
		return; /* read-only, or a page that does not exist */
	if (reg == PHY_CTRL)
		v &= (uint16_t) ~(MII_CR_RESET | MII_CR_RESTART_AUTONEG); /* self-clearing */
	*p = v;
}

static void e1000e_mdic(struct e1000e *e, uint32_t v)
{
	unsigned int phy = (v >> 21) & 31, reg = (v >> 16) & 31;
	uint16_t *p;

	v &= ~(MDIC_READY | MDIC_ERROR);
	if (phy != E1000E_PHY_ADDR) {
		v |= MDIC_ERROR;
	} else if ((v & (3u << 26)) == MDIC_OP_READ) {
		p = e1000e_phy_reg(e, reg);
		v = (v & ~0xffffu) | (p ? *p : 0);
	} else if ((v & (3u << 26)) == MDIC_OP_WRITE) {
		e1000e_phy_write(e, reg, (uint16_t)v);
	} else {
		v |= MDIC_ERROR;
	}
	e->reg[E_MDIC / 4] = v | MDIC_READY;
	if (v & MDIC_INT_EN)
		e1000e_raise(e, ICR_MDAC);
}

/* The MAC address into receive address 0, as the EEPROM load does. */
static void e1000e_load_mac(struct e1000e *e)
{
	const uint8_t *m = e->att.mac;

	e->reg[E_RAL0 / 4] = (uint32_t)m[0] | m[1] << 8 | m[2] << 16 | (uint32_t)m[3] << 24;
	e->reg[E_RAH0 / 4] = (uint32_t)m[4] | m[5] << 8 | RAH_AV;
}

/* Power-on and CTRL.RST: QEMU's reset values for what the drivers read. */
static void e1000e_reset(struct e1000e *e)
{
	memset(e->reg, 0, sizeof(e->reg));
	e->reg[E_CTRL / 4] = 0x00140249; /* FD, SLU, 1000 Mb/s, SWDPIN0/2, ADVD3WUC */
	e->reg[E_STATUS / 4] = STATUS_ASDV_1000 | STATUS_GIO_MASTER_EN;
	e->reg[E_EECD / 4] = EECD_PRES | EECD_AUTO_RD;
	e->reg[E_EERD / 4] = EERD_DONE;
	e->reg[E_EEWR / 4] = EERD_DONE;
	e->reg[E_PBA / 4] = 0x00140014;
	e->reg[E_EXTCNF_CTRL / 4] = 1u << 3;
	e->reg[0x1010 / 4] = 0x80040000; /* EEMNGCTL: the NVM's port 0 config done */
	e->reg[E_RXDCTL / 4] = 1u << 16;
	e->reg[(E_RXDCTL + 0x100) / 4] = 1u << 16;
	e->reg[E_RXCSUM / 4] = RXCSUM_IPOFL | RXCSUM_TUOFL;
	e->reg[E_GCR / 4] = (1u << 9) | (3u << 23); /* L0s adjust, L1 entry latency */
	e->reg[E_FACTPS / 4] = 0x20000000 | 1u;
	e->reg[E_SWSM / 4] = 1;
	e->reg[E_ITR / 4] = 500;
	e->reg[0x38 / 4] = 0x8100; /* VET */
	e1000e_load_mac(e);
	e1000e_phy_reset(e);
	if (e->link_up)
		e->reg[E_STATUS / 4] |= STATUS_LU | STATUS_FD | STATUS_SPEED_1000;
	memset(&e->ctx, 0, sizeof(e->ctx));
	memset(e->irq_deferred, 0, sizeof(e->irq_deferred));
	e->tx.len = 0;
	e->tx.bad = false;
	pci_intx_set(&e->pci, false);
}

/* ---- interrupts (lock held) ----------------------------------------------- */

static void e1000e_msix_send(struct e1000e *e, unsigned int vec)
{
	uint64_t addr;
	uint32_t data;

	if (!pci_msix_request(&e->pci, vec))
		return; /* masked: pending, sent at unmask (e1000e_msix_update) */
	pci_msix_get(&e->pci, vec, &addr, &data);
	e->msix_sent++;
	if (addr && e->pci.host && e->pci.host->vm &&
	    irq_msi_signal(e->pci.host->vm, addr, data) < 0)
		log_warn_once("e1000e: %s: MSI-X delivery failed", e->name);
}

/* The queue cause bit of each vector field of IVAR (RXQ0, RXQ1, TXQ0,
 * TXQ1, other at bits 0, 4, 8, 12, 16). */
static const uint32_t e1000e_ivar_cause[5] = {ICR_RXQ0, ICR_RXQ1, ICR_TXQ0, ICR_TXQ1, ICR_OTHER};

/* Send the vectors of the causes in want that are pending and enabled,
 * with the 82574's auto-clear (EIAC) and auto-mask (IAM with EIAME). */
static void e1000e_msix_eval(struct e1000e *e, uint32_t want)
{
	uint32_t ivar = e1000e_reg(e, E_IVAR);

	for (unsigned int i = 0; i < 5; i++) {
		uint32_t c = e1000e_ivar_cause[i], f = (ivar >> (4 * i)) & 0xf;

		if (!(want & c & e1000e_reg(e, E_ICR) & e1000e_reg(e, E_IMS)))
			continue;
		if ((f & IVAR_VALID) && (f & 7) < E1000E_MSIX_VECS)
			e1000e_msix_send(e, f & 7);
		e->reg[E_ICR / 4] &= ~(e1000e_reg(e, E_EIAC) & c);
		if (e1000e_reg(e, E_CTRL_EXT) & CTRL_EXT_EIAME)
			e->reg[E_IMS / 4] &= ~(e1000e_reg(e, E_IAM) & c);
	}
}

static void e1000e_irq_update(struct e1000e *e, uint32_t want)
{
	if (pci_msix_enabled(&e->pci)) {
		pci_intx_set(&e->pci, false);
		e1000e_msix_eval(e, want);
		return;
	}
	pci_intx_set(&e->pci, (e1000e_reg(e, E_ICR) & e1000e_reg(e, E_IMS)) != 0);
}

void e1000e_raise(struct e1000e *e, uint32_t causes)
{
	uint32_t ivar = e1000e_reg(e, E_IVAR);

	/* the 82574's queue causes beside the legacy ones (§7.4.2) */
	if ((causes & (ICR_RXT0 | ICR_RXDMT0 | ICR_RXQ0)) && (ivar & IVAR_VALID))
		causes |= ICR_RXQ0;
	if ((causes & (ICR_TXDW | ICR_TXQE | ICR_TXQ0)) && ((ivar >> 8) & IVAR_VALID))
		causes |= ICR_TXQ0;
	if ((causes & (ICR_OTHER_CAUSES | ICR_OTHER)) && ((ivar >> 16) & IVAR_VALID))
		causes |= ICR_OTHER;
	e->reg[E_ICR / 4] |= causes;
	e1000e_irq_update(e, causes);
}

static uint64_t e1000e_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The interval for the RX (0) or TX (1) interrupt, in ns. */
static uint64_t e1000e_interval_ns(struct e1000e *e, unsigned int idx)
{
	uint32_t f = (e1000e_reg(e, E_IVAR) >> (idx ? 8 : 0)) & 0xf, v;

	if (pci_msix_enabled(&e->pci) && (f & IVAR_VALID) && (f & 7) < E1000E_MSIX_VECS)
		v = e1000e_reg(e, E_EITR0 + 4 * (f & 7));
	else
		v = e1000e_reg(e, E_ITR);
	return (uint64_t)(v & 0xffff) * 256;
}

void e1000e_raise_moderated(struct e1000e *e, uint32_t causes, unsigned int idx)
{
	uint64_t now = e->clock_ns();

	if (now - e->irq_last_ns[idx] < e1000e_interval_ns(e, idx)) {
		e->irq_deferred[idx] |= causes;
		return;
	}
	e->irq_last_ns[idx] = now;
	e->irq_deferred[idx] = 0;
	e1000e_raise(e, causes);
}

int e1000e_moderation_due(struct e1000e *e)
{
	uint64_t now = e->clock_ns(), left, min = UINT64_MAX;

	for (unsigned int i = 0; i < 2; i++) {
		uint64_t iv = e1000e_interval_ns(e, i), since = now - e->irq_last_ns[i];

		if (!e->irq_deferred[i])
			continue;
		if (since >= iv) {
			e1000e_raise_moderated(e, e->irq_deferred[i], i);
			continue;
		}
		left = iv - since;
		min = left < min ? left : min;
	}
	return min == UINT64_MAX ? -1 : (int)((min + 999999) / 1000000);
}

static void e1000e_msix_update(void *opaque, unsigned int vec, bool fire)
{
	struct e1000e *e = opaque;
	uint32_t ivar;

	if (!fire)
		return;
	pthread_mutex_lock(&e->lock);
	ivar = e1000e_reg(e, E_IVAR);
	for (unsigned int i = 0; i < 5; i++)
		if (((ivar >> (4 * i)) & 0xf) == (IVAR_VALID | vec))
			e1000e_msix_eval(e, e1000e_ivar_cause[i]);
	pthread_mutex_unlock(&e->lock);
}

/* ICR read: the causes, then cleared; IAME masks IAM's causes. */
static uint32_t e1000e_icr_read(struct e1000e *e)
{
	uint32_t v = e1000e_reg(e, E_ICR);

	if (v & e1000e_reg(e, E_IMS))
		v |= ICR_INT_ASSERTED;
	if ((e1000e_reg(e, E_CTRL_EXT) & CTRL_EXT_IAME) && (v & ICR_INT_ASSERTED))
		e->reg[E_IMS / 4] &= ~e1000e_reg(e, E_IAM);
	e->reg[E_ICR / 4] = 0;
	e1000e_irq_update(e, 0);
	return v;
}

void e1000e_stat(struct e1000e *e, uint32_t off, uint32_t v)
{
	uint32_t *r = &e->reg[off / 4];

	*r = *r + v < *r ? UINT32_MAX : *r + v;
}

void e1000e_stat64(struct e1000e *e, uint32_t off_lo, uint64_t v)
{
	uint64_t cur = (uint64_t)e->reg[off_lo / 4 + 1] << 32 | e->reg[off_lo / 4];

	cur = cur + v < cur ? UINT64_MAX : cur + v;
	e->reg[off_lo / 4] = (uint32_t)cur;
	e->reg[off_lo / 4 + 1] = (uint32_t)(cur >> 32);
}

/* ---- register file ------------------------------------------------------- */

static uint32_t e1000e_read_reg(struct e1000e *e, uint32_t off)
{
	uint32_t v;

	switch (off) {
	case E_ICR:
		return e1000e_icr_read(e);
	case E_ICS:
		return e1000e_reg(e, E_ICR);
	case E_IMC:
		return 0;
	case E_STATUS:
		v = e1000e_reg(e, E_STATUS) & ~STATUS_GIO_MASTER_EN;
		return v |
		       (e1000e_reg(e, E_CTRL) & CTRL_GIO_MASTER_DISABLE ? 0 : STATUS_GIO_MASTER_EN);
	case E_EECD:
		v = e1000e_reg(e, E_EECD) | EECD_PRES | EECD_AUTO_RD;
		return v & EECD_REQ ? v | EECD_GNT : v & ~EECD_GNT;
	}
	v = e->reg[off / 4];
	if (off >= E_STATS && off < E_STATS_END)
		e->reg[off / 4] = 0; /* clear on read */
	return v;
}

static void e1000e_eerd(struct e1000e *e, uint32_t v)
{
	uint32_t addr = (v >> 2) & 0x3fff;
	uint16_t word = addr < E1000E_EEPROM_WORDS ? e->eeprom[addr] : 0xffff;

	if (!(v & EERD_START))
		return;
	e->reg[E_EERD / 4] = (uint32_t)word << 16 | addr << 2 | EERD_DONE;
}

/* RCTL, TCTL, the tails: the I/O thread looks again. */
static bool e1000e_write_ring(struct e1000e *e, uint32_t off, uint32_t v)
{
	switch (off) {
	case E_RDLEN:
	case E_TDLEN:
		e->reg[off / 4] = v & 0xfff80; /* multiples of 128 bytes */
		return true;
	case E_RDBAL:
	case E_TDBAL:
		e->reg[off / 4] = v & ~0xfu;
		return true;
	case E_RDH:
	case E_RDT:
	case E_TDH:
	case E_TDT:
		e->reg[off / 4] = v & 0xffff;
		return true;
	case E_RCTL:
		if ((v & RCTL_EN) && (v & RCTL_DTYP) == RCTL_DTYP_PS && !e->ps_seen) {
			e->ps_seen = true; /* (tests/nested: the jumbo MTU took this path) */
			log_info("e1000e: %s: packet-split receive", e->name);
		}
		e->reg[off / 4] = v;
		return true;
	case E_TCTL:
		e->reg[off / 4] = v;
		return true;
	}
	return false;
}

static void e1000e_write_reg(struct e1000e *e, uint32_t off, uint32_t v)
{
	if (e1000e_write_ring(e, off, v)) {
		e1000e_kick(e);
		return;
	}
	switch (off) {
	case E_CTRL:
		if (v & CTRL_RST) {
			e1000e_reset(e);
			e1000e_kick(e);
			return;
		}
		if (v & CTRL_PHY_RST)
			e1000e_phy_reset(e);
		e->reg[E_CTRL / 4] = v & ~(CTRL_RST | CTRL_PHY_RST);
		return;
	case E_STATUS:
		return; /* read-only */
	case E_EERD:
		e1000e_eerd(e, v);
		return;
	case E_ICR:
		e->reg[E_ICR / 4] &= ~v; /* write 1 to clear */
		e1000e_irq_update(e, 0);
		return;
	case E_ICS:
		e1000e_raise(e, v);
		return;
	case E_IMS:
		e->reg[E_IMS / 4] |= v & 0x01ffffff;
		e1000e_irq_update(e, v);
		return;
	case E_IMC:
		e->reg[E_IMS / 4] &= ~v;
		e1000e_irq_update(e, 0);
		return;
	case E_MDIC:
		e1000e_mdic(e, v);
		return;
	case E_CTRL_EXT:
		e->reg[off / 4] = v & ~CTRL_EXT_PBA_CLR;
		return;
	case E_EEWR:
		e->reg[off / 4] = EERD_DONE; /* the EEPROM is not writable */
		return;
	default:
		if (off >= E_STATS && off < E_STATS_END)
			return; /* read-only counters */
		e->reg[off / 4] = v;
		return;
	}
}

static void e1000e_mmio_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct e1000e *e = dev;
	uint32_t v = 0;

	if (off < E1000E_MMIO_SIZE) {
		pthread_mutex_lock(&e->lock);
		v = e1000e_read_reg(e, (uint32_t)off & ~3u);
		pthread_mutex_unlock(&e->lock);
	}
	v >>= 8 * (off & 3);
	memcpy(data, &v, len > 4 ? 4 : len);
	if (len > 4)
		memset((uint8_t *)data + 4, 0, len - 4);
}

static void e1000e_mmio_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct e1000e *e = dev;
	uint32_t v = 0;

	/* the drivers write whole registers; a narrower write is ignored */
	if (len != 4 || (off & 3) || off >= E1000E_MMIO_SIZE)
		return;
	memcpy(&v, data, 4);
	pthread_mutex_lock(&e->lock);
	e1000e_write_reg(e, (uint32_t)off, v);
	pthread_mutex_unlock(&e->lock);
}

static const struct io_ops e1000e_mmio_ops = {.read = e1000e_mmio_read, .write = e1000e_mmio_write};

/* BAR1 (flash) and what BAR3 holds beside the MSI-X table and PBA */
static void e1000e_zero_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	(void)dev;
	(void)off;
	memset(data, 0, len);
}

static void e1000e_zero_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	(void)dev;
	(void)off;
	(void)data;
	(void)len;
}

static const struct io_ops e1000e_zero_ops = {.read = e1000e_zero_read, .write = e1000e_zero_write};

static const struct pci_dev_cb e1000e_pci_cb = {
    .msix_update = e1000e_msix_update,
};

void e1000e_set_link(struct e1000e *e, bool up)
{
	pthread_mutex_lock(&e->lock);
	if (e->link_up != up) {
		e->link_up = up;
		if (up)
			e->reg[E_STATUS / 4] |= STATUS_LU | STATUS_FD | STATUS_SPEED_1000;
		else
			e->reg[E_STATUS / 4] &= ~STATUS_LU;
		e1000e_phy_link(e);
		e1000e_raise(e, ICR_LSC);
	}
	pthread_mutex_unlock(&e->lock);
	e1000e_kick(e);
}

/* ---- the PCI function ------------------------------------------------------ */

int e1000e_pci_setup(struct e1000e *e, struct pci_host *host)
{
	int r;

	e->mem = host->mem;
	e->link_up = true;
	e->clock_ns = e1000e_now_ns;
	e1000e_eeprom_init(e);
	/* QEMU's e1000e: revision 0, subsystem 8086:0000 */
	pci_dev_init(&e->pci, E1000E_VENDOR_ID, E1000E_DEVICE_ID, 0x020000, 0, E1000E_VENDOR_ID, 0,
		     &e1000e_pci_cb, e);
	e1000e_reset(e);
	r = pci_bar_add(&e->pci, 0, E1000E_MMIO_SIZE, &e1000e_mmio_ops, e);
	if (!r)
		r = pci_bar_add(&e->pci, 1, E1000E_FLASH_SIZE, &e1000e_zero_ops, e);
	if (!r)
		r = pci_bar_add(&e->pci, 3, E1000E_MSIX_SIZE, &e1000e_zero_ops, e);
	if (!r)
		r = pci_msix_init(&e->pci, E1000E_MSIX_VECS, 3, 0, E1000E_MSIX_PBA);
	if (!r)
		r = pci_dev_add(host, &e->pci);
	return r;
}
