// SPDX-License-Identifier: MIT
/*
 * testapp.c - the EFI application tests/sh/efi_*.sh boot from a GPT + FAT
 * ESP under vmlet's firmware. It checks what an OS loader relies on: the
 * memory map, page and pool allocation, the protocol database, reading a
 * file through SimpleFileSystem, RNG, variables, time, timers and the
 * ACPI configuration table; prints one line per check and
 *     VMLET-EFI-TEST: PASS checks=N
 * (or FAIL with the failed names), then powers off through ResetSystem.
 * Runs at CPL0, emulated on our hosts: little work, no floating point,
 * no libefi printing (its %f path uses SSE).
 *
 * One translation unit (tests/efi/build-efi.sh builds one file): the
 * report and the protocol and configuration-table checks are in
 * testapp_report.h, testapp_protocols.h and testapp_tables.h.
 */
#include <efi.h>
#include <efilib.h>

#include "testapp_report.h"
#include "testapp_protocols.h"
#include "testapp_tables.h"

#define DATA_SIZE 16384u

static EFI_MEMORY_DESCRIPTOR *get_map(UINTN *n, UINTN *dsz, UINTN *key)
{
	UINTN size = 0;
	UINT32 ver;
	EFI_MEMORY_DESCRIPTOR *map = NULL;

	if (g_bs->GetMemoryMap(&size, NULL, key, dsz, &ver) != EFI_BUFFER_TOO_SMALL)
		return NULL;
	size += 4 * *dsz;
	if (g_bs->AllocatePool(EfiLoaderData, size, (void **)&map))
		return NULL;
	if (g_bs->GetMemoryMap(&size, map, key, dsz, &ver) || ver != 1) {
		g_bs->FreePool(map);
		return NULL;
	}
	*n = size / *dsz;
	return map;
}

#define DESC(m, i, sz) ((EFI_MEMORY_DESCRIPTOR *)((UINT8 *)(m) + (i) * (sz)))

static UINT32 type_at(EFI_MEMORY_DESCRIPTOR *m, UINTN n, UINTN dsz, UINT64 addr)
{
	for (UINTN i = 0; i < n; i++) {
		EFI_MEMORY_DESCRIPTOR *d = DESC(m, i, dsz);

		if (addr >= d->PhysicalStart && addr < d->PhysicalStart + d->NumberOfPages * 4096)
			return d->Type;
	}
	return 0xffffffff;
}

static void test_memory(EFI_LOADED_IMAGE *li)
{
	UINTN n = 0, dsz = 0, key = 0, n2, key2;
	EFI_MEMORY_DESCRIPTOR *m = get_map(&n, &dsz, &key), *m2;
	UINT64 conv = 0;
	BOOLEAN sorted = TRUE;
	EFI_PHYSICAL_ADDRESS pages;
	void *pool = NULL;

	check(L"memmap.get", m != NULL && dsz >= sizeof(EFI_MEMORY_DESCRIPTOR), "descriptors", n);
	if (!m)
		return;
	for (UINTN i = 0; i < n; i++) {
		EFI_MEMORY_DESCRIPTOR *d = DESC(m, i, dsz);

		if (d->Type == EfiConventionalMemory)
			conv += d->NumberOfPages * 4096;
		if (i &&
		    DESC(m, i - 1, dsz)->PhysicalStart + DESC(m, i - 1, dsz)->NumberOfPages * 4096 >
			d->PhysicalStart)
			sorted = FALSE;
	}
	check(L"memmap.sorted", sorted, NULL, 0);
	check(L"memmap.conventional", conv >= (16u << 20), "MiB", conv >> 20);
	check(L"memmap.self", type_at(m, n, dsz, (UINT64)li->ImageBase) == EfiLoaderCode, NULL, 0);
	g_bs->FreePool(m);

	check(L"alloc.pages",
	      g_bs->AllocatePages(AllocateAnyPages, EfiLoaderData, 3, &pages) == EFI_SUCCESS, NULL,
	      0);
	check(L"alloc.pool", g_bs->AllocatePool(EfiBootServicesData, 100, &pool) == EFI_SUCCESS,
	      NULL, 0);
	m2 = get_map(&n2, &dsz, &key2);
	check(L"memmap.key-changes", m2 && key2 != key, NULL, 0);
	if (m2) {
		check(L"memmap.allocated",
		      type_at(m2, n2, dsz, pages) == EfiLoaderData &&
			  type_at(m2, n2, dsz, pages + 8191) == EfiLoaderData,
		      NULL, 0);
		g_bs->FreePool(m2);
	}
	check(L"free.pages", g_bs->FreePages(pages, 3) == EFI_SUCCESS, NULL, 0);
	check(L"free.pages-twice", g_bs->FreePages(pages, 3) == EFI_NOT_FOUND, NULL, 0);
	check(L"free.pool", g_bs->FreePool(pool) == EFI_SUCCESS, NULL, 0);
}

