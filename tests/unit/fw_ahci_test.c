/* SPDX-License-Identifier: MIT */
/*
 * fw_ahci_test - the guest's polled AHCI driver (firmware/lib/ahci.c,
 * used by vmlet's UEFI and the SATA bench) compiled for the host, against
 * an HBA faked in memory that lies: more ports in PI than CAP.NP has, a
 * port number beyond 32, IDENTIFY data with no LBA, an all-ones or
 * beyond-LBA48 capacity or 4 KiB logical sectors, a command that
 * transfers fewer or more bytes (PRDBC) than its PRD described, a task
 * file error; for a CD-ROM (ATAPI), a READ CAPACITY with blocks other
 * than 2048 bytes or a last block of all ones, and a drive that fails
 * every command (tried a bounded number of times). Each must be refused,
 * not trusted. The fake lives below 4 GiB (BAR 5 is a 32-bit BAR).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "tests/lib/test.h"

#include "firmware/lib/ahci.c"
#include "firmware/lib/pci.c"

#define MAP_AT	 0x41000000ul
#define MAP_SIZE (1ul << 16)
#define ABAR	 (MAP_AT + 0x8000)

static uint8_t *lowmem;

static uint32_t *reg(uint32_t off)
{
	return (uint32_t *)(lowmem + 0x8000 + off);
}

static uint32_t *preg(uint32_t port, uint32_t off)
{
	return reg(0x100 + 0x80 * port + off);
}

static void test_ports_bounded_by_cap(void)
{
	CHECK_EQ_U64(fw_ahci_ports(0x0, 0xffffffffu), 0x1);	     /* NP 0: one port */
	CHECK_EQ_U64(fw_ahci_ports(0x5, 0xffffffffu), 0x3f);	     /* ICH9: six */
	CHECK_EQ_U64(fw_ahci_ports(0x5, 0x80000021u), 0x21);	     /* PI's holes stay */
	CHECK_EQ_U64(fw_ahci_ports(0x1f, 0xffffffffu), 0xffffffffu); /* 32 */
	CHECK_EQ_U64(fw_ahci_ports(0xffffffe1u, 0xf0u), 0x0);	     /* NP 1, PI above */
}

/* The HBA through PCI: BAR 5 at ABAR, CAP says 2 ports, PI claims 32. */
static void test_hba_init(void)
{
	uint8_t *cfg = lowmem;
	struct fw_pci_fn f = {.cfg = cfg};
	uint32_t ports = 0;
	uint64_t next = 0;

	memset(lowmem, 0, MAP_SIZE);
	*(uint32_t *)(cfg + 0x24) = (uint32_t)ABAR;
	*reg(0x00) = 0x40000001u; /* SNCQ, NP 1 */
	*reg(0x0c) = 0xffffffffu;
	CHECK(fw_ahci_hba_init(&f, &next, &ports) == (volatile uint8_t *)ABAR);
	CHECK_EQ_U64(ports, 0x3);
	CHECK_EQ_U64(*reg(0x04), 1u << 31); /* AE, interrupts off */
	CHECK_EQ_U64(*(uint16_t *)(cfg + 4) & 6, 6);
}

static struct fw_ahci_cmd_hdr *clist;
static struct fw_ahci_cmd_tbl *tbl;

static void port_init(struct fw_ahci_port *p)
{
	memset(lowmem, 0, MAP_SIZE);
	clist = (struct fw_ahci_cmd_hdr *)(lowmem + 0x1000);
	tbl = (struct fw_ahci_cmd_tbl *)(lowmem + 0x2000);
	*p = (struct fw_ahci_port){
	    .clist = clist, .rfis = lowmem + 0x1400, .tbl = tbl, .n_slots = 1};
	*preg(0, 0x28) = 0x123; /* SSTS: DET 3 */
	*preg(0, 0x24) = 0x101; /* SIG: ATA */
	*preg(0, 0x20) = 0x50;	/* TFD: DRDY DSC */
}

