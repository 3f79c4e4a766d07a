/* SPDX-License-Identifier: MIT */
/*
 * flash.h - the system flash of an OVMF VM (vm_options.flash_code), the
 * way QEMU's q35 maps its two pflash devices: the firmware's code image
 * ends at 4 GiB, mapped read-only (a KVM memory slot: the guest executes
 * it in place; writes are dropped), and the per-VM variable store sits
 * right below it as a CFI flash (pflash.h) over a MAP_SHARED mapping of
 * the vars file, so every program or erase the firmware does is in the
 * file (fdatasync at teardown).
 *
 * The vars file (vm_options.flash_vars) is created from the template
 * (vm_options.flash_vars_template, e.g. Debian's OVMF_VARS_4M.ms.fd) when
 * it does not exist or vm_options.flash_vars_fresh asks for a new one
 * (written beside it and renamed into place); an existing file of another
 * size than the template is refused. Both images are whole 4 KiB pages
 * and together at most ARCH_FLASH_MAX.
 *
 * Snapshot (docs/snapshot.md): the code image's size and CRC-32C, the
 * variable flash's command state and the store's bytes (pflash.h). A
 * restore refuses another code image; a store made anew for this run
 * (flash_vars_fresh: no efi.persistent, no --efi-vars) takes the saved
 * bytes, a kept store (persistent, --efi-vars) must hold exactly them
 * ("not the variable store of the snapshot": another file, or the guest
 * wrote variables since a snapshot taken with --resume).
 */
#ifndef VMLET_DEV_FLASH_H
#define VMLET_DEV_FLASH_H

#include "vmm/vm/device.h"

#define FLASH_BLOCK 4096 /* OVMF's PcdOvmfFirmwareBlockSize, QEMU's sector */

extern const struct device_type flash_device;

#endif /* VMLET_DEV_FLASH_H */
