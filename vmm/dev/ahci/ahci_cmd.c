// SPDX-License-Identifier: MIT
/*
 * ahci_cmd.c - the AHCI ports' command engine (ahci_int.h): a port's I/O
 * thread fetches each issued command from the guest's command list and
 * command table (AHCI 1.3.1 §4.2), maps its PRDT, hands it to the ATA or
 * ATAPI device, and completes it into the received-FIS area, PxCI/PxSACT
 * and the interrupt. The registers that issue commands are ahci.c's.
 */
#include <string.h>

#include "vmm/dev/ahci/ahci_int.h"
#include "vmm/vm/guest_mem.h"

/* the received-FIS area (§4.2.1) and the command list (§4.2.2) */
#define RFIS_PIO     0x20
#define RFIS_D2H     0x40
#define RFIS_SDB     0x58
#define CMD_HDR_SIZE 32
#define CMD_HDR_A    (1u << 5) /* ATAPI: the HBA sends the ACMD */
#define CTBA_ACMD    0x40
#define CTBA_PRDT    0x80

/* ---- received FISes (a->lock held) --------------------------------------- */

static void ahci_post_fis(struct ahci_port *p, uint32_t off, const uint8_t *fis, uint32_t len)
{
	uint64_t fb = (uint64_t)p->fbu << 32 | p->fb;
	uint8_t *dst;

	if (!(p->cmd & CMD_FRE))
		return;
	dst = guest_mem_ptr(p->a->mem, fb + off, len);
	if (dst)
		memcpy(dst, fis, len);
	else
		p->is |= PXIS_HBFS;
}

void ahci_post_d2h(struct ahci_port *p, uint8_t status, uint8_t error, bool sig, uint8_t count)
{
	uint8_t f[20] = {FIS_TYPE_REG_D2H, 0x40, status, error};
	uint32_t s = ahci_sig(p);

	f[12] = count;
	if (sig) { /* the signature: count, LBA low, mid, high */
		f[12] = (uint8_t)s;
		f[4] = (uint8_t)(s >> 8);
		f[5] = (uint8_t)(s >> 16);
		f[6] = (uint8_t)(s >> 24);
	}
	p->tfd = (uint32_t)error << 8 | status;
	ahci_post_fis(p, RFIS_D2H, f, sizeof(f));
	p->is |= PXIS_DHRS;
}

/* ---- command fetch -------------------------------------------------------- */

/* Map the PRDT of the command table at ctba (prdtl entries) for need
 * bytes into cmd->iov: niov -1 when an entry lies outside RAM. */
static void ahci_map_prdt(struct ahci_port *p, uint64_t ctba, uint32_t prdtl, uint64_t need,
			  struct ahci_cmd *cmd)
{
	const struct guest_mem *m = p->a->mem;
	uint32_t e[4];

	cmd->iov = p->iov;
	cmd->niov = 0;
	cmd->prd_bytes = 0;
	for (uint32_t i = 0; i < prdtl && cmd->prd_bytes < need && i < AHCI_MAX_PRD; i++) {
		const void *src = guest_mem_ptr(m, ctba + CTBA_PRDT + 16ull * i, sizeof(e));
		uint64_t dba, len;
		void *buf;

		if (!src)
			goto bad;
		memcpy(e, src, sizeof(e));
		dba = ((uint64_t)e[1] << 32 | e[0]) & ~1ull;
		len = (e[3] & 0x3fffff) + 1ull;
		if (len > need - cmd->prd_bytes)
			len = need - cmd->prd_bytes;
		buf = guest_mem_ptr(m, dba, len);
		if (!buf)
			goto bad;
		p->iov[cmd->niov++] = (struct iovec){buf, len};
		cmd->prd_bytes += len;
	}
	return;
bad:
	cmd->niov = -1;
}

/* Copy slot's command out of guest memory (a->lock held: the addresses
 * are the registers'). false: a host bus fatal error. */
static bool ahci_fetch(struct ahci_port *p, unsigned int slot, struct ahci_cmd *cmd,
		       uint64_t *ctba_out)
{
	const struct guest_mem *m = p->a->mem;
	uint64_t clb = (uint64_t)p->clbu << 32 | p->clb, ctba;
	uint32_t h[4];
	const void *src = guest_mem_ptr(m, clb + (uint64_t)slot * CMD_HDR_SIZE, sizeof(h));

	memset(cmd, 0, sizeof(*cmd));
	cmd->slot = slot;
	if (!src)
		return false;
	memcpy(h, src, sizeof(h));
	ctba = ((uint64_t)h[3] << 32 | h[2]) & ~0x7full;
	src = guest_mem_ptr(m, ctba, sizeof(cmd->fis));
	if (!src)
		return false;
	memcpy(cmd->fis, src, sizeof(cmd->fis));
	cmd->write = h[0] & (1u << 6);
	if ((h[0] & 0x1f) < 5) /* CFL: a Register H2D FIS is 5 dwords */
		cmd->fis[0] = 0;
	if (p->kind == AHCI_PORT_ATAPI && (h[0] & CMD_HDR_A)) {
		src = guest_mem_ptr(m, ctba + CTBA_ACMD, sizeof(cmd->acmd));
		if (!src)
			return false;
		memcpy(cmd->acmd, src, sizeof(cmd->acmd));
		cmd->atapi = true;
	}
	ahci_map_prdt(p, ctba, h[0] >> 16,
		      p->kind == AHCI_PORT_ATAPI ? ahci_atapi_data_len(p, cmd)
						 : ahci_ata_data_len(p, cmd->fis),
		      cmd);
	*ctba_out = clb + (uint64_t)slot * CMD_HDR_SIZE;
	return cmd->niov >= 0;
}

