/* SPDX-License-Identifier: MIT */
/* efi_test_sh.h - for the EFI firmware's host tests that build their
 * fixtures with Debian tools: run a shell command, report when it fails. */
#ifndef VMLET_EFI_TEST_SH_H
#define VMLET_EFI_TEST_SH_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* system(fmt...): its status; a failed command is printed. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int rc = system(cmd);

	if (rc)
		printf("  command failed (%d): %s\n", rc, cmd);
	return rc;
}

#endif /* VMLET_EFI_TEST_SH_H */
