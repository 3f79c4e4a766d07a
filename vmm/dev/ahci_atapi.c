// SPDX-License-Identifier: MIT
/*
 * ahci_atapi.c - the CD-ROM drive behind an AHCI port (ahci_int.h): an
 * ATAPI device (signature EB140101h) that answers IDENTIFY PACKET DEVICE
 * and carries MMC commands in the PACKET command, the CDB in the command
 * table's ACMD area (AHCI 1.3.1 §4.2.3), the data to the PRDs (PIO and
 * DMA alike: the HBA moves it). What Linux's sr/libata, SeaBIOS and OVMF
 * send is answered (MMC-6, SPC-4); every other opcode, writes included,
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

#include "vmm/dev/ahci_int.h"
#include "vmm/disk/blk.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"

#define CD_BLOCK	  2048u
#define CD_MAX_BLOCKS	  360000u /* 80 minutes; larger media are DVDs */
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

/* sense keys and additional sense codes */
#define SK_NOT_READY	   0x02
#define SK_MEDIUM_ERROR	   0x03
#define SK_ILLEGAL_REQUEST 0x05
#define SK_UNIT_ATTENTION  0x06
#define ASC_INVALID_OPCODE 0x20
#define ASC_LBA_RANGE	   0x21
#define ASC_INVALID_FIELD  0x24
#define ASC_MEDIUM_CHANGED 0x28
#define ASC_RESET	   0x29
#define ASC_NO_SAVING	   0x39
#define ASC_NO_MEDIUM	   0x3a
#define ASC_READ_ERROR	   0x11
#define ASC_REMOVAL_PREV   0x53

/* GET EVENT STATUS NOTIFICATION media events */
#define EV_NEW_MEDIA	 2
#define EV_MEDIA_REMOVAL 3

#define ANSWER_MAX 128 /* the longest answer below */

static uint16_t be16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void put16(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b + 2, v);
}

static bool cd_medium(const struct ahci_port *p)
{
	return p->be && !p->cd.tray_open;
}

/* Blocks on the medium (0 without one). */
static uint64_t cd_blocks(const struct ahci_port *p)
{
	return cd_medium(p) ? p->be->size / CD_BLOCK : 0;
}

