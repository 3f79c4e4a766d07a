/* SPDX-License-Identifier: MIT */
/*
 * testapp_tables.h - testapp.c's checks of what the VMM hands an OS
 * loader through the firmware: the ACPI RSDP and SMBIOS in the
 * configuration table (SMBIOS's serial and UUID printed for the shell
 * tests), the firmware vendor, and the initrd through LoadFile2 on
 * Linux's initrd media path (its size and checksum printed). Needs
 * testapp_report.h; part of testapp.c's single translation unit: include
 * once.
 */
#ifndef VMLET_TESTAPP_TABLES_H
#define VMLET_TESTAPP_TABLES_H

#include <efi.h>
#include <efilib.h>

static BOOLEAN is_rsdp(const char *p)
{
	return p && p[0] == 'R' && p[1] == 'S' && p[2] == 'D' && p[3] == ' ' && p[4] == 'P' &&
	       p[5] == 'T' && p[6] == 'R' && p[7] == ' ';
}

/* SMBIOS, when the VMM provides it: the entry point must lead to a type 1
 * structure; its serial number is printed for the shell test to compare. */
static void test_smbios(void)
{
	EFI_GUID sm3 = SMBIOS3_TABLE_GUID, sm = SMBIOS_TABLE_GUID;
	const UINT8 *ep = NULL, *t = NULL, *end;
	BOOLEAN v3 = FALSE;

	for (UINTN i = 0; i < g_st->NumberOfTableEntries; i++) {
		EFI_CONFIGURATION_TABLE *c = &g_st->ConfigurationTable[i];

		if (guid_eq(&c->VendorGuid, &sm3))
			ep = c->VendorTable, v3 = TRUE;
		else if (guid_eq(&c->VendorGuid, &sm) && !v3)
			ep = c->VendorTable;
	}
	if (!ep) {
		putsa("smbios: none\r\n");
		return;
	}
	if (v3) {
		t = (const UINT8 *)*(const UINT64 *)(ep + 0x10);
		end = t + *(const UINT32 *)(ep + 0x0c);
	} else {
		t = (const UINT8 *)(UINTN) * (const UINT32 *)(ep + 0x18);
		end = t + *(const UINT16 *)(ep + 0x16);
	}
	while (t && t + 4 <= end && t[0] != 1 && t[0] != 127) {
		const UINT8 *p = t + t[1];

		while (p + 1 < end && (p[0] || p[1]))
			p++;
		t = p + 2;
	}
	BOOLEAN ok = t && t + 8 <= end && t[0] == 1;

	check(L"smbios.type1", ok, NULL, 0);
	if (!ok)
		return;
	const char *str = (const char *)t + t[1];

	for (int k = 1; k < t[7] && *str; k++)
		str += strlena((const CHAR8 *)str) + 1;
	putsa("smbios.serial=");
	putsa(t[7] ? str : "");
	/* the UUID in its text form: the first three fields little-endian */
	static const UINT8 order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
	char uuid[37];
	int k = 0;

	for (int i = 0; i < 16 && t[1] >= 0x19; i++) {
		uuid[k++] = "0123456789abcdef"[t[8 + order[i]] >> 4];
		uuid[k++] = "0123456789abcdef"[t[8 + order[i]] & 15];
		if (i == 3 || i == 5 || i == 7 || i == 9)
			uuid[k++] = '-';
	}
	uuid[k] = 0;
	putsa("\r\nsmbios.uuid=");
	putsa(uuid);
	putsa("\r\n");
}

/* LoadFile2 on Linux's initrd media device path, when the VMM handed an
 * initrd over: its size and a checksum for the shell test to compare. */
typedef struct lf2 {
	EFI_STATUS(EFIAPI *LoadFile)(struct lf2 *, EFI_DEVICE_PATH *, BOOLEAN, UINTN *, VOID *);
} LF2;

static void test_initrd(void)
{
	static EFI_GUID lf2_guid = {
	    0x4006c0c1, 0xfcb3, 0x403e, {0x99, 0x6d, 0x4a, 0x6c, 0x87, 0x24, 0xe0, 0x6d}};
	static UINT8 dpb[24] = {4,    3,    20,	  0,	0x27, 0xe4, 0x68, 0x55,
				0xfc, 0x68, 0x3d, 0x4f, 0xac, 0x74, 0xca, 0x55,
				0x52, 0x31, 0xcc, 0x68, 0x7f, 0xff, 4,	  0};
	EFI_DEVICE_PATH *dp = (EFI_DEVICE_PATH *)dpb;
	EFI_HANDLE h = NULL;
	LF2 *lf = NULL;
	UINTN size = 0;
	UINT8 *buf = NULL;
	UINT32 sum = 0;

	if (g_bs->LocateDevicePath(&lf2_guid, &dp, &h) ||
	    g_bs->HandleProtocol(h, &lf2_guid, (void **)&lf) || !lf) {
		putsa("initrd: none\r\n");
		return;
	}
	dp = (EFI_DEVICE_PATH *)dpb;
	BOOLEAN ok = lf->LoadFile(lf, dp, FALSE, &size, NULL) == EFI_BUFFER_TOO_SMALL && size &&
		     g_bs->AllocatePool(EfiLoaderData, size, (void **)&buf) == 0 &&
		     lf->LoadFile(lf, dp, FALSE, &size, buf) == 0;

	check(L"initrd.load-file2", ok, "bytes", size);
	for (UINTN i = 0; ok && i < size; i++)
		sum = sum * 31 + buf[i];
	putsa("initrd.size=");
	putu(size, 10);
	putsa(" initrd.sum=");
	putu(sum, 10);
	putsa("\r\n");
	if (buf)
		g_bs->FreePool(buf);
}

/* ACPI: the RSDP as the ACPI 2.0 table (revision >= 2, as vmlet builds
 * it), or as the ACPI 1.0 table when the VMM's RSDP is revision 0. */
static void test_config_tables(void)
{
	EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
	const char *t20 = NULL, *t10 = NULL;

	for (UINTN i = 0; i < g_st->NumberOfTableEntries; i++) {
		EFI_CONFIGURATION_TABLE *c = &g_st->ConfigurationTable[i];

		if (guid_eq(&c->VendorGuid, &acpi20))
			t20 = c->VendorTable;
		if (guid_eq(&c->VendorGuid, &acpi10))
			t10 = c->VendorTable;
	}
	check(L"config.acpi",
	      (is_rsdp(t20) && t20[15] >= 2) || (!t20 && is_rsdp(t10) && t10[15] < 2), "tables",
	      g_st->NumberOfTableEntries);
	test_smbios();
	check(L"systab.vendor", g_st->FirmwareVendor && g_st->FirmwareVendor[0] == 'v', NULL, 0);
}

#endif /* VMLET_TESTAPP_TABLES_H */
