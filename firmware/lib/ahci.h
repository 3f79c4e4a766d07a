/* SPDX-License-Identifier: MIT */
/*
 * ahci.h - a polled AHCI (SATA) driver for the guest firmware: HBA setup,
 * port start, H2D register FISes with one PRD entry a command, completion
 * by polling PxCI/PxSACT (no interrupts: GHC.IE and PxIE stay clear).
 * Shared by the SATA bench (probe/ahcibench.c) and vmlet's UEFI
 * (efi/sata.c). AHCI 1.3.1 §10.1.2 (port setup), §5.3 (issuing);
 * ATA8-ACS for the commands and IDENTIFY DEVICE.
 *
 * Everything the HBA and the drive report is untrusted: port numbers are
 * bounded by CAP.NP and 32, a capacity by what the caller can address,
 * a transfer by the length the PRD described (fw_ahci_wait checks PRDBC
 * on non-NCQ commands), every wait by FW_AHCI_SPIN.
 */
#ifndef FW_LIB_AHCI_H
#define FW_LIB_AHCI_H

#include "firmware/lib/fw.h"
#include "firmware/lib/pci.h"

#define FW_AHCI_CLASS	  0x010601u /* mass storage, SATA, AHCI 1.0 */
#define FW_AHCI_MAX_PORTS 32u
#define FW_AHCI_PRD_MAX	  (4u << 20) /* bytes in one PRD entry (DBC 22 bits) */
#define FW_AHCI_SPIN	  (1ull << 32)

#define FW_ATA_READ_DMA_EXT  0x25
#define FW_ATA_WRITE_DMA_EXT 0x35
#define FW_ATA_READ_FPDMA    0x60
#define FW_ATA_FLUSH_EXT     0xea
#define FW_ATA_IDENTIFY	     0xec
#define FW_ATA_PACKET	     0xa0
#define FW_AHCI_SIG_ATA	     0x00000101u
#define FW_AHCI_SIG_ATAPI    0xeb140101u

struct fw_ahci_cmd_hdr {
	uint32_t dw0, prdbc, ctba, ctbau, rsv[4];
};

/* 256 bytes a table (128-byte aligned), one PRD entry */
struct fw_ahci_cmd_tbl {
	uint8_t cfis[64], acmd[16], rsv[48];
	struct {
		uint32_t dba, dbau, rsv, dbc;
	} prd;
	uint8_t pad[112];
};

/* One port's driver state over caller-provided memory: clist 1 KiB
 * aligned (n_slots entries), rfis 256 bytes aligned, tbl n_slots tables. */
struct fw_ahci_port {
	volatile uint8_t *regs;
	struct fw_ahci_cmd_hdr *clist;
	uint8_t *rfis;
	struct fw_ahci_cmd_tbl *tbl;
	uint32_t n_slots; /* 1..32 */
	uint32_t busy;	  /* slots issued, not yet reaped */
};

/* The ports worth probing: PI's bits below CAP.NP + 1 (a controller that
 * claims ports it says it does not have gets only its first ones). */
uint32_t fw_ahci_ports(uint32_t cap, uint32_t pi);

/* Map the HBA of f (BAR 5, assigned from *next if unprogrammed), turn on
 * memory and bus mastering and AHCI mode (interrupts off). Returns the
 * ABAR (0: none) and the ports to probe in *ports. */
volatile uint8_t *fw_ahci_hba_init(const struct fw_pci_fn *f, uint64_t *next, uint32_t *ports);

/* Stop port n of abar, give it p's lists, start it; the device's
 * signature (FW_AHCI_SIG_*) when a link is up and the device is neither
 * busy nor in error, 0 otherwise (then the port is left stopped). p's
 * memory fields are set by the caller. */
uint32_t fw_ahci_port_start(struct fw_ahci_port *p, volatile uint8_t *abar, uint32_t n);

