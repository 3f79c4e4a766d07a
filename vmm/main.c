/* SPDX-License-Identifier: MIT */
/*
 * main.c - vmlet's entry point: pick the subcommand and return its status.
 */
#include <stdio.h>
#include <string.h>

#include "vmm/cmd/cmd.h"
#include "vmm/sandbox/sandbox.h"
#include "vmm/util/timings.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
    {"resolve", cmd_resolve, "resolve KubeVirt manifests into a VMI / guest config"},
    {"run", cmd_run, "resolve and run a VM until it powers off or is stopped"},
    {"probe", cmd_probe, "run the built-in probe guest and compare what it sees"},
    {"ctl", cmd_ctl, "talk to a running vmlet over its control socket"},
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: vmlet COMMAND [ARGS...]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'vmlet COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
	size_t i;
	int ret;

	timings_start();
	sandbox_malloc_setup(); /* before any thread starts */
	if (argc < 2) {
		usage(stderr);
		return VMLET_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return VMLET_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			ret = commands[i].fn(argc - 1, argv + 1);
			timings_mark(TIMINGS_EXIT);
			timings_print(); /* --timings */
			return ret;
		}
	fprintf(stderr, "vmlet: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return VMLET_EXIT_USAGE;
}
