// SPDX-License-Identifier: MIT
/*
 * ahci_atapi.c - the CD-ROM drive behind an AHCI port (ahci_int.h; the
 * MMC commands that only report are ahci_mmc.c's): an
 * ATAPI device (signature EB140101h) that answers IDENTIFY PACKET DEVICE
 * and carries MMC commands in the PACKET command, the CDB in the command
 * table's ACMD area (AHCI 1.3.1 §4.2.3), the data to the PRDs (PIO and
 * DMA alike: the HBA moves it). The commands Linux's sr/libata, SeaBIOS
 * and OVMF send are answered (MMC-6, SPC-4; SeaBIOS, vmlet's UEFI and
 * OVMF seen booting from it, Linux's sr reading it: nested scenarios
 * sata, efi-cdrom, ovmf-cdrom); every other opcode, writes included,
 * is a CHECK CONDITION with ILLEGAL REQUEST / INVALID COMMAND OPERATION
 * CODE, and REQUEST SENSE returns the sense of the last command.
 *
 * The medium is read-only, of 2048-byte blocks (the image's size rounded
 * down), and may be absent (an empty drive: NOT READY, MEDIUM NOT
 * PRESENT). A device reset (power on, COMRESET, SRST) leaves a UNIT
 * ATTENTION (29h, POWER ON OR RESET) pending; the guest may open the tray
 * (START STOP UNIT LoEj, refused while PREVENT ALLOW MEDIUM REMOVAL
 * holds the medium) and close it again: the medium is back with a UNIT
 * ATTENTION (28h, MEDIUM MAY HAVE CHANGED) and a NewMedia event for GET
 * EVENT STATUS NOTIFICATION. A pending unit attention fails every command
 * but INQUIRY, REQUEST SENSE, GET CONFIGURATION and GET EVENT STATUS
 * NOTIFICATION once.
 *
 * Every CDB field is the guest's: allocation lengths bound what is sent
 * (never more than the answer), LBAs and block counts are checked against
 * the capacity in 64 bits, a PRDT shorter than the data is an overflow
 * (PxIS.OFS, as a disk read).
 */
#include <errno.h>
#include <string.h>

#include "vmm/dev/ahci/ahci_int.h"
#include "vmm/disk/blk.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"

#define ATA_IDENTIFY	  0xec
#define ATA_IDENTIFY_PKT  0xa1
#define ATA_DEVICE_RESET  0x08
#define ATA_SET_FEATURES  0xef
#define H2D_C		  0x80
#define CTL_SRST	  0x04
#define ATAPI_DSC	  0x10 /* status: seek complete, as drives show it */
#define ATAPI_IREASON_END 0x03 /* count after a PACKET: I/O and C/D */

/* MMC opcodes */
#define MMC_TEST_UNIT_READY 0x00
#define MMC_REQUEST_SENSE   0x03
#define MMC_INQUIRY	    0x12
#define MMC_START_STOP	    0x1b
#define MMC_PREVENT_ALLOW   0x1e
#define MMC_READ_CAPACITY   0x25
#define MMC_READ_10	    0x28
#define MMC_READ_TOC	    0x43
#define MMC_GET_CONFIG	    0x46
#define MMC_GET_EVENT	    0x4a
#define MMC_READ_DISC_INFO  0x51
#define MMC_MODE_SENSE_10   0x5a
#define MMC_READ_12	    0xa8
#define MMC_MECH_STATUS	    0xbd

/* GET EVENT STATUS NOTIFICATION media events */
#define EV_NEW_MEDIA	 2
#define EV_MEDIA_REMOVAL 3

static uint16_t be16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

bool ahci_cd_medium(const struct ahci_port *p)
{
	return p->be && !p->cd.tray_open;
}

/* Blocks on the medium (0 without one). */
uint64_t ahci_cd_blocks(const struct ahci_port *p)
{
	return ahci_cd_medium(p) ? p->be->size / AHCI_CD_BLOCK : 0;
}

void ahci_atapi_reset(struct ahci_port *p)
{
	p->cd.key = p->cd.asc = p->cd.ascq = 0;
	p->cd.ua = true;
	p->cd.ua_asc = ASC_RESET;
	p->cd.locked = false;
}

