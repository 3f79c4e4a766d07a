/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `vmlet run`: resolve the manifests and run the VM until it
 * powers off, reboots, crashes or is stopped; the exit status says which
 * (vmm/cmd.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "vmm/cmd.h"
#include "vmm/cmd_vm.h"
#include "vmm/ctl.h"
#include "vmm/vm_config.h"

static void run_usage(FILE *f)
{
	fprintf(f, "usage: vmlet run [-f FILE|DIR ...] [--vm NAME] [--kernel K] [--initrd I]\n"
		   "                 [--cmdline C] [--console stdio|file:PATH|none]\n"
		   "                 [--cpu-vendor intel|amd] [--smp S,C,T] [--memory SIZE]\n"
		   "                 [--grace-period SECONDS] [--log-format json|text]\n"
		   "                 [--log-level debug|info|warning|error]\n"
		   "                 [--volume NAME=PATH ...] [--disk-root DIR]\n"
		   "                 [--tap IFACE=TAP ...]\n"
		   "\n"
		   "Runs the VM the manifests describe until it powers off. SIGTERM or SIGINT\n"
		   "presses the ACPI power button; after terminationGracePeriodSeconds the VM\n"
		   "is stopped (--grace-period overrides it). Exit status: 0 powered off, 1 failed "
		   "to start, 2 usage,\n"
		   "3 rebooted, 4 crashed, 5 stopped after the grace period.\n"
		   "\n" SANDBOX_USAGE CTL_USAGE);
}

static const struct option run_options[] = {
    {"file", required_argument, NULL, 'f'},
    {"vm", required_argument, NULL, CMD_OPT_VM},
    {"volume", required_argument, NULL, CMD_OPT_VOLUME},
    {"disk-root", required_argument, NULL, CMD_OPT_DISK_ROOT},
    {"tap", required_argument, NULL, CMD_OPT_TAP},
    {"kernel", required_argument, NULL, CMD_OPT_KERNEL},
    {"initrd", required_argument, NULL, CMD_OPT_INITRD},
    {"cmdline", required_argument, NULL, CMD_OPT_CMDLINE},
    {"console", required_argument, NULL, CMD_OPT_CONSOLE},
    {"cpu-vendor", required_argument, NULL, CMD_OPT_VENDOR},
    {"log-format", required_argument, NULL, CMD_OPT_LOG_FORMAT},
    {"smp", required_argument, NULL, CMD_OPT_SMP},
    {"memory", required_argument, NULL, CMD_OPT_MEMORY},
    {"grace-period", required_argument, NULL, CMD_OPT_GRACE},
    {"log-level", required_argument, NULL, CMD_OPT_LOG_LEVEL},
    SANDBOX_LONGOPTS,
    CTL_LONGOPTS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cmd_run(int argc, char **argv)
{
	struct cmd_vm_opts o;
	struct vm_config cfg;
	int c, ret;

	memset(&o, 0, sizeof(o));
	o.console.kind = VM_CONSOLE_STDIO;
	o.log_format = LOG_FORMAT_JSON;
	o.log_level = LOG_INFO;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", run_options, NULL)) != -1) {
		if (c == 'h') {
			run_usage(stdout);
			return VMLET_EXIT_OK;
		}
		if (cmd_vm_option(&o, c, optarg)) {
			run_usage(stderr);
			return VMLET_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vmlet run: unexpected argument '%s'\n", argv[optind]);
		run_usage(stderr);
		return VMLET_EXIT_USAGE;
	}
	log_setup(o.log_format, o.log_level, "vmlet", NULL);
	if (cmd_vm_config(&o, &cfg))
		return VMLET_EXIT_ERROR;
	log_setup(o.log_format, o.log_level, "vmlet", cfg.name);
	ret = cmd_vm_run(&cfg, &o, NULL, 0, NULL);
	log_setup(o.log_format, o.log_level, "vmlet", NULL);
	vm_config_release(&cfg);
	return ret < 0 ? VMLET_EXIT_ERROR : cmd_vm_exit_status(ret);
}
