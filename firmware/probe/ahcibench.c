// SPDX-License-Identifier: MIT
/*
 * ahcibench.c - timed SATA I/O for scripts/bench-blk (probe.h): the modes
 * and report line of blkbench.c, on the first ATA disk of the first AHCI
 * function (class 01/06/01: vmlet's ICH9 AHCI, QEMU q35's at 00:1f.2). A
 * polling driver at CPL3, as blkbench.c's: no interrupts (PxIE 0, GHC.IE
 * clear), one command table per slot with one PRD entry. Queue depth 1
 * uses READ/WRITE DMA EXT and waits for PxCI; queue depth 32 uses READ
 * FPDMA QUEUED (NCQ) and waits for PxSACT. AHCI 1.3.1 §10.1.2 (port setup)
 * and §5.3 (issuing); ATA8-ACS for the commands.
 */
#include "firmware/lib/io.h"
#include "firmware/lib/pci.h"
#include "firmware/probe/probe.h"

#define SLOTS	     32
#define AREA_MAX     (128ull << 20)
#define SPIN_TIMEOUT (1ull << 32)

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
#define IS_TFES (1u << 30)

struct cmd_hdr {
	uint32_t dw0, prdbc, ctba, ctbau, rsv[4];
};
struct cmd_tbl {
	uint8_t cfis[64], acmd[16], rsv[48];
	struct {
		uint32_t dba, dbau, rsv, dbc;
	} prd;
	uint8_t pad[112]; /* 256 bytes a table, 128-byte aligned */
};

static struct cmd_hdr clist[SLOTS] FW_ALIGNED(1024);
static uint8_t rfis[256] FW_ALIGNED(256);
static struct cmd_tbl tbl[SLOTS] FW_ALIGNED(128);
static uint8_t adata[1u << 20] FW_ALIGNED(4096);

struct sata_mode {
	const char *name;
	uint8_t cmd; /* 0x25 READ DMA EXT, 0x35 WRITE DMA EXT, 0x60 READ FPDMA QUEUED */
	uint32_t size, qd, n;
	bool seq, flush;
};

static const struct sata_mode smodes[] = {
    {"idle", 0x25, 4096, 1, 0, false, false},
    {"qd1", 0x25, 4096, 1, 8192, false, false},
    {"qd32", 0x60, 4096, SLOTS, 65536, false, false},
    {"seqread", 0x25, 1u << 20, 1, 1024, true, false},
    {"seqwrite", 0x35, 1u << 20, 1, 1024, true, true},
};

struct sata {
	volatile uint8_t *port;
	uint64_t area, seq, x;
	uint32_t busy, errors;
};

static uint32_t prd(struct sata *s, uint32_t off)
{
	return *(volatile uint32_t *)(s->port + off);
}

static void pwr(struct sata *s, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(s->port + off) = v;
}

/* Slot's H2D FIS for cmd at lba: count sectors (NCQ: in the features,
 * the tag in count bits 7:3), data buf/len in its one PRD. */
static void build(uint32_t slot, uint8_t cmd, uint64_t lba, uint32_t count, void *buf, uint32_t len)
{
	struct cmd_tbl *t = &tbl[slot];
	uint8_t *f = t->cfis;
	bool ncq = cmd == 0x60;

	memset(f, 0, 20);
	f[0] = 0x27, f[1] = 0x80, f[2] = cmd, f[7] = 0x40;
	for (int i = 0; i < 3; i++) {
		f[4 + i] = (uint8_t)(lba >> (8 * i));
		f[8 + i] = (uint8_t)(lba >> (8 * (i + 3)));
	}
	if (ncq) {
		f[3] = (uint8_t)count, f[11] = (uint8_t)(count >> 8), f[12] = (uint8_t)(slot << 3);
	} else {
		f[12] = (uint8_t)count, f[13] = (uint8_t)(count >> 8);
	}
	t->prd.dba = (uint32_t)(uintptr_t)buf;
	t->prd.dbau = (uint32_t)((uint64_t)(uintptr_t)buf >> 32);
	t->prd.dbc = len ? len - 1 : 0;
	clist[slot].dw0 = 5u | (cmd == 0x35 ? 1u << 6 : 0) | (len ? 1u << 16 : 0);
	clist[slot].prdbc = 0;
}