static EFI_FILE_HANDLE open_volume(EFI_LOADED_IMAGE *li)
{
	EFI_FILE_IO_INTERFACE *fs = NULL;
	EFI_FILE_HANDLE root = NULL;

	if (g_bs->HandleProtocol(li->DeviceHandle, &FileSystemProtocol, (void **)&fs) || !fs)
		return NULL;
	if (fs->OpenVolume(fs, &root))
		return NULL;
	return root;
}

static void test_files(EFI_LOADED_IMAGE *li)
{
	EFI_FILE_HANDLE root = open_volume(li), f = NULL, dir = NULL;
	static UINT8 buf[DATA_SIZE + 512];
	UINTN size = sizeof(buf);
	UINT32 sum = 0, want = 0;
	UINT8 infobuf[512];
	EFI_FILE_INFO *info = (EFI_FILE_INFO *)infobuf;

	check(L"fs.open-volume", root != NULL, NULL, 0);
	if (!root)
		return;
	check(L"fs.open", root->Open(root, &f, L"\\test\\data.bin", EFI_FILE_MODE_READ, 0) == 0,
	      NULL, 0);
	if (f) {
		EFI_STATUS st = f->Read(f, &size, buf);

		check(L"fs.read", st == 0 && size == DATA_SIZE, "bytes", size);
		for (UINTN i = 0; i < DATA_SIZE; i++) {
			sum = sum * 31 + buf[i];
			want = want * 31 + (UINT8)(i * 7 + 3);
		}
		check(L"fs.contents", sum == want, NULL, 0);
		size = sizeof(infobuf);
		check(L"fs.info",
		      f->GetInfo(f, &GenericFileInfo, &size, info) == 0 &&
			  info->FileSize == DATA_SIZE,
		      NULL, 0);
		f->Close(f);
	}
	check(L"fs.write-protected",
	      root->Open(root, &f, L"\\new.txt",
			 EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE | EFI_FILE_MODE_CREATE,
			 0) == EFI_WRITE_PROTECTED,
	      NULL, 0);
	check(L"fs.not-found",
	      root->Open(root, &f, L"\\test\\nothere", EFI_FILE_MODE_READ, 0) == EFI_NOT_FOUND,
	      NULL, 0);
	BOOLEAN seen_long = FALSE;
	UINTN entries = 0;

	if (root->Open(root, &dir, L"\\TEST", EFI_FILE_MODE_READ, 0) == 0) {
		for (;;) {
			size = sizeof(infobuf);
			if (dir->Read(dir, &size, info) || !size)
				break;
			entries++;
			const CHAR16 *want_name = L"A long file name.txt";
			UINTN k = 0;

			while (info->FileName[k] && info->FileName[k] == want_name[k])
				k++;
			if (!info->FileName[k] && !want_name[k])
				seen_long = TRUE;
		}
		dir->Close(dir);
	}
	check(L"fs.readdir-long-name", seen_long, "entries", entries);
	root->Close(root);
}

static void test_rng(void)
{
	EFI_GUID rng_guid = EFI_RNG_PROTOCOL_GUID;
	EFI_RNG_PROTOCOL *rng = NULL;
	UINT8 a[32], b[32];
	BOOLEAN differ = FALSE, nonzero = FALSE;

	if (g_bs->LocateProtocol(&rng_guid, NULL, (void **)&rng) || !rng) {
		check(L"rng.protocol", FALSE, NULL, 0);
		return;
	}
	check(L"rng.get", rng->GetRNG(rng, NULL, 32, a) == 0 && rng->GetRNG(rng, NULL, 32, b) == 0,
	      NULL, 0);
	for (int i = 0; i < 32; i++) {
		differ |= a[i] != b[i];
		nonzero |= a[i] != 0;
	}
	check(L"rng.random", differ && nonzero, NULL, 0);
}

