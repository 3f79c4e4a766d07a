// SPDX-License-Identifier: MIT
/*
 * ahci.c - the AHCI HBA (ahci.h): PCI function, HBA and port registers
 * (AHCI 1.3.1 §3), resets, interrupts and setup. Command fetch from the
 * guest's command list (§4.2) and received FISes are ahci_cmd.c; the ATA
 * device is ahci_ata.c, the ATAPI one ahci_atapi.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/dev/ahci/ahci_int.h"
#include "vmm/disk/blk.h"
#include "vmm/vm/irq.h"
#include "vmm/util/log.h"
#include "vmm/util/thread.h"

/* HBA registers (§3.1) */
#define HBA_CAP	 0x00
#define HBA_GHC	 0x04
#define HBA_IS	 0x08
#define HBA_PI	 0x0c
#define HBA_VS	 0x10
#define HBA_CAP2 0x24
/* CAP: S64A, SNCQ, SCLO, ISS gen 3, SAM, NCS 32 slots, NP */
#define HBA_CAP_VAL                                                                                \
	((1u << 31) | (1u << 30) | (1u << 24) | (3u << 20) | (1u << 18) | (31u << 8) |             \
	 (AHCI_PORTS - 1))
#define HBA_VS_VAL 0x00010301 /* 1.3.1 */

/* port registers (§3.3), at 0x100 + port * 0x80 */
#define PX_CLB	0x00
#define PX_CLBU 0x04
#define PX_FB	0x08
#define PX_FBU	0x0c
#define PX_IS	0x10
#define PX_IE	0x14
#define PX_CMD	0x18
#define PX_TFD	0x20
#define PX_SIG	0x24
#define PX_SSTS 0x28
#define PX_SCTL 0x2c
#define PX_SERR 0x30
#define PX_SACT 0x34
#define PX_CI	0x38

/* ---- interrupts (a->lock held) ------------------------------------------- */

void ahci_irq_update(struct ahci *a, bool event)
{
	uint64_t addr;
	uint32_t data;

	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		if (a->port[i].is & a->port[i].ie)
			a->is |= 1u << i;
	if (pci_msix_enabled(&a->pci)) {
		/* an edge per event, as long as one is pending (the driver
		 * may be past its last look at the port already) */
		if (event && (a->ghc & GHC_IE) && a->is && pci_msix_request(&a->pci, 0)) {
			pci_msix_get(&a->pci, 0, &addr, &data);
			if (addr && a->vm && irq_msi_signal(a->vm, addr, data) < 0)
				log_warn_once("ahci: msi delivery failed");
		}
		return;
	}
	pci_intx_set(&a->pci, (a->ghc & GHC_IE) && a->is);
}

static void ahci_msix_update(void *opaque, unsigned int vec, bool fire)
{
	struct ahci *a = opaque;

	if (!fire || vec)
		return;
	pthread_mutex_lock(&a->lock);
	ahci_irq_update(a, true);
	pthread_mutex_unlock(&a->lock);
}

/* A device on the link after COMRESET or HBA reset: signature, ready. */
static void ahci_port_link(struct ahci_port *p)
{
	if (p->kind == AHCI_PORT_EMPTY) {
		p->ssts = 0;
		p->sig = 0xffffffff;
		p->tfd = 0x7f;
		return;
	}
	p->ssts = SSTS_UP;
	p->sig = ahci_sig(p);
	p->tfd = TFD_READY;
	/* the drive's reset state (unit attention), set by its thread */
	p->cd_reset = p->kind == AHCI_PORT_ATAPI;
}

static void ahci_port_reset(struct ahci_port *p)
{
	p->clb = p->clbu = p->fb = p->fbu = p->is = p->ie = p->cmd = 0;
	p->sctl = p->serr = p->sact = p->ci = 0;
	p->stopped = false;
	p->gen++;
	ahci_port_link(p);
}

