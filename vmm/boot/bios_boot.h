/* SPDX-License-Identifier: MIT */
/*
 * bios_boot.h - boot a VM through Debian's SeaBIOS (VM_BOOT_BIOS).
 *
 * vmlet runs SeaBIOS's microvm build (/usr/share/seabios/bios-microvm.bin,
 * Debian package "seabios"; $VMLET_SEABIOS overrides the path) the way
 * QEMU's microvm runs it with its BIOS in RAM: the image is copied to the
 * top of the first megabyte (0xE0000-0xFFFFF for the 128 KiB build) and
 * the boot vCPU starts at F000:FFF0 in real mode. No chipset shadowing
 * (PAM) exists to be unlocked: the area is plain RAM.
 *
 * Everything else comes through fw_cfg (vmm/dev/fw_cfg.h): etc/e820,
 * vmlet's ACPI tables with etc/table-loader (arch_acpi_loader_build),
 * SMBIOS (etc/smbios/smbios-anchor, -tables: vmlet's type 1 etc.; SeaBIOS
 * adds its own type 0), the CPU count, "bootorder" (disks with a
 * bootOrder, lowest first, and then nothing else, as KubeVirt; else every
 * disk in order) and, with bootloader.bios.useSerial, etc/sercon-port
 * (SeaBIOS's serial console on COM1: its messages and the boot loader's
 * INT 10h text appear on vmlet's console; without it a BIOS VM's screen
 * output goes nowhere, vmlet has no display).
 *
 * With vm_options.bios_payload the payload (the probe) boots through
 * SeaBIOS too: its PVH ELF segments are put in RAM as for a direct boot and
 * QEMU's PVH option ROM (BIOS_PVH_ROM, "genroms/pvh.bin", first in the
 * boot order) enters it with the memory map SeaBIOS reports and the RSDP
 * SeaBIOS placed, so the probe checks what SeaBIOS hands over.
 */
#ifndef VMLET_BIOS_BOOT_H
#define VMLET_BIOS_BOOT_H

#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

#define BIOS_IMAGE_DEFAULT "/usr/share/seabios/bios-microvm.bin"
/* the image of a VM with a disk on bus sata (a disk without a bus is one,
 * KubeVirt's default): SeaBIOS's q35 build, whose AHCI driver the microvm
 * build lacks (tests/sh/sata_run.sh boots a SATA disk through it) */
#define BIOS_IMAGE_AHCI "/usr/share/seabios/bios.bin"
/* vm_options.bios_payload (vmlet probe on a BIOS VM): QEMU's option ROM
 * that boots a PVH ELF from fw_cfg (Debian package qemu-system-data) */
#define BIOS_PVH_ROM	  "/usr/share/qemu/pvh.bin"
#define BIOS_PVH_ROM_FILE "genroms/pvh.bin"

/* Load the image, fill the VM's fw_cfg and give the BSP's reset state in
 * *regs / *sregs. A missing image is an error naming the package. */
int bios_boot_setup(struct vm *vm, struct kvm_regs *regs, struct kvm_sregs *sregs);

#endif /* VMLET_BIOS_BOOT_H */
