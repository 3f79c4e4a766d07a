/* SPDX-License-Identifier: MIT */
/*
 * ahci.h - the SATA controller of the ICH9 (AHCI 1.3.1), the function
 * QEMU's q35 machine has at 00:1f.2: 8086:2922, class 01/06/01 (mass
 * storage, SATA, AHCI 1.0 programming interface), 6 ports, the HBA
 * registers in the memory BAR 5 (ABAR), MSI-X with one vector or INTA#.
 * vmlet's PCI bus has single-function devices only, so the function takes
 * a slot of its own (function 0).
 *
 * Each port holds one ATA disk (ahci_ata.c) over a shared block backend
 * (vmm/disk/blk.h: every volume kind, cache mode, readOnly, serial,
 * discard, image lock a virtio-blk disk has) or nothing (no device on the
 * link), or one CD-ROM drive (ahci_atapi.c: ATAPI, MMC commands, a
 * read-only medium of 2048-byte blocks, or none).
 *
 * The guest's command list, FIS receive area, command tables and PRDTs
 * are read through guest_mem_ptr() once per command (the command header,
 * the command FIS and every PRD entry are copied before use): an address
 * outside RAM is a host bus fatal error (PxIS.HBFS), a PRDT shorter than
 * the data a read returns is an overflow (PxIS.OFS), a command FIS that is
 * not a Register H2D FIS is an interface fatal error (PxIS.IFS with
 * PxSERR.DIAG.F); a fatal error stops the port until the guest clears
 * PxCMD.ST (§6.1.2). An ATA error (range, read-only disk, unknown
 * command) is a task file error (PxIS.TFES) with the ATA status and error
 * in PxTFD and the received FIS, the failed slot left in PxCI (§6.2.2).
 *
 * Commands run on one I/O thread per disk (THREAD_BLK_IO), never on a
 * vCPU: the vCPU that writes PxCI only wakes it. The registers are under
 * one lock the thread never holds across I/O; PxCMD.CR stays set while a
 * command the guest stopped is still in flight, and a command whose port
 * was stopped or reset meanwhile completes into nothing.
 *
 * A host I/O error follows the disk's errorPolicy as virtio-blk's does
 * (virtio_blk.h): report fails the command (status ERR, error ABRT, as
 * QEMU's AHCI), ignore completes it, stop pauses the VM and retries the
 * command on resume, enospace stops on ENOSPC only.
 */
#ifndef VMLET_DEV_AHCI_H
#define VMLET_DEV_AHCI_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/vm_config.h" /* enum vm_error_policy */

#define AHCI_PORTS	   6
#define AHCI_VENDOR_ID	   0x8086
#define AHCI_DEVICE_ID	   0x2922 /* 82801IR/IO/IH (ICH9R/DO/DH) 6 port SATA AHCI */
#define AHCI_CLASS	   0x010601
#define AHCI_ABAR	   5
#define AHCI_ABAR_SIZE	   0x2000 /* registers to 0x10ff (32 ports), MSI-X above */
#define AHCI_MSIX_TABLE	   0x1800
#define AHCI_MSIX_PBA	   0x1c00
#define AHCI_MAX_PRD	   1024 /* PRD entries one command may use */
#define AHCI_DSM_MAX_PAGES 8	/* IDENTIFY word 105: TRIM blocks per command */

struct ahci;
struct blk;
struct pci_host;
struct pci_dev;

struct ahci_disk_params {
	const char *name;	      /* disk name, for messages and counters */
	const char *serial;	      /* IDENTIFY words 10-19 (<= 20 bytes used); NULL: QEMU's
				       * QM%05u of 2 * port + 1 (QM00001, QM00003...) */
	uint32_t physical_block_size; /* 0 = 512; logical is always 512 */
	enum vm_error_policy error_policy;
	bool tray_open; /* a CD-ROM whose tray starts open */
};

/* The function on host (slot: -1 = the first free one); no disks yet. */
int ahci_create(struct ahci **out, struct pci_host *host, int slot);
/* Put a disk on port (< AHCI_PORTS, free) and start its I/O thread; takes
 * ownership of be (also on failure). Setup only, before the guest runs. */
int ahci_attach_disk(struct ahci *a, unsigned int port, struct blk *be,
		     const struct ahci_disk_params *p);
/* Put a CD-ROM drive on port, its medium be (read-only; NULL: an empty
 * drive); as ahci_attach_disk() otherwise (serial, name, counters). */
int ahci_attach_cdrom(struct ahci *a, unsigned int port, struct blk *be,
		      const struct ahci_disk_params *prm);
/* Teardown, vCPUs stopped: stop the I/O threads and flush the disks. */
void ahci_quiesce(struct ahci *a);
void ahci_destroy(struct ahci *a);

/* What the I/O thread thread_start() was given arg for does once: run its
 * port's next issued command, if any (single-threaded fuzzers whose
 * thread_start() does not run the thread; the thread's name starts
 * "vmlet-sata"). */
void ahci_thread_step(void *arg);

/*
 * Snapshot (ahci_snap.c, docs/snapshot.md; vCPUs held). freeze: no port
 * fetches a command, the ones running complete, the disks are flushed: 0,
 * or -ENOTSUP (a command waits for a resume after an I/O error) or a flush
 * error, logged, with the ports let go again. thaw: the ports go on.
 * save: the HBA's and every port's registers and drive state and each
 * disk's identity (0 or -errno, logged). load (a controller created from
 * the same config, vCPUs not run): every value checked as guest input,
 * a disk that is not the snapshot's refused; 0, -EBADMSG or -EINVAL
 * (logged); nothing is changed unless all of it fits.
 */
struct snap_buf;
struct snap_cur;
int ahci_freeze(struct ahci *a);
void ahci_thaw(struct ahci *a);
int ahci_save(struct ahci *a, struct snap_buf *b);
int ahci_load(struct ahci *a, struct snap_cur *c);

/* The PCI function (slot, config space; for tests and messages). */
struct pci_dev *ahci_pci(struct ahci *a);

#endif /* VMLET_DEV_AHCI_H */
