/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `vmlet run`: resolve the manifests and run the VM under its
 * runStrategy (vmm/vm/lifecycle.h) until it ends for good; the exit status
 * says how the last run ended (vmm/cmd/cmd.h).
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "vmm/cmd/cmd.h"
#include "vmm/cmd/cmd_vm.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/ctl/creds.h"
#include "vmm/ctl/dmetrics.h"
#include "vmm/ctl/ctl.h"
#include "vmm/sandbox/jail.h"
#include "vmm/vm/lifecycle.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"
#include "vmm/util/sock_addr.h"
#include "vmm/sandbox/sandbox.h"
#include "vmm/vm_config.h"

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: vmlet run [-f FILE|DIR ...] [--vm NAME] [--kernel K] [--initrd I]\n"
		"                 [--cmdline C] [--console stdio|file:PATH|none]\n"
		"                 [--console-max-size SIZE]\n"
		"                 [--cpu-vendor intel|amd] [--smp S,C,T] [--memory SIZE]\n"
		"                 [--grace-period SECONDS] [--log-format json|text]\n"
		"                 [--log-level debug|info|warning|error]\n"
		"                 [--volume NAME=PATH ...] [--disk-root DIR] [--image-store DIR]\n"
		"                 [--run-strategy Always|RerunOnFailure|Once|Manual|Halted]\n"
		"                 [--jail DIR] [--firmware PVH-ELF] [--efi-vars FILE]\n"
		"                 [--tap IFACE=TAP ...] [--channel-dir DIR]\n"
		"                 [--secret-dir DIR] [--restore DIR] [--timings]\n"
		"                 [--incoming unix:PATH|tcp:HOST:PORT\n"
		"                  [--incoming-from ADDR] [--incoming-timeout SECONDS]]\n"
		"                 [--dirty-ring auto|off|ENTRIES]\n"
		"\n"
		"Runs the VM the manifests describe under its runStrategy: Always restarts\n"
		"the guest after power-off, reboot or crash, RerunOnFailure after reboot or\n"
		"crash, Once/Manual (and a seed-era VMI) run it once, Halted does not start\n"
		"it (--run-strategy overrides the manifest's). SIGTERM or SIGINT presses the\n"
		"ACPI power button; after\n"
		"terminationGracePeriodSeconds the VM is stopped (--grace-period overrides\n"
		"it). Exit status: 0 powered off (or stopped cleanly, or Halted), 1 failed\n"
		"to start, 2 usage, 3 rebooted, 4 crashed, 5 stopped after the grace period.\n"
		"The guest-agent channel (virtio-serial port org.qemu.guest_agent.0) is the\n"
		"socket DIR/NAME with --channel-dir DIR, else API_SOCKET.NAME; with\n"
		"autoattachVSOCK the vsock's socket (CONNECT <port>, docs/devices.md) is\n"
		"DIR/vsock.sock, else API_SOCKET.vsock.sock.\n"
		"accessCredentials read Secret NAME from the files DIR/NAME/KEY of\n"
		"--secret-dir DIR.\n"
		"--restore DIR continues the guest from a snapshot (vmlet ctl SOCKET snapshot\n"
		"DIR) instead of booting it; the manifests and options must give the same\n"
		"config as when it was taken (docs/snapshot.md). Without -f it resolves the\n"
		"manifests the snapshot recorded (host files only under this command line's\n"
		"roots or from --volume); the options are given again.\n"
		"--incoming unix:PATH|tcp:HOST:PORT waits there for a guest that `vmlet ctl\n"
		"SOCKET migrate` sends to it (live migration, docs/migration.md) and runs it;\n"
		"same rule. HOST: a numeric IPv4 address or [IPv6] (no name is resolved);\n"
		"TCP is neither authenticated nor encrypted: bind the pod's own address.\n"
		"--incoming-from ADDR (tcp: only; numeric IPv4, or IPv6 with or without\n"
		"brackets) takes the source only from ADDR: a connection from any other\n"
		"address is closed unread and the wait goes on. Without it the first peer\n"
		"to connect is the source (a warning says so).\n"
		"Once the source connected it has --incoming-timeout SECONDS to deliver the\n"
		"guest (default 150 per GiB of guest memory) and may not fall silent for 60 s.\n"
		"--dirty-ring auto|off|ENTRIES: KVM's dirty ring of ENTRIES (a power of two,\n"
		"1024..65536) per vCPU for a live migration's dirty pages; auto (default):\n"
		"4096 where the host's KVM has it, else its dirty bitmap; off: the bitmap.\n"
		"--timings prints vmlet's phases on stderr when it ends, microseconds of\n"
		"CLOCK_MONOTONIC since exec: resolved, mapped, loaded, first_run, poweroff,\n"
		"exit (docs/performance.md).\n"
		"\n" SANDBOX_USAGE CTL_USAGE);
}

