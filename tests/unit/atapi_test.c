// SPDX-License-Identifier: MIT
/*
 * The ATAPI CD-ROM on AHCI without KVM: an ISO-sized image (or none) on
 * port 0, the PCI host on a fake bus, and a small driver that sends
 * PACKET commands the way Linux's ahci and SeaBIOS do (the CDB in the
 * command table's ACMD area, header bit A) and misbehaves: allocation
 * lengths past the answer, LBAs and counts past the end, PRDTs too short
 * or outside RAM, writes, opcodes no drive knows, a PACKET without its
 * CDB. It checks the data, the sense, PxIS/PxTFD/PxCI and the image.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/dev/ahci/ahci.h"
#include "vmm/disk/blk.h"

#define BLOCKS 100u /* a 200 KiB medium */
#define RAM    (4u << 20)
#define CLB    0x1000ull
#define FB     0x2000ull
#define CTBA   0x3000ull
#define DATA   0x40000ull
#define P0     0x100u
#define IS_OFS (1u << 24)
#define IS_HBF (1u << 29)
#define IS_TFE (1u << 30)

struct env {
	struct pci_host h;
	struct tdrv d;
	struct ahci *ahci;
	uint64_t abar;
	char path[64];
	int fd;
};

static uint32_t rd(struct env *e, uint32_t off)
{
	return mmio_rd(e->abar + off, 4);
}

static void wr(struct env *e, uint32_t off, uint32_t v)
{
	mmio_wr(e->abar + off, v, 4);
}

static bool wait_reg(struct env *e, uint32_t off, uint32_t mask, uint32_t want)
{
	for (int i = 0; i < 5000; i++) {
		if ((rd(e, off) & mask) == want)
			return true;
		usleep(1000);
	}
	return false;
}

/* A drive with a medium of BLOCKS blocks (byte i of block b is b ^ i),
 * or an empty one; the port started as Linux's ahci starts it. */
