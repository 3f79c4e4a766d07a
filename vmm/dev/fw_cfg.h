/* SPDX-License-Identifier: MIT */
/*
 * fw_cfg.h - QEMU's firmware configuration interface, the way SeaBIOS and
 * OVMF read their platform configuration (QEMU docs/specs/fw_cfg.rst):
 *
 *   port 0x510 (16-bit write)  selector: the item key; resets the offset
 *   port 0x511 (8-bit read)    data: the next byte of the selected item
 *                              (0 past its end)
 *   ports 0x514..0x51b         DMA address, big-endian 64-bit: writing the
 *                              low half (0x518) starts the transfer; reading
 *                              it back gives the signature "QEMU CFG"
 *
 * A DMA descriptor in guest memory is { be32 control, be32 length, be64
 * address }; control bits: ERROR 0x01, READ 0x02, SKIP 0x04, SELECT 0x08
 * (key in bits 31..16), WRITE 0x10. The device does the transfer at once,
 * on the vCPU thread that wrote the port, and writes control back: 0 when
 * done, ERROR when a guest address was not RAM or the access not allowed
 * (a write is allowed only into a file added with a written callback,
 * within its length, as QEMU's writable files). Past an item's end reads give zeros, as in
 * QEMU. Everything in the descriptor is untrusted and checked through
 * guest_mem_ptr().
 *
 * Items: FW_CFG_SIGNATURE ("QEMU") and FW_CFG_ID (traditional + DMA) are
 * always there; the owner adds the rest with fw_cfg_add_item() (a numbered
 * key) and fw_cfg_add_file() (a named file in the directory at
 * FW_CFG_FILE_DIR, keys from FW_CFG_FILE_FIRST in order of addition).
 * Add everything before the guest runs; items are copied.
 */
#ifndef VMLET_DEV_FW_CFG_H
#define VMLET_DEV_FW_CFG_H

#include <stddef.h>
#include <stdint.h>

struct bus;
struct guest_mem;

#define FW_CFG_PORT_SEL	 0x510
#define FW_CFG_PORT_DATA 0x511
#define FW_CFG_PORT_DMA	 0x514

/* numbered keys (QEMU include/standard-headers/linux/qemu_fw_cfg.h) */
#define FW_CFG_SIGNATURE    0x00
#define FW_CFG_ID	    0x01
#define FW_CFG_UUID	    0x02
#define FW_CFG_NOGRAPHIC    0x04
#define FW_CFG_NB_CPUS	    0x05
#define FW_CFG_BOOT_MENU    0x0e
#define FW_CFG_MAX_CPUS	    0x0f
#define FW_CFG_KERNEL_ENTRY 0x10
#define FW_CFG_CMDLINE_SIZE 0x14
#define FW_CFG_CMDLINE_DATA 0x15
#define FW_CFG_FILE_DIR	    0x19
#define FW_CFG_FILE_FIRST   0x20

#define FW_CFG_VERSION	   0x01 /* FW_CFG_ID bits */
#define FW_CFG_VERSION_DMA 0x02

#define FW_CFG_DMA_ERROR  0x01
#define FW_CFG_DMA_READ	  0x02
#define FW_CFG_DMA_SKIP	  0x04
#define FW_CFG_DMA_SELECT 0x08
#define FW_CFG_DMA_WRITE  0x10

#define FW_CFG_NAME_MAX	 56 /* directory entry name, NUL included */
#define FW_CFG_MAX_FILES 64

struct fw_cfg;

/* An empty interface (signature and ID only) reading guest memory
 * through mem. -ENOMEM. */
int fw_cfg_create(struct fw_cfg **out, struct guest_mem *mem);
void fw_cfg_destroy(struct fw_cfg *fc);

/* Add (or replace) numbered item key. 0, -EINVAL (a key the interface owns:
 * signature, ID, file directory or file keys), -ENOMEM. */
int fw_cfg_add_item(struct fw_cfg *fc, uint16_t key, const void *data, size_t len);
/* Add named file name (at most FW_CFG_NAME_MAX - 1 bytes). 0, -EINVAL (bad
 * or duplicate name), -ENOSPC (FW_CFG_MAX_FILES), -ENOMEM. */
int fw_cfg_add_file(struct fw_cfg *fc, const char *name, const void *data, size_t len);

/* A file with callbacks, each called under the interface's lock with the
 * file's bytes (len fixed): select when the guest selects it (through the
 * port or DMA; it may rewrite them: what the guest then reads), written
 * after a DMA write stored into them (NULL: the file is read-only). */
struct fw_cfg_file_cb {
	void (*select)(void *opaque, uint8_t *data, size_t len);
	void (*written)(void *opaque, const uint8_t *data, size_t len);
	void *opaque;
};
int fw_cfg_add_file_cb(struct fw_cfg *fc, const char *name, const void *data, size_t len,
		       const struct fw_cfg_file_cb *cb);

/* Claim the ports on pio (fw_cfg_destroy() unclaims them). */
int fw_cfg_register(struct fw_cfg *fc, struct bus *pio);

/* The port protocol (what the bus calls; also the unit test's entry):
 * port is the absolute port number. */
void fw_cfg_pio_read(struct fw_cfg *fc, uint16_t port, void *data, uint32_t len);
void fw_cfg_pio_write(struct fw_cfg *fc, uint16_t port, const void *data, uint32_t len);

#endif /* VMLET_DEV_FW_CFG_H */