static void ahci_hba_reset(struct ahci *a)
{
	a->ghc = GHC_AE;
	a->is = 0;
	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		ahci_port_reset(&a->port[i]);
	ahci_irq_update(a, false);
}

/* ---- registers ------------------------------------------------------------ */

static uint32_t ahci_port_read(struct ahci_port *p, uint32_t reg)
{
	switch (reg) {
	case PX_CLB:
		return p->clb;
	case PX_CLBU:
		return p->clbu;
	case PX_FB:
		return p->fb;
	case PX_FBU:
		return p->fbu;
	case PX_IS:
		return p->is;
	case PX_IE:
		return p->ie;
	case PX_CMD:
		return p->cmd | (p->cmd & CMD_FRE ? CMD_FR : 0) |
		       (p->cmd & CMD_ST || p->busy >= 0 ? CMD_CR : 0) |
		       (p->busy >= 0 ? (uint32_t)p->busy << 8 : 0);
	case PX_TFD:
		return p->tfd;
	case PX_SIG:
		return p->sig;
	case PX_SSTS:
		return p->ssts;
	case PX_SCTL:
		return p->sctl;
	case PX_SERR:
		return p->serr;
	case PX_SACT:
		return p->sact;
	case PX_CI:
		return p->ci;
	}
	return 0;
}

static void ahci_port_cmd_write(struct ahci_port *p, uint32_t v)
{
	uint32_t old = p->cmd;

	p->cmd = (v & (CMD_RW | CMD_ST | CMD_FRE));
	if (v & CMD_CLO)
		p->tfd &= ~(uint32_t)(ATA_BSY | ATA_DRQ);
	if ((old & CMD_ST) && !(v & CMD_ST)) {
		/* §3.3.7: clearing ST clears PxCI and PxSACT; a command in
		 * flight completes into nothing (CR stays until it has) */
		p->ci = p->sact = 0;
		p->stopped = false;
		p->gen++;
	}
	if (!(old & CMD_ST) && (v & CMD_ST))
		pthread_cond_signal(&p->cond);
}

static void ahci_port_write(struct ahci_port *p, uint32_t reg, uint32_t v)
{
	bool running = p->cmd & CMD_ST;

	switch (reg) {
	case PX_CLB:
		p->clb = v & ~0x3ffu;
		break;
	case PX_CLBU:
		p->clbu = v;
		break;
	case PX_FB:
		p->fb = v & ~0xffu;
		break;
	case PX_FBU:
		p->fbu = v;
		break;
	case PX_IS:
		p->is &= ~v;
		break;
	case PX_IE:
		p->ie = v & 0xfdc000ffu;
		break;
	case PX_CMD:
		ahci_port_cmd_write(p, v);
		break;
	case PX_SCTL:
		/* DET 1 -> 0: COMRESET done, the device signs on */
		if ((p->sctl & 0xf) == 1 && (v & 0xf) == 0) {
			p->gen++;
			p->stopped = false;
			ahci_port_link(p);
			if (p->kind != AHCI_PORT_EMPTY)
				ahci_post_d2h(p, TFD_READY, 0, true, 0);
		} else if ((v & 0xf) == 1) {
			p->ssts = 0;
			p->tfd = ATA_BSY;
		}
		p->sctl = v & 0xfff;
		break;
	case PX_SERR:
		p->serr &= ~v;
		break;
	case PX_SACT:
		if (running)
			p->sact |= v;
		break;
	case PX_CI:
		/* §3.3.14: only set while ST; writing 0 clears nothing */
		if (running && v) {
			p->ci |= v;
			pthread_cond_signal(&p->cond);
		}
		break;
	}
}