static int env_up(struct env *e, bool medium)
{
	struct ahci_disk_params p = {.name = "cd0", .serial = "CD-SER-9"};
	static uint8_t buf[BLOCKS * 2048];
	struct blk *be = NULL;
	int slot;

	memset(e, 0, sizeof(*e));
	tbus_n = 0;
	e->fd = -1;
	if (medium) {
		snprintf(e->path, sizeof(e->path), "/tmp/vmlet-atapi-test.XXXXXX");
		e->fd = mkstemp(e->path);
		for (unsigned int i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)((i / 2048) ^ i);
		if (e->fd < 0 || pwrite(e->fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
		    blk_open(&be, e->path, true, BLK_CACHE_WRITEBACK))
			return -1;
	}
	tdrv_init(&e->d, RAM, 16);
	if (thost_init(&e->h, &e->d.mem) || ahci_create(&e->ahci, &e->h, -1) ||
	    ahci_attach_cdrom(e->ahci, 0, be, &p))
		return -1;
	slot = ahci_pci(e->ahci)->slot;
	e->abar = ecam_rd(slot, PCI_BASE_ADDRESS_5, 4) & ~0xfull;
	ecam_wr(slot, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	wr(e, 0x04, 1u << 31);
	wr(e, P0 + 0x00, (uint32_t)CLB);
	wr(e, P0 + 0x08, (uint32_t)FB);
	wr(e, P0 + 0x18, 1u << 4 | 1u << 24); /* FRE, ATAPI */
	wr(e, P0 + 0x2c, 1);		      /* COMRESET */
	wr(e, P0 + 0x2c, 0);
	if (rd(e, P0 + 0x24) != 0xeb140101u || (rd(e, P0 + 0x28) & 0xf) != 3)
		return -1;
	wr(e, P0 + 0x10, ~0u);
	wr(e, P0 + 0x18, 1u << 4 | 1u << 24 | 1);
	return rd(e, P0 + 0x18) & (1u << 24) ? 0 : -1;
}

static void env_down(struct env *e)
{
	ahci_destroy(e->ahci);
	pci_host_release(&e->h);
	tdrv_release(&e->d);
	if (e->fd >= 0) {
		close(e->fd);
		unlink(e->path);
	}
}

static void port_restart(struct env *e)
{
	wr(e, P0 + 0x18, 1u << 4 | 1u << 24);
	CHECK(wait_reg(e, P0 + 0x18, 1u << 15, 0));
	wr(e, P0 + 0x10, ~0u);
	wr(e, P0 + 0x30, ~0u);
	wr(e, P0 + 0x18, 1u << 4 | 1u << 24 | 1);
}

/* The PACKET's features: bit 0 DMA (SeaBIOS, Linux's DMA commands), else
 * PIO (Linux's PIO ones) */
static uint8_t pkt_features = 1;

/* Run an ATA command (cmd) or a PACKET (cmd 0xa0, cdb of 12 bytes, bit A
 * set unless no_a) in slot 0 with one PRD (buf, len); returns PxIS and
 * restarts the port after an error. */
static uint32_t run(struct env *e, uint8_t cmd, const uint8_t *cdb, bool no_a, uint64_t buf,
		    uint32_t len)
{
	uint32_t *h = tdrv_ptr(&e->d, CLB);
	uint8_t *f = tdrv_ptr(&e->d, CTBA);
	uint32_t *prd = tdrv_ptr(&e->d, CTBA + 0x80), is = 0xdeadbeef;

	memset(f, 0, 0x100);
	memset(tdrv_ptr(&e->d, CLB + 4), 0, 4);
	f[0] = 0x27;
	f[1] = 0x80;
	f[2] = cmd;
	f[3] = pkt_features;
	if (cdb)
		memcpy(f + 0x40, cdb, 12);
	h[0] = 5u | (cdb && !no_a ? 1u << 5 : 0) | (len ? 1u << 16 : 0);
	h[2] = (uint32_t)CTBA;
	h[3] = 0;
	prd[0] = (uint32_t)buf;
	prd[1] = (uint32_t)(buf >> 32);
	prd[3] = len ? len - 1 : 0;
	wr(e, P0 + 0x10, ~0u);
	wr(e, P0 + 0x38, 1);
	for (int i = 0; i < 5000; i++) {
		is = rd(e, P0 + 0x10);
		if (!(rd(e, P0 + 0x38) & 1) || (is & (IS_TFE | IS_HBF | (1u << 27) | IS_OFS)))
			break;
		usleep(1000);
	}
	if (is & (IS_TFE | IS_HBF | (1u << 27) | IS_OFS))
		port_restart(e);
	return is;
}

static uint32_t prdbc(struct env *e)
{
	return *(uint32_t *)tdrv_ptr(&e->d, CLB + 4);
}

/* A PACKET that must fail: CHECK CONDITION with key in PxTFD's error
 * (key << 4), then REQUEST SENSE gives key/asc/ascq. */
static void check_sense(struct env *e, const uint8_t *cdb, uint32_t len, uint8_t key, uint8_t asc,
			uint8_t ascq)
{
	const uint8_t rs[12] = {0x03, 0, 0, 0, 18};
	uint8_t *s = tdrv_ptr(&e->d, DATA + 0x80000);
	uint8_t *d2h = tdrv_ptr(&e->d, FB + 0x40);

	CHECK(run(e, 0xa0, cdb, false, DATA, len) & IS_TFE);
	CHECK_EQ_U64(d2h[2] & 0x01, 1);
	CHECK_EQ_U64(d2h[3], (uint32_t)key << 4);
	memset(s, 0xee, 18);
	CHECK_EQ_U64(run(e, 0xa0, rs, false, DATA + 0x80000, 18) & IS_TFE, 0);
	CHECK_EQ_U64(s[0], 0x70);
	CHECK_EQ_U64(s[2], key);
	CHECK_EQ_U64(s[12], asc);
	CHECK_EQ_U64(s[13], ascq);
}

static const uint8_t tur[12] = {0};

static void test_identify_and_reset(void)
{
	const uint8_t inq[12] = {0x12, 0, 0, 0, 96};
	uint16_t *id;
	uint8_t *d2h, *q;
	struct env e;

	CHECK(env_up(&e, true) == 0);
	/* IDENTIFY DEVICE: aborted, the ATAPI signature in the D2H FIS */
	CHECK(run(&e, 0xec, NULL, false, DATA, 512) & IS_TFE);
	d2h = tdrv_ptr(&e.d, FB + 0x40);
	CHECK(d2h[5] == 0x14 && d2h[6] == 0xeb && d2h[3] == 0x04);
	CHECK_EQ_U64(rd(&e, P0 + 0x24), 0xeb140101u);
	/* IDENTIFY PACKET DEVICE */
	CHECK_EQ_U64(run(&e, 0xa1, NULL, false, DATA, 512) & IS_TFE, 0);
	id = tdrv_ptr(&e.d, DATA);
	CHECK_EQ_U64(id[0], 0x85c0);
	CHECK_EQ_U64(id[27], 'Q' << 8 | 'E');
	CHECK_EQ_U64(id[32], 'O' << 8 | 'M');
	CHECK_EQ_U64(id[10], 'C' << 8 | 'D');
	CHECK_EQ_U64(id[80], 0x1e);
	CHECK_EQ_U64(prdbc(&e), 512);
	/* power on: a unit attention; INQUIRY passes it, TUR does not */
	CHECK_EQ_U64(run(&e, 0xa0, inq, false, DATA, 96) & IS_TFE, 0);
	q = tdrv_ptr(&e.d, DATA);
	CHECK(q[0] == 5 && q[1] == 0x80 && memcmp(q + 8, "QEMU    QEMU DVD-ROM    ", 24) == 0);
	CHECK_EQ_U64(prdbc(&e), 36); /* the answer, not the allocation length */
	check_sense(&e, tur, 0, 6, 0x29, 0);
	CHECK_EQ_U64(run(&e, 0xa0, tur, false, 0, 0) & IS_TFE, 0);
	CHECK_EQ_U64(*(uint8_t *)tdrv_ptr(&e.d, FB + 0x40 + 12), 3); /* I/O, C/D */
	/* COMRESET: the signature again, and a new unit attention */
	wr(&e, P0 + 0x2c, 1);
	wr(&e, P0 + 0x2c, 0);
	CHECK_EQ_U64(rd(&e, P0 + 0x24), 0xeb140101u);
	port_restart(&e);
	check_sense(&e, tur, 0, 6, 0x29, 0);
	env_down(&e);
}

static void test_read_and_info(void)
{
	const uint8_t cap[12] = {0x25}, r10[12] = {0x28, 0, 0, 0, 0, 7, 0, 0, 3};
	const uint8_t r12[12] = {0xa8, 0, 0, 0, 0, 98, 0, 0, 0, 2};
	const uint8_t toc[12] = {0x43, 0, 0, 0, 0, 0, 0, 0, 100};
	const uint8_t toc_msf[12] = {0x43, 2, 0, 0, 0, 0, 0xaa, 0, 100};
	const uint8_t ses[12] = {0x43, 0, 0, 0, 0, 0, 0, 0, 12, 0x40};
	const uint8_t cfg[12] = {0x46, 2, 0, 0, 0, 0, 0, 0, 8};
	const uint8_t ms[12] = {0x5a, 0, 0x2a, 0, 0, 0, 0, 0, 64};
	const uint8_t di[12] = {0x51, 0, 0, 0, 0, 0, 0, 0, 34};
	const uint8_t mech[12] = {0xbd, 0, 0, 0, 0, 0, 0, 0, 0, 8};
	uint8_t *b;
	struct env e;
	int bad = 0;

	CHECK(env_up(&e, true) == 0);
	run(&e, 0xa0, tur, false, 0, 0); /* the unit attention */
	b = tdrv_ptr(&e.d, DATA);
	CHECK_EQ_U64(run(&e, 0xa0, cap, false, DATA, 8) & IS_TFE, 0);
	CHECK(b[3] == BLOCKS - 1 && b[6] == 0x08 && b[7] == 0);
	CHECK_EQ_U64(run(&e, 0xa0, r10, false, DATA, 3 * 2048) & IS_TFE, 0);
	for (unsigned int i = 0; i < 3 * 2048; i++)
		bad += b[i] != (uint8_t)((7 + i / 2048) ^ (7 * 2048 + i));
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(prdbc(&e), 3 * 2048);
	/* READ(12) of the last two blocks */
	CHECK_EQ_U64(run(&e, 0xa0, r12, false, DATA, 2 * 2048) & IS_TFE, 0);
	CHECK(b[0] == (uint8_t)(98 ^ 0) && b[4095] == (uint8_t)(99 ^ 4095));
	/* READ TOC: track 1 at 0, the lead-out at BLOCKS */
	CHECK_EQ_U64(run(&e, 0xa0, toc, false, DATA, 100) & IS_TFE, 0);
	CHECK(b[1] == 18 && b[2] == 1 && b[3] == 1 && b[6] == 1 && b[11] == 0);
	CHECK(b[14] == 0xaa && b[19] == BLOCKS);
	CHECK_EQ_U64(prdbc(&e), 20);
	/* in MSF from the lead-out: 00:03:25 (BLOCKS + 150 frames) */
	CHECK_EQ_U64(run(&e, 0xa0, toc_msf, false, DATA, 100) & IS_TFE, 0);
	CHECK(b[1] == 10 && b[6] == 0xaa && b[9] == 0 && b[10] == 3 && b[11] == 25);
	/* session information in SFF-8020's format field (Linux's sr) */
	CHECK_EQ_U64(run(&e, 0xa0, ses, false, DATA, 12) & IS_TFE, 0);
	CHECK(b[1] == 10 && b[2] == 1 && b[3] == 1 && b[6] == 1);
	/* GET CONFIGURATION, the header only: the current profile CD-ROM */
	CHECK_EQ_U64(run(&e, 0xa0, cfg, false, DATA, 8) & IS_TFE, 0);
	CHECK(b[6] == 0 && b[7] == 0x08 && prdbc(&e) == 8);
	CHECK_EQ_U64(run(&e, 0xa0, ms, false, DATA, 64) & IS_TFE, 0);
	CHECK(b[1] == 28 && b[8] == 0x2a && b[9] == 0x14);
	CHECK_EQ_U64(run(&e, 0xa0, di, false, DATA, 34) & IS_TFE, 0);
	CHECK(b[1] == 32 && b[2] == 0x0e && b[4] == 1);
	CHECK_EQ_U64(run(&e, 0xa0, mech, false, DATA, 8) & IS_TFE, 0);
	CHECK_EQ_U64(b[1], 0);
	env_down(&e);
}

static void test_hostile_driver(void)
{
	const uint8_t past[12] = {0x28, 0, 0, 0, 0, 99, 0, 0, 2};
	const uint8_t wrap[12] = {0xa8, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const uint8_t end0[12] = {0x28, 0, 0, 0, 0, BLOCKS, 0, 0, 0};
	const uint8_t big[12] = {0x28, 0, 0, 0, 0, 0, 0, 0, 4};
	const uint8_t w10[12] = {0x2a, 0, 0, 0, 0, 0, 0, 0, 1};
	const uint8_t unk[12] = {0xd8};
	const uint8_t gesn_async[12] = {0x4a, 0, 0, 0, 0x10, 0, 0, 0, 8};
	const uint8_t ms_saved[12] = {0x5a, 0, 0xea, 0, 0, 0, 0, 0, 64};
	const uint8_t toc_bad[12] = {0x43, 0, 0, 0, 0, 0, 5, 0, 100};
	const uint8_t inq_small[12] = {0x12, 0, 0, 0, 5};
	const uint8_t inq_page[12] = {0x12, 1, 0x83, 0, 64};
	uint8_t before[2048], after[2048], *b;
	struct env e;

	CHECK(env_up(&e, true) == 0);
	run(&e, 0xa0, tur, false, 0, 0);
	CHECK(pread(e.fd, before, 2048, 0) == 2048);
	/* past the end, and a 32-bit LBA + count that would wrap */
	check_sense(&e, past, 4096, 5, 0x21, 0);
	check_sense(&e, wrap, 4096, 5, 0x21, 0);
	/* a read of 0 blocks at the end is fine, nothing moves */
	CHECK_EQ_U64(run(&e, 0xa0, end0, false, DATA, 2048) & IS_TFE, 0);
	CHECK_EQ_U64(prdbc(&e), 0);
	/* 4 blocks into a 2 KiB PRDT: overflow, a fatal port error */
	CHECK(run(&e, 0xa0, big, false, DATA, 2048) & IS_OFS);
	/* a PRD past RAM: host bus fatal error */
	CHECK(run(&e, 0xa0, big, false, RAM - 2048, 8192) & IS_HBF);
	/* the drive reads only: WRITE(10) and opcodes no drive knows */
	memset(tdrv_ptr(&e.d, DATA), 0x11, 2048);
	check_sense(&e, w10, 2048, 5, 0x20, 0);
	CHECK(pread(e.fd, after, 2048, 0) == 2048 && !memcmp(before, after, 2048));
	check_sense(&e, unk, 0, 5, 0x20, 0);
	check_sense(&e, gesn_async, 8, 5, 0x24, 0);
	check_sense(&e, ms_saved, 64, 5, 0x39, 0);
	check_sense(&e, toc_bad, 100, 5, 0x24, 0);
	check_sense(&e, inq_page, 64, 5, 0x24, 0);
	/* an allocation length shorter than the answer cuts it */
	b = tdrv_ptr(&e.d, DATA);
	memset(b, 0xee, 64);
	CHECK_EQ_U64(run(&e, 0xa0, inq_small, false, DATA, 64) & IS_TFE, 0);
	CHECK(prdbc(&e) == 5 && b[0] == 5 && b[5] == 0xee);
	/* a PACKET without header bit A has no CDB: aborted */
	CHECK(run(&e, 0xa0, tur, true, 0, 0) & IS_TFE);
	CHECK_EQ_U64(rd(&e, P0 + 0x20) >> 8 & 0xff, 0x04);
	/* the port still works */
	CHECK_EQ_U64(run(&e, 0xa0, tur, false, 0, 0) & IS_TFE, 0);
	env_down(&e);
}

static void test_tray_and_events(void)
{
	const uint8_t lock[12] = {0x1e, 0, 0, 0, 1}, unlock[12] = {0x1e};
	const uint8_t eject[12] = {0x1b, 0, 0, 0, 2}, load[12] = {0x1b, 0, 0, 0, 3};
	const uint8_t gesn[12] = {0x4a, 1, 0, 0, 0x10, 0, 0, 0, 8};
	const uint8_t cap[12] = {0x25};
	uint8_t *b;
	struct env e;

	CHECK(env_up(&e, true) == 0);
	run(&e, 0xa0, tur, false, 0, 0);
	b = tdrv_ptr(&e.d, DATA);
	CHECK_EQ_U64(run(&e, 0xa0, lock, false, 0, 0) & IS_TFE, 0);
	check_sense(&e, eject, 0, 5, 0x53, 2); /* medium removal prevented */
	CHECK_EQ_U64(run(&e, 0xa0, tur, false, 0, 0) & IS_TFE, 0);
	CHECK_EQ_U64(run(&e, 0xa0, unlock, false, 0, 0) & IS_TFE, 0);
	CHECK_EQ_U64(run(&e, 0xa0, eject, false, 0, 0) & IS_TFE, 0);
	check_sense(&e, tur, 0, 2, 0x3a, 2); /* tray open */
	check_sense(&e, cap, 8, 2, 0x3a, 2);
	CHECK_EQ_U64(run(&e, 0xa0, gesn, false, DATA, 8) & IS_TFE, 0);
	CHECK(b[2] == 4 && b[4] == 3 && b[5] == 1); /* media removal, tray open */
	CHECK_EQ_U64(run(&e, 0xa0, load, false, 0, 0) & IS_TFE, 0);
	/* GESN passes the unit attention and reports the new medium once */
	CHECK_EQ_U64(run(&e, 0xa0, gesn, false, DATA, 8) & IS_TFE, 0);
	CHECK(b[4] == 2 && b[5] == 2);
	CHECK_EQ_U64(run(&e, 0xa0, gesn, false, DATA, 8) & IS_TFE, 0);
	CHECK(b[4] == 0 && b[5] == 2);
	check_sense(&e, cap, 8, 6, 0x28, 0); /* medium may have changed */
	CHECK_EQ_U64(run(&e, 0xa0, cap, false, DATA, 8) & IS_TFE, 0);
	env_down(&e);
}

static void test_empty_drive(void)
{
	const uint8_t r10[12] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1};
	const uint8_t cfg[12] = {0x46, 0, 0, 0, 0, 0, 0, 0, 64};
	const uint8_t inq[12] = {0x12, 0, 0, 0, 36};
	uint8_t *b;
	struct env e;

	CHECK(env_up(&e, false) == 0);
	run(&e, 0xa0, tur, false, 0, 0);
	check_sense(&e, tur, 0, 2, 0x3a, 1); /* tray closed, no medium */
	check_sense(&e, r10, 2048, 2, 0x3a, 1);
	CHECK_EQ_U64(run(&e, 0xa0, inq, false, DATA, 36) & IS_TFE, 0);
	b = tdrv_ptr(&e.d, DATA);
	CHECK_EQ_U64(run(&e, 0xa0, cfg, false, DATA, 64) & IS_TFE, 0);
	CHECK(b[6] == 0 && b[7] == 0); /* no current profile */
	CHECK_EQ_U64(b[3] + 4, prdbc(&e));
	env_down(&e);
}

/* PIO: the data to the PRDs all the same, a PIO Setup FIS (its byte
 * count) before the D2H FIS, none after an error; a software reset (SRST
 * set, then cleared, in Device Control FISes) signs on again with a new
 * unit attention. */
static void test_pio_and_srst(void)
{
	const uint8_t inq[12] = {0x12, 0, 0, 0, 96}, cap[12] = {0x25};
	uint8_t *pio, *d2h, *b, *f;
	uint32_t *h;
	struct env e;

	CHECK(env_up(&e, true) == 0);
	run(&e, 0xa0, tur, false, 0, 0);
	pkt_features = 0;
	pio = tdrv_ptr(&e.d, FB + 0x20);
	d2h = tdrv_ptr(&e.d, FB + 0x40);
	memset(pio, 0, 20);
	CHECK_EQ_U64(run(&e, 0xa0, inq, false, DATA, 96), 3); /* DHRS, PSS */
	b = tdrv_ptr(&e.d, DATA);
	CHECK(b[0] == 5 && prdbc(&e) == 36);
	CHECK(pio[0] == 0x5f && pio[16] == 36 && pio[17] == 0 && (pio[2] & 0x89) == 0);
	CHECK(d2h[0] == 0x34 && d2h[2] == 0x50 && d2h[12] == 3);
	/* an error: no PIO Setup FIS */
	memset(pio, 0, 20);
	CHECK(run(&e, 0xa0, (const uint8_t[12]){0x12, 1, 0x83, 0, 64}, false, DATA, 64) & IS_TFE);
	CHECK_EQ_U64(pio[0], 0);
	pkt_features = 1;
	/* SRST: a control FIS with SRST, then one without */
	for (int set = 1; set >= 0; set--) {
		h = tdrv_ptr(&e.d, CLB);
		f = tdrv_ptr(&e.d, CTBA);
		memset(f, 0, 0x100);
		f[0] = 0x27;
		f[15] = set ? 0x04 : 0;
		h[0] = 5u | (set ? 1u << 10 | 1u << 8 : 0); /* C, R: reset, clear BSY */
		h[2] = (uint32_t)CTBA;
		wr(&e, P0 + 0x10, ~0u);
		wr(&e, P0 + 0x38, 1);
		CHECK(wait_reg(&e, P0 + 0x38, 1, 0));
	}
	CHECK(d2h[4] == 0x01 && d2h[5] == 0x14 && d2h[6] == 0xeb && d2h[12] == 0x01);
	check_sense(&e, cap, 8, 6, 0x29, 0);
	CHECK_EQ_U64(run(&e, 0xa0, cap, false, DATA, 8) & IS_TFE, 0);
	env_down(&e);
}

int main(void)
{
	TEST_RUN(test_identify_and_reset);
	TEST_RUN(test_read_and_info);
	TEST_RUN(test_hostile_driver);
	TEST_RUN(test_tray_and_events);
	TEST_RUN(test_empty_drive);
	TEST_RUN(test_pio_and_srst);
	return test_summary();
}
