/* SPDX-License-Identifier: MIT */
/*
 * efi_vars.h - the file that keeps an EFI VM's non-volatile variables
 * (firmware.bootloader.efi.persistent) across runs.
 *
 * The blob inside is the firmware's (firmware/abi.h, "EFI platform port");
 * this file only stores the last one saved, crash-safely, with nothing but
 * write() once the sandbox is on (a vCPU thread saves):
 *
 *   file   = record*
 *   record = "VMLETEV1" | u32 len | u32 reserved | u64 FNV-1a(blob) | blob
 *
 * Saving appends one record with a single write() to an O_APPEND fd; the
 * last complete record with a good hash wins, so a save torn by a crash
 * leaves the previous blob. Opening compacts the file to its last good
 * record (a temporary file renamed over it), so it grows only within a
 * run (a guest saving in a loop meets -ENOSPC at EFI_VARS_FILE_MAX, the
 * largest store opening accepts); closing fdatasyncs it. The store is a
 * regular file, not a symlink (its default place, next to the manifest,
 * may be a directory others write); the temporary file is new (O_EXCL)
 * and saves go to the descriptor opening read or wrote, never to a name
 * opened again.
 */
#ifndef VMLET_EFI_VARS_H
#define VMLET_EFI_VARS_H

#include <stddef.h>
#include <stdint.h>

struct efi_vars {
	char *path;
	int fd; /* O_RDWR | O_APPEND */
	uint8_t *blob;
	size_t len;
	uint8_t *rec; /* room for one record (header + FW_ABI_EFI_VARS_MAX) */
	uint64_t file_size;
};

/* Open (creating it, mode 0600) and compact the store at path. 0 or
 * -errno with the reason logged. */
int efi_vars_open(struct efi_vars *v, const char *path);
#define EFI_VARS_FILE_MAX (64ull << 20)

/* The same store in an open regular file fd that outlives this VM but
 * not vmlet (a memfd: the variables of a VM without efi.persistent, kept
 * across a guest reboot as in KubeVirt's VMI, cmd_run.c). Reads it,
 * rewrites it as one record and saves to a duplicate of fd (O_APPEND is
 * set on the shared file description). 0 or -errno, logged. */
int efi_vars_open_fd(struct efi_vars *v, int fd);

/* Replace the stored blob (len <= FW_ABI_EFI_VARS_MAX). blob may be
 * guest memory that changes during the call: blob is read once, and the
 * record and the store hold that one snapshot. 0 or -errno (-E2BIG,
 * -ENOSPC past EFI_VARS_FILE_MAX, a write error). */
int efi_vars_save(struct efi_vars *v, const void *blob, size_t len);
void efi_vars_close(struct efi_vars *v);

/* The store of a VM whose first manifest is `manifest` (a file or a
 * directory; NULL: the current directory): "<dir>/<name>.efivars", the
 * name made safe for a file name (file_safe_name(): a KubeVirt name is
 * kept as it is; "vm" when there is none). Heap string, NULL when out of
 * memory. */
char *efi_vars_default_path(const char *manifest, const char *vm_name);

#endif /* VMLET_EFI_VARS_H */