/* ---- how much data a command moves ----------------------------------------- */

/* The allocation length (or data length) of cdb, 0 for none. */
static uint64_t cdb_data_len(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case MMC_REQUEST_SENSE:
		return cdb[4];
	case MMC_INQUIRY:
		return be16(cdb + 3);
	case MMC_READ_CAPACITY:
		return 8;
	case MMC_READ_10:
		return be16(cdb + 7) * (uint64_t)AHCI_CD_BLOCK;
	case MMC_READ_12:
		return be32(cdb + 6) * (uint64_t)AHCI_CD_BLOCK;
	case MMC_READ_TOC:
	case MMC_GET_CONFIG:
	case MMC_GET_EVENT:
	case MMC_READ_DISC_INFO:
	case MMC_MODE_SENSE_10:
		return be16(cdb + 7);
	case MMC_MECH_STATUS:
		return be16(cdb + 8);
	}
	return 0;
}

uint64_t ahci_atapi_data_len(const struct ahci_port *p, const struct ahci_cmd *c)
{
	const uint8_t *f = c->fis;

	if (p->kind != AHCI_PORT_ATAPI || f[0] != FIS_TYPE_REG_H2D || !(f[1] & H2D_C))
		return 0;
	if (f[2] == ATA_IDENTIFY_PKT)
		return 512;
	if (f[2] == ATA_PACKET && c->atapi)
		return cdb_data_len(c->acmd);
	return 0;
}

/* ---- IDENTIFY PACKET DEVICE (ATA8-ACS §7.17) ------------------------------- */

static void atapi_identify(const struct ahci_port *p, uint16_t id[256])
{
	memset(id, 0, 512);
	/* ATAPI, CD-ROM (5), removable, DRQ within 50 us, 12-byte CDBs */
	id[0] = 0x8000 | 5u << 8 | 1u << 7 | 2u << 5;
	ahci_ata_string(id + 10, p->serial, 10);
	ahci_ata_string(id + 23, "2.5+", 4);	      /* QEMU's firmware revision */
	ahci_ata_string(id + 27, "QEMU DVD-ROM", 20); /* QEMU's model */
	id[48] = 1;
	id[49] = 1u << 9 | 1u << 8; /* LBA, DMA */
	id[53] = 7;		    /* words 54-58, 64-70 and 88 valid */
	id[62] = 7;
	id[63] = 7;
	id[64] = 3;
	id[65] = id[66] = id[67] = id[68] = 0xb4;
	id[71] = id[72] = 30;
	id[76] = 1u << 2 | 1u << 1; /* SATA gen 1 and 2 */
	id[80] = 0x1e;		    /* ATA/ATAPI-1 to -4, as QEMU's (SeaBIOS: "ATAPI-4") */
	id[82] = 1u << 4;	    /* PACKET feature set */
	id[83] = id[84] = id[87] = 0x4000;
	id[85] = 1u << 4;
	id[88] = 0x203f; /* UDMA 0-5, 5 selected */
}

/* ---- answers ------------------------------------------------------------------ */

void ahci_cd_check(struct ahci_cd_req *q, uint8_t key, uint8_t asc, uint8_t ascq)
{
	q->key = key;
	q->asc = asc;
	q->ascq = ascq;
}

/* false (with NOT READY) when there is no medium to answer from. */
bool ahci_cd_ready(struct ahci_cd_req *q)
{
	if (ahci_cd_medium(q->p))
		return true;
	ahci_cd_check(q, SK_NOT_READY, ASC_NO_MEDIUM, q->p->cd.tray_open ? 2 : 1);
	return false;
}

static void cd_request_sense(struct ahci_cd_req *q)
{
	struct ahci_atapi *s = &q->p->cd;

	q->buf[0] = 0x70; /* current, fixed format */
	if (s->ua) {
		q->buf[2] = SK_UNIT_ATTENTION;
		q->buf[12] = s->ua_asc;
		s->ua = false;
	} else {
		q->buf[2] = s->key;
		q->buf[12] = s->asc;
		q->buf[13] = s->ascq;
	}
	q->buf[7] = 10; /* additional sense length */
	q->len = 18;
}