static void test_port_up(void)
{
	struct fw_ahci_port p;

	port_init(&p);
	CHECK(fw_ahci_port_up(&p, (volatile uint8_t *)ABAR, 0) == 0);
	CHECK_EQ_U64(*preg(0, 0x18) & 0x11, 0x11); /* FRE, ST */
	CHECK_EQ_U64(*preg(0, 0x00), (uint32_t)(uintptr_t)clist);
	CHECK_EQ_U64(clist[0].ctba, (uint32_t)(uintptr_t)tbl);
	/* beyond the 32 ports a HBA has: never a register address */
	port_init(&p);
	CHECK(fw_ahci_port_up(&p, (volatile uint8_t *)ABAR, 32) == -1);
	CHECK(fw_ahci_port_up(&p, (volatile uint8_t *)ABAR, 0xffffffffu) == -1);
	/* more slots than a command list holds */
	port_init(&p);
	p.n_slots = 33;
	CHECK(fw_ahci_port_up(&p, (volatile uint8_t *)ABAR, 0) == -1);
	/* ATAPI (a CD-ROM), no link, a busy drive: not a disk, stopped */
	port_init(&p);
	*preg(0, 0x24) = 0xeb140101u;
	CHECK(fw_ahci_port_up(&p, (volatile uint8_t *)ABAR, 0) == -1);
	CHECK_EQ_U64(*preg(0, 0x18) & 0x11, 0);
	/* ... which fw_ahci_port_start starts, and tells apart; not garbage */
	port_init(&p);
	*preg(0, 0x24) = 0xeb140101u;
	CHECK_EQ_U64(fw_ahci_port_start(&p, (volatile uint8_t *)ABAR, 0), FW_AHCI_SIG_ATAPI);
	CHECK_EQ_U64(*preg(0, 0x18) & 0x11, 0x11);
	port_init(&p);
	*preg(0, 0x24) = 0x12345678u;
	CHECK_EQ_U64(fw_ahci_port_start(&p, (volatile uint8_t *)ABAR, 0), 0);
	CHECK_EQ_U64(*preg(0, 0x18) & 0x11, 0);
	port_init(&p);
	*preg(0, 0x28) = 0x1;
	CHECK(fw_ahci_port_up(&p, (volatile uint8_t *)ABAR, 0) == -1);
	port_init(&p);
	*preg(0, 0x20) = 0xd0;
	CHECK(fw_ahci_port_up(&p, (volatile uint8_t *)ABAR, 0) == -1);
}

/* The fake drive: a thread that completes whatever is issued on port 0
 * with the byte count, task file and interrupt status it is told; with
 * dev_auto, the byte count its PRD describes, dev_data copied there
 * first. dev_cmds counts the commands. */
static volatile uint32_t dev_prdbc, dev_tfd, dev_is, dev_cmds;
static volatile int dev_stop, dev_auto;
static uint8_t dev_data[8];

static void *dev_thread(void *arg)
{
	(void)arg;
	while (!dev_stop) {
		if (__atomic_load_n(preg(0, 0x38), __ATOMIC_ACQUIRE)) {
			uint32_t len = clist[0].dw0 >> 16 ? tbl[0].prd.dbc + 1 : 0;

			dev_cmds++;
			if (dev_auto && len)
				memcpy((void *)(uintptr_t)(tbl[0].prd.dba |
							   (uint64_t)tbl[0].prd.dbau << 32),
				       dev_data, len < sizeof(dev_data) ? len : sizeof(dev_data));
			clist[0].prdbc = dev_auto ? len : dev_prdbc;
			*preg(0, 0x20) = dev_tfd;
			*preg(0, 0x10) = dev_is;
			__atomic_store_n(preg(0, 0x38), 0, __ATOMIC_RELEASE);
		}
		__asm__ volatile("pause");
	}
	return NULL;
}

/* One READ DMA EXT of 8 sectors: it passes only when the drive says it
 * moved exactly the 4096 bytes of its PRD, with no error. */
