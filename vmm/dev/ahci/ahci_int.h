/* SPDX-License-Identifier: MIT */
/*
 * ahci_int.h - what ahci.c (the HBA: registers, interrupts, setup),
 * ahci_cmd.c (command fetch, FIS delivery, the ports' threads) and
 * ahci_ata.c (the ATA device behind a port) share. Only these files (and
 * ahci_atapi.c, ahci_mmc.c: the CD-ROM; ahci_snap.c) include it.
 */
#ifndef VMLET_DEV_AHCI_INT_H
#define VMLET_DEV_AHCI_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "vmm/dev/ahci/ahci.h"
#include "vmm/dev/pci.h"
#include "vmm/vm/device.h"

/* ATA status and error bits (ATA8-ACS §6.1, §6.2) */
#define ATA_DRDY 0x40
#define ATA_BSY	 0x80
#define ATA_DRQ	 0x08
#define ATA_ERR	 0x01
#define ATA_ABRT 0x04
#define ATA_IDNF 0x10
#define ATA_UNC	 0x40

#define FIS_TYPE_REG_H2D 0x27
#define FIS_TYPE_REG_D2H 0x34
#define FIS_TYPE_PIO	 0x5f
#define FIS_TYPE_SDB	 0xa1

/* PxIS bits (AHCI 1.3.1 §3.3.5) */
#define PXIS_DHRS (1u << 0)
#define PXIS_PSS  (1u << 1)
#define PXIS_SDBS (1u << 3)
#define PXIS_OFS  (1u << 24)
#define PXIS_IFS  (1u << 27)
#define PXIS_HBFS (1u << 29)
#define PXIS_TFES (1u << 30)

/* HBA GHC, PxCMD, PxSERR, PxSSTS bits (AHCI 1.3.1 §3.1.2, §3.3) */
#define GHC_HR	(1u << 0)
#define GHC_IE	(1u << 1)
#define GHC_AE	(1u << 31)
#define CMD_ST	(1u << 0)
#define CMD_CLO (1u << 3)
#define CMD_FRE (1u << 4)
#define CMD_FR	(1u << 14)
#define CMD_CR	(1u << 15)
/* bits the guest writes and reads back: SUD, POD, ATAPI, DLAE, ICC */
#define CMD_RW	    ((1u << 1) | (1u << 2) | (1u << 24) | (1u << 25) | (0xfu << 28))
#define SERR_DIAG_F (1u << 25) /* unknown FIS type */
#define SERR_ERR_P  (1u << 10) /* protocol error */
#define SSTS_UP	    0x113      /* DET device + phy, SPD gen 1, IPM active */
#define TFD_READY   ATA_DRDY

enum ahci_port_kind {
	AHCI_PORT_EMPTY = 0, /* no device on the link */
	AHCI_PORT_ATA,	     /* a disk (ahci_ata.c) */
	AHCI_PORT_ATAPI,     /* a CD-ROM drive (ahci_atapi.c) */
};

#define AHCI_SIG_ATA   0x00000101u
#define AHCI_SIG_ATAPI 0xeb140101u
#define ATA_PACKET     0xa0 /* the command that carries an ATAPI CDB */

/* One command as the port fetched it (copied out of guest memory). */
struct ahci_cmd {
	uint8_t fis[20];  /* the Register H2D FIS */
	uint8_t acmd[16]; /* the ATAPI command (CDB) of a PACKET command */
	bool atapi;	  /* header A: the HBA fetched acmd */
	unsigned int slot;
	bool write;	      /* header W: data to the device */
	struct iovec *iov;    /* the PRDT, mapped; niov entries */
	int niov;	      /* -1: an entry lies outside RAM */
	uint64_t prd_bytes;   /* what the PRDT holds */
	uint64_t transferred; /* out: data bytes moved (PRDBC) */
};

/* What the device made of it. */
struct ahci_result {
	uint8_t status, error;
	uint32_t fatal; /* PXIS_OFS / PXIS_HBFS / PXIS_IFS, 0 = none */
	bool pio_in;	/* answer with a PIO Setup FIS (IDENTIFY) */
	bool ncq;	/* answer with a Set Device Bits FIS */
	bool sig;	/* a device reset: D2H with the signature */
	uint8_t count;	/* D2H count (ATAPI: the interrupt reason) */
};

/* The state of an ATAPI port's drive (ahci_atapi.c; its thread only). */
struct ahci_atapi {
	uint8_t key, asc, ascq; /* sense of the last command (REQUEST SENSE) */
	bool ua;		/* a unit attention is pending (ua_asc) */
	uint8_t ua_asc;
	bool tray_open; /* the guest ejected the medium (START STOP UNIT) */
	bool locked;	/* PREVENT ALLOW MEDIUM REMOVAL */
	uint8_t event;	/* GET EVENT STATUS NOTIFICATION media event, 0 none */
};

struct ahci;

struct ahci_port {
	struct ahci *a;
	unsigned int index;
	enum ahci_port_kind kind;
	/* registers (a->lock) */
	uint32_t clb, clbu, fb, fbu, is, ie, cmd, tfd, sig, ssts, sctl, serr, sact, ci;
	bool stopped;	  /* an error stopped the port until ST is cleared */
	bool cd_reset;	  /* ATAPI: the drive was reset (its thread applies it) */
	int busy;	  /* slot the thread runs, -1 none */
	bool held;	  /* its command waits for a resume (errorPolicy stop) */
	unsigned int gen; /* bumped when ST clears or the port resets */
	pthread_cond_t cond;
	pthread_t thread;
	bool started;
	/* the disk (AHCI_PORT_ATA) or the medium (AHCI_PORT_ATAPI; NULL:
	 * an empty drive) */
	struct blk *be;
	char name[64];
	char serial[21];
	uint32_t pbs; /* physical block size */
	enum vm_error_policy policy;
	bool wce; /* write cache enabled (SET FEATURES 02h/82h) */
	bool flushed;
	struct iovec *iov; /* AHCI_MAX_PRD, thread-only */
	struct device_counters st;
	struct ahci_atapi cd; /* AHCI_PORT_ATAPI */
};

