// SPDX-License-Identifier: MIT
/*
 * fw_platform.c - what SeaBIOS and OVMF both read about the platform from
 * fw_cfg, and the ACPI configuration every boot path shares
 * (fw_platform.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/boot/fw_platform.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/dev/pci_devices.h"
#include "vmm/util/log.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

#define FW_SMBIOS_MAX	 4096
#define FW_BOOTORDER_MAX 4096

void fw_platform_acpi_config(const struct vm *vm, struct arch_acpi_config *c)
{
	*c = (struct arch_acpi_config){
	    .topo = vm->topo,
	    .apic_ids = vm->apic_ids,
	    .n_vcpus = vm->n_vcpus,
	    .serial = vm->cfg->autoattach_serial_console, /* COM1: dev/serial8250.c */
	    .pci = 1,		 /* MCFG + PCI0: vmm/dev/pci_devices.c always has a host bridge */
	    .tpm = vm->cfg->tpm, /* vmm/dev/tpm/ */
	    /* tpm: {} is QEMU's tpm-tis, persistent its tpm-crb, as KubeVirt */
	    .tpm_tis = vm->cfg->tpm && !vm->cfg->tpm_persistent,
	};
}

/* vmlet's ACPI tables, built for address 0 and linked by the firmware. */
static int fw_platform_acpi(struct vm *vm, struct fw_cfg *fc)
{
	struct arch_acpi_config c;
	uint8_t *tables = malloc(ARCH_ACPI_MAX), *script = malloc(ARCH_ACPI_LOADER_MAX);
	size_t used = 0, slen = 0, toff = 0;
	int r = -ENOMEM;

	if (!tables || !script)
		goto out;
	fw_platform_acpi_config(vm, &c);
	r = arch_acpi_build(tables, ARCH_ACPI_MAX, 0, &c, &used);
	if (!r)
		r = arch_acpi_loader_build(tables, used, 0, script, ARCH_ACPI_LOADER_MAX, &slen,
					   &toff);
	if (!r)
		r = fw_cfg_add_file(fc, ARCH_ACPI_FILE_RSDP, tables, ARCH_ACPI_RSDP_SIZE);
	if (!r)
		r = fw_cfg_add_file(fc, ARCH_ACPI_FILE_TABLES, tables + toff, used - toff);
	if (!r)
		r = fw_cfg_add_file(fc, ARCH_ACPI_FILE_LOADER, script, slen);
out:
	free(tables);
	free(script);
	return r;
}

/* vmlet's SMBIOS structures but type 0: the BIOS is SeaBIOS, which adds
 * its own. The anchor is the 3.0 entry point (SeaBIOS sets the address). */
static int fw_platform_smbios(struct vm *vm, struct fw_cfg *fc)
{
	const struct arch_smbios_ids ids = {vm->cfg->firmware_serial, vm->cfg->firmware_uuid, 1};
	uint8_t ep[ARCH_SMBIOS_ENTRY_SIZE], *buf = malloc(FW_SMBIOS_MAX);
	size_t used = 0;
	int r = buf ? arch_smbios_tables(buf, FW_SMBIOS_MAX, &ids, &used) : -ENOMEM;

	if (r == -EINVAL) {
		error("smbios: firmware.uuid '%s' is not a UUID", vm->cfg->firmware_uuid);
		r = -EBADMSG; /* reported */
	}
	if (!r) {
		arch_smbios_entry(ep, 0, (uint32_t)used);
		r = fw_cfg_add_file(fc, "etc/smbios/smbios-anchor", ep, sizeof(ep));
	}
	if (!r)
		r = fw_cfg_add_file(fc, "etc/smbios/smbios-tables", buf, used);
	free(buf);
	return r;
}