static void issue(struct sata *s, uint32_t slot, bool ncq)
{
	__asm__ volatile("" ::: "memory");
	if (ncq)
		pwr(s, P_SACT, 1u << slot);
	pwr(s, P_CI, 1u << slot);
	s->busy |= 1u << slot;
}

/* Wait until some busy slot completes; reap all completed. -1 on an error
 * stop or a hang (the port is then unusable). */
static int reap(struct sata *s, bool ncq, uint32_t *done)
{
	uint64_t spin = 0;
	uint32_t left;

	for (;;) {
		if (prd(s, P_IS) & IS_TFES)
			return -1;
		/* (a slot is free again once both its CI and, NCQ, SACT bits are) */
		left = prd(s, P_CI) | (ncq ? prd(s, P_SACT) : 0);
		if ((s->busy & ~left) != 0)
			break;
		if (++spin > SPIN_TIMEOUT)
			return -1;
		__asm__ volatile("pause");
	}
	for (uint32_t c = s->busy & ~left; c; c &= c - 1) /* (no libgcc popcount) */
		(*done)++;
	s->busy &= left;
	return 0;
}

static uint64_t next_lba(struct sata *s, const struct sata_mode *m)
{
	uint64_t off;

	if (m->seq) {
		off = s->seq;
		s->seq = s->seq + 2ull * m->size > s->area ? 0 : s->seq + m->size;
		return off / 512;
	}
	s->x ^= s->x << 13, s->x ^= s->x >> 7, s->x ^= s->x << 17;
	return (s->x % (s->area / 4096)) * 8;
}

static uint64_t run(struct sata *s, const struct sata_mode *m)
{
	uint32_t issued = 0, done = 0, slot;
	bool ncq = m->cmd == 0x60;
	uint64_t t0 = rdtsc();

	while (done < m->n) {
		for (slot = 0; slot < m->qd && issued < m->n; slot++) {
			if (s->busy & (1u << slot))
				continue;
			build(slot, m->cmd, next_lba(s, m), m->size / 512,
			      m->size == 4096 ? adata + 4096u * slot : adata, m->size);
			issue(s, slot, ncq);
			issued++;
		}
		if (reap(s, ncq, &done))
			return 0;
	}
	return rdtsc() - t0;
}

/* The port: stopped, its lists set, started (AHCI §10.1.2, §10.3.1). */
static int port_up(struct sata *s, volatile uint8_t *abar, uint32_t n)
{
	uint64_t spin = 0;

	s->port = abar + 0x100 + 0x80 * n;
	if ((prd(s, P_SSTS) & 0xf) != 3)
		return -1;
	pwr(s, P_CMD, prd(s, P_CMD) & ~(CMD_ST | CMD_FRE));
	while (prd(s, P_CMD) & (CMD_CR | CMD_FR))
		if (++spin > SPIN_TIMEOUT)
			return -1;
	memset(clist, 0, sizeof(clist));
	for (int i = 0; i < SLOTS; i++) {
		clist[i].ctba = (uint32_t)(uintptr_t)&tbl[i];
		clist[i].ctbau = (uint32_t)((uint64_t)(uintptr_t)&tbl[i] >> 32);
	}
	pwr(s, P_CLB, (uint32_t)(uintptr_t)clist);
	pwr(s, P_CLB + 4, (uint32_t)((uint64_t)(uintptr_t)clist >> 32));
	pwr(s, P_FB, (uint32_t)(uintptr_t)rfis);
	pwr(s, P_FB + 4, (uint32_t)((uint64_t)(uintptr_t)rfis >> 32));
	pwr(s, P_SERR, 0xffffffffu);
	pwr(s, P_IS, 0xffffffffu);
	pwr(s, P_IE, 0);
	pwr(s, P_CMD, prd(s, P_CMD) | CMD_FRE);
	pwr(s, P_CMD, prd(s, P_CMD) | CMD_ST);
	/* (QEMU fills PxSIG from the device's first D2H FIS once FRE is set) */
	for (spin = 0; prd(s, P_SIG) == 0xffffffffu && spin < SPIN_TIMEOUT; spin++)
		__asm__ volatile("pause");
	return prd(s, P_SIG) != 0x101 || (prd(s, P_TFD) & 0x89) ? -1 : 0; /* ATA; BSY, DRQ, ERR */
}