static bool cd_is_dvd(const struct ahci_port *p)
{
	return cd_blocks(p) > CD_MAX_BLOCKS;
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
		return be16(cdb + 7) * (uint64_t)CD_BLOCK;
	case MMC_READ_12:
		return be32(cdb + 6) * (uint64_t)CD_BLOCK;
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

struct cd_req {
	struct ahci_port *p;
	const uint8_t *cdb;
	uint8_t key, asc, ascq; /* out: the CHECK CONDITION, key 0 = GOOD */
	uint8_t buf[ANSWER_MAX];
	uint32_t len; /* bytes of buf the answer has */
};

static void cd_check(struct cd_req *q, uint8_t key, uint8_t asc, uint8_t ascq)
{
	q->key = key;
	q->asc = asc;
	q->ascq = ascq;
}

/* false (with NOT READY) when there is no medium to answer from. */
static bool cd_ready(struct cd_req *q)
{
	if (cd_medium(q->p))
		return true;
	cd_check(q, SK_NOT_READY, ASC_NO_MEDIUM, q->p->cd.tray_open ? 2 : 1);
	return false;
}

static void cd_request_sense(struct cd_req *q)
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

static void cd_inquiry(struct cd_req *q)
{
	if (q->cdb[1] & 1) { /* EVPD: the list of supported pages only */
		if (q->cdb[2])
			return cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
		q->buf[0] = 5;
		q->buf[3] = 1; /* page 00h lists itself */
		q->len = 5;
		return;
	}
	q->buf[0] = 5;	  /* CD/DVD device */
	q->buf[1] = 0x80; /* removable */
	q->buf[2] = 5;	  /* SPC-3 */
	q->buf[3] = 0x32; /* response data format 2 */
	q->buf[4] = 31;	  /* additional length */
	memcpy(q->buf + 8, "QEMU    QEMU DVD-ROM    2.5+", 28);
	q->len = 36;
}

static void cd_read_capacity(struct cd_req *q)
{
	if (!cd_ready(q))
		return;
	put32(q->buf, (uint32_t)(cd_blocks(q->p) ? cd_blocks(q->p) - 1 : 0));
	put32(q->buf + 4, CD_BLOCK);
	q->len = 8;
}

/* An address as READ TOC gives it: an LBA, or with MSF minutes, seconds,
 * frames of the 150 frames earlier start. */
static void toc_addr(uint8_t *b, uint64_t lba, bool msf)
{
	if (!msf) {
		put32(b, (uint32_t)lba);
		return;
	}
	lba += 150;
	b[0] = 0;
	b[1] = (uint8_t)(lba / (75 * 60) > 255 ? 255 : lba / (75 * 60));
	b[2] = (uint8_t)(lba / 75 % 60);
	b[3] = (uint8_t)(lba % 75);
}

/* READ TOC/PMA/ATIP (MMC-6 §6.26): one data track, formats 0 (TOC) and 1
 * (session information). */
static void cd_read_toc(struct cd_req *q)
{
	const uint8_t *cdb = q->cdb;
	bool msf = cdb[1] & 2;
	unsigned int format = cdb[2] & 0xf, start = cdb[6];
	uint8_t *d = q->buf + 4;

	if (!cd_ready(q))
		return;
	if (!format)
		format = cdb[9] >> 6; /* SFF-8020's place for it (Linux's sr) */
	if (format == 1) {
		put16(q->buf, 10);
		q->buf[2] = q->buf[3] = 1; /* first, last session */
		d[1] = 0x14;		   /* ADR 1, data track */
		d[2] = 1;		   /* first track of the last session */
		toc_addr(d + 4, 0, msf);
		q->len = 12;
		return;
	}
	if (format != 0 || (start > 1 && start != 0xaa))
		return cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
	q->buf[2] = q->buf[3] = 1; /* first, last track */
	if (start <= 1) {
		d[1] = 0x14;
		d[2] = 1;
		toc_addr(d + 4, 0, msf);
		d += 8;
	}
	d[1] = 0x14;
	d[2] = 0xaa; /* the lead-out */
	toc_addr(d + 4, cd_blocks(q->p), msf);
	d += 8;
	q->len = (uint32_t)(d - q->buf);
	put16(q->buf, q->len - 2);
}

/* One feature descriptor of GET CONFIGURATION at b: its length. */
static uint32_t feature(uint8_t *b, uint16_t code, uint8_t ver, bool cur, const uint8_t *data,
			uint8_t n)
{
	put16(b, code);
	b[2] = (uint8_t)(ver << 2 | 2 | (cur ? 1 : 0)); /* persistent */
	b[3] = n;
	memcpy(b + 4, data, n);
	return 4u + n;
}

/* GET CONFIGURATION (MMC-6 §6.6): Profile List, Core, Removable Medium,
 * Random Readable; RT 0 all from the starting feature, 1 the current
 * ones, 2 that one. */
static void cd_get_config(struct cd_req *q)
{
	struct ahci_port *p = q->p;
	unsigned int rt = q->cdb[1] & 3, from = be16(q->cdb + 2);
	bool dvd = cd_is_dvd(p), med = cd_medium(p);
	const uint8_t profiles[8] = {0, 0x10, dvd && med, 0, 0, 0x08, !dvd && med, 0};
	const uint8_t core[8] = {0, 0, 0, 2, 1}; /* ATAPI, DBE */
	const uint8_t removable[4] = {0x29};	 /* tray, eject, lock */
	const uint8_t random[8] = {0, 0, CD_BLOCK >> 8, 0, 0, dvd ? 16 : 1};
	const struct {
		uint16_t code;
		uint8_t ver;
		bool cur;
		const uint8_t *data;
		uint8_t n;
	} f[] = {{0x0000, 0, true, profiles, 8},
		 {0x0001, 2, true, core, 8},
		 {0x0003, 0, true, removable, 4},
		 {0x0010, 0, med, random, 8}};
	uint32_t off = 8;

	if (rt == 3)
		return cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
	for (unsigned int i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (rt == 2 ? f[i].code != from : f[i].code < from || (rt == 1 && !f[i].cur))
			continue;
		off += feature(q->buf + off, f[i].code, f[i].ver, f[i].cur, f[i].data, f[i].n);
	}
	put32(q->buf, off - 4);
	put16(q->buf + 6, med ? (dvd ? 0x10 : 0x08) : 0);
	q->len = off;
}

/* GET EVENT STATUS NOTIFICATION (MMC-6 §6.7), polled, the media class. */
static void cd_get_event(struct cd_req *q)
{
	struct ahci_atapi *s = &q->p->cd;

	if (!(q->cdb[1] & 1)) /* asynchronous operation is not supported */
		return cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
	q->buf[3] = 1u << 4; /* supported: media */
	if (!(q->cdb[4] & (1u << 4))) {
		put16(q->buf, 2);
		q->buf[2] = 0x80; /* no event available */
		q->len = 4;
		return;
	}
	put16(q->buf, 6);
	q->buf[2] = 4; /* media class */
	q->buf[4] = s->event;
	q->buf[5] = (uint8_t)((cd_medium(q->p) ? 2 : 0) | (s->tray_open ? 1 : 0));
	s->event = 0;
	q->len = 8;
}

static void cd_read_disc_info(struct cd_req *q)
{
	if (!cd_ready(q))
		return;
	if (q->cdb[1] & 7) /* other data types: not on a CD-ROM */
		return cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
	put16(q->buf, 32);
	q->buf[2] = 0x0e; /* last session complete, disc finalized */
	q->buf[3] = 1;	  /* first track */
	q->buf[4] = 1;	  /* sessions */
	q->buf[5] = 1;	  /* first track of the last session */
	q->buf[6] = 1;	  /* last track of the last session */
	q->buf[7] = 0x20; /* unrestricted use */
	q->len = 34;
}

/* One mode page at b (changeable: only its header): its length. */
static uint32_t mode_page(struct ahci_port *p, uint8_t *b, unsigned int code, bool changeable)
{
	memset(b, 0, 22);
	b[0] = (uint8_t)code;
	if (code == 0x01) {
		b[1] = 6;
		if (!changeable)
			b[3] = 5; /* read retry count */
		return 8;
	}
	b[1] = 0x14;
	if (changeable)
		return 22;
	b[2] = 0x3b; /* reads CD-R, CD-RW, DVD-ROM, DVD-R, DVD-RAM */
	b[4] = 0x71; /* audio play, mode 2 form 1 and 2, multi-session */
	b[6] = (uint8_t)(0x29 | (p->cd.locked ? 2 : 0)); /* tray, eject, lock (state) */
	put16(b + 8, 706);				 /* kB/s, 4x */
	put16(b + 12, 512);				 /* buffer, KiB */
	put16(b + 14, 706);
	return 22;
}

/* MODE SENSE(10): pages 01h (read error recovery), 2Ah (capabilities and
 * mechanical status), 3Fh (both); no saved values. */
static void cd_mode_sense(struct cd_req *q)
{
	unsigned int pc = q->cdb[2] >> 6, code = q->cdb[2] & 0x3f;
	uint32_t off = 8;

	if (pc == 3)
		return cd_check(q, SK_ILLEGAL_REQUEST, ASC_NO_SAVING, 0);
	if (code != 0x01 && code != 0x2a && code != 0x3f)
		return cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
	if (code != 0x2a)
		off += mode_page(q->p, q->buf + off, 0x01, pc == 1);
	if (code != 0x01)
		off += mode_page(q->p, q->buf + off, 0x2a, pc == 1);
	put16(q->buf, off - 2);
	q->len = off;
}

/* START STOP UNIT: LoEj with Start clear opens the tray (unless the
 * medium is locked in), with Start set closes it. */
static void cd_start_stop(struct cd_req *q)
{
	struct ahci_atapi *s = &q->p->cd;
	uint8_t b = q->cdb[4];

	if ((b & 0xf0) || !(b & 2)) /* a power condition, or no load/eject */
		return;
	if (!(b & 1)) {
		if (s->locked)
			return cd_check(q, SK_ILLEGAL_REQUEST, ASC_REMOVAL_PREV, 2);
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

static void cd_mech_status(struct cd_req *q)
{
	q->buf[1] = q->p->cd.tray_open ? 0x10 : 0; /* door open */
	q->len = 8;
}

/* READ(10), READ(12): into the PRDs. false: a fatal error (r->fatal). */
static bool cd_read(struct cd_req *q, struct ahci_cmd *c, struct ahci_result *r)
{
	struct ahci_port *p = q->p;
	uint64_t lba = be32(q->cdb + 2), n, cap = cd_blocks(p);
	int e;

	n = q->cdb[0] == MMC_READ_10 ? be16(q->cdb + 7) : be32(q->cdb + 6);
	if (!cd_ready(q))
		return true;
	if (lba > cap || n > cap - lba) {
		cd_check(q, SK_ILLEGAL_REQUEST, ASC_LBA_RANGE, 0);
		return true;
	}
	if (c->prd_bytes < n * CD_BLOCK) {
		r->fatal = PXIS_OFS;
		return false;
	}
	if (!n)
		return true;
	e = blk_preadv(p->be, c->iov, c->niov, lba * CD_BLOCK);
	if (e) {
		log_warn_once("ahci: cdrom '%s': read at block %llu failed: %s", p->name,
			      (unsigned long long)lba, strerror(-e));
		cd_check(q, SK_MEDIUM_ERROR, ASC_READ_ERROR, 0);
		return true;
	}
	c->transferred = n * CD_BLOCK;
	__atomic_add_fetch(&p->st.read_bytes, n * CD_BLOCK, __ATOMIC_RELAXED);
	return true;
}

/* Commands a pending unit attention lets through. */
static bool cd_allow_ua(uint8_t op)
{
	return op == MMC_INQUIRY || op == MMC_REQUEST_SENSE || op == MMC_GET_CONFIG ||
	       op == MMC_GET_EVENT;
}

/* Answer the CDB into q (or read into the PRDs); false: fatal. */
static bool cd_dispatch(struct cd_req *q, struct ahci_cmd *c, struct ahci_result *r)
{
	switch (q->cdb[0]) {
	case MMC_TEST_UNIT_READY:
		cd_ready(q);
		break;
	case MMC_REQUEST_SENSE:
		cd_request_sense(q);
		break;
	case MMC_INQUIRY:
		cd_inquiry(q);
		break;
	case MMC_READ_CAPACITY:
		cd_read_capacity(q);
		break;
	case MMC_READ_10:
	case MMC_READ_12:
		return cd_read(q, c, r);
	case MMC_READ_TOC:
		cd_read_toc(q);
		break;
	case MMC_GET_CONFIG:
		cd_get_config(q);
		break;
	case MMC_GET_EVENT:
		cd_get_event(q);
		break;
	case MMC_READ_DISC_INFO:
		cd_read_disc_info(q);
		break;
	case MMC_MODE_SENSE_10:
		cd_mode_sense(q);
		break;
	case MMC_START_STOP:
		cd_start_stop(q);
		break;
	case MMC_PREVENT_ALLOW:
		q->p->cd.locked = q->cdb[4] & 1;
		break;
	case MMC_MECH_STATUS:
		cd_mech_status(q);
		break;
	default: /* writes too: the drive reads only */
		cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE, 0);
	}
	return true;
}

/* PACKET (ATA8-ACS §7.18): run the CDB, send the answer (at most the
 * allocation length), keep the sense. */
static void cd_packet(struct ahci_port *p, struct ahci_cmd *c, struct ahci_result *r)
{
	struct cd_req q = {.p = p, .cdb = c->acmd};
	uint64_t alloc = cdb_data_len(c->acmd), len;

	if (!c->atapi) { /* header A clear: no CDB was fetched */
		r->status = ATA_DRDY | ATA_ERR;
		r->error = ATA_ABRT;
		return;
	}
	r->count = ATAPI_IREASON_END;
	r->pio_in = !(c->fis[3] & 1); /* features: DMA clear, PIO */
	if (p->cd.ua && !cd_allow_ua(q.cdb[0])) {
		cd_check(&q, SK_UNIT_ATTENTION, p->cd.ua_asc, 0);
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