/* ---- completion (a->lock held) -------------------------------------------- */

static void ahci_complete(struct ahci_port *p, const struct ahci_cmd *cmd, uint64_t hdr,
			  const struct ahci_result *r)
{
	uint32_t bit = 1u << cmd->slot, *prdbc;

	if (r->fatal) {
		p->is |= r->fatal;
		p->stopped = true;
		goto irq;
	}
	prdbc = guest_mem_ptr(p->a->mem, hdr + 4, 4);
	if (prdbc && !r->ncq) {
		uint32_t n = (uint32_t)cmd->transferred;

		memcpy(prdbc, &n, 4);
	}
	if (r->pio_in && !(r->status & ATA_ERR)) {
		/* status: the one after the transfer, as QEMU writes it
		 * (SeaBIOS's ahci_command() waits on while it shows BSY or
		 * DRQ); E_Status the same (Linux's ahci reads that one) */
		uint8_t f[20] = {FIS_TYPE_PIO, 0x60, r->status, 0};

		f[15] = r->status;
		f[16] = (uint8_t)cmd->transferred;
		f[17] = (uint8_t)(cmd->transferred >> 8);
		ahci_post_fis(p, RFIS_PIO, f, sizeof(f));
		p->is |= PXIS_PSS;
	}
	if (r->ncq && !(r->status & ATA_ERR)) {
		uint8_t f[8] = {FIS_TYPE_SDB, 0x40, r->status & 0x77, r->error};

		memcpy(f + 4, &bit, 4);
		ahci_post_fis(p, RFIS_SDB, f, sizeof(f));
		p->tfd = r->status;
		p->sact &= ~bit;
		p->is |= PXIS_SDBS;
	} else {
		ahci_post_d2h(p, r->status, r->error, r->sig, r->count);
	}
	if (r->status & ATA_ERR) {
		/* §6.2.2: the failed slot stays in PxCI, the port stops */
		p->is |= PXIS_TFES;
		p->stopped = true;
		goto irq;
	}
	p->ci &= ~bit;
	if (r->sig) {
		p->sig = ahci_sig(p);
		p->tfd = TFD_READY;
	}
irq:
	ahci_irq_update(p->a, true);
}

/* ---- the I/O thread -------------------------------------------------------- */

bool ahci_port_live(struct ahci_port *p, unsigned int gen)
{
	bool live;

	pthread_mutex_lock(&p->a->lock);
	live = !p->a->quit && p->gen == gen;
	pthread_mutex_unlock(&p->a->lock);
	return live;
}

static int ahci_next_slot(struct ahci_port *p)
{
	if (p->a->frozen || !(p->cmd & CMD_ST) || p->stopped || !p->ci)
		return -1;
	return __builtin_ctz(p->ci);
}

/* Fetch and run one command: a->lock held on entry and exit. */
static void ahci_run(struct ahci_port *p, unsigned int slot)
{
	struct ahci *a = p->a;
	struct ahci_result r = {0};
	struct ahci_cmd cmd;
	unsigned int gen = p->gen;
	uint64_t hdr = 0;
	bool keep = true;

	p->busy = (int)slot;
	if (!ahci_fetch(p, slot, &cmd, &hdr)) {
		r.fatal = PXIS_HBFS;
	} else if (cmd.fis[0] != FIS_TYPE_REG_H2D) {
		p->serr |= SERR_DIAG_F | SERR_ERR_P;
		r.fatal = PXIS_IFS;
	} else if (p->kind == AHCI_PORT_ATAPI) {
		if (p->cd_reset)
			ahci_atapi_reset(p);
		p->cd_reset = false;
		pthread_mutex_unlock(&a->lock);
		keep = ahci_atapi_exec(p, &cmd, &r);
		pthread_mutex_lock(&a->lock);
	} else {
		pthread_mutex_unlock(&a->lock);
		keep = ahci_ata_exec(p, &cmd, &r, gen);
		pthread_mutex_lock(&a->lock);
	}
	p->busy = -1;
	if (keep && gen == p->gen)
		ahci_complete(p, &cmd, hdr, &r);
	pthread_cond_broadcast(&a->idle);
}

void *ahci_thread(void *arg)
{
	struct ahci_port *p = arg;
	struct ahci *a = p->a;
	int slot;

	pthread_mutex_lock(&a->lock);
	while (!a->quit) {
		slot = ahci_next_slot(p);
		if (slot < 0) {
			pthread_cond_wait(&p->cond, &a->lock);
			continue;
		}
		ahci_run(p, (unsigned int)slot);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

void ahci_thread_step(void *arg)
{
	struct ahci_port *p = arg;
	int slot;

	pthread_mutex_lock(&p->a->lock);
	slot = ahci_next_slot(p);
	if (slot >= 0 && !p->a->quit)
		ahci_run(p, (unsigned int)slot);
	pthread_mutex_unlock(&p->a->lock);
}
