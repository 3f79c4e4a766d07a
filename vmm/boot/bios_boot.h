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
/* vm_options.bios_payload (vmlet probe on a BIOS VM): QEMU's option ROM
 * that boots a PVH ELF from fw_cfg (Debian package qemu-system-data) */
#define BIOS_PVH_ROM	  "/usr/share/qemu/pvh.bin"
#define BIOS_PVH_ROM_FILE "genroms/pvh.bin"

/* Load the image, fill the VM's fw_cfg and give the BSP's reset state in
 * *regs / *sregs. A missing image is an error naming the package. */
int bios_boot_setup(struct vm *vm, struct kvm_regs *regs, struct kvm_sregs *sregs);

/* Shared with vmm/boot/ovmf_boot.c: what both firmwares read from fw_cfg
 * about the platform: the CPU count, no boot menu pause, QEMU's IRQ0
 * override flag, vmlet's ACPI tables with QEMU's etc/table-loader script
 * (when the VM has ACPI) and its SMBIOS structures but type 0 (the
 * firmware adds its own). 0 or -errno; a bad firmware.uuid is reported
 * and gives -EBADMSG. */
struct fw_cfg;
int bios_fw_platform(struct vm *vm, struct fw_cfg *fc);

/*
 * The "bootorder" fw_cfg file, as QEMU writes it for its firmware: one
 * Open Firmware path per line, a virtio-blk function at PCI slot N being
 * "/pci@i0cf8/disk@N" for SeaBIOS (it matches any name at the slot) and
 * "/pci@i0cf8/scsi@N/disk@0,0" for OVMF (its QemuBootOrderLib wants
 * QEMU's virtio-blk path). KubeVirt's order: the disks with a bootOrder,
 * lowest first, and only those (SeaBIOS: "HALT" ends the list, as QEMU's
 * -boot strict=on which libvirt sets); without any, every disk in the VM's
 * order. first: a line before the disks, or NULL. Disks with slot <= 0
 * are left out. Writes at most cap bytes (NUL-terminated, lines that do
 * not fit are dropped) and returns the text's length.
 */
enum bios_bootorder_style { BIOS_BOOTORDER_SEABIOS, BIOS_BOOTORDER_OVMF };
struct bios_boot_disk {
	uint32_t boot_order; /* 0: none */
	int slot;	     /* PCI slot of its virtio-blk or AHCI function */
	int sata;	     /* a SATA disk: 1 + its AHCI port; 0: virtio-blk */
};
size_t bios_bootorder_text(char *buf, size_t cap, const struct bios_boot_disk *d, unsigned int n,
			   const char *first, enum bios_bootorder_style style);
/* The VM's disks' bootorder as fw_cfg file "bootorder". 0 or -errno. */
int bios_fw_bootorder(struct vm *vm, struct fw_cfg *fc, const char *first,
		      enum bios_bootorder_style style);

#endif /* VMLET_BIOS_BOOT_H */
