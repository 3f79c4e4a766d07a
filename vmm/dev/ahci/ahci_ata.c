// SPDX-License-Identifier: MIT
/*
 * ahci_ata.c - the ATA disk behind an AHCI port (ahci_int.h): IDENTIFY
 * DEVICE, READ/WRITE DMA (EXT), READ/WRITE FPDMA QUEUED, FLUSH CACHE
 * (EXT), DATA SET MANAGEMENT (TRIM), SET FEATURES and the power commands
 * a driver sends on the way (ATA8-ACS §7), over the shared block backend.
 * Everything else is aborted (status ERR, error ABRT).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/dev/ahci/ahci_int.h"
#include "vmm/disk/blk.h"
#include "vmm/util/iov.h"
#include "vmm/util/log.h"

#define ATA_READ_DMA	    0xc8
#define ATA_WRITE_DMA	    0xca
#define ATA_READ_DMA_EXT    0x25
#define ATA_WRITE_DMA_EXT   0x35
#define ATA_READ_FPDMA	    0x60
#define ATA_WRITE_FPDMA	    0x61
#define ATA_DSM		    0x06
#define ATA_FLUSH	    0xe7
#define ATA_FLUSH_EXT	    0xea
#define ATA_IDENTIFY	    0xec
#define ATA_SET_FEATURES    0xef
#define ATA_SET_MULTIPLE    0xc6
#define ATA_CHECK_POWER	    0xe5
#define ATA_IDLE_IMMEDIATE  0xe1
#define ATA_STANDBY_IMM	    0xe0
#define ATA_IDLE	    0xe3
#define ATA_INIT_DEV_PARAMS 0x91
#define ATA_READ_VERIFY_EXT 0x42
#define ATA_READ_VERIFY	    0x40
#define ATA_SECURITY_FREEZE 0xf5
#define ATA_MAX_SECTORS_28  256u
#define ATA_MAX_SECTORS_48  65536u
#define H2D_C		    0x80 /* byte 1: a command, not a control update */
#define CTL_SRST	    0x04 /* byte 15: software reset */

static uint64_t ata_capacity(const struct ahci_port *p)
{
	return p->be->size / 512;
}

static uint64_t ata_lba(const uint8_t *f, bool ext)
{
	uint64_t lba = f[4] | (uint64_t)f[5] << 8 | (uint64_t)f[6] << 16;

	if (ext)
		return lba | (uint64_t)f[8] << 24 | (uint64_t)f[9] << 32 | (uint64_t)f[10] << 40;
	return lba | (uint64_t)(f[7] & 0xf) << 24;
}

/* Sectors a read or write moves (0 = none of those). */
static uint32_t ata_sectors(const uint8_t *f)
{
	uint32_t n;

	switch (f[2]) {
	case ATA_READ_DMA:
	case ATA_WRITE_DMA:
		return f[12] ? f[12] : ATA_MAX_SECTORS_28;
	case ATA_READ_DMA_EXT:
	case ATA_WRITE_DMA_EXT:
		n = f[12] | (uint32_t)f[13] << 8;
		return n ? n : ATA_MAX_SECTORS_48;
	case ATA_READ_FPDMA:
	case ATA_WRITE_FPDMA: /* the count is in the features */
		n = f[3] | (uint32_t)f[11] << 8;
		return n ? n : ATA_MAX_SECTORS_48;
	}
	return 0;
}

uint64_t ahci_ata_data_len(const struct ahci_port *p, const uint8_t *fis)
{
	uint32_t n;

	if (p->kind != AHCI_PORT_ATA || fis[0] != FIS_TYPE_REG_H2D || !(fis[1] & H2D_C))
		return 0;
	if (fis[2] == ATA_IDENTIFY)
		return 512;
	if (fis[2] == ATA_DSM) {
		n = fis[12] | (uint32_t)fis[13] << 8;
		return n <= AHCI_DSM_MAX_PAGES ? n * 512ull : 0;
	}
	return ata_sectors(fis) * 512ull;
}

/* ---- IDENTIFY DEVICE (ATA8-ACS §7.16) --------------------------------------- */

void ahci_ata_string(uint16_t *w, const char *s, unsigned int words)
{
	size_t n = strlen(s);

	for (unsigned int i = 0; i < words * 2; i++) {
		uint8_t c = i < n ? (uint8_t)s[i] : ' ';

		if (c < 0x20 || c > 0x7e)
			c = ' '; /* a serial from the manifest: printable only */
		w[i / 2] = (uint16_t)(i % 2 ? (w[i / 2] & 0xff00) | c : c << 8);
	}
}

