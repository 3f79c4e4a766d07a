/* SPDX-License-Identifier: MIT */
/*
 * acpi_fw_cfg_dump DIR: write the three fw_cfg files through which a BIOS
 * firmware (SeaBIOS, OVMF) loads vmlet's ACPI tables, as vmm/boot/bios_boot.c
 * serves them for a one-vCPU VM with COM1: DIR/rsdp (etc/acpi/rsdp),
 * DIR/tables (etc/acpi/tables), DIR/loader (etc/table-loader). Built by
 * tests/sh/ovmf_acpi_tables.sh against build/libvmlet.a. Exit 0 or 1.
 */
#include <stdio.h>

#include "arch/arch.h"

static int put(const char *dir, const char *name, const void *p, size_t len)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return -1;
	ok = fwrite(p, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static uint8_t tables[ARCH_ACPI_MAX], script[ARCH_ACPI_LOADER_MAX];
	uint32_t ids[1] = {0};
	struct arch_acpi_config c = {
	    .topo = {1, 1, 1}, .apic_ids = ids, .n_vcpus = 1, .pci = 1, .serial = 1};
	size_t used = 0, slen = 0, toff = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: acpi_fw_cfg_dump DIR\n");
		return 1;
	}
	if (arch_acpi_build(tables, sizeof(tables), 0, &c, &used) ||
	    arch_acpi_loader_build(tables, used, 0, script, sizeof(script), &slen, &toff) ||
	    put(argv[1], "rsdp", tables, ARCH_ACPI_RSDP_SIZE) ||
	    put(argv[1], "tables", tables + toff, used - toff) ||
	    put(argv[1], "loader", script, slen)) {
		fprintf(stderr, "acpi_fw_cfg_dump: failed\n");
		return 1;
	}
	return 0;
}
