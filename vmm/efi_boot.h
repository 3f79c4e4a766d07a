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

struct guest_mem;

/* SMBIOS lives in the legacy BIOS area, where firmware and OS scan for its
 * entry point (16-byte steps over 0xf0000-0xfffff). */
#define EFI_SMBIOS_GPA 0xf0000ull
#define EFI_SMBIOS_END 0x100000ull

/* Call before creating the VM. 0 when cfg is not an EFI VM or vmlet can
 * boot it; otherwise logs a one-line reason and returns -ENOTSUP (secure
 * boot requested) or -ENOENT (no external firmware given and vmlet's own
 * firmware is not built into this binary). */
int efi_boot_check(const struct vm_config *cfg, bool external_firmware);

/* vmlet's embedded UEFI firmware, a PVH ELF (build/fw/efi.elf). 0, or
 * -ENOENT when this binary carries none. */
int efi_boot_embedded(const void **elf, size_t *len);

/* SMBIOS 3.0 tables for the guest (the firmware passes an entry point it
 * finds in 0xf0000-0xfffff on to the OS): type 0 (vendor "vmlet"), type 1
 * (manufacturer "KubeVirt", product "None", family "KubeVirt", serial and
 * UUID from firmware.serial/uuid), type 127. Written to buf for guest
 * address gpa: entry point at buf[0] (16-byte aligned gpa), structures
 * from buf[0x20]. Returns the bytes used, or -ENOSPC / -EINVAL (a
 * malformed firmware.uuid). */
int efi_boot_smbios(const struct vm_config *cfg, void *buf, size_t cap, uint64_t gpa);

/* Build the SMBIOS tables into guest memory at EFI_SMBIOS_GPA, or just
 * above `after` (the end of the ACPI tables) when that is higher, for
 * every VM (direct kernel boot scans the BIOS area as well). 0, or -ENOSPC
 * / -EINVAL with the reason logged. */
int efi_boot_place_smbios(const struct vm_config *cfg, struct guest_mem *mem, uint64_t after);

#endif /* VMLET_EFI_BOOT_H */
