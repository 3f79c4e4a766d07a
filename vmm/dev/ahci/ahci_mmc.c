// SPDX-License-Identifier: MIT
/*
 * ahci_mmc.c - the answers of the CD-ROM drive (ahci_atapi.c) to the MMC
 * commands that only report (MMC-6, SPC-4): INQUIRY, READ CAPACITY, READ
 * TOC/PMA/ATIP, GET CONFIGURATION, GET EVENT STATUS NOTIFICATION, READ
 * DISC INFORMATION, MODE SENSE(10), MECHANISM STATUS. Each fills q->buf
 * (at most AHCI_CD_ANSWER_MAX bytes, whatever the CDB asks: the caller
 * sends no more than the allocation length) or sets a CHECK CONDITION.
 */
#include <string.h>

#include "vmm/dev/ahci/ahci_int.h"
#include "vmm/disk/blk.h"

#define CD_MAX_BLOCKS 360000u /* 80 minutes; larger media are DVDs */

static uint16_t be16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
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

static bool cd_is_dvd(const struct ahci_port *p)
{
	return ahci_cd_blocks(p) > CD_MAX_BLOCKS;
}

void ahci_mmc_inquiry(struct ahci_cd_req *q)
{
	if (q->cdb[1] & 1) { /* EVPD: the list of supported pages only */
		if (q->cdb[2])
			return ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
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

void ahci_mmc_read_capacity(struct ahci_cd_req *q)
{
	if (!ahci_cd_ready(q))
		return;
	put32(q->buf, (uint32_t)(ahci_cd_blocks(q->p) ? ahci_cd_blocks(q->p) - 1 : 0));
	put32(q->buf + 4, AHCI_CD_BLOCK);
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
void ahci_mmc_read_toc(struct ahci_cd_req *q)
{
	const uint8_t *cdb = q->cdb;
	bool msf = cdb[1] & 2;
	unsigned int format = cdb[2] & 0xf, start = cdb[6];
	uint8_t *d = q->buf + 4;

	if (!ahci_cd_ready(q))
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
		return ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
	q->buf[2] = q->buf[3] = 1; /* first, last track */
	if (start <= 1) {
		d[1] = 0x14;
		d[2] = 1;
		toc_addr(d + 4, 0, msf);
		d += 8;
	}
	d[1] = 0x14;
	d[2] = 0xaa; /* the lead-out */
	toc_addr(d + 4, ahci_cd_blocks(q->p), msf);
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
void ahci_mmc_get_config(struct ahci_cd_req *q)
{
	struct ahci_port *p = q->p;
	unsigned int rt = q->cdb[1] & 3, from = be16(q->cdb + 2);
	bool dvd = cd_is_dvd(p), med = ahci_cd_medium(p);
	const uint8_t profiles[8] = {0, 0x10, dvd && med, 0, 0, 0x08, !dvd && med, 0};
	const uint8_t core[8] = {0, 0, 0, 2, 1}; /* ATAPI, DBE */
	const uint8_t removable[4] = {0x29};	 /* tray, eject, lock */
	const uint8_t random[8] = {0, 0, AHCI_CD_BLOCK >> 8, 0, 0, dvd ? 16 : 1};
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
		return ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
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
void ahci_mmc_get_event(struct ahci_cd_req *q)
{
	struct ahci_atapi *s = &q->p->cd;

	if (!(q->cdb[1] & 1)) /* asynchronous operation is not supported */
		return ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
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
	q->buf[5] = (uint8_t)((ahci_cd_medium(q->p) ? 2 : 0) | (s->tray_open ? 1 : 0));
	s->event = 0;
	q->len = 8;
}

void ahci_mmc_read_disc_info(struct ahci_cd_req *q)
{
	if (!ahci_cd_ready(q))
		return;
	if (q->cdb[1] & 7) /* other data types: not on a CD-ROM */
		return ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
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
void ahci_mmc_mode_sense(struct ahci_cd_req *q)
{
	unsigned int pc = q->cdb[2] >> 6, code = q->cdb[2] & 0x3f;
	uint32_t off = 8;

	if (pc == 3)
		return ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_NO_SAVING, 0);
	if (code != 0x01 && code != 0x2a && code != 0x3f)
		return ahci_cd_check(q, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD, 0);
	if (code != 0x2a)
		off += mode_page(q->p, q->buf + off, 0x01, pc == 1);
	if (code != 0x01)
		off += mode_page(q->p, q->buf + off, 0x2a, pc == 1);
	put16(q->buf, off - 2);
	q->len = off;
}

void ahci_mmc_mech_status(struct ahci_cd_req *q)
{
	q->buf[1] = q->p->cd.tray_open ? 0x10 : 0; /* door open */
	q->len = 8;
}
