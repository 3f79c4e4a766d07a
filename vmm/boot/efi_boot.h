/* SPDX-License-Identifier: MIT */
/*
 * efi_boot.h - the vmm's side of EFI boot (VM_BOOT_EFI): whether vmlet may
 * boot the VM, and which firmware image to load.
 *
 * Secure boot policy: a VM whose resolved firmware asks for secure boot
 * (cfg->efi_secure_boot) must never boot an unverified image while claiming
 * secure boot. vmlet's firmware does not verify Authenticode signatures
 * yet, so such a VM is refused before anything starts. The same holds with
 * an external --firmware: vmlet cannot tell whether that firmware enforces
 * secure boot with the keys the VM expects.
 */
#ifndef VMLET_EFI_BOOT_H
#define VMLET_EFI_BOOT_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/vm_config.h"

/* Call before creating the VM. 0 when cfg is not an EFI VM or vmlet can
 * boot it; otherwise logs a one-line reason and returns -ENOTSUP (secure
 * boot requested) or -ENOENT (no external firmware given and vmlet's own
 * firmware is not built into this binary). */
int efi_boot_check(const struct vm_config *cfg, bool external_firmware);

/* vmlet's embedded UEFI firmware, a PVH ELF (build/fw/efi.elf). 0, or
 * -ENOENT when this binary carries none. */
int efi_boot_embedded(const void **elf, size_t *len);

#endif /* VMLET_EFI_BOOT_H */
