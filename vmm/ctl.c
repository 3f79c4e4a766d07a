/* SPDX-License-Identifier: MIT */
/* Placeholder until this command lands: it says so and fails. */
#include <stdio.h>

#include "vmm/cmd.h"

int cmd_ctl(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "vmlet: '%s' is not implemented yet\n", argv[0]);
	return VMLET_EXIT_ERROR;
}