static void ata_identify_size(const struct ahci_port *p, uint16_t *id)
{
	uint64_t cap = ata_capacity(p);
	uint64_t chs = cap / (16 * 63);
	uint32_t lba28 = cap < 0x0fffffff ? (uint32_t)cap : 0x0fffffff;
	uint16_t exp = 0;

	id[1] = (uint16_t)(chs > 16383 ? 16383 : chs);
	id[3] = 16;
	id[6] = 63;
	id[54] = id[1];
	id[55] = 16;
	id[56] = 63;
	id[57] = (uint16_t)(lba28 > (uint32_t)id[1] * 16 * 63 ? (uint32_t)id[1] * 16 * 63 : lba28);
	id[58] = (uint16_t)(((uint32_t)id[1] * 16 * 63) >> 16);
	id[60] = (uint16_t)lba28;
	id[61] = (uint16_t)(lba28 >> 16);
	for (int i = 0; i < 4; i++)
		id[100 + i] = (uint16_t)(cap >> (16 * i));
	while (exp < 15 && (512u << (exp + 1)) <= p->pbs)
		exp++;
	/* word 106: valid, several logical sectors per physical one */
	id[106] = (uint16_t)(0x4000 | (exp ? 0x2000 : 0) | exp);
}

void ahci_ata_identify(const struct ahci_port *p, uint16_t id[256])
{
	bool ro = p->be->read_only;
	uint8_t sum = 0;

	memset(id, 0, 512);
	id[0] = 0x0040; /* fixed device */
	ahci_ata_string(id + 10, p->serial, 10);
	ahci_ata_string(id + 23, "2.5+", 4);	       /* QEMU's firmware revision */
	ahci_ata_string(id + 27, "QEMU HARDDISK", 20); /* QEMU's model: the same /dev/disk/by-id */
	id[47] = 0x8010;
	id[49] = (1u << 11) | (1u << 9) | (1u << 8); /* IORDY, LBA, DMA */
	id[50] = 0x4000;
	id[53] = 0x0006; /* words 64-70 and 88 valid */
	id[59] = 0x0110;
	id[63] = 0x0007;
	id[64] = 0x0003;
	id[65] = id[66] = id[67] = id[68] = 120;
	id[75] = 31;				    /* queue depth 32 */
	id[76] = (1u << 8) | (1u << 2) | (1u << 1); /* NCQ, gen 1 and 2 */
	id[80] = 0x00f0; /* ATA/ATAPI-4 to -7, as QEMU's (SeaBIOS: "ATA-7") */
	id[82] = (1u << 6) | (1u << 5) | (1u << 3);		/* look-ahead, write cache, PM */
	id[83] = 0x4000 | (1u << 13) | (1u << 12) | (1u << 10); /* FLUSH EXT, FLUSH, LBA48 */
	id[84] = 0x4000;
	id[85] = (uint16_t)((1u << 6) | (p->wce ? 1u << 5 : 0) | (1u << 3));
	id[86] = (1u << 13) | (1u << 12) | (1u << 10);
	id[87] = 0x4000;
	id[88] = 0x203f; /* UDMA 0-5, 5 selected */
	id[105] = ro ? 0 : AHCI_DSM_MAX_PAGES;
	id[169] = ro ? 0 : 1; /* DATA SET MANAGEMENT TRIM */
	ata_identify_size(p, id);
	id[255] = 0xa5;
	for (int i = 0; i < 511; i++)
		sum = (uint8_t)(sum + ((const uint8_t *)id)[i]);
	id[255] = (uint16_t)(0xa5 | (uint8_t)-sum << 8); /* integrity word */
}

/* ---- commands ------------------------------------------------------------------ */

static void ata_fail(struct ahci_result *r, uint8_t error)
{
	r->status = ATA_DRDY | ATA_ERR;
	r->error = error;
}

/* A host error: false when the errorPolicy stops the VM for it. */
static bool ata_host_error(struct ahci_port *p, int err, const char *what, uint64_t lba,
			   struct ahci_result *r)
{
	if (p->policy == VM_ERROR_IGNORE) {
		log_warn_once("ahci: disk '%s': %s at sector %llu failed: %s (ignored: errorPolicy "
			      "ignore)",
			      p->name, what, (unsigned long long)lba, strerror(-err));
		return true;
	}
	if (p->policy == VM_ERROR_STOP || (p->policy == VM_ERROR_ENOSPACE && err == -ENOSPC))
		return false;
	log_warn_once("ahci: disk '%s': %s at sector %llu failed: %s", p->name, what,
		      (unsigned long long)lba, strerror(-err));
	ata_fail(r, ATA_ABRT);
	return true;
}