/* START STOP UNIT: LoEj with Start clear opens the tray (unless the
 * medium is locked in), with Start set closes it. */
static void cd_start_stop(struct ahci_cd_req *q)
{
	struct ahci_atapi *s = &q->p->cd;
	uint8_t b = q->cdb[4];

	if ((b & 0xf0) || !(b & 2)) /* a power condition, or no load/eject */
		return;
	if (!(b & 1)) {
		if (s->locked)
			return ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_REMOVAL_PREV, 2);
		if (!s->tray_open && q->p->be)
			s->event = EV_MEDIA_REMOVAL;
		s->tray_open = true;
		return;
	}
	if (s->tray_open && q->p->be) {
		s->event = EV_NEW_MEDIA;
		s->ua = true;
		s->ua_asc = ASC_MEDIUM_CHANGED;
	}
	s->tray_open = false;
}

/* READ(10), READ(12): into the PRDs. false: a fatal error (r->fatal). */
static bool cd_read(struct ahci_cd_req *q, struct ahci_cmd *c, struct ahci_result *r)
{
	struct ahci_port *p = q->p;
	uint64_t lba = be32(q->cdb + 2), n, cap = ahci_cd_blocks(p);
	int e;

	n = q->cdb[0] == MMC_READ_10 ? be16(q->cdb + 7) : be32(q->cdb + 6);
	if (!ahci_cd_ready(q))
		return true;
	if (lba > cap || n > cap - lba) {
		ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_LBA_RANGE, 0);
		return true;
	}
	if (c->prd_bytes < n * AHCI_CD_BLOCK) {
		r->fatal = PXIS_OFS;
		return false;
	}
	if (!n)
		return true;
	e = blk_preadv(p->be, c->iov, c->niov, lba * AHCI_CD_BLOCK);
	if (e) {
		log_warn_once("ahci: cdrom '%s': read at block %llu failed: %s", p->name,
			      (unsigned long long)lba, strerror(-e));
		ahci_cd_check(q, SK_MEDIUM_ERROR, ASC_READ_ERROR, 0);
		return true;
	}
	c->transferred = n * AHCI_CD_BLOCK;
	__atomic_add_fetch(&p->st.read_bytes, n * AHCI_CD_BLOCK, __ATOMIC_RELAXED);
	return true;
}

/* Commands a pending unit attention lets through. */
static bool cd_allow_ua(uint8_t op)
{
	return op == MMC_INQUIRY || op == MMC_REQUEST_SENSE || op == MMC_GET_CONFIG ||
	       op == MMC_GET_EVENT;
}

/* Answer the CDB into q (or read into the PRDs); false: fatal. */
static bool cd_dispatch(struct ahci_cd_req *q, struct ahci_cmd *c, struct ahci_result *r)
{
	switch (q->cdb[0]) {
	case MMC_TEST_UNIT_READY:
		ahci_cd_ready(q);
		break;
	case MMC_REQUEST_SENSE:
		cd_request_sense(q);
		break;
	case MMC_INQUIRY:
		ahci_mmc_inquiry(q);
		break;
	case MMC_READ_CAPACITY:
		ahci_mmc_read_capacity(q);
		break;
	case MMC_READ_10:
	case MMC_READ_12:
		return cd_read(q, c, r);
	case MMC_READ_TOC:
		ahci_mmc_read_toc(q);
		break;
	case MMC_GET_CONFIG:
		ahci_mmc_get_config(q);
		break;
	case MMC_GET_EVENT:
		ahci_mmc_get_event(q);
		break;
	case MMC_READ_DISC_INFO:
		ahci_mmc_read_disc_info(q);
		break;
	case MMC_MODE_SENSE_10:
		ahci_mmc_mode_sense(q);
		break;
	case MMC_START_STOP:
		cd_start_stop(q);
		break;
	case MMC_PREVENT_ALLOW:
		q->p->cd.locked = q->cdb[4] & 1;
		break;
	case MMC_MECH_STATUS:
		ahci_mmc_mech_status(q);
		break;
	default: /* writes too: the drive reads only */
		ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE, 0);
	}
	return true;
}

