/* SPDX-License-Identifier: MIT */
/*
 * testapp_report.h - testapp.c's state and report: the system table and
 * boot services (g_st, g_bs), its own image handle (self), console output
 * without libefi's printing (puts16, putsa, putu), and check(): one line
 * "ok   NAME" or "FAIL NAME" (with a value when detail is given), the
 * failed names kept for the final line. Part of testapp.c's single
 * translation unit (build-efi.sh builds one file): include once.
 */
#ifndef VMLET_TESTAPP_REPORT_H
#define VMLET_TESTAPP_REPORT_H

#include <efi.h>
#include <efilib.h>

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

#endif /* VMLET_TESTAPP_REPORT_H */
