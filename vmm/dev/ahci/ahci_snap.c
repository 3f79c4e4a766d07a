// SPDX-License-Identifier: MIT
/*
 * ahci_snap.c - the AHCI controller in a snapshot (ahci.h,
 * docs/snapshot.md). freeze: no port fetches a command any more and the
 * command each port's thread runs completes (into the guest's memory and
 * registers), then the disks are flushed; a command that waits for a
 * resume after an I/O error (errorPolicy stop) makes the snapshot refuse.
 * So no command is in flight in a snapshot: the issued ones still in PxCI
 * (and PxSACT for NCQ) are fetched again from guest memory after a
 * restore. Saved: GHC and IS, per port its registers, the stopped state,
 * the write cache, the ATAPI drive's sense, unit attention, tray, lock
 * and media event, and the identity of its disk or medium (blk_id.h).
 * A load accepts only what the guest could have made of this controller.
 */
#include <errno.h>
#include <string.h>

#include "vmm/dev/ahci/ahci_int.h"
#include "vmm/disk/blk.h"
#include "vmm/disk/blk_id.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/log.h"

enum { AHCI_SNAP_HBA = 1, AHCI_SNAP_PORT, AHCI_SNAP_DISK };

/* the u32 values of an AHCI_SNAP_PORT item */
enum {
	AS_KIND,
	AS_CLB,
	AS_CLBU,
	AS_FB,
	AS_FBU,
	AS_IS,
	AS_IE,
	AS_CMD,
	AS_TFD,
	AS_SIG,
	AS_SSTS,
	AS_SCTL,
	AS_SERR,
	AS_SACT,
	AS_CI,
	AS_FLAGS, /* AS_F_* */
	AS_SENSE, /* key | asc << 8 | ascq << 16 */
	AS_CD,	  /* AS_CD_* */
	AS_UA_ASC,
	AS_EVENT,
	AS_N
};
#define AS_F_STOPPED  1u
#define AS_F_CD_RESET 2u
#define AS_F_WCE      4u
#define AS_CD_UA      1u
#define AS_CD_TRAY    2u
#define AS_CD_LOCKED  4u
#define AHCI_PX_IRQ   0xfdc000ffu /* PxIS / PxIE bits there are */

void ahci_port_hold(struct ahci_port *p, bool held)
{
	pthread_mutex_lock(&p->a->lock);
	p->held = held;
	pthread_cond_broadcast(&p->a->idle);
	pthread_mutex_unlock(&p->a->lock);
}

/* a->lock held: a port that waits for a resume, or NULL */
static struct ahci_port *ahci_snap_held(struct ahci *a)
{
	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		if (a->port[i].held)
			return &a->port[i];
	return NULL;
}

static bool ahci_snap_running(struct ahci *a)
{
	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		if (a->port[i].busy >= 0)
			return true;
	return false;
}

int ahci_freeze(struct ahci *a)
{
	struct ahci_port *held;
	int r;

	pthread_mutex_lock(&a->lock);
	a->frozen = true;
	while (!(held = ahci_snap_held(a)) && ahci_snap_running(a))
		pthread_cond_wait(&a->idle, &a->lock);
	pthread_mutex_unlock(&a->lock);
	if (held) {
		ahci_thaw(a);
		return error_errno(-ENOTSUP,
				   "snapshot: SATA disk '%s' waits for a resume after an I/O "
				   "error (errorPolicy): resume or stop the VM first",
				   held->name);
	}
	for (unsigned int i = 0; i < AHCI_PORTS; i++) {
		struct ahci_port *p = &a->port[i];

		if (!p->be || p->be->read_only || p->kind != AHCI_PORT_ATA)
			continue;
		r = blk_flush(p->be);
		if (r) {
			ahci_thaw(a);
			return error_errno(r, "snapshot: SATA disk '%s': flush failed", p->name);
		}
	}
	return 0;
}