struct ahci {
	struct pci_dev pci;
	struct vm *vm;
	const struct guest_mem *mem;
	pthread_mutex_t lock;
	uint32_t ghc, is;
	bool quit;
	/* a snapshot holds the ports (ahci_snap.c): no command is fetched;
	 * idle is signalled when a port's command ends or it is held */
	bool frozen;
	pthread_cond_t idle;
	struct ahci_port port[AHCI_PORTS];
};

/*
 * ahci_ata.c: run cmd on port p's disk (the I/O thread, no lock held):
 * fills r; may pause the VM (errorPolicy stop) and returns false when the
 * command is to be dropped (the VM ends, the port was stopped or reset:
 * gen, read under the lock when the command was fetched, is stale).
 */
bool ahci_ata_exec(struct ahci_port *p, struct ahci_cmd *cmd, struct ahci_result *r,
		   unsigned int gen);
/* The IDENTIFY DEVICE data of p's disk (256 words, little-endian). */
void ahci_ata_identify(const struct ahci_port *p, uint16_t id[256]);
/* Bytes of data cmd moves, from its FIS (0: none). */
uint64_t ahci_ata_data_len(const struct ahci_port *p, const uint8_t *fis);
/* An ATA string: two characters a word, the first in the high byte,
 * padded with spaces, non-printable characters as spaces. */
void ahci_ata_string(uint16_t *w, const char *s, unsigned int words);

/* ---- the CD-ROM drive: ahci_atapi.c (PACKET, sense, medium), ahci_mmc.c */

#define AHCI_CD_BLOCK	   2048u
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
#define AHCI_CD_ANSWER_MAX 128 /* the longest answer of ahci_mmc.c */

/* One PACKET command: the CDB and the answer or CHECK CONDITION. */
struct ahci_cd_req {
	struct ahci_port *p;
	const uint8_t *cdb;
	uint8_t key, asc, ascq; /* out: the CHECK CONDITION, key 0 = GOOD */
	uint8_t buf[AHCI_CD_ANSWER_MAX];
	uint32_t len; /* bytes of buf the answer has */
};

/* ahci_atapi.c: set the CHECK CONDITION; false (NOT READY) without a
 * medium; a medium is there (a volume, the tray closed); its blocks. */
void ahci_cd_check(struct ahci_cd_req *q, uint8_t key, uint8_t asc, uint8_t ascq);
bool ahci_cd_ready(struct ahci_cd_req *q);
bool ahci_cd_medium(const struct ahci_port *p);
uint64_t ahci_cd_blocks(const struct ahci_port *p);

/* ahci_mmc.c: the answers to q->cdb */
void ahci_mmc_inquiry(struct ahci_cd_req *q);
void ahci_mmc_read_capacity(struct ahci_cd_req *q);
void ahci_mmc_read_toc(struct ahci_cd_req *q);
void ahci_mmc_get_config(struct ahci_cd_req *q);
void ahci_mmc_get_event(struct ahci_cd_req *q);
void ahci_mmc_read_disc_info(struct ahci_cd_req *q);
void ahci_mmc_mode_sense(struct ahci_cd_req *q);
void ahci_mmc_mech_status(struct ahci_cd_req *q);

/*
 * ahci_atapi.c, for AHCI_PORT_ATAPI: run cmd (ahci_ata_exec's contract);
 * the bytes of data cmd may move, from its FIS and CDB (the PRDT is mapped
 * for that much, 0: none); the drive's state after a device reset (power
 * on, COMRESET, SRST).
 */
bool ahci_atapi_exec(struct ahci_port *p, struct ahci_cmd *cmd, struct ahci_result *r);
uint64_t ahci_atapi_data_len(const struct ahci_port *p, const struct ahci_cmd *cmd);
void ahci_atapi_reset(struct ahci_port *p);

/* ahci_snap.c: p's command waits for a resume (held) or goes on; a
 * snapshot's freeze refuses while one waits. */
void ahci_port_hold(struct ahci_port *p, bool held);

/* ahci.c: recompute the HBA's IS and its interrupt (a->lock held). */
void ahci_irq_update(struct ahci *a, bool event);

/* The signature p's device sends after a reset (PxSIG). */
static inline uint32_t ahci_sig(const struct ahci_port *p)
{
	return p->kind == AHCI_PORT_ATAPI ? AHCI_SIG_ATAPI : AHCI_SIG_ATA;
}

/* ahci_cmd.c: post a Register D2H FIS (status, error, count; sig: with the
 * signature) to p's received-FIS area, set PxTFD and PxIS.DHRS (a->lock
 * held). */
void ahci_post_d2h(struct ahci_port *p, uint8_t status, uint8_t error, bool sig, uint8_t count);

/* ahci_cmd.c: p's I/O thread (arg: the port), until a->quit: runs the
 * commands the guest issues, one at a time, lowest slot first. */
void *ahci_thread(void *arg);

/* ahci_cmd.c: true while p's command unit is still wanted (the thread
 * checks it while the VM is paused for an error). */
bool ahci_port_live(struct ahci_port *p, unsigned int gen);

#endif /* VMLET_DEV_AHCI_INT_H */