static uint32_t ahci_reg_read(struct ahci *a, uint32_t off)
{
	if (off >= 0x100) {
		uint32_t n = (off - 0x100) / 0x80;

		return n < AHCI_PORTS ? ahci_port_read(&a->port[n], (off - 0x100) % 0x80) : 0;
	}
	switch (off) {
	case HBA_CAP:
		return HBA_CAP_VAL;
	case HBA_GHC:
		return a->ghc;
	case HBA_IS:
		return a->is;
	case HBA_PI:
		return (1u << AHCI_PORTS) - 1;
	case HBA_VS:
		return HBA_VS_VAL;
	}
	return 0;
}

static void ahci_reg_write(struct ahci *a, uint32_t off, uint32_t v)
{
	if (off >= 0x100) {
		uint32_t n = (off - 0x100) / 0x80;

		if (n < AHCI_PORTS)
			ahci_port_write(&a->port[n], (off - 0x100) % 0x80, v);
	} else if (off == HBA_GHC) {
		if (v & GHC_HR) {
			ahci_hba_reset(a); /* done at once: HR reads back 0 */
			return;
		}
		a->ghc = GHC_AE | (v & GHC_IE);
	} else if (off == HBA_IS) {
		a->is &= ~v;
	}
	ahci_irq_update(a, false);
}

static void ahci_mmio_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct ahci *a = opaque;
	uint32_t v;

	pthread_mutex_lock(&a->lock);
	v = ahci_reg_read(a, (uint32_t)(off & ~3ull));
	pthread_mutex_unlock(&a->lock);
	v >>= (off & 3) * 8;
	memset(data, 0, len);
	memcpy(data, &v, len < 4 - (off & 3) ? len : 4 - (off & 3));
}

static void ahci_mmio_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct ahci *a = opaque;
	uint32_t v;

	if (len != 4 || (off & 3)) {
		log_warn_once("ahci: %u-byte register write at %#llx ignored", len,
			      (unsigned long long)off);
		return;
	}
	memcpy(&v, data, 4);
	pthread_mutex_lock(&a->lock);
	ahci_reg_write(a, (uint32_t)off, v);
	pthread_mutex_unlock(&a->lock);
}

static const struct io_ops ahci_mmio_ops = {ahci_mmio_read, ahci_mmio_write};

/* ---- setup ------------------------------------------------------------------ */

static void ahci_read_counters(void *opaque, struct device_counters *c)
{
	struct ahci_port *p = opaque;

	c->requests = __atomic_load_n(&p->st.requests, __ATOMIC_RELAXED);
	c->errors = __atomic_load_n(&p->st.errors, __ATOMIC_RELAXED);
	c->read_bytes = __atomic_load_n(&p->st.read_bytes, __ATOMIC_RELAXED);
	c->write_bytes = __atomic_load_n(&p->st.write_bytes, __ATOMIC_RELAXED);
	c->io_pauses = __atomic_load_n(&p->st.io_pauses, __ATOMIC_RELAXED);
}

static int ahci_attach(struct ahci *a, unsigned int port, struct blk *be,
		       const struct ahci_disk_params *prm, enum ahci_port_kind kind)
{
	struct ahci_port *p;
	char tname[16];
	int r;

	if (port >= AHCI_PORTS || a->port[port].kind != AHCI_PORT_EMPTY) {
		if (be)
			blk_close(be);
		return error_errno(-ENOSPC, "ahci: disk '%s': no free SATA port", prm->name);
	}
	p = &a->port[port];
	p->iov = calloc(AHCI_MAX_PRD, sizeof(*p->iov));
	if (!p->iov) {
		if (be)
			blk_close(be);
		return -ENOMEM;
	}
	p->be = be;
	p->policy = prm->error_policy;
	p->pbs = prm->physical_block_size >= 512 ? prm->physical_block_size : 512;
	p->wce = true;
	snprintf(p->name, sizeof(p->name), "%s", prm->name ? prm->name : "disk");
	if (prm->serial)
		snprintf(p->serial, sizeof(p->serial), "%.20s", prm->serial);
	else /* QEMU's: a counter over IDE units, two a port (master, slave) */
		snprintf(p->serial, sizeof(p->serial), "QM%05u", 2 * port + 1);
	pthread_mutex_lock(&a->lock);
	p->kind = kind;
	ahci_port_link(p);
	pthread_mutex_unlock(&a->lock);
	snprintf(tname, sizeof(tname), "vmlet-sata%u", port);
	r = thread_start(&p->thread, THREAD_BLK_IO, tname, ahci_thread, p);
	if (r)
		return error_errno(r, "ahci: disk '%s': cannot start the i/o thread", p->name);
	p->started = true;
	device_add_counters(a->vm, "blk", p->name, ahci_read_counters, p);
	return 0;
}