static void test_run1_checks_byte_count(void)
{
	struct fw_ahci_port p;
	static uint8_t buf[4096] __attribute__((aligned(16)));
	static const uint32_t counts[] = {0, 512, 4095, 4097, 8192, 0xffffffffu};
	pthread_t t;

	port_init(&p);
	CHECK(fw_ahci_port_up(&p, (volatile uint8_t *)ABAR, 0) == 0);
	*preg(0, 0x10) = 0; /* (the fake's IS is not write-1-to-clear) */
	fw_ahci_build(&p, 0, FW_ATA_READ_DMA_EXT, 0x123456789aull, 8, buf, sizeof(buf));
	CHECK_EQ_U64(tbl[0].cfis[2], 0x25);
	CHECK_EQ_U64(tbl[0].cfis[4] | tbl[0].cfis[5] << 8 | tbl[0].cfis[6] << 16, 0x56789a);
	CHECK_EQ_U64(tbl[0].cfis[8] | tbl[0].cfis[9] << 8, 0x1234);
	CHECK_EQ_U64(tbl[0].cfis[12], 8);
	CHECK_EQ_U64(tbl[0].prd.dbc, 4095);
	dev_tfd = 0x50, dev_is = 0, dev_stop = 0;
	if (pthread_create(&t, NULL, dev_thread, NULL)) {
		CHECK(!"pthread_create");
		return;
	}
	dev_prdbc = 4096;
	CHECK(fw_ahci_run1(&p, sizeof(buf)) == 0);
	for (size_t i = 0; i < FW_ARRAY_SIZE(counts); i++) {
		dev_prdbc = counts[i];
		CHECK(fw_ahci_run1(&p, sizeof(buf)) == -1);
	}
	dev_prdbc = 4096;
	CHECK(fw_ahci_run1(&p, sizeof(buf)) == 0);
	dev_tfd = 0x51; /* ERR in the task file */
	CHECK(fw_ahci_run1(&p, sizeof(buf)) == -1);
	dev_tfd = 0x50, dev_is = 1u << 30; /* IS.TFES */
	CHECK(fw_ahci_run1(&p, sizeof(buf)) == -1);
	dev_stop = 1;
	pthread_join(t, NULL);
}

/* PACKET: the CDB in ACMD, the A bit, DMA in the features. */
static void test_atapi_packet(void)
{
	struct fw_ahci_port p;
	static uint8_t buf[4096] __attribute__((aligned(16)));
	const uint8_t cdb[12] = {0x28, 0, 0, 0, 0x12, 0x34, 0, 0, 2};

	port_init(&p);
	fw_ahci_build_packet(&p, 0, cdb, buf, sizeof(buf));
	CHECK_EQ_U64(tbl[0].cfis[0], 0x27);
	CHECK_EQ_U64(tbl[0].cfis[2], 0xa0);
	CHECK_EQ_U64(tbl[0].cfis[3], 1);
	CHECK(!memcmp(tbl[0].acmd, cdb, 12));
	CHECK_EQ_U64(clist[0].dw0 & 0xffff0020u, 0x10020u); /* one PRD, ATAPI */
	CHECK_EQ_U64(tbl[0].prd.dbc, 4095);
	CHECK(fw_atapi_read(&p, 0, 0, buf, buf) == -1); /* no blocks: not sent */
	CHECK(fw_atapi_read(&p, 0, FW_ATAPI_MAX_BLK + 1, buf, buf) == -1);
}

static void set_capacity(uint32_t last, uint32_t bs)
{
	for (int i = 0; i < 4; i++) {
		dev_data[i] = (uint8_t)(last >> (24 - 8 * i));
		dev_data[4 + i] = (uint8_t)(bs >> (24 - 8 * i));
	}
}