size_t fw_bootorder_text(char *buf, size_t cap, const struct fw_boot_disk *d, unsigned int n,
			 const char *first, enum fw_bootorder_style style)
{
	static const char *const line[] = {
	    [FW_BOOTORDER_SEABIOS] = "/pci@i0cf8/disk@%x\n",
	    [FW_BOOTORDER_OVMF] = "/pci@i0cf8/scsi@%x/disk@0,0\n",
	};
	/* a SATA disk as QEMU names one for both firmwares (SeaBIOS's
	 * bootprio_find_ata_device() glob, OVMF's QemuBootOrderLib) */
	static const char sata[] = "/pci@i0cf8/pci8086,2922@%x/drive@%x/disk@0\n";
	uint32_t last = 0, next;
	size_t off = 0;
	bool any = false;

	if (!cap)
		return 0;
	buf[0] = 0;
	if (first && strlen(first) + 1 < cap)
		off += (size_t)snprintf(buf, cap, "%s\n", first);
	for (unsigned int i = 0; i < n; i++)
		any |= d[i].boot_order != 0;
	for (;;) {
		next = UINT32_MAX;
		for (unsigned int i = 0; any && i < n; i++)
			if (d[i].boot_order > last && d[i].boot_order < next)
				next = d[i].boot_order;
		for (unsigned int i = 0; i < n; i++) {
			char one[64];
			size_t len;

			if ((any && d[i].boot_order != next) || d[i].slot <= 0)
				continue;
			if (d[i].sata > 0)
				len = (size_t)snprintf(one, sizeof(one), sata,
						       (unsigned int)d[i].slot,
						       (unsigned int)d[i].sata - 1);
			else
				len = (size_t)snprintf(one, sizeof(one), line[style],
						       (unsigned int)d[i].slot);
			if (off + len >= cap)
				break;
			memcpy(buf + off, one, len + 1);
			off += len;
		}
		if (!any || next == UINT32_MAX)
			break;
		last = next;
	}
	if (any && style == FW_BOOTORDER_SEABIOS && off + 5 < cap)
		off += (size_t)snprintf(buf + off, cap - off, "HALT\n");
	return off;
}

int fw_platform_bootorder(struct vm *vm, struct fw_cfg *fc, const char *first,
			  enum fw_bootorder_style style)
{
	const struct vm_config *cfg = vm->cfg;
	struct fw_boot_disk *d = calloc(cfg->n_disks + 1, sizeof(*d));
	char *txt = malloc(FW_BOOTORDER_MAX);
	size_t len;
	int r = -ENOMEM;

	if (!d || !txt)
		goto out;
	for (unsigned int i = 0; i < cfg->n_disks; i++)
		d[i] = (struct fw_boot_disk){cfg->disks[i].boot_order, pci_devices_disk_slot(vm, i),
					     pci_devices_disk_port(vm, i) + 1};
	len = fw_bootorder_text(txt, FW_BOOTORDER_MAX, d, cfg->n_disks, first, style);
	r = fw_cfg_add_file(fc, "bootorder", txt, len);
out:
	free(d);
	free(txt);
	return r;
}

int fw_platform_fill(struct vm *vm, struct fw_cfg *fc)
{
	uint16_t ncpu = (uint16_t)vm->n_vcpus, zero = 0;
	uint8_t irq0_override = 1; /* the MADT routes ISA IRQ 0 to pin 2 */
	int r;

	r = fw_cfg_add_item(fc, FW_CFG_NB_CPUS, &ncpu, 2);
	if (!r)
		r = fw_cfg_add_item(fc, FW_CFG_MAX_CPUS, &ncpu, 2);
	if (!r) /* no "Press ESC for boot menu" pause */
		r = fw_cfg_add_item(fc, FW_CFG_BOOT_MENU, &zero, 2);
	if (!r)
		r = fw_cfg_add_item(fc, 0x8002, &irq0_override, 1); /* QEMU's IRQ0_OVERRIDE */
	if (!r && vm->cfg->acpi)
		r = fw_platform_acpi(vm, fc);
	if (!r)
		r = fw_platform_smbios(vm, fc);
	return r;
}