void ahci_thaw(struct ahci *a)
{
	pthread_mutex_lock(&a->lock);
	a->frozen = false;
	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		pthread_cond_broadcast(&a->port[i].cond);
	pthread_mutex_unlock(&a->lock);
}

static void ahci_snap_port_get(const struct ahci_port *p, uint32_t v[AS_N])
{
	const struct ahci_atapi *cd = &p->cd;

	v[AS_KIND] = p->kind;
	v[AS_CLB] = p->clb, v[AS_CLBU] = p->clbu, v[AS_FB] = p->fb, v[AS_FBU] = p->fbu;
	v[AS_IS] = p->is, v[AS_IE] = p->ie, v[AS_CMD] = p->cmd, v[AS_TFD] = p->tfd;
	v[AS_SIG] = p->sig, v[AS_SSTS] = p->ssts, v[AS_SCTL] = p->sctl, v[AS_SERR] = p->serr;
	v[AS_SACT] = p->sact, v[AS_CI] = p->ci;
	v[AS_FLAGS] = (p->stopped ? AS_F_STOPPED : 0) | (p->cd_reset ? AS_F_CD_RESET : 0) |
		      (p->wce ? AS_F_WCE : 0);
	v[AS_SENSE] = cd->key | (uint32_t)cd->asc << 8 | (uint32_t)cd->ascq << 16;
	v[AS_CD] = (cd->ua ? AS_CD_UA : 0) | (cd->tray_open ? AS_CD_TRAY : 0) |
		   (cd->locked ? AS_CD_LOCKED : 0);
	v[AS_UA_ASC] = cd->ua_asc;
	v[AS_EVENT] = cd->event;
}

int ahci_save(struct ahci *a, struct snap_buf *b)
{
	uint32_t hba[2], v[AHCI_PORTS][AS_N];
	struct blk_id id;
	int r;

	pthread_mutex_lock(&a->lock);
	hba[0] = a->ghc;
	hba[1] = a->is;
	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		ahci_snap_port_get(&a->port[i], v[i]);
	pthread_mutex_unlock(&a->lock);
	snap_buf_item(b, AHCI_SNAP_HBA, hba, sizeof(hba));
	for (unsigned int i = 0; i < AHCI_PORTS; i++) {
		snap_buf_item(b, AHCI_SNAP_PORT, v[i], sizeof(v[i]));
		if (!a->port[i].be)
			continue;
		r = blk_id_read(a->port[i].be, &id);
		if (r)
			return error_errno(r, "snapshot: %s: cannot read the disk's identity",
					   a->port[i].name);
		snap_buf_item(b, AHCI_SNAP_DISK, &id, sizeof(id));
	}
	return b->err;
}

/* Could the guest have made v of port p (its kind as created)? */
static bool ahci_snap_port_ok(const struct ahci_port *p, const uint32_t v[AS_N])
{
	bool cd = p->kind == AHCI_PORT_ATAPI, empty = p->kind == AHCI_PORT_EMPTY;
	uint32_t sig = empty ? 0xffffffffu : cd ? AHCI_SIG_ATAPI : AHCI_SIG_ATA;

	if (v[AS_KIND] != (uint32_t)p->kind || (v[AS_CLB] & 0x3ff) || (v[AS_FB] & 0xff) ||
	    (v[AS_IS] & ~AHCI_PX_IRQ) || (v[AS_IE] & ~AHCI_PX_IRQ) ||
	    (v[AS_CMD] & ~(CMD_RW | CMD_ST | CMD_FRE)) || v[AS_TFD] > 0xffff || v[AS_SIG] != sig ||
	    v[AS_SCTL] > 0xfff || (v[AS_SERR] & ~(SERR_DIAG_F | SERR_ERR_P)))
		return false;
	if (v[AS_SSTS] != 0 && (v[AS_SSTS] != SSTS_UP || empty))
		return false;
	if (!(v[AS_CMD] & CMD_ST) && (v[AS_SACT] || v[AS_CI]))
		return false; /* clearing ST clears both; only set while ST */
	if (v[AS_FLAGS] & ~(AS_F_STOPPED | AS_F_CD_RESET | AS_F_WCE))
		return false;
	if (!cd && (v[AS_SENSE] || v[AS_CD] || v[AS_UA_ASC] || v[AS_EVENT] ||
		    (v[AS_FLAGS] & AS_F_CD_RESET)))
		return false;
	return (v[AS_SENSE] & 0xff) <= 0xf && v[AS_SENSE] <= 0xffffff &&
	       !(v[AS_CD] & ~(AS_CD_UA | AS_CD_TRAY | AS_CD_LOCKED)) && v[AS_UA_ASC] <= 0xff &&
	       v[AS_EVENT] <= 0xff;
}