/* PACKET (ATA8-ACS §7.18): run the CDB, send the answer (at most the
 * allocation length), keep the sense. */
static void cd_packet(struct ahci_port *p, struct ahci_cmd *c, struct ahci_result *r)
{
	struct ahci_cd_req q = {.p = p, .cdb = c->acmd};
	uint64_t alloc = cdb_data_len(c->acmd), len;

	if (!c->atapi) { /* header A clear: no CDB was fetched */
		r->status = ATA_DRDY | ATA_ERR;
		r->error = ATA_ABRT;
		return;
	}
	r->count = ATAPI_IREASON_END;
	r->pio_in = !(c->fis[3] & 1); /* features: DMA clear, PIO */
	if (p->cd.ua && !cd_allow_ua(q.cdb[0])) {
		ahci_cd_check(&q, SK_UNIT_ATTENTION, p->cd.ua_asc, 0);
		p->cd.ua = false;
	} else if (!cd_dispatch(&q, c, r)) {
		return;
	}
	len = q.len < alloc ? q.len : alloc;
	if (!q.key && len) {
		if (c->prd_bytes < len) {
			r->fatal = PXIS_OFS;
			return;
		}
		iov_from_buf(c->iov, (unsigned int)c->niov, 0, q.buf, len);
		c->transferred = len;
	}
	if (q.cdb[0] != MMC_REQUEST_SENSE) {
		p->cd.key = q.key;
		p->cd.asc = q.asc;
		p->cd.ascq = q.ascq;
	} else {
		p->cd.key = p->cd.asc = p->cd.ascq = 0;
	}
	if (q.key) {
		r->status = ATA_DRDY | ATA_ERR;
		r->error = (uint8_t)(q.key << 4);
		r->pio_in = false;
	}
}

static void cd_identify(struct ahci_port *p, struct ahci_cmd *c, struct ahci_result *r)
{
	uint16_t id[256];

	r->pio_in = true;
	if (c->prd_bytes < sizeof(id)) {
		r->fatal = PXIS_OFS;
		return;
	}
	atapi_identify(p, id);
	iov_from_buf(c->iov, (unsigned int)c->niov, 0, id, sizeof(id));
	c->transferred = sizeof(id);
}

bool ahci_atapi_exec(struct ahci_port *p, struct ahci_cmd *c, struct ahci_result *r)
{
	const uint8_t *f = c->fis;

	r->status = ATA_DRDY | ATAPI_DSC;
	if (!(f[1] & H2D_C)) { /* Device Control: the end of SRST resets */
		if (!(f[15] & CTL_SRST)) {
			r->sig = true;
			ahci_atapi_reset(p);
		}
		return true;
	}
	switch (f[2]) {
	case ATA_PACKET:
		cd_packet(p, c, r);
		break;
	case ATA_IDENTIFY_PKT:
		cd_identify(p, c, r);
		break;
	case ATA_DEVICE_RESET:
		r->sig = true;
		ahci_atapi_reset(p);
		break;
	case ATA_SET_FEATURES:
		if (f[3] != 0x03 && f[3] != 0x66 && f[3] != 0xcc)
			r->status = ATA_DRDY | ATA_ERR, r->error = ATA_ABRT;
		break;
	case 0xe0: /* STANDBY IMMEDIATE */
	case 0xe1: /* IDLE IMMEDIATE */
	case 0xe3: /* IDLE */
	case 0xe5: /* CHECK POWER MODE */
		break;
	case ATA_IDENTIFY: /* an ATAPI device aborts it, signature in the FIS */
	default:
		r->sig = f[2] == ATA_IDENTIFY;
		r->status = ATA_DRDY | ATA_ERR;
		r->error = ATA_ABRT;
	}
	__atomic_add_fetch(&p->st.requests, 1, __ATOMIC_RELAXED);
	if ((r->status & ATA_ERR) || r->fatal)
		__atomic_add_fetch(&p->st.errors, 1, __ATOMIC_RELAXED);
	return true;
}