int ahci_attach_disk(struct ahci *a, unsigned int port, struct blk *be,
		     const struct ahci_disk_params *prm)
{
	return ahci_attach(a, port, be, prm, AHCI_PORT_ATA);
}

int ahci_attach_cdrom(struct ahci *a, unsigned int port, struct blk *be,
		      const struct ahci_disk_params *prm)
{
	if (port < AHCI_PORTS && a->port[port].kind == AHCI_PORT_EMPTY)
		a->port[port].cd.tray_open = prm->tray_open;
	return ahci_attach(a, port, be, prm, AHCI_PORT_ATAPI);
}

static const struct pci_dev_cb ahci_pci_cb = {
    .msix_update = ahci_msix_update,
};

int ahci_create(struct ahci **out, struct pci_host *host, int slot)
{
	struct ahci *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->vm = host->vm;
	a->mem = host->mem;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->idle, NULL);
	for (unsigned int i = 0; i < AHCI_PORTS; i++) {
		a->port[i] = (struct ahci_port){.a = a, .index = i, .busy = -1};
		pthread_cond_init(&a->port[i].cond, NULL);
	}
	ahci_hba_reset(a);
	/* QEMU's ich9-ahci: revision 2, subsystem Red Hat 1af4:1100 */
	pci_dev_init(&a->pci, AHCI_VENDOR_ID, AHCI_DEVICE_ID, AHCI_CLASS, 2, 0x1af4, 0x1100,
		     &ahci_pci_cb, a);
	r = pci_bar_add(&a->pci, AHCI_ABAR, AHCI_ABAR_SIZE, &ahci_mmio_ops, a);
	if (!r)
		r = pci_msix_init(&a->pci, 1, AHCI_ABAR, AHCI_MSIX_TABLE, AHCI_MSIX_PBA);
	if (!r)
		r = pci_dev_add_at(host, &a->pci, slot);
	if (r) {
		ahci_destroy(a);
		return error_errno(r, "ahci: cannot add the SATA controller");
	}
	*out = a;
	return 0;
}

struct pci_dev *ahci_pci(struct ahci *a)
{
	return &a->pci;
}

void ahci_quiesce(struct ahci *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->quit = true;
	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		pthread_cond_broadcast(&a->port[i].cond);
	pthread_mutex_unlock(&a->lock);
	for (unsigned int i = 0; i < AHCI_PORTS; i++) {
		struct ahci_port *p = &a->port[i];
		int r;

		if (p->started)
			pthread_join(p->thread, NULL);
		p->started = false;
		if (!p->be || p->be->read_only || p->flushed)
			continue;
		p->flushed = true;
		r = blk_flush(p->be);
		if (r)
			log_warn("ahci: disk '%s': flush at exit failed: %s", p->name,
				 strerror(-r));
	}
}

void ahci_destroy(struct ahci *a)
{
	if (!a)
		return;
	ahci_quiesce(a);
	if (a->pci.slot >= 0)
		pci_dev_remove(a->pci.host, &a->pci);
	for (unsigned int i = 0; i < AHCI_PORTS; i++) {
		if (a->port[i].be)
			blk_close(a->port[i].be);
		free(a->port[i].iov);
		pthread_cond_destroy(&a->port[i].cond);
	}
	pthread_cond_destroy(&a->idle);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