/* errorPolicy stop: pause the VM, wait for the resume. true: retry. */
static bool ata_hold(struct ahci_port *p, unsigned int gen, int err, const char *what, uint64_t lba)
{
	char msg[200];
	unsigned int pg;
	int r;

	snprintf(msg, sizeof(msg), "disk '%s': %s at sector %llu failed: %s (errno %d)", p->name,
		 what, (unsigned long long)lba, strerror(-err), -err);
	error("ahci: %s: pausing the VM (errorPolicy %s); the command is retried on resume", msg,
	      p->policy == VM_ERROR_STOP ? "stop" : "enospace");
	__atomic_add_fetch(&p->st.io_pauses, 1, __ATOMIC_RELAXED);
	pg = device_pause_vm(p->a->vm, "PausedIOError", msg);
	ahci_port_hold(p, true);
	while ((r = device_wait_resume(p->a->vm, pg, 200)) == -ETIMEDOUT)
		if (!ahci_port_live(p, gen))
			break;
	ahci_port_hold(p, false);
	return !r && ahci_port_live(p, gen);
}

static int ata_rw_io(struct ahci_port *p, struct ahci_cmd *c, bool wr, uint64_t lba)
{
	int r;

	if (!wr)
		return blk_preadv(p->be, c->iov, c->niov, lba * 512);
	r = blk_pwritev(p->be, c->iov, c->niov, lba * 512);
	/* write cache off: each write is durable when it completes */
	if (!r && !p->wce)
		r = blk_flush(p->be);
	return r;
}

/* READ/WRITE DMA (EXT) and FPDMA QUEUED. */
static bool ata_rw(struct ahci_port *p, struct ahci_cmd *c, struct ahci_result *r, bool wr,
		   unsigned int gen)
{
	const uint8_t *f = c->fis;
	bool ext = f[2] != ATA_READ_DMA && f[2] != ATA_WRITE_DMA;
	uint64_t lba = ata_lba(f, ext), n = ata_sectors(f), cap = ata_capacity(p);
	int e;

	r->ncq = f[2] == ATA_READ_FPDMA || f[2] == ATA_WRITE_FPDMA;
	if (lba > cap || n > cap - lba)
		return ata_fail(r, ATA_IDNF | ATA_ABRT), true;
	if (wr && p->be->read_only)
		return ata_fail(r, ATA_ABRT), true;
	if (c->prd_bytes < n * 512) {
		/* a read the PRDT cannot hold overflows (§6.1.2); a write
		 * it cannot feed is aborted */
		if (!wr)
			r->fatal = PXIS_OFS;
		else
			ata_fail(r, ATA_ABRT);
		return true;
	}
	while ((e = ata_rw_io(p, c, wr, lba)) != 0) {
		if (ata_host_error(p, e, wr ? "write" : "read", lba, r)) {
			if (r->status & ATA_ERR)
				return true;
			break;
		}
		if (!ata_hold(p, gen, e, wr ? "write" : "read", lba))
			return false;
	}
	c->transferred = n * 512;
	__atomic_add_fetch(wr ? &p->st.write_bytes : &p->st.read_bytes, n * 512, __ATOMIC_RELAXED);
	return true;
}

/* DATA SET MANAGEMENT, TRIM (ATA8-ACS §7.10): 8-byte ranges, 48-bit LBA
 * and 16-bit count, count 0 an unused entry. */
static void ata_trim(struct ahci_port *p, struct ahci_cmd *c, struct ahci_result *r)
{
	uint64_t ranges[AHCI_DSM_MAX_PAGES * 64], cap = ata_capacity(p);
	uint32_t pages = c->fis[12] | (uint32_t)c->fis[13] << 8;
	int e;

	if (!(c->fis[3] & 1) || p->be->read_only || !pages || pages > AHCI_DSM_MAX_PAGES ||
	    c->prd_bytes < pages * 512ull)
		return ata_fail(r, ATA_ABRT);
	iov_to_buf(c->iov, (unsigned int)c->niov, 0, ranges, pages * 512ull);
	for (uint32_t i = 0; i < pages * 64; i++) {
		uint64_t lba = ranges[i] & 0xffffffffffffull, n = ranges[i] >> 48;

		if (!n)
			continue;
		if (lba > cap || n > cap - lba)
			return ata_fail(r, ATA_IDNF | ATA_ABRT);
		e = blk_discard(p->be, lba * 512, n * 512);
		if (e && e != -EOPNOTSUPP) /* a discard is a hint */
			log_warn_once("ahci: disk '%s': discard at sector %llu failed: %s", p->name,
				      (unsigned long long)lba, strerror(-e));
	}
	c->transferred = pages * 512ull;
}

