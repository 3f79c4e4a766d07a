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
 */
#include <efi.h>
#include <efilib.h>

#define DATA_SIZE 16384u

static EFI_SYSTEM_TABLE *g_st;
static EFI_BOOT_SERVICES *g_bs;
static EFI_HANDLE self;
static int n_checks, n_failed;
static CHAR16 failed[512];

static void puts16(const CHAR16 *s)
{
	g_st->ConOut->OutputString(g_st->ConOut, (CHAR16 *)s);
}

static void putsa(const char *s)
{
	CHAR16 buf[128];
	UINTN i = 0;

	while (*s) {
		buf[i++] = (CHAR16)(unsigned char)*s++;
		if (i == 127 || !*s) {
			buf[i] = 0;
			puts16(buf);
			i = 0;
		}
	}
}

static void putu(UINT64 v, int base)
{
	char buf[24];
	int i = 23;

	buf[i] = 0;
	do {
		buf[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	putsa(buf + i);
}

static void append16(CHAR16 *dst, UINTN cap, const CHAR16 *s)
{
	UINTN n = 0;

	while (dst[n])
		n++;
	while (*s && n + 1 < cap)
		dst[n++] = *s++;
	dst[n] = 0;
}

static void check(const CHAR16 *name, BOOLEAN ok, const char *detail, UINT64 value)
{
	n_checks++;
	puts16(ok ? L"ok   " : L"FAIL ");
	puts16(name);
	if (detail) {
		putsa(" ");
		putsa(detail);
		putsa("=");
		putu(value, 10);
	}
	putsa("\r\n");
	if (!ok) {
		n_failed++;
		append16(failed, 512, L" ");
		append16(failed, 512, name);
	}
}

static BOOLEAN guid_eq(const EFI_GUID *a, const EFI_GUID *b)
{
	const UINT8 *x = (const UINT8 *)a, *y = (const UINT8 *)b;

	for (int i = 0; i < 16; i++)
		if (x[i] != y[i])
			return FALSE;
	return TRUE;
}

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

/* the legacy console control protocol (shim and GRUB look for it): a text
 * console without graphics; text mode accepted, graphics refused */
struct console_control {
	EFI_STATUS(EFIAPI *get_mode)
	(struct console_control *self, UINT32 *mode, BOOLEAN *gop, BOOLEAN *locked);
	EFI_STATUS(EFIAPI *set_mode)(struct console_control *self, UINT32 mode);
	EFI_STATUS(EFIAPI *lock_std_in)(struct console_control *self, CHAR16 *password);
};

static void test_console_control(void)
{
	static EFI_GUID guid = {
	    0xf42f7782, 0x012e, 0x4c12, {0x99, 0x56, 0x49, 0xf9, 0x43, 0x04, 0xf7, 0x21}};
	struct console_control *cc = NULL;
	UINT32 mode = 7;
	BOOLEAN gop = 1, locked = 1;

	if (g_bs->LocateProtocol(&guid, NULL, (void **)&cc) || !cc) {
		check(L"console-control.present", FALSE, NULL, 0);
		return;
	}
	check(L"console-control.get-mode",
	      cc->get_mode(cc, &mode, &gop, &locked) == EFI_SUCCESS && mode == 0 && !gop && !locked,
	      NULL, 0);
	check(L"console-control.get-mode-null",
	      cc->get_mode(cc, &mode, NULL, NULL) == EFI_SUCCESS && mode == 0, NULL, 0);
	check(L"console-control.set-text", cc->set_mode(cc, 0) == EFI_SUCCESS, NULL, 0);
	check(L"console-control.set-graphics",
	      cc->set_mode(cc, 1) == EFI_UNSUPPORTED &&
		  cc->set_mode(cc, 9) == EFI_INVALID_PARAMETER,
	      NULL, 0);
}

/* simple text input ex on the console (GRUB opens it on ConIn): the same
 * keys with a valid, empty shift state; no key waiting here; no toggle
 * state to set, no key notifications */
struct key_data {
	EFI_INPUT_KEY key;
	UINT32 shift;
	UINT8 toggle;
};

struct text_in_ex {
	EFI_STATUS(EFIAPI *reset)(struct text_in_ex *self, BOOLEAN ext);
	EFI_STATUS(EFIAPI *read_key)(struct text_in_ex *self, struct key_data *key);
	EFI_EVENT wait_for_key;
	EFI_STATUS(EFIAPI *set_state)(struct text_in_ex *self, UINT8 *toggle);
	EFI_STATUS(EFIAPI *register_notify)
	(struct text_in_ex *self, struct key_data *key, void *fn, void **handle);
	EFI_STATUS(EFIAPI *unregister_notify)(struct text_in_ex *self, void *handle);
};

static void test_text_in_ex(void)
{
	static EFI_GUID guid = {
	    0xdd9e7534, 0x7762, 0x4698, {0x8c, 0x14, 0xf5, 0x85, 0x17, 0xa6, 0x25, 0xaa}};
	struct text_in_ex *x = NULL;
	struct key_data k = {{1, 1}, 1, 1};
	UINT8 toggle = 0;

	if (g_bs->OpenProtocol(g_st->ConsoleInHandle, &guid, (void **)&x, self, NULL,
			       EFI_OPEN_PROTOCOL_GET_PROTOCOL) ||
	    !x) {
		check(L"text-in-ex.present", FALSE, NULL, 0);
		return;
	}
	check(L"text-in-ex.reset", x->reset(x, FALSE) == EFI_SUCCESS, NULL, 0);
	check(L"text-in-ex.no-key",
	      x->read_key(x, &k) == EFI_NOT_READY && k.shift == 0x80000000u && k.toggle == 0x80,
	      NULL, 0);
	check(L"text-in-ex.wait-event", g_bs->CheckEvent(x->wait_for_key) == EFI_NOT_READY, NULL,
	      0);
	check(L"text-in-ex.set-state", x->set_state(x, &toggle) == EFI_UNSUPPORTED, NULL, 0);
	check(L"text-in-ex.notify",
	      x->register_notify(x, NULL, NULL, NULL) == EFI_INVALID_PARAMETER, NULL, 0);
}

/* "boot.dp=Pci(3,0)/Sata(0)/HD(1)" (or .../CDROM(entry)): the device the app was loaded from,
 * the nodes the tests tell disks apart by (tests/sh/efi_sata.sh); other
 * nodes as N(type,subtype). */
static void print_dp(const EFI_DEVICE_PATH *dp)
{
	const UINT8 *n = (const UINT8 *)dp;

	putsa("boot.dp=");
	for (int k = 0; k < 16 && n[0] != 0x7f; k++) {
		UINTN len = n[2] | (UINTN)n[3] << 8;

		if (len < 4)
			break;
		putsa(k ? "/" : "");
		if (n[0] == 1 && n[1] == 1 && len >= 6) {
			putsa("Pci("), putu(n[5], 16), putsa(","), putu(n[4], 16);
		} else if (n[0] == 3 && n[1] == 0x12 && len >= 10) {
			putsa("Sata("), putu(n[4] | (UINT64)n[5] << 8, 10);
		} else if (n[0] == 4 && n[1] == 1 && len >= 8) {
			putsa("HD("), putu(n[4], 10);
		} else if (n[0] == 4 && n[1] == 2 && len >= 8) {
			putsa("CDROM("), putu(n[4], 10);
		} else {
			putsa("N("), putu(n[0], 10), putsa(","), putu(n[1], 10);
		}
		putsa(")");
		n += len;
	}
	putsa("\r\n");
}

static void test_protocols(EFI_LOADED_IMAGE *li)
{
	EFI_DEVICE_PATH *dp = NULL;
	EFI_HANDLE *hs = NULL;
	UINTN n = 0;
	void *p = NULL;

	check(L"proto.device-path",
	      g_bs->HandleProtocol(li->DeviceHandle, &DevicePathProtocol, (void **)&dp) ==
		      EFI_SUCCESS &&
		  dp,
	      NULL, 0);
	if (dp)
		print_dp(dp);
	EFI_STATUS st = g_bs->LocateHandleBuffer(ByProtocol, &BlockIoProtocol, NULL, &n, &hs);

	check(L"proto.blockio-handles", st == EFI_SUCCESS && n >= 2, "handles", n);
	if (hs)
		g_bs->FreePool(hs);
	check(L"proto.locate-conout",
	      g_bs->LocateProtocol(&TextOutProtocol, NULL, &p) == EFI_SUCCESS && p == g_st->ConOut,
	      NULL, 0);
	check(L"proto.file-path", li->FilePath != NULL, NULL, 0);
	test_console_control();
	test_text_in_ex();
	/* no graphics: the firmware logs the search (tests/sh/efi_vmlet.sh) */
	static EFI_GUID gop = {
	    0x9042a9de, 0x23dc, 0x4a38, {0x96, 0xfb, 0x7a, 0xde, 0xd0, 0x80, 0x51, 0x6a}};

	n = 0;
	hs = NULL;
	check(L"proto.no-gop",
	      g_bs->LocateHandleBuffer(ByProtocol, &gop, NULL, &n, &hs) == EFI_NOT_FOUND, NULL, 0);
	check(L"proto.unknown", g_bs->HandleProtocol(self, &BlockIoProtocol, &p) == EFI_UNSUPPORTED,
	      NULL, 0);

	static EFI_GUID g1 = {0x6d6c6576, 1, 2, {3, 4, 5, 6, 7, 8, 9, 1}};
	static EFI_GUID g2 = {0x6d6c6576, 1, 2, {3, 4, 5, 6, 7, 8, 9, 2}};
	static int x, y;
	EFI_HANDLE h = NULL;

	check(L"proto.install-multiple",
	      g_bs->InstallMultipleProtocolInterfaces(&h, &g1, &x, &g2, &y, NULL) == 0 &&
		  g_bs->HandleProtocol(h, &g2, &p) == 0 && p == &y,
	      NULL, 0);
	check(L"proto.uninstall-multiple",
	      g_bs->UninstallMultipleProtocolInterfaces(h, &g1, &x, &g2, &y, NULL) == 0 &&
		  g_bs->LocateProtocol(&g1, NULL, &p) == EFI_NOT_FOUND,
	      NULL, 0);
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