enum {
	RUN_OPT_STRATEGY = 0x1a0,
	RUN_OPT_JAIL,
	RUN_OPT_RESTORE,
	RUN_OPT_INCOMING,
	RUN_OPT_INCOMING_TIMEOUT,
	RUN_OPT_INCOMING_FROM
};

struct run_ctx {
	const struct vm_config *cfg;
	const struct cmd_vm_opts *o;
	const struct lifecycle *lc;
};

/* One guest run (vmm/vm/lifecycle.h): in this process, or in a worker. */
static enum lifecycle_end run_guest(void *p, unsigned int restarts)
{
	const struct run_ctx *r = p;
	struct cmd_vm_opts o = *r->o;
	int ret;

	ctl_vm_set_restarts(restarts);
	o.after_reboot = restarts && r->lc->last_end == LC_END_REBOOT;
	/* the variables of a VM without efi.persistent live as long as
	 * KubeVirt's VMI: through the guest's reboots, not a new start */
	if (r->o->efi_vars_volatile && restarts && r->lc->last_end != LC_END_REBOOT &&
	    ftruncate(r->o->efi_vars_fd, 0))
		return LC_END_FAILED;
	/* so does the state of a TPM without tpm.persistent (swtpm formats
	 * an empty file as a new TPM) */
	if (r->o->tpm_state_kept && restarts && r->lc->last_end != LC_END_REBOOT &&
	    ftruncate(r->o->tpm_state_fd, 0))
		return LC_END_FAILED;
	if (restarts) {
		log_info("run: starting the guest again (restart %u)", restarts);
		o.restore = NULL; /* a restart boots the guest afresh */
		o.incoming = NULL;
	}
	ret = cmd_vm_run(r->cfg, &o, NULL, 0, NULL);
	switch (ret) {
	case VM_EXIT_POWEROFF:
		return LC_END_POWEROFF;
	case VM_EXIT_REBOOT:
		return LC_END_REBOOT;
	case VM_EXIT_CRASH:
		return LC_END_CRASH;
	case VM_EXIT_HARD_STOP:
		return LC_END_STOPPED;
	default:
		return LC_END_FAILED;
	}
}

/* The helpers beside the guest, outside the sandboxed VMM, on the
 * channels' host sockets: the credential agent (vmm/ctl/creds.h) when the
 * VM has qemuGuestAgent credentials, the downward metrics server
 * (vmm/ctl/dmetrics.h) with devices.downwardMetrics. pid[i] 0 = none. */
static void run_helpers_start(const struct vm_config *cfg, const struct cmd_vm_opts *o,
			      pid_t pid[2])
{
	char *prefix = NULL, *chan = NULL;
	int r = 0;

	pid[0] = pid[1] = 0;
	if (cmd_vm_channel_prefix(o, &prefix) || !prefix) {
		if (cfg->downward_metrics)
			log_warn("run: devices.downwardMetrics: no channel socket (--api-socket or "
				 "--channel-dir): nothing answers the guest's requests");
		return;
	}
	if (ctl_creds_wanted(cfg) && o->secret_dir &&
	    asprintf(&chan, "%s%s", prefix, VM_CHANNEL_GUEST_AGENT) >= 0) {
		r = ctl_creds_start(cfg, o->secret_dir, chan, o->api_socket, &pid[0]);
		if (r)
			error_errno(r, "run: cannot start the credential agent");
		free(chan);
	}
	if (cfg->downward_metrics &&
	    asprintf(&chan, "%s%s", prefix, VM_CHANNEL_DOWNWARD_METRICS) >= 0) {
		r = ctl_dmetrics_start(cfg, chan, &pid[1]);
		if (r)
			error_errno(r, "run: cannot start the downward metrics server");
		free(chan);
	}
	free(prefix);
}

