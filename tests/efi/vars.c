// SPDX-License-Identifier: MIT
/*
 * vars.c - the EFI application tests/sh/efi_vars.sh boots to check
 * persistent variables and the boot manager. It prints
 *     vars.pci=DEV          PCI device of the disk it was loaded from
 *     vars.options=TEXT     its load options (a Boot#### option's data)
 *     vars.count=N          the non-volatile VmletCount variable (0: none)
 * then stores N+1 in VmletCount and, on the first run (N = 0), adds
 * Boot0007 = this disk's partition + \EFI\VMLET\VARS2.EFI with the data
 * "from-boot0007" and BootOrder = {0x0007}, and powers off; with load
 * options "reboot" it resets instead ("vars: reboot"); with "short" the
 * option's device path starts at the media node (HD() or CDROM(), the
 * short form boot managers match). Little work: it runs at (emulated)
 * CPL0.
 */
#include <efi.h>
#include <efilib.h>

static EFI_SYSTEM_TABLE *g_st;

static void putsa(const char *s)
{
	CHAR16 buf[96];
	UINTN i = 0;

	while (*s && i < 95)
		buf[i++] = (CHAR16)(unsigned char)*s++;
	buf[i] = 0;
	g_st->ConOut->OutputString(g_st->ConOut, buf);
}

static void putu(UINT64 v)
{
	char buf[24];
	int i = 23;

	buf[i] = 0;
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	putsa(buf + i);
}

static UINTN dp_len(EFI_DEVICE_PATH *p)
{
	return p->Length[0] | p->Length[1] << 8;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	static EFI_GUID vendor = {0x6d6c6576, 0x7420, 0x7365, {0x74, 0x76, 0x61, 0x72, 1, 2, 3, 4}};
	static const CHAR16 file[] = L"\\EFI\\VMLET\\VARS2.EFI";
	static const CHAR16 desc[] = L"vmlet";
	static const CHAR16 data[] = L"from-boot0007";
	EFI_RUNTIME_SERVICES *rt = st->RuntimeServices;
	UINT32 nv = EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS |
		    EFI_VARIABLE_RUNTIME_ACCESS;
	EFI_LOADED_IMAGE *li = NULL;
	EFI_DEVICE_PATH *dp = NULL, *p, *base;
	UINT32 count = 0;
	UINTN size = sizeof(count), pci = 0, dlen = 0;
	static UINT8 opt[512];

	g_st = st;
	st->BootServices->HandleProtocol(image, &LoadedImageProtocol, (void **)&li);
	if (li)
		st->BootServices->HandleProtocol(li->DeviceHandle, &DevicePathProtocol,
						 (void **)&dp);
	BOOLEAN shrt = li && li->LoadOptionsSize >= sizeof(L"short") - 2 &&
		       !CompareMem(li->LoadOptions, L"short", sizeof(L"short") - 2);

	base = dp;
	for (p = dp; p && p->Type != 0x7f; p = (EFI_DEVICE_PATH *)((UINT8 *)p + dp_len(p))) {
		if (p->Type == 1 && p->SubType == 1)
			pci = ((UINT8 *)p)[5];
		if (shrt && p->Type == 4 && base == dp)
			base = p, dlen = 0; /* from the media node on */
		dlen += dp_len(p);
	}
	putsa("vars.pci=");
	putu(pci);
	putsa("\r\nvars.options=");
	if (li && li->LoadOptionsSize >= 2)
		g_st->ConOut->OutputString(g_st->ConOut, li->LoadOptions);
	if (rt->GetVariable(L"VmletCount", &vendor, NULL, &size, &count))
		count = 0;
	putsa("\r\nvars.count=");
	putu(count);
	putsa("\r\n");
	count++;
	if (rt->SetVariable(L"VmletCount", &vendor, nv, sizeof(count), &count))
		putsa("vars: FAIL SetVariable\r\n");
	if (count == 1 && dp) {
		/* EFI_LOAD_OPTION: attributes, path length, description, path, data */
		UINTN flen = 4 + sizeof(file), n = 6, plen = dlen + flen + 4;
		UINT16 order = 7;

		opt[0] = 1; /* LOAD_OPTION_ACTIVE */
		opt[4] = (UINT8)plen, opt[5] = (UINT8)(plen >> 8);
		CopyMem(opt + n, (void *)desc, sizeof(desc)), n += sizeof(desc);
		CopyMem(opt + n, base, dlen), n += dlen;
		opt[n] = 4, opt[n + 1] = 4, opt[n + 2] = (UINT8)flen, opt[n + 3] = 0;
		CopyMem(opt + n + 4, (void *)file, sizeof(file)), n += flen;
		opt[n] = 0x7f, opt[n + 1] = 0xff, opt[n + 2] = 4, opt[n + 3] = 0, n += 4;
		CopyMem(opt + n, (void *)data, sizeof(data)), n += sizeof(data);
		if (rt->SetVariable(L"Boot0007", &gEfiGlobalVariableGuid, nv, n, opt) ||
		    rt->SetVariable(L"BootOrder", &gEfiGlobalVariableGuid, nv, 2, &order))
			putsa("vars: FAIL boot option\r\n");
	}
	if (li && li->LoadOptionsSize >= sizeof(L"reboot") - 2 &&
	    !CompareMem(li->LoadOptions, L"reboot", sizeof(L"reboot") - 2)) {
		putsa("vars: reboot\r\n");
		rt->ResetSystem(EfiResetCold, EFI_SUCCESS, 0, NULL);
	}
	putsa("vars: done\r\n");
	rt->ResetSystem(EfiResetShutdown, EFI_SUCCESS, 0, NULL);
	return EFI_SUCCESS;
}
