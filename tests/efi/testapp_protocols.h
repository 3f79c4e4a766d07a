/* SPDX-License-Identifier: MIT */
/*
 * testapp_protocols.h - testapp.c's checks of the protocol database: the
 * boot device's path (printed as boot.dp= for the shell tests), Block I/O
 * handles, LocateProtocol, the legacy console control protocol and simple
 * text input ex that shim and GRUB use, no GOP, installing and
 * uninstalling several interfaces at once. Needs testapp_report.h; part
 * of testapp.c's single translation unit: include once.
 */
#ifndef VMLET_TESTAPP_PROTOCOLS_H
#define VMLET_TESTAPP_PROTOCOLS_H

#include <efi.h>
#include <efilib.h>

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

#endif /* VMLET_TESTAPP_PROTOCOLS_H */
