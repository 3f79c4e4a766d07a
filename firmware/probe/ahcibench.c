// SPDX-License-Identifier: MIT
/*
 * ahcibench.c - timed SATA I/O for scripts/bench-blk (probe.h): the modes
 * and report line of blkbench.c, on the first ATA disk of the first AHCI
 * function (class 01/06/01: vmlet's ICH9 AHCI, QEMU q35's at 00:1f.2),
 * with the polled driver of firmware/lib/ahci.c at CPL3, as blkbench.c's:
 * no interrupts (PxIE 0, GHC.IE clear), one command table per slot with
 * one PRD entry. Queue depth 1
 * uses READ/WRITE DMA EXT and waits for PxCI; queue depth 32 uses READ
 * FPDMA QUEUED (NCQ) and waits for PxSACT. AHCI 1.3.1 §10.1.2 (port setup)
 * and §5.3 (issuing); ATA8-ACS for the commands.
 */
#include "firmware/lib/ahci.h"
#include "firmware/lib/io.h"
#include "firmware/lib/pci.h"
#include "firmware/probe/probe.h"

#define SLOTS	 32
#define AREA_MAX (128ull << 20)

static struct fw_ahci_cmd_hdr clist[SLOTS] FW_ALIGNED(1024);
static uint8_t rfis[256] FW_ALIGNED(256);
static struct fw_ahci_cmd_tbl tbl[SLOTS] FW_ALIGNED(128);
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
	struct fw_ahci_port p;
	uint64_t area, seq, x;
	uint32_t errors;
};

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
			if (s->p.busy & (1u << slot))
				continue;
			fw_ahci_build(&s->p, slot, m->cmd, next_lba(s, m), m->size / 512,
				      m->size == 4096 ? adata + 4096u * slot : adata, m->size);
			fw_ahci_issue(&s->p, slot, ncq);
			issued++;
		}
		if (fw_ahci_reap(&s->p, ncq, &done))
			return 0;
	}
	return rdtsc() - t0;
}

static int sata_init(struct sata *s, const struct fw_pci_fn *f, uint64_t *next)
{
	volatile uint8_t *abar;
	uint32_t ports, n;
	uint64_t cap;

	memset(s, 0, sizeof(*s));
	s->p.clist = clist, s->p.rfis = rfis, s->p.tbl = tbl, s->p.n_slots = SLOTS;
	abar = fw_ahci_hba_init(f, next, &ports);
	for (n = 0; abar && n < FW_AHCI_MAX_PORTS; n++)
		if ((ports & (1u << n)) && !fw_ahci_port_up(&s->p, abar, n))
			break;
	if (!abar || n == FW_AHCI_MAX_PORTS)
		return -1;
	fw_ahci_build(&s->p, 0, FW_ATA_IDENTIFY, 0, 0, adata, 512);
	if (fw_ahci_run1(&s->p, 512))
		return -1;
	cap = fw_ahci_id_sectors((const uint16_t *)adata);
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
	int n = ecam ? fw_pci_scan(ecam, fns, FW_PCI_MAX_FNS) : 0, i;

	for (size_t k = 0; k < FW_ARRAY_SIZE(smodes); k++)
		if (!strcmp(smodes[k].name, mode))
			m = &smodes[k];
	for (i = 0; i < n && fns[i].class_code != FW_AHCI_CLASS; i++)
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
		fw_ahci_build(&s.p, 0, FW_ATA_FLUSH_EXT, 0, 0, NULL, 0);
		if (fw_ahci_run1(&s.p, 0))
			s.errors++;
	}
	fw_buf_printf(out, "blkBench=00:%02x.%x %s %u %llu %llu %u\n", fns[i].dev, fns[i].fn,
		      m->name, m->n, (unsigned long long)m->n * m->size, (unsigned long long)ticks,
		      s.errors + (m->n && !ticks));
	fw_ahci_port_stop(&s.p);
}