static bool ata_flush(struct ahci_port *p, struct ahci_result *r, unsigned int gen)
{
	int e;

	while ((e = p->be->read_only ? 0 : blk_flush(p->be)) != 0) {
		if (ata_host_error(p, e, "flush", 0, r))
			return true;
		if (!ata_hold(p, gen, e, "flush", 0))
			return false;
	}
	return true;
}

static void ata_set_features(struct ahci_port *p, const uint8_t *f, struct ahci_result *r)
{
	switch (f[3]) {
	case 0x02: /* enable write cache */
	case 0x82: /* disable write cache */
		p->wce = f[3] == 0x02;
		break;
	case 0x03: /* set transfer mode */
	case 0x55: /* disable read look-ahead */
	case 0xaa: /* enable read look-ahead */
	case 0x66: /* keep settings over reset (off) */
	case 0xcc:
		break;
	default:
		ata_fail(r, ATA_ABRT);
	}
}

static void ata_identify_cmd(struct ahci_port *p, struct ahci_cmd *c, struct ahci_result *r)
{
	uint16_t id[256];

	r->pio_in = true;
	if (c->prd_bytes < sizeof(id)) {
		r->fatal = PXIS_OFS;
		return;
	}
	ahci_ata_identify(p, id);
	iov_from_buf(c->iov, (unsigned int)c->niov, 0, id, sizeof(id));
	c->transferred = sizeof(id);
}

/* A Register H2D FIS with C clear: a Device Control update. Clearing
 * SRST ends a software reset: the device signs on again. */
static void ata_control(struct ahci_port *p, const uint8_t *f, struct ahci_result *r)
{
	(void)p;
	if (!(f[15] & CTL_SRST))
		r->sig = true;
}

bool ahci_ata_exec(struct ahci_port *p, struct ahci_cmd *c, struct ahci_result *r, unsigned int gen)
{
	const uint8_t *f = c->fis;
	bool keep = true;

	r->status = ATA_DRDY;
	if (p->kind != AHCI_PORT_ATA) {
		ata_fail(r, ATA_ABRT);
		return true;
	}
	if (!(f[1] & H2D_C)) {
		ata_control(p, f, r);
		return true;
	}
	switch (f[2]) {
	case ATA_IDENTIFY:
		ata_identify_cmd(p, c, r);
		break;
	case ATA_READ_DMA:
	case ATA_READ_DMA_EXT:
	case ATA_READ_FPDMA:
		keep = ata_rw(p, c, r, false, gen);
		break;
	case ATA_WRITE_DMA:
	case ATA_WRITE_DMA_EXT:
	case ATA_WRITE_FPDMA:
		keep = ata_rw(p, c, r, true, gen);
		break;
	case ATA_FLUSH:
	case ATA_FLUSH_EXT:
		keep = ata_flush(p, r, gen);
		break;
	case ATA_DSM:
		ata_trim(p, c, r);
		break;
	case ATA_SET_FEATURES:
		ata_set_features(p, f, r);
		break;
	case ATA_CHECK_POWER:
	case ATA_SET_MULTIPLE:
	case ATA_IDLE_IMMEDIATE:
	case ATA_STANDBY_IMM:
	case ATA_IDLE:
	case ATA_INIT_DEV_PARAMS:
	case ATA_READ_VERIFY:
	case ATA_READ_VERIFY_EXT:
	case ATA_SECURITY_FREEZE:
		break;
	default:
		log_warn_once("ahci: disk '%s': ATA command %#x aborted", p->name, f[2]);
		ata_fail(r, ATA_ABRT);
	}
	__atomic_add_fetch(&p->st.requests, 1, __ATOMIC_RELAXED);
	if ((r->status & ATA_ERR) || r->fatal)
		__atomic_add_fetch(&p->st.errors, 1, __ATOMIC_RELAXED);
	return keep;
}
