// SPDX-License-Identifier: MIT
/*
 * ahci.c - the polled guest AHCI driver (ahci.h).
 */
#include "firmware/lib/ahci.h"

#define HBA_CAP 0x00
#define HBA_GHC 0x04
#define HBA_PI	0x0c
#define GHC_AE	(1u << 31)

#define P_CLB  0x00
#define P_FB   0x08
#define P_IS   0x10
#define P_IE   0x14
#define P_CMD  0x18
#define P_TFD  0x20
#define P_SIG  0x24
#define P_SSTS 0x28
#define P_SERR 0x30
#define P_SACT 0x34
#define P_CI   0x38

#define CMD_ST	(1u << 0)
#define CMD_FRE (1u << 4)
#define CMD_FR	(1u << 14)
#define CMD_CR	(1u << 15)
#define CMD_CLO (1u << 3)
#define IS_TFES (1u << 30)
#define TFD_BAD 0x89u /* BSY, DRQ, ERR */

static uint32_t ahci_rd(const struct fw_ahci_port *p, uint32_t off)
{
	return *(volatile uint32_t *)(p->regs + off);
}

static void ahci_wr(const struct fw_ahci_port *p, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(p->regs + off) = v;
}

uint32_t fw_ahci_ports(uint32_t cap, uint32_t pi)
{
	uint32_t np = (cap & 0x1f) + 1; /* CAP.NP: ports - 1 */

	return np >= 32 ? pi : pi & ((1u << np) - 1);
}

volatile uint8_t *fw_ahci_hba_init(const struct fw_pci_fn *f, uint64_t *next, uint32_t *ports)
{
	volatile uint8_t *abar = (volatile uint8_t *)(uintptr_t)fw_pci_bar(f, 5, next);

	*ports = 0;
	if (!abar)
		return NULL;
	fw_pci_write16(f, FW_PCI_COMMAND,
		       fw_pci_read16(f, FW_PCI_COMMAND) | FW_PCI_COMMAND_MEMORY |
			   FW_PCI_COMMAND_MASTER);
	*(volatile uint32_t *)(abar + HBA_GHC) = GHC_AE; /* IE clear */
	*ports = fw_ahci_ports(*(volatile uint32_t *)(abar + HBA_CAP),
			       *(volatile uint32_t *)(abar + HBA_PI));
	return abar;
}

static int ahci_engines_off(struct fw_ahci_port *p)
{
	uint64_t spin = 0;

	ahci_wr(p, P_CMD, ahci_rd(p, P_CMD) & ~(CMD_ST | CMD_FRE));
	while (ahci_rd(p, P_CMD) & (CMD_CR | CMD_FR))
		if (++spin > FW_AHCI_SPIN)
			return -1;
	return 0;
}

static void ahci_wr64(struct fw_ahci_port *p, uint32_t off, const void *addr)
{
	ahci_wr(p, off, (uint32_t)(uintptr_t)addr);
	ahci_wr(p, off + 4, (uint32_t)((uint64_t)(uintptr_t)addr >> 32));
}

uint32_t fw_ahci_port_start(struct fw_ahci_port *p, volatile uint8_t *abar, uint32_t n)
{
	uint64_t spin;
	uint32_t sig;

	if (n >= FW_AHCI_MAX_PORTS || !p->n_slots || p->n_slots > 32)
		return 0;
	p->regs = abar + 0x100 + 0x80 * n;
	p->busy = 0;
	if ((ahci_rd(p, P_SSTS) & 0xf) != 3 || ahci_engines_off(p)) /* DET: device, phy up */
		return 0;
	memset(p->clist, 0, sizeof(*p->clist) * p->n_slots);
	for (uint32_t i = 0; i < p->n_slots; i++) {
		p->clist[i].ctba = (uint32_t)(uintptr_t)&p->tbl[i];
		p->clist[i].ctbau = (uint32_t)((uint64_t)(uintptr_t)&p->tbl[i] >> 32);
	}
	ahci_wr64(p, P_CLB, p->clist);
	ahci_wr64(p, P_FB, p->rfis);
	ahci_wr(p, P_SERR, 0xffffffffu);
	ahci_wr(p, P_IS, 0xffffffffu);
	ahci_wr(p, P_IE, 0);
	ahci_wr(p, P_CMD, ahci_rd(p, P_CMD) | CMD_FRE);
	ahci_wr(p, P_CMD, ahci_rd(p, P_CMD) | CMD_ST);
	/* (QEMU fills PxSIG from the device's first D2H FIS once FRE is set) */
	for (spin = 0; ahci_rd(p, P_SIG) == 0xffffffffu && spin < FW_AHCI_SPIN; spin++)
		__asm__ volatile("pause");
	sig = ahci_rd(p, P_SIG);
	if ((sig != FW_AHCI_SIG_ATA && sig != FW_AHCI_SIG_ATAPI) || (ahci_rd(p, P_TFD) & TFD_BAD)) {
		fw_ahci_port_stop(p);
		return 0;
	}
	return sig;
}

