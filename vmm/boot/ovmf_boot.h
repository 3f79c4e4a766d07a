/* SPDX-License-Identifier: MIT */
/*
 * ovmf_boot.h - boot a VM through OVMF, Debian's build of EDK II for QEMU
 * (package "ovmf", /usr/share/OVMF/): the UEFI firmware of a VM that wants
 * secure boot, and any firmware image given with --firmware.
 *
 * Which build: with features.smm (which KubeVirt requires for secure
 * boot) the SMM build OVMF_CODE_4M.secboot.fd on a platform with SMM
 * (vm_options.smm: vmm/vm/smm.h, vmm/dev/q35_smm.h) whose variable flash
 * only SMM may write; a host whose KVM has no SMM refuses it. With
 * VMLET_OVMF_SMM=0 (or without features.smm) OVMF_CODE_4M.fd, the build
 * with secure boot but without SMM: secure boot checks every image the
 * firmware loads, but a guest OS running at ring 0 can rewrite the keys
 * and variables in the flash (docs/firmware.md). Either way the per-VM
 * variables are created from OVMF_VARS_4M.ms.fd (Microsoft's and Debian's
 * keys enrolled, secure boot on).
 *
 * The platform is what OVMF's q35 code expects, built only for these VMs:
 * the MCH and ICH9 LPC registers (vmm/dev/q35.h), low RAM below the
 * ECAM window OVMF programs (arch_q35_low_max), the CMOS memory bytes, the
 * flash below 4 GiB (vmm/dev/flash.h), and fw_cfg (vmm/dev/fw_cfg.h):
 * etc/e820 (the RAM), the CPU count, vmlet's ACPI tables through the
 * table-loader and its SMBIOS structures, and with SMM the etc/smi/ files
 * of the SMI feature negotiation (q35_smm_fw_cfg). The boot vCPU starts at the
 * reset vector (arch_regs_reset). OVMF's debug port 0x402 goes to vmlet's
 * log at debug level (vmm/dev/legacy.c; Debian's RELEASE build prints
 * nothing there).
 */
#ifndef VMLET_OVMF_BOOT_H
#define VMLET_OVMF_BOOT_H

#include <linux/kvm.h>
#include <stdbool.h>

struct vm;
struct vm_config;

#define OVMF_DIR	  "/usr/share/OVMF"
#define OVMF_CODE_DEFAULT OVMF_DIR "/OVMF_CODE_4M.fd"
#define OVMF_CODE_SMM	  OVMF_DIR "/OVMF_CODE_4M.secboot.fd"
#define OVMF_VARS_SECBOOT OVMF_DIR "/OVMF_VARS_4M.ms.fd"
#define OVMF_VARS_PLAIN	  OVMF_DIR "/OVMF_VARS_4M.fd"
#define OVMF_VARS_SUFFIX  ".ovmf-vars.fd"

#define OVMF_FLASH_MIN (64u << 10)

/* Whether a --firmware file is a flash image, OVMF-style: not an ELF, a
 * regular file of whole 4 KiB pages, at least OVMF_FLASH_MIN bytes. */
bool ovmf_is_flash_image(const char *path);

/* Fill the VM's fw_cfg and give the BSP's reset state. */
int ovmf_boot_setup(struct vm *vm, struct kvm_regs *regs, struct kvm_sregs *sregs);

#endif /* VMLET_OVMF_BOOT_H */