static void test_variables(void)
{
	static EFI_GUID vendor = {0x6d6c6576, 0x7420, 0x7365, {0x74, 0x61, 0x70, 0x70, 1, 2, 3, 4}};
	EFI_RUNTIME_SERVICES *rt = g_st->RuntimeServices;
	UINT32 attr = EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS, got_attr = 0;
	char data[] = "vmlet", out[16];
	UINTN size = sizeof(out);
	UINT8 sb = 0xff;
	CHAR16 name[64];
	EFI_GUID g;
	BOOLEAN found = FALSE;

	check(L"var.set", rt->SetVariable(L"VmletTest", &vendor, attr, sizeof(data), data) == 0,
	      NULL, 0);
	check(L"var.get",
	      rt->GetVariable(L"VmletTest", &vendor, &got_attr, &size, out) == 0 &&
		  size == sizeof(data) && got_attr == attr && out[0] == 'v' && out[4] == 't',
	      NULL, 0);
	size = 2;
	check(L"var.too-small",
	      rt->GetVariable(L"VmletTest", &vendor, NULL, &size, out) == EFI_BUFFER_TOO_SMALL &&
		  size == sizeof(data),
	      NULL, 0);
	name[0] = 0;
	for (int i = 0; i < 64; i++) {
		size = sizeof(name);
		if (rt->GetNextVariableName(&size, name, &g))
			break;
		if (guid_eq(&g, &vendor))
			found = TRUE;
	}
	check(L"var.enumerate", found, NULL, 0);
	check(L"var.delete", rt->SetVariable(L"VmletTest", &vendor, attr, 0, NULL) == 0, NULL, 0);
	size = sizeof(out);
	check(L"var.deleted",
	      rt->GetVariable(L"VmletTest", &vendor, NULL, &size, out) == EFI_NOT_FOUND, NULL, 0);
	size = 1;
	check(L"var.secureboot-off",
	      rt->GetVariable(L"SecureBoot", &gEfiGlobalVariableGuid, NULL, &size, &sb) == 0 &&
		  sb == 0,
	      NULL, 0);
}

static void test_time_and_events(BOOLEAN want_rtc)
{
	EFI_TIME t;
	EFI_STATUS st = g_st->RuntimeServices->GetTime(&t, NULL);
	EFI_EVENT ev = NULL;
	UINTN index = 9;

	if (want_rtc)
		check(L"time.get", st == 0 && t.Year >= 2024 && t.Month >= 1 && t.Month <= 12,
		      "year", st == 0 ? t.Year : 0);
	else
		check(L"time.get-or-no-rtc", st == 0 || st == EFI_DEVICE_ERROR, NULL, 0);
	check(L"event.create", g_bs->CreateEvent(EVT_TIMER, 0, NULL, NULL, &ev) == 0, NULL, 0);
	check(L"event.not-ready", g_bs->CheckEvent(ev) == EFI_NOT_READY, NULL, 0);
	check(L"event.timer", g_bs->SetTimer(ev, TimerRelative, 20000) == 0, NULL, 0); /* 2 ms */
	check(L"event.wait", g_bs->WaitForEvent(1, &ev, &index) == 0 && index == 0, NULL, 0);
	check(L"event.close", g_bs->CloseEvent(ev) == 0, NULL, 0);
	check(L"stall", g_bs->Stall(100) == 0, NULL, 0);
	/* not implemented: EFI_UNSUPPORTED, logged by name (efi_vmlet.sh) */
	st = g_st->RuntimeServices->GetTime(&t, NULL);
	check(L"time.set-unsupported",
	      st != 0 || g_st->RuntimeServices->SetTime(&t) == EFI_UNSUPPORTED, NULL, 0);
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	EFI_LOADED_IMAGE *li = NULL;
	BOOLEAN want_rtc = FALSE;

	g_st = systab;
	g_bs = systab->BootServices;
	self = image;
	putsa("VMLET-EFI-TEST: start\r\n");
	if (g_bs->HandleProtocol(image, &LoadedImageProtocol, (void **)&li) || !li) {
		putsa("VMLET-EFI-TEST: FAIL no LoadedImage\r\n");
		g_st->RuntimeServices->ResetSystem(EfiResetShutdown, EFI_ABORTED, 0, NULL);
	}
	/* load options "rtc": the VMM has a CMOS RTC, so GetTime must work */
	if (li->LoadOptionsSize >= 6) {
		const CHAR16 *o = li->LoadOptions;

		want_rtc = o[0] == 'r' && o[1] == 't' && o[2] == 'c';
	}
	test_memory(li);
	test_protocols(li);
	test_files(li);
	test_rng();
	test_variables();
	test_time_and_events(want_rtc);
	test_config_tables();
	test_initrd();
	if (n_failed) {
		putsa("VMLET-EFI-TEST: FAIL");
		puts16(failed);
		putsa("\r\n");
	} else {
		putsa("VMLET-EFI-TEST: PASS checks=");
		putu((UINT64)n_checks, 10);
		putsa("\r\n");
	}
	g_st->RuntimeServices->ResetSystem(EfiResetShutdown, n_failed ? EFI_ABORTED : 0, 0, NULL);
	return EFI_SUCCESS;
}