int fw_ahci_port_up(struct fw_ahci_port *p, volatile uint8_t *abar, uint32_t n)
{
	uint32_t sig = fw_ahci_port_start(p, abar, n);

	if (sig == FW_AHCI_SIG_ATA)
		return 0;
	if (sig)
		fw_ahci_port_stop(p);
	return -1;
}

int fw_ahci_port_recover(struct fw_ahci_port *p)
{
	uint64_t spin = 0;

	if (ahci_engines_off(p))
		return -1;
	p->busy = 0;
	ahci_wr(p, P_SERR, 0xffffffffu);
	ahci_wr(p, P_IS, 0xffffffffu);
	ahci_wr(p, P_CMD, ahci_rd(p, P_CMD) | CMD_FRE);
	if (ahci_rd(p, P_TFD) & 0x88) { /* BSY or DRQ: command list override */
		ahci_wr(p, P_CMD, ahci_rd(p, P_CMD) | CMD_CLO);
		while (ahci_rd(p, P_CMD) & CMD_CLO)
			if (++spin > FW_AHCI_SPIN)
				return -1;
	}
	ahci_wr(p, P_CMD, ahci_rd(p, P_CMD) | CMD_ST);
	return 0;
}

void fw_ahci_port_stop(struct fw_ahci_port *p)
{
	if (p->regs)
		(void)ahci_engines_off(p);
}

void fw_ahci_build(struct fw_ahci_port *p, uint32_t slot, uint8_t cmd, uint64_t lba, uint32_t count,
		   void *buf, uint32_t len)
{
	struct fw_ahci_cmd_tbl *t = &p->tbl[slot];
	uint8_t *f = t->cfis;

	memset(f, 0, 20);
	f[0] = 0x27, f[1] = 0x80, f[2] = cmd, f[7] = 0x40; /* H2D, C; LBA mode */
	for (int i = 0; i < 3; i++) {
		f[4 + i] = (uint8_t)(lba >> (8 * i));
		f[8 + i] = (uint8_t)(lba >> (8 * (i + 3)));
	}
	if (cmd == FW_ATA_READ_FPDMA) {
		f[3] = (uint8_t)count, f[11] = (uint8_t)(count >> 8), f[12] = (uint8_t)(slot << 3);
	} else {
		f[12] = (uint8_t)count, f[13] = (uint8_t)(count >> 8);
	}
	t->prd.dba = (uint32_t)(uintptr_t)buf;
	t->prd.dbau = (uint32_t)((uint64_t)(uintptr_t)buf >> 32);
	t->prd.rsv = 0;
	t->prd.dbc = len ? len - 1 : 0;
	p->clist[slot].dw0 =
	    5u | (cmd == FW_ATA_WRITE_DMA_EXT ? 1u << 6 : 0) | (len ? 1u << 16 : 0);
	p->clist[slot].prdbc = 0;
}

void fw_ahci_build_packet(struct fw_ahci_port *p, uint32_t slot, const uint8_t cdb[12], void *buf,
			  uint32_t len)
{
	struct fw_ahci_cmd_tbl *t = &p->tbl[slot];
	uint32_t limit = len < 0xfffe ? len : 0xfffe; /* byte count limit (PIO) */

	fw_ahci_build(p, slot, FW_ATA_PACKET, 0, 0, buf, len);
	t->cfis[3] = len ? 1 : 0; /* features: DMA */
	t->cfis[5] = (uint8_t)limit, t->cfis[6] = (uint8_t)(limit >> 8);
	t->cfis[7] = 0;
	memset(t->acmd, 0, sizeof(t->acmd));
	memcpy(t->acmd, cdb, 12);
	p->clist[slot].dw0 |= 1u << 5; /* A: ATAPI, the HBA fetches ACMD */
}

void fw_ahci_issue(struct fw_ahci_port *p, uint32_t slot, bool ncq)
{
	__asm__ volatile("" ::: "memory");
	if (ncq)
		ahci_wr(p, P_SACT, 1u << slot);
	ahci_wr(p, P_CI, 1u << slot);
	p->busy |= 1u << slot;
}

