/* SPDX-License-Identifier: MIT */
/*
 * pflash.h - a CFI parallel flash with the Intel/Sharp command set (the
 * part QEMU's "pflash_cfi01" models, JEDEC JESD68 CFI), over a host byte
 * array: the writable variable store of OVMF (vmm/boot/ovmf_boot.c maps the
 * per-VM vars file here). Byte-wide, one bank, uniform erase blocks.
 *
 * Commands (the first byte written in read-array mode, at any address):
 *   0xff / 0xf0  read array: reads return the array's bytes
 *   0x10 / 0x40  program: the next write stores its byte(s) at its address
 *   0x20, 0xd0   block erase (confirm 0xd0 at an address in the block): the
 *                block reads 0xff; any other second byte aborts (status
 *                SR4|SR5 = command sequence error)
 *   0x50         clear status: the status register becomes 0, read array
 *   0x70         read status: reads return the status register
 *   0x90         read identifier: offset 0 manufacturer, 1 device, else 0
 *   0x98         CFI query: "QRY" at 0x10 and the geometry (below)
 * After a program or an erase, reads return the status (SR7 "ready" set)
 * until the next read-array command, as on the real part. Writes that do
 * not follow a command are command bytes; an unknown one leaves read-array
 * mode unchanged. Status starts at 0 (OVMF's flash probe: clear status,
 * read status, expect 0).
 *
 * A secure flash (QEMU's pflash_cfi01 secure=on, the variable store of an
 * SMM VM): outside SMM (device_in_smm(), device.h) a write is dropped (no
 * command, no data; counted in refused) and a read returns the array's
 * bytes whatever mode the part is in; in SMM it is the part above.
 *
 * Every access is bounded by the array; nothing the guest writes reaches
 * outside it. The owner syncs the array to storage (the array may be a
 * MAP_SHARED file mapping). Thread-safe (one lock).
 */
#ifndef VMLET_DEV_PFLASH_H
#define VMLET_DEV_PFLASH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/vm/bus.h"

#define PFLASH_STATUS_READY   0x80 /* SR7 */
#define PFLASH_STATUS_ERASEER 0x20 /* SR5 */
#define PFLASH_STATUS_PROGER  0x10 /* SR4 */
#define PFLASH_MANUFACTURER   0x89 /* Intel */
#define PFLASH_DEVICE_ID      0x18

struct pflash {
	pthread_mutex_t lock;
	uint8_t *array;
	size_t size, block;
	uint8_t cmd;	/* the command in force (0xff: read array) */
	uint8_t status; /* status register */
	uint8_t armed;	/* program/erase: the next write is its data */
	uint64_t writes, erases;
	bool secure;	  /* set after pflash_init: writes only from SMM */
	uint64_t refused; /* writes from outside SMM dropped */
};

/* size a multiple of block, block a power of two >= 512. -EINVAL else. */
int pflash_init(struct pflash *f, uint8_t *array, size_t size, size_t block);
void pflash_release(struct pflash *f);

/*
 * Snapshot (docs/snapshot.md). pflash_save(): the command state (command in
 * force, status register, a program or erase armed) and the array's bytes.
 * pflash_load(): the command state must be one the part can be in (a
 * known command, status bits the part sets, armed only under program or
 * erase: else -EINVAL, reason logged) and the saved bytes as many as the
 * array's (-EBADMSG). adopt: the saved bytes become the array's (a store
 * made anew for this run); else the array must already hold exactly them
 * (-ESTALE, logged naming `name`: another store, or written since). Nothing
 * is set unless all is accepted. No guest access runs meanwhile.
 */
struct snap_buf;
struct snap_cur;
void pflash_save(struct pflash *f, struct snap_buf *b);
int pflash_load(struct pflash *f, struct snap_cur *c, bool adopt, const char *name);

/* The bus callbacks (opaque = struct pflash, offsets from its base). */
extern const struct io_ops pflash_ops;

#endif /* VMLET_DEV_PFLASH_H */