static int sata_init(struct sata *s, const struct fw_pci_fn *f, uint64_t *next)
{
	volatile uint8_t *abar;
	uint32_t pi, done = 0;
	uint16_t *id = (uint16_t *)adata;
	uint64_t cap = 0;

	memset(s, 0, sizeof(*s));
	abar = (volatile uint8_t *)(uintptr_t)fw_pci_bar(f, 5, next);
	if (!abar)
		return -1;
	fw_pci_write16(f, FW_PCI_COMMAND,
		       fw_pci_read16(f, FW_PCI_COMMAND) | FW_PCI_COMMAND_MEMORY |
			   FW_PCI_COMMAND_MASTER);
	*(volatile uint32_t *)(abar + 0x04) = 1u << 31; /* GHC.AE, IE clear */
	pi = *(volatile uint32_t *)(abar + 0x0c);
	for (uint32_t n = 0; n < 32 && !s->port; n++)
		if (!(pi & (1u << n)) || port_up(s, abar, n))
			s->port = NULL;
	if (!s->port)
		return -1;
	build(0, 0xec, 0, 0, adata, 512); /* IDENTIFY DEVICE */
	issue(s, 0, false);
	if (reap(s, false, &done))
		return -1;
	for (int i = 3; i >= 0; i--)
		cap = cap << 16 | id[100 + i];
	s->area = cap * 512 < AREA_MAX ? cap * 512 & ~((1ull << 20) - 1) : AREA_MAX;
	s->x = 88172645463325252ull;
	return s->area >= (2u << 20) ? 0 : -1;
}

void probe_sata_bench(struct fw_buf *out, uint64_t ecam, const char *mode)
{
	static struct fw_pci_fn fns[FW_PCI_MAX_FNS];
	static struct sata s;
	const struct sata_mode *m = NULL;
	uint64_t next = 0xd0000000ull, ticks = 0;
	uint32_t done = 0;
	int n = ecam ? fw_pci_scan(ecam, fns, FW_PCI_MAX_FNS) : 0, i;

	for (size_t k = 0; k < FW_ARRAY_SIZE(smodes); k++)
		if (!strcmp(smodes[k].name, mode))
			m = &smodes[k];
	for (i = 0; i < n && fns[i].class_code != 0x010601; i++)
		;
	if (!m || i == n || sata_init(&s, &fns[i], &next)) {
		fw_buf_printf(out, "error=satabench %s: no mode or no usable SATA disk\n", mode);
		return;
	}
	for (uint32_t k = 0; k < sizeof(adata); k++)
		adata[k] = (uint8_t)(k * 7 + (k >> 12));
	if (m->n)
		ticks = run(&s, m);
	if (m->flush && ticks) { /* FLUSH CACHE EXT: the writes reach the file */
		build(0, 0xea, 0, 0, NULL, 0);
		issue(&s, 0, false);
		if (reap(&s, false, &done))
			s.errors++;
	}
	fw_buf_printf(out, "blkBench=00:%02x.%x %s %u %llu %llu %u\n", fns[i].dev, fns[i].fn,
		      m->name, m->n, (unsigned long long)m->n * m->size, (unsigned long long)ticks,
		      s.errors + (m->n && !ticks));
	pwr(&s, P_CMD, prd(&s, P_CMD) & ~(CMD_ST | CMD_FRE));
}