static void ahci_snap_port_set(struct ahci_port *p, const uint32_t v[AS_N])
{
	struct ahci_atapi *cd = &p->cd;

	p->clb = v[AS_CLB], p->clbu = v[AS_CLBU], p->fb = v[AS_FB], p->fbu = v[AS_FBU];
	p->is = v[AS_IS], p->ie = v[AS_IE], p->cmd = v[AS_CMD], p->tfd = v[AS_TFD];
	p->sig = v[AS_SIG], p->ssts = v[AS_SSTS], p->sctl = v[AS_SCTL], p->serr = v[AS_SERR];
	p->sact = v[AS_SACT], p->ci = v[AS_CI];
	p->stopped = v[AS_FLAGS] & AS_F_STOPPED;
	p->cd_reset = v[AS_FLAGS] & AS_F_CD_RESET;
	p->wce = v[AS_FLAGS] & AS_F_WCE;
	cd->key = (uint8_t)v[AS_SENSE];
	cd->asc = (uint8_t)(v[AS_SENSE] >> 8);
	cd->ascq = (uint8_t)(v[AS_SENSE] >> 16);
	cd->ua = v[AS_CD] & AS_CD_UA;
	cd->tray_open = v[AS_CD] & AS_CD_TRAY;
	cd->locked = v[AS_CD] & AS_CD_LOCKED;
	cd->ua_asc = (uint8_t)v[AS_UA_ASC];
	cd->event = (uint8_t)v[AS_EVENT];
	p->busy = -1;
	p->gen++;
}

int ahci_load(struct ahci *a, struct snap_cur *c)
{
	uint32_t hba[2], v[AHCI_PORTS][AS_N];
	struct blk_id id;
	int r;

	if (snap_cur_want(c, AHCI_SNAP_HBA, hba, sizeof(hba)))
		return -EBADMSG;
	if (!(hba[0] & GHC_AE) || (hba[0] & ~(GHC_AE | GHC_IE)) || (hba[1] >> AHCI_PORTS))
		return error_errno(-EINVAL, "ahci: saved HBA state does not fit the controller");
	for (unsigned int i = 0; i < AHCI_PORTS; i++) {
		struct ahci_port *p = &a->port[i];

		if (snap_cur_want(c, AHCI_SNAP_PORT, v[i], sizeof(v[i])))
			return -EBADMSG;
		if (!ahci_snap_port_ok(p, v[i]))
			return error_errno(-EINVAL,
					   "ahci: port %u: saved state does not fit "
					   "the port",
					   i);
		if (!p->be)
			continue;
		if (snap_cur_want(c, AHCI_SNAP_DISK, &id, sizeof(id)))
			return error_errno(-EBADMSG,
					   "restore: disk '%s' (SATA port %u): not "
					   "in the snapshot",
					   p->name, i);
		r = blk_id_check(p->be, p->name, &id);
		if (r)
			return r;
	}
	pthread_mutex_lock(&a->lock);
	a->ghc = hba[0];
	a->is = hba[1];
	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		ahci_snap_port_set(&a->port[i], v[i]);
	ahci_irq_update(a, false);
	for (unsigned int i = 0; i < AHCI_PORTS; i++)
		pthread_cond_broadcast(&a->port[i].cond); /* issued commands run */
	pthread_mutex_unlock(&a->lock);
	return 0;
}
