/* SPDX-License-Identifier: MIT */
/*
 * fw_platform.h - the platform as firmware sees it, one owner for what
 * the boot paths share: the ACPI table configuration (direct boot builds
 * the tables in RAM, SeaBIOS and OVMF link them from fw_cfg) and the
 * fw_cfg items both firmwares read. bios_boot.c and ovmf_boot.c use this
 * file; nothing here calls them, so the boot paths form no circle:
 * boot.c -> bios_boot.c, ovmf_boot.c -> fw_platform.c.
 */
#ifndef VMLET_BOOT_FW_PLATFORM_H
#define VMLET_BOOT_FW_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

struct vm;
struct fw_cfg;
struct arch_acpi_config;

/* The ACPI table configuration of this VM. */
void fw_platform_acpi_config(const struct vm *vm, struct arch_acpi_config *c);

/* What both firmwares (SeaBIOS and OVMF) read from fw_cfg
 * about the platform: the CPU count, no boot menu pause, QEMU's IRQ0
 * override flag, vmlet's ACPI tables with QEMU's etc/table-loader script
 * (when the VM has ACPI) and its SMBIOS structures but type 0 (the
 * firmware adds its own). 0 or -errno; a bad firmware.uuid is reported
 * and gives -EBADMSG. */
int fw_platform_fill(struct vm *vm, struct fw_cfg *fc);

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
enum fw_bootorder_style { FW_BOOTORDER_SEABIOS, FW_BOOTORDER_OVMF };
struct fw_boot_disk {
	uint32_t boot_order; /* 0: none */
	int slot;	     /* PCI slot of its virtio-blk or AHCI function */
	int sata;	     /* a SATA disk: 1 + its AHCI port; 0: virtio-blk */
};
size_t fw_bootorder_text(char *buf, size_t cap, const struct fw_boot_disk *d, unsigned int n,
			 const char *first, enum fw_bootorder_style style);
/* The VM's disks' bootorder as fw_cfg file "bootorder". 0 or -errno. */
int fw_platform_bootorder(struct vm *vm, struct fw_cfg *fc, const char *first,
			  enum fw_bootorder_style style);

#endif /* VMLET_BOOT_FW_PLATFORM_H */