int fw_ahci_reap(struct fw_ahci_port *p, bool ncq, uint32_t *done)
{
	uint64_t spin = 0;
	uint32_t left;

	for (;;) {
		if (ahci_rd(p, P_IS) & IS_TFES)
			return -1;
		/* (a slot is free again once both its CI and, NCQ, SACT bits are) */
		left = ahci_rd(p, P_CI) | (ncq ? ahci_rd(p, P_SACT) : 0);
		if ((p->busy & ~left) != 0)
			break;
		if (++spin > FW_AHCI_SPIN)
			return -1;
		__asm__ volatile("pause");
	}
	/* an error posted with the completion this loop saw */
	if (ahci_rd(p, P_IS) & IS_TFES)
		return -1;
	for (uint32_t c = p->busy & ~left; c; c &= c - 1) /* (no libgcc popcount) */
		(*done)++;
	p->busy &= left;
	__asm__ volatile("" ::: "memory");
	return 0;
}

int fw_ahci_run1(struct fw_ahci_port *p, uint32_t len)
{
	uint32_t done = 0;

	fw_ahci_issue(p, 0, false);
	if (fw_ahci_reap(p, false, &done) || (p->busy & 1) || (ahci_rd(p, P_TFD) & TFD_BAD))
		return -1;
	return *(volatile uint32_t *)&p->clist[0].prdbc == len ? 0 : -1;
}

uint64_t fw_ahci_id_sectors(const uint16_t id[256])
{
	uint64_t n = 0;

	if (!(id[49] & (1u << 9))) /* LBA supported */
		return 0;
	/* word 106 valid (bits 15:14 = 01) and logical sectors > 256 words */
	if ((id[106] & 0xc000) == 0x4000 && (id[106] & (1u << 12)) &&
	    ((uint32_t)id[118] << 16 | id[117]) != 256)
		return 0;
	if (id[83] & (1u << 10)) /* 48-bit addressing */
		for (int i = 3; i >= 0; i--)
			n = n << 16 | id[100 + i];
	else
		n = (uint32_t)id[61] << 16 | id[60];
	return n == UINT64_MAX || n >> 48 ? 0 : n; /* LBA48 addresses 2^48 sectors */
}

/* ---- ATAPI --------------------------------------------------------------- */

int fw_atapi_cmd(struct fw_ahci_port *p, const uint8_t cdb[12], void *buf, uint32_t len,
		 uint8_t sense[18])
{
	static const uint8_t req_sense[12] = {0x03, 0, 0, 0, 18};

	for (uint32_t t = 0; t < FW_ATAPI_TRIES; t++) {
		fw_ahci_build_packet(p, 0, cdb, buf, len);
		if (!fw_ahci_run1(p, len))
			return 0;
		/* only a CHECK CONDITION (ERR) is worth another try: not a
		 * hang, nor a byte count other than asked for */
		if (!(ahci_rd(p, P_TFD) & 1) || fw_ahci_port_recover(p))
			return -1;
		fw_ahci_build_packet(p, 0, req_sense, sense, 18);
		if (fw_ahci_run1(p, 18) && fw_ahci_port_recover(p))
			return -1;
	}
	return -1;
}

static uint32_t atapi_be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

uint64_t fw_atapi_capacity(struct fw_ahci_port *p, uint8_t *scratch, uint8_t sense[18])
{
	static const uint8_t tur[12] = {0x00}, rcap[12] = {0x25};
	uint32_t last;

	if (fw_atapi_cmd(p, tur, NULL, 0, sense) || fw_atapi_cmd(p, rcap, scratch, 8, sense))
		return 0;
	last = atapi_be32(scratch);
	if (atapi_be32(scratch + 4) != FW_ATAPI_BLOCK || last == 0xffffffffu)
		return 0;
	return (uint64_t)last + 1;
}

int fw_atapi_read(struct fw_ahci_port *p, uint32_t lba, uint32_t n, void *buf, uint8_t sense[18])
{
	uint8_t cdb[12] = {0x28,
			   0,
			   (uint8_t)(lba >> 24),
			   (uint8_t)(lba >> 16),
			   (uint8_t)(lba >> 8),
			   (uint8_t)lba,
			   0,
			   (uint8_t)(n >> 8),
			   (uint8_t)n};

	if (!n || n > FW_ATAPI_MAX_BLK)
		return -1;
	return fw_atapi_cmd(p, cdb, buf, n * FW_ATAPI_BLOCK, sense);
}
