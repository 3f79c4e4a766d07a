/* SPDX-License-Identifier: MIT */
/*
 * cmd.h - vmlet's subcommands. Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand) and returns the process exit
 * status; only main() exits.
 *
 * Exit statuses shared by all commands (see README "Exit statuses"):
 *   0  success / guest powered off (ACPI S5 or the debug-exit port)
 *   1  resolution or validation error, failed to start, probe mismatch
 *   2  usage error
 *   3  the guest rebooted (i8042 reset, ACPI reset): vmlet does not
 *      restart it; its supervisor decides
 *   4  the guest crashed: triple fault, KVM internal error (e.g. an
 *      instruction the host cannot emulate), failed VM entry
 *   5  stopped by vmlet: SIGTERM/SIGINT pressed the power button and the
 *      guest had not powered off when terminationGracePeriodSeconds ran
 *      out (or a second SIGINT)
 */
#ifndef VMLET_CMD_H
#define VMLET_CMD_H

#define VMLET_EXIT_OK	   0
#define VMLET_EXIT_ERROR   1
#define VMLET_EXIT_USAGE   2
#define VMLET_EXIT_REBOOT  3
#define VMLET_EXIT_CRASH   4
#define VMLET_EXIT_STOPPED 5

int cmd_resolve(int argc, char **argv); /* vmm/cmd/cmd_resolve.c */
int cmd_run(int argc, char **argv);	/* vmm/cmd/cmd_run.c */
int cmd_probe(int argc, char **argv);	/* vmm/probe/cmd_probe.c */
int cmd_ctl(int argc, char **argv);	/* vmm/ctl/client.c */

#endif /* VMLET_CMD_H */
