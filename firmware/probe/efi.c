// SPDX-License-Identifier: MIT
/*
 * efi.c - what the probe sees of the UEFI firmware it was started under
 * (vmlet's firmware hands the PVH probe over with "vmlet.efi=0x<EFI system
 * table>" on the command line, firmware/efi/payload.c): the system table's
 * vendor and revision and the GUIDs of its configuration tables, read at
 * CPL3 before anything else overwrites firmware memory. Everything read is
 * bounds-checked: a bad table gives an error line, never a fault loop.
 */
#include "firmware/lib/efi_guid.h"
#include "firmware/probe/probe.h"

#define EFI_ST_SIGNATURE 0x5453595320494249ull /* "IBI SYST" */
#define EFI_MAX_TABLES	 32
#define EFI_VENDOR_MAX	 64

struct efi_st_view { /* the first fields of EFI_SYSTEM_TABLE */
	uint64_t signature;
	uint32_t revision, header_size, crc, reserved;
	uint64_t vendor;
	uint32_t firmware_revision, pad;
	uint64_t con[6], runtime, boot, n_tables, tables;
};

static const struct {
	const char *name;
	struct fw_guid guid;
} known[] = {
    {"ACPI20", FW_GUID_APPLY(FW_GUID_INIT, FW_GUID_ACPI20)},
    {"ACPI", FW_GUID_APPLY(FW_GUID_INIT, FW_GUID_ACPI10)},
    {"SMBIOS3", FW_GUID_APPLY(FW_GUID_INIT, FW_GUID_SMBIOS3)},
    {"SMBIOS", FW_GUID_APPLY(FW_GUID_INIT, FW_GUID_SMBIOS)},
};

static bool low(uint64_t addr, uint64_t len)
{
	return addr >= 0x1000 && addr < 0x100000000ull && len <= 0x100000000ull - addr;
}

static void guid_text(struct fw_buf *out, const uint8_t *g, bool first)
{
	if (!first)
		fw_buf_printf(out, " ");
	for (unsigned int i = 0; i < FW_ARRAY_SIZE(known); i++)
		if (!memcmp(g, &known[i].guid, sizeof(known[i].guid))) {
			fw_buf_printf(out, "%s", known[i].name);
			return;
		}
	fw_buf_printf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-", g[3], g[2], g[1], g[0],
		      g[5], g[4], g[7], g[6], g[8], g[9]);
	for (int i = 10; i < 16; i++)
		fw_buf_printf(out, "%02x", g[i]);
}

void probe_efi_report(struct fw_buf *out, const char *addr_text)
{
	const struct efi_st_view *st;
	const uint16_t *vendor;
	char name[EFI_VENDOR_MAX + 1];
	uint64_t a = 0;
	int n = 0;

	for (const char *c = addr_text[0] == '0' && addr_text[1] == 'x' ? addr_text + 2 : "";
	     *c && n < 16; c++, n++) {
		int d = *c >= '0' && *c <= '9'	 ? *c - '0'
			: *c >= 'a' && *c <= 'f' ? *c - 'a' + 10
						 : -1;

		if (d < 0)
			break;
		a = a << 4 | (uint64_t)d;
	}
	st = (const struct efi_st_view *)(uintptr_t)a;
	if (!low(a, sizeof(*st)) || st->signature != EFI_ST_SIGNATURE ||
	    !low(st->vendor, EFI_VENDOR_MAX * 2) || st->n_tables > EFI_MAX_TABLES ||
	    (st->n_tables && !low(st->tables, st->n_tables * 24))) {
		fw_buf_printf(out, "error=vmlet.efi=%s is not an EFI system table\n", addr_text);
		return;
	}
	vendor = (const uint16_t *)(uintptr_t)st->vendor;
	n = 0;
	for (; n < EFI_VENDOR_MAX && vendor[n]; n++)
		name[n] = vendor[n] > ' ' && vendor[n] <= '~' ? (char)vendor[n] : '_';
	name[n] = 0;
	fw_buf_printf(out, "efiVendor=%s\nefiRevision=0x%08x\nefiSpec=%u.%u\nefiTables=", name,
		      st->firmware_revision, st->revision >> 16, st->revision & 0xffff);
	for (uint64_t i = 0; i < st->n_tables; i++)
		guid_text(out, (const uint8_t *)(uintptr_t)(st->tables + i * 24), !i);
	fw_buf_printf(out, "\n");
}
