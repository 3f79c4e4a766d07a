/* SPDX-License-Identifier: MIT */
/*
 * cmd.h - vmlet's subcommands. Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand) and returns the process exit
 * status; only main() exits.
 *
 * Exit statuses shared by all commands (see README "Exit statuses"):
 *   0  success / guest powered off
 *   1  resolution or validation error, probe mismatch
 *   2  usage error
 */
#ifndef VMLET_CMD_H
#define VMLET_CMD_H

#define VMLET_EXIT_OK 0
#define VMLET_EXIT_ERROR 1
#define VMLET_EXIT_USAGE 2

int cmd_resolve(int argc, char **argv); /* spec/cli.c */
int cmd_run(int argc, char **argv);     /* vmm/cmd_run.c */
int cmd_probe(int argc, char **argv);   /* vmm/cmd_probe.c */
int cmd_ctl(int argc, char **argv);     /* vmm/ctl.c */

#endif /* VMLET_CMD_H */