/* fw_ahci_port_start for an ATA disk: 0 when one answers, -1 otherwise
 * (an ATAPI device too; the port is then left stopped). */
int fw_ahci_port_up(struct fw_ahci_port *p, volatile uint8_t *abar, uint32_t n);

/* After a failed command (PxIS.TFES: the HBA stops the port, AHCI 1.3.1
 * §6.2.2.1): stop the engines, clear the errors and start again so that
 * the next command runs. -1 when the port does not stop or stays busy. */
int fw_ahci_port_recover(struct fw_ahci_port *p);

/* Stop the port's command and FIS engines. */
void fw_ahci_port_stop(struct fw_ahci_port *p);

/* Fill slot's command: cmd at lba for count sectors (NCQ: count in the
 * features, tag = slot), data buf/len (len <= FW_AHCI_PRD_MAX, even; 0:
 * no data) in its one PRD; write says the direction. */
void fw_ahci_build(struct fw_ahci_port *p, uint32_t slot, uint8_t cmd, uint64_t lba, uint32_t count,
		   void *buf, uint32_t len);

/* Fill slot's command as an ATAPI PACKET (ATA8-ACS §7.18) carrying the
 * 12-byte SCSI/MMC cdb, data by DMA into buf/len (as fw_ahci_build). */
void fw_ahci_build_packet(struct fw_ahci_port *p, uint32_t slot, const uint8_t cdb[12], void *buf,
			  uint32_t len);

void fw_ahci_issue(struct fw_ahci_port *p, uint32_t slot, bool ncq);

/* Wait until some busy slot completes; reap all completed, adding their
 * count to *done. -1 on a task file error or a hang (the port is then
 * unusable). */
int fw_ahci_reap(struct fw_ahci_port *p, bool ncq, uint32_t *done);

/* Issue slot 0 (built) alone and wait for it; -1 on an error, a hang, or
 * a byte count (PRDBC) other than len. */
int fw_ahci_run1(struct fw_ahci_port *p, uint32_t len);

/* The capacity in 512-byte sectors from IDENTIFY DEVICE data (LBA48 when
 * supported, else LBA28); 0 when the data says no LBA, an all-zero or
 * all-ones capacity, or a logical sector size other than 512 bytes. */
uint64_t fw_ahci_id_sectors(const uint16_t id[256]);

/* ---- ATAPI (CD-ROM) ---- MMC-6 commands in PACKET, 2048-byte blocks */
#define FW_ATAPI_BLOCK	 2048u
#define FW_ATAPI_TRIES	 4u   /* a command tried again after a unit attention */
#define FW_ATAPI_MAX_BLK 512u /* blocks a READ(10) (1 MiB) */

/* Run cdb (slot 0) moving exactly len bytes into buf (word aligned); when
 * the drive fails it with ERR (CHECK CONDITION) recover the port and read
 * the sense (REQUEST SENSE, which also clears a pending unit attention)
 * into sense[18], then try again, at most FW_ATAPI_TRIES times in all; a
 * hang or a wrong byte count is not tried again. 0 or -1. */
int fw_atapi_cmd(struct fw_ahci_port *p, const uint8_t cdb[12], void *buf, uint32_t len,
		 uint8_t sense[18]);

/* The medium's capacity in 2048-byte blocks (TEST UNIT READY, READ
 * CAPACITY(10)) with scratch (8 bytes, word aligned) and sense[18]; 0 with
 * no medium, a block length other than 2048, or a last block of all ones. */
uint64_t fw_atapi_capacity(struct fw_ahci_port *p, uint8_t *scratch, uint8_t sense[18]);

/* READ(10) of n (<= FW_ATAPI_MAX_BLK) blocks at lba (< 2^32) into buf
 * (word aligned). 0 or -1. */
int fw_atapi_read(struct fw_ahci_port *p, uint32_t lba, uint32_t n, void *buf, uint8_t sense[18]);

#endif /* FW_LIB_AHCI_H */