/* README "Exit statuses". */
static int run_exit_status(enum lifecycle_end end)
{
	static const int status[LC_END_COUNT] = {
	    [LC_END_POWEROFF] = VMLET_EXIT_OK,	[LC_END_REBOOT] = VMLET_EXIT_REBOOT,
	    [LC_END_CRASH] = VMLET_EXIT_CRASH,	[LC_END_STOPPED] = VMLET_EXIT_STOPPED,
	    [LC_END_FAILED] = VMLET_EXIT_ERROR,
	};

	return (unsigned int)end < LC_END_COUNT ? status[end] : VMLET_EXIT_ERROR;
}

/* An EFI VM without efi.persistent that vmlet may restart keeps its
 * variables in memory across restarts after a guest reboot (run_guest):
 * a memfd, as a VMI keeps its NVRAM through the guest's reboots. */
static int run_volatile_vars(const struct vm_config *cfg, const struct lifecycle *lc,
			     struct cmd_vm_opts *o)
{
	if (cfg->boot != VM_BOOT_EFI || cfg->efi_persistent || !lifecycle_may_restart(lc))
		return 0;
	o->efi_vars_fd = memfd_create("vmlet-efivars", MFD_CLOEXEC);
	if (o->efi_vars_fd < 0)
		return error_errno(-errno, "run: memfd for the EFI variables");
	o->efi_vars_volatile = true;
	return 0;
}

/* Likewise the state of a TPM without tpm.persistent (vmm/dev/tpm/): an
 * unnamed file (swtpm's file backend) kept through the guest's reboots. */
static int run_kept_tpm_state(const struct vm_config *cfg, const struct lifecycle *lc,
			      struct cmd_vm_opts *o)
{
	const char *tmp = getenv("TMPDIR");

	if (!cfg->tpm || cfg->tpm_persistent || !lifecycle_may_restart(lc))
		return 0;
	o->tpm_state_fd = file_tmp(tmp && *tmp ? tmp : "/tmp");
	if (o->tpm_state_fd < 0)
		return error_errno(o->tpm_state_fd, "run: a file for the TPM's state");
	o->tpm_state_kept = true;
	return 0;
}

static int run_with_strategy(const struct vm_config *cfg, const struct cmd_vm_opts *opts,
			     const char *override)
{
	struct cmd_vm_opts vopts = *opts, *o = &vopts;
	struct run_ctx ctx = {cfg, o, NULL};
	enum lifecycle_strategy strategy;
	struct jail_cgroup cg = {0};
	enum lifecycle_end end;
	struct lifecycle lc;
	struct termios tty;
	pid_t helpers[2];
	bool on_tty;

	if (lifecycle_parse(override ? override : cfg->run_strategy, &strategy)) {
		error(
		    "run: unknown runStrategy '%s' (Always, RerunOnFailure, Once, Manual, Halted)",
		    cfg->run_strategy);
		return VMLET_EXIT_ERROR;
	}
	lifecycle_init(&lc, strategy);
	ctx.lc = &lc;
	if (run_volatile_vars(cfg, &lc, o) || run_kept_tpm_state(cfg, &lc, o))
		return VMLET_EXIT_ERROR;
	if (o->sandbox.jail_dir) {
		/* each run is PID 1 of its own namespaces (vmm/sandbox/jail.h) */
		lc.clone_flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;
		lc.always_fork = true;
		jail_setup_limits(&cg, cfg);
	}
	/* The console on a terminal: the guest runs in a worker, and this
	 * process (never confined) gives the terminal its modes back however
	 * the worker ended, killed by a signal included. */
	on_tty = o->console.kind == VM_CONSOLE_STDIO && isatty(STDIN_FILENO) &&
		 !tcgetattr(STDIN_FILENO, &tty);
	if (on_tty)
		lc.always_fork = true;
	if (lifecycle_may_restart(&lc))
		log_info("run: runStrategy %s: the guest is restarted in-process after %s",
			 lifecycle_strategy_name(strategy),
			 strategy == LC_ALWAYS ? "power-off, reboot or crash" : "reboot or crash");
	run_helpers_start(cfg, o, helpers);
	end = cmd_vm_supervise(o, &lc, run_guest, &ctx);
	ctl_creds_stop(helpers[0]);
	ctl_creds_stop(helpers[1]);
	cmd_vm_remove_channels(o, cfg);
	if (on_tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &tty);
	jail_cgroup_leave(&cg);
	if (o->efi_vars_volatile)
		close(o->efi_vars_fd);
	if (o->tpm_state_kept)
		close(o->tpm_state_fd);
	/* a worker killed by a signal (SIGSYS: a seccomp violation) ends
	 * vmlet with the status a shell shows for that signal */
	if (end == LC_END_FAILED && lc.worker_signal)
		return 128 + lc.worker_signal;
	return run_exit_status(end);
}

