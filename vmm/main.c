/* SPDX-License-Identifier: MIT */
/*
 * main.c - vmlet's entry point: pick the subcommand and return its status.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "vmm/cmd.h"

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

	/*
	 * One malloc arena for every thread. A thread arena's first trim makes
	 * glibc open /proc/sys/vm/overcommit_memory, which a confined thread
	 * may not do (SIGSYS). A warm-up thread that trimmed first did not
	 * hold: past glibc's arena limit (8 per CPU) it shares an old arena
	 * and never trims, and a vCPU thread did the first trim instead (the
	 * nested crash scenario: 2 vCPUs, 6 disks, rng and the balloon on a
	 * one-CPU host). With one arena there is no thread heap to trim. No
	 * hot path allocates (virtqueue and disk I/O use preallocated buffers).
	 */
	mallopt(M_ARENA_MAX, 1);
	if (argc < 2) {
		usage(stderr);
		return VMLET_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return VMLET_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "vmlet: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return VMLET_EXIT_USAGE;
}