/* READ CAPACITY from a drive that lies, and one that fails everything. */
static void test_atapi_capacity(void)
{
	struct fw_ahci_port p;
	static uint8_t scratch[8] __attribute__((aligned(16))), sense[18];
	pthread_t t;

	port_init(&p);
	*preg(0, 0x24) = 0xeb140101u;
	CHECK_EQ_U64(fw_ahci_port_start(&p, (volatile uint8_t *)ABAR, 0), FW_AHCI_SIG_ATAPI);
	*preg(0, 0x10) = 0;
	dev_tfd = 0x50, dev_is = 0, dev_stop = 0, dev_auto = 1, dev_cmds = 0;
	if (pthread_create(&t, NULL, dev_thread, NULL)) {
		CHECK(!"pthread_create");
		return;
	}
	set_capacity(0x1fff, 2048);
	CHECK_EQ_U64(fw_atapi_capacity(&p, scratch, sense), 0x2000);
	CHECK_EQ_U64(dev_cmds, 2); /* TEST UNIT READY, READ CAPACITY */
	set_capacity(0x1fff, 512);
	CHECK_EQ_U64(fw_atapi_capacity(&p, scratch, sense), 0);
	set_capacity(0x1fff, 0);
	CHECK_EQ_U64(fw_atapi_capacity(&p, scratch, sense), 0);
	set_capacity(0xffffffffu, 2048);
	CHECK_EQ_U64(fw_atapi_capacity(&p, scratch, sense), 0);
	/* a short transfer without an error: not tried again */
	dev_auto = 0, dev_prdbc = 4, dev_cmds = 0;
	CHECK_EQ_U64(fw_atapi_capacity(&p, scratch, sense), 0);
	CHECK_EQ_U64(dev_cmds, 1);
	/* every command fails (ERR, TFES): given up after the tries */
	set_capacity(0x1fff, 2048);
	dev_auto = 0, dev_prdbc = 0; /* (the fake's IS is not write-1-to-clear: the
				      * driver may rebuild while it still runs) */
	dev_tfd = 0x51, dev_is = 1u << 30, dev_cmds = 0;
	CHECK_EQ_U64(fw_atapi_capacity(&p, scratch, sense), 0);
	CHECK(dev_cmds <= 2 * FW_ATAPI_TRIES);
	dev_stop = 1;
	pthread_join(t, NULL);
	dev_auto = 0;
}

static void test_identify_capacity(void)
{
	uint16_t id[256];

	memset(id, 0, sizeof(id));
	id[49] = 1u << 9;
	id[83] = 0x4000 | 1u << 10;
	id[100] = 0x5000; /* 20480 sectors: 10 MiB */
	CHECK_EQ_U64(fw_ahci_id_sectors(id), 20480);
	id[106] = 0x4000 | 1u << 12, id[117] = 256; /* 512-byte logical, said so */
	CHECK_EQ_U64(fw_ahci_id_sectors(id), 20480);
	id[117] = 2048; /* 4 KiB logical sectors: not read as 512 */
	CHECK_EQ_U64(fw_ahci_id_sectors(id), 0);
	id[106] = 0;
	id[103] = 1; /* 2^48 and more: beyond LBA48 */
	CHECK_EQ_U64(fw_ahci_id_sectors(id), 0);
	memset(id + 100, 0xff, 8); /* all ones */
	CHECK_EQ_U64(fw_ahci_id_sectors(id), 0);
	memset(id + 100, 0, 8);
	id[83] = 0x4000; /* no LBA48: words 60-61 */
	id[60] = 0x1000, id[61] = 0x0001;
	CHECK_EQ_U64(fw_ahci_id_sectors(id), 0x11000);
	id[49] = 0; /* no LBA at all */
	CHECK_EQ_U64(fw_ahci_id_sectors(id), 0);
}

int main(void)
{
	lowmem = mmap((void *)MAP_AT, MAP_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (lowmem != (void *)MAP_AT) {
		fprintf(stderr, "FAIL: cannot map the fake HBA at %#lx\n", MAP_AT);
		return 1;
	}
	TEST_RUN(test_ports_bounded_by_cap);
	TEST_RUN(test_hba_init);
	TEST_RUN(test_port_up);
	TEST_RUN(test_run1_checks_byte_count);
	TEST_RUN(test_identify_capacity);
	TEST_RUN(test_atapi_packet);
	TEST_RUN(test_atapi_capacity);
	return test_summary();
}