/* --jail DIR: an absolute directory other than / (vmm/sandbox/jail.h). */
static int run_jail_option(struct cmd_vm_opts *o, const char *dir)
{
	struct stat st;

	if (dir[0] != '/' || !strcmp(dir, "/") || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"vmlet run: --jail takes an existing absolute directory other than "
			"/, not '%s'\n",
			dir);
		return -1;
	}
	o->sandbox.jail_dir = dir;
	return 0;
}

static const struct option run_options[] = {
    CMD_VM_LONGOPTS,
    {"kernel", required_argument, NULL, CMD_OPT_KERNEL},
    {"initrd", required_argument, NULL, CMD_OPT_INITRD},
    {"firmware", required_argument, NULL, CMD_OPT_FIRMWARE},
    {"efi-vars", required_argument, NULL, CMD_OPT_EFI_VARS},
    {"console", required_argument, NULL, CMD_OPT_CONSOLE},
    {"console-max-size", required_argument, NULL, CMD_OPT_CONSOLE_MAX},
    {"grace-period", required_argument, NULL, CMD_OPT_GRACE},
    {"run-strategy", required_argument, NULL, RUN_OPT_STRATEGY},
    {"jail", required_argument, NULL, RUN_OPT_JAIL},
    {"channel-dir", required_argument, NULL, CMD_OPT_CHANNEL_DIR},
    {"secret-dir", required_argument, NULL, CMD_OPT_SECRET_DIR},
    {"restore", required_argument, NULL, RUN_OPT_RESTORE},
    {"incoming", required_argument, NULL, RUN_OPT_INCOMING},
    {"incoming-timeout", required_argument, NULL, RUN_OPT_INCOMING_TIMEOUT},
    {"incoming-from", required_argument, NULL, RUN_OPT_INCOMING_FROM},
    SANDBOX_LONGOPTS,
    CTL_LONGOPTS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* A count of seconds, 1 to a day. */
static int run_seconds_option(const char *name, const char *arg, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || v < 1 || v > 86400) {
		fprintf(stderr, "vmlet run: %s takes seconds, 1 to 86400, not '%s'\n", name, arg);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

/* --incoming: unix:PATH or tcp:HOST:PORT (sock_addr.h); said if not. */
static int run_incoming_option(const char *arg)
{
	struct sock_addr a;
	char why[160];

	if (!sock_addr_parse(arg, SOCK_ADDR_LISTEN, &a, why, sizeof(why)))
		return 0;
	fprintf(stderr, "vmlet run: --incoming '%s': %s\n", arg, why);
	return -EINVAL;
}

/* --incoming-from: a bare numeric address (sock_addr_parse_host()); said
 * if not. */
static int run_incoming_from_option(const char *arg)
{
	struct sock_addr a;
	char why[160];

	if (!sock_addr_parse_host(arg, &a, why, sizeof(why)))
		return 0;
	fprintf(stderr, "vmlet run: --incoming-from '%s': %s\n", arg, why);
	return -EINVAL;
}

/* The --incoming flags together: 0, or said and -EINVAL. */
static int run_incoming_check(const struct cmd_vm_opts *o)
{
	const char *why = NULL;

	if (o->incoming_timeout && !o->incoming)
		why = "--incoming-timeout without --incoming";
	else if (o->incoming_from && !o->incoming)
		why = "--incoming-from without --incoming";
	else if (o->incoming_from && strncmp(o->incoming, "tcp:", 4))
		why = "--incoming-from is for a tcp: --incoming (a unix: source must be "
		      "this user)";
	else if (o->restore && o->incoming)
		why = "--restore and --incoming exclude each other";
	if (!why)
		return 0;
	fprintf(stderr, "vmlet run: %s\n", why);
	return -EINVAL;
}

/* cmd_run's options into *o and *strategy: -1 to go on, else the exit
 * status (usage errors said). */
static int run_parse_args(int argc, char **argv, struct cmd_vm_opts *o, const char **strategy)
{
	enum lifecycle_strategy unused;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", run_options, NULL)) != -1) {
		if (c == 'h') {
			run_usage(stdout);
			return VMLET_EXIT_OK;
		}
		if (c == RUN_OPT_RESTORE) {
			o->restore = optarg;
			continue;
		}
		if (c == RUN_OPT_INCOMING) {
			if (run_incoming_option(optarg))
				return VMLET_EXIT_USAGE;
			o->incoming = optarg;
			continue;
		}
		if (c == RUN_OPT_INCOMING_FROM) {
			if (run_incoming_from_option(optarg))
				return VMLET_EXIT_USAGE;
			o->incoming_from = optarg;
			continue;
		}
		if (c == RUN_OPT_INCOMING_TIMEOUT) {
			if (run_seconds_option("--incoming-timeout", optarg, &o->incoming_timeout))
				return VMLET_EXIT_USAGE;
			continue;
		}
		if (c == RUN_OPT_JAIL) {
			if (run_jail_option(o, optarg))
				return VMLET_EXIT_USAGE;
			continue;
		}
		if (c == RUN_OPT_STRATEGY) {
			*strategy = optarg;
			if (!lifecycle_parse(optarg, &unused))
				continue;
			fprintf(stderr,
				"vmlet run: --run-strategy takes Always, RerunOnFailure, "
				"Once, Manual or Halted, not '%s'\n",
				optarg);
			return VMLET_EXIT_USAGE;
		}
		if (cmd_vm_option(o, c, optarg)) {
			run_usage(stderr);
			return VMLET_EXIT_USAGE;
		}
	}
	if (run_incoming_check(o))
		return VMLET_EXIT_USAGE;
	if (optind < argc) {
		fprintf(stderr, "vmlet run: unexpected argument '%s'\n", argv[optind]);
		run_usage(stderr);
		return VMLET_EXIT_USAGE;
	}
	return -1;
}

int cmd_run(int argc, char **argv)
{
	const char *strategy = NULL;
	struct snap_buf inputs = {0};
	struct cmd_vm_opts o;
	struct vm_config cfg;
	int ret;

	memset(&o, 0, sizeof(o));
	o.channels = true;
	o.console.kind = VM_CONSOLE_STDIO;
	o.log_format = LOG_FORMAT_JSON;
	o.log_level = LOG_INFO;
	ret = run_parse_args(argc, argv, &o, &strategy);
	if (ret >= 0)
		return ret;
	log_setup(o.log_format, o.log_level, "vmlet", NULL);
	/* root: the guest's worker gives up root once set up (vmm/sandbox/sandbox.h) */
	if (sandbox_default_user(&o.sandbox))
		log_info("run: started as root without --user: the guest runs as uid %u, gid %u "
			 "once set up (--user UID:GID to choose)",
			 o.sandbox.uid, o.sandbox.gid);
	/* what a snapshot or a migration records of the manifests */
	if (o.api_socket)
		o.inputs = &inputs;
	if (cmd_vm_config(&o, &cfg)) {
		snap_buf_release(&inputs);
		return VMLET_EXIT_ERROR;
	}
	log_setup(o.log_format, o.log_level, "vmlet", cfg.name);
	if (cfg.start_paused && !o.api_socket)
		log_warn("vm: startStrategy Paused without --api-socket: nothing can resume the "
			 "guest (vmlet ctl SOCKET resume)");
	ret = run_with_strategy(&cfg, &o, strategy);
	log_setup(o.log_format, o.log_level, "vmlet", NULL);
	vm_config_release(&cfg);
	snap_buf_release(&inputs);
	return ret;
}
