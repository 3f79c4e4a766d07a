// SPDX-License-Identifier: MIT
/*
 * cmd_vm_opts.c - the options `vmlet run` and `vmlet probe` share
 * (cmd_vm.h): each read and checked as getopt hands it over, so a value
 * that cannot work is a usage error before anything is resolved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "vmm/cmd/cmd.h"
#include "vmm/cmd/cmd_vm.h"
#include "vmm/ctl/ctl.h"
#include "vmm/util/timings.h"
#include "vmm/vm/dirty_ring.h"

static int parse_u32(const char **p, uint32_t *v)
{
	unsigned long x;
	char *end;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	x = strtoul(*p, &end, 10);
	if (errno || x == 0 || x > 4096)
		return -EINVAL;
	*v = (uint32_t)x;
	*p = end;
	return 0;
}

int cmd_parse_smp(const char *s, uint32_t *sockets, uint32_t *cores, uint32_t *threads)
{
	const char *p = s;

	*cores = *threads = 1;
	if (parse_u32(&p, sockets))
		return -EINVAL;
	if (!*p)
		return 0;
	if (*p++ != ',' || parse_u32(&p, cores) || *p++ != ',' || parse_u32(&p, threads) || *p)
		return -EINVAL;
	return 0;
}

static int cmd_parse_console(const char *arg, struct vm_console *c)
{
	if (!strcmp(arg, "stdio"))
		c->kind = VM_CONSOLE_STDIO;
	else if (!strcmp(arg, "none"))
		c->kind = VM_CONSOLE_NONE;
	else if (!strncmp(arg, "file:", 5) && arg[5]) {
		c->kind = VM_CONSOLE_FILE;
		c->path = arg + 5;
	} else
		return -EINVAL;
	return 0;
}

/* A NAME=VALUE option (both parts non-empty) appended to list (at most
 * CMD_MAX_FILES): 0, or -1 with a message. */
static int cmd_add_pair(const char **list, unsigned int *n, const char *opt, const char *form,
			const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (*n == CMD_MAX_FILES || !eq || eq == arg || !eq[1]) {
		fprintf(stderr, "vmlet: %s takes %s (at most %d), not '%s'\n", opt, form,
			CMD_MAX_FILES, arg);
		return -1;
	}
	list[(*n)++] = arg;
	return 0;
}

/* The values of --smp, --memory and --grace-period, and --firmware with
 * --kernel, are usage errors when the option is read: 0 or -1 (message
 * printed). */
static int cmd_check_smp(const char *arg)
{
	uint32_t s, c, t;

	if (!cmd_parse_smp(arg, &s, &c, &t))
		return 0;
	fprintf(stderr, "vmlet: --smp takes SOCKETS,CORES,THREADS (each 1..4096), not '%s'\n", arg);
	return -1;
}

static int cmd_check_memory(const char *arg)
{
	uint64_t v;

	if (!spec_parse_size(arg, &v) && v >= (16ull << 20))
		return 0;
	fprintf(stderr,
		"vmlet: --memory takes a size of at least 16Mi (e.g. 512Mi, 5Gi), not '%s'\n", arg);
	return -1;
}

static int cmd_check_grace(const char *arg)
{
	char *end;
	long long g = strtoll(arg, &end, 10);

	if (*arg >= '0' && *arg <= '9' && !*end && g <= 86400 * 365)
		return 0;
	fprintf(stderr, "vmlet: --grace-period takes whole seconds, not '%s'\n", arg);
	return -1;
}

static int cmd_check_boot(const struct cmd_vm_opts *o)
{
	if (!o->firmware || !o->kernel)
		return 0;
	fprintf(stderr, "vmlet: --firmware and --kernel exclude each other\n");
	return -1;
}

/* -f, --vm, --volume, --tap, --disk-root, --image-store: what runs */
static int cmd_opt_inputs(struct cmd_vm_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'f':
		if (o->n_files == CMD_MAX_FILES) {
			fprintf(stderr, "vmlet: too many -f arguments (at most %d)\n",
				CMD_MAX_FILES);
			return -1;
		}
		o->files[o->n_files++] = arg;
		return 0;
	case CMD_OPT_VM:
		o->vm_name = arg;
		return 0;
	case CMD_OPT_VOLUME:
		return cmd_add_pair(o->volumes, &o->n_volumes, "--volume", "NAME=PATH", arg);
	case CMD_OPT_TAP:
		if (strchr(arg, '=') && strlen(strchr(arg, '=') + 1) >= 16) {
			fprintf(stderr, "vmlet: --tap %s: tap name too long\n", arg);
			return -1;
		}
		return cmd_add_pair(o->taps, &o->n_taps, "--tap", "IFACE=TAP", arg);
	case CMD_OPT_DISK_ROOT:
		o->disk_root = arg;
		return 0;
	case CMD_OPT_IMAGE_STORE:
		o->image_store = arg;
		return 0;
	default:
		return 1;
	}
}

/* The overrides of the machine: boot, firmware, vCPUs, memory, grace */
static int cmd_opt_machine(struct cmd_vm_opts *o, int c, const char *arg)
{
	switch (c) {
	case CMD_OPT_KERNEL:
		o->kernel = arg;
		return cmd_check_boot(o);
	case CMD_OPT_INITRD:
		o->initrd = arg;
		return 0;
	case CMD_OPT_FIRMWARE:
		o->firmware = arg;
		return cmd_check_boot(o);
	case CMD_OPT_EFI_VARS:
		o->efi_vars = arg;
		return 0;
	case CMD_OPT_CMDLINE:
		o->cmdline = arg;
		return 0;
	case CMD_OPT_SMP:
		o->smp = arg;
		return cmd_check_smp(arg);
	case CMD_OPT_MEMORY:
		o->memory = arg;
		return cmd_check_memory(arg);
	case CMD_OPT_GRACE:
		o->grace = arg;
		return cmd_check_grace(arg);
	case CMD_OPT_DIRTY_RING:
		if (!dirty_ring_parse(arg, &o->dirty_ring))
			return 0;
		fprintf(stderr,
			"vmlet: --dirty-ring takes auto, off or a power of two of entries from "
			"%u to %u, not '%s'\n",
			DIRTY_RING_MIN, DIRTY_RING_MAX, arg);
		return -1;
	case CMD_OPT_VENDOR:
		o->vendor_set = true;
		if (!strcmp(arg, "intel") || !strcmp(arg, "amd")) {
			o->vendor = arg[0] == 'a' ? ARCH_VENDOR_AMD : ARCH_VENDOR_INTEL;
			return 0;
		}
		fprintf(stderr, "vmlet: --cpu-vendor takes intel or amd, not '%s'\n", arg);
		return -1;
	default:
		return 1;
	}
}

static int cmd_opt_log_level(struct cmd_vm_opts *o, const char *arg)
{
	static const char *const names[] = {"debug", "info", "warning", "error"};
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(arg, names[i])) {
			o->log_level = (enum log_level)i;
			return 0;
		}
	fprintf(stderr, "vmlet: --log-level takes debug, info, warning or error, not '%s'\n", arg);
	return -1;
}

/* What vmlet prints: the console, the log, --timings */
static int cmd_opt_output(struct cmd_vm_opts *o, int c, const char *arg)
{
	switch (c) {
	case CMD_OPT_TIMINGS: /* vmm/util/timings.h */
		if (!timings_enable())
			return 0;
		fprintf(stderr, "vmlet: --timings: cannot map its table\n");
		return -1;
	case CMD_OPT_CONSOLE:
		if (!cmd_parse_console(arg, &o->console))
			return 0;
		fprintf(stderr, "vmlet: --console takes stdio, none or file:PATH, not '%s'\n", arg);
		return -1;
	case CMD_OPT_CONSOLE_MAX: /* 0: no cap */
		if (!spec_parse_size(arg, &o->console.max_bytes)) {
			if (!o->console.max_bytes)
				o->console.max_bytes = VM_CONSOLE_NO_CAP;
			return 0;
		}
		fprintf(stderr,
			"vmlet: --console-max-size takes a size (64Mi, 1G, 0: no cap), not "
			"'%s'\n",
			arg);
		return -1;
	case CMD_OPT_LOG_FORMAT:
		if (!strcmp(arg, "json") || !strcmp(arg, "text")) {
			o->log_format = arg[0] == 'j' ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
			return 0;
		}
		fprintf(stderr, "vmlet: --log-format takes json or text, not '%s'\n", arg);
		return -1;
	case CMD_OPT_LOG_LEVEL:
		return cmd_opt_log_level(o, arg);
	default:
		return 1;
	}
}

/* The sandbox, the control socket, the channels' and Secrets' folders */
static int cmd_opt_host(struct cmd_vm_opts *o, int c, const char *arg)
{
	switch (c) {
	case SANDBOX_OPT_SECCOMP:
	case SANDBOX_OPT_USER:
		return sandbox_option(&o->sandbox, c, arg);
	case CTL_OPT_API_SOCKET:
		o->api_socket = arg;
		return 0;
	case CMD_OPT_CHANNEL_DIR:
		o->channel_dir = arg;
		return 0;
	case CMD_OPT_SECRET_DIR:
		o->secret_dir = arg;
		return 0;
	default:
		return 1;
	}
}

int cmd_vm_option(struct cmd_vm_opts *o, int c, const char *arg)
{
	int r = cmd_opt_inputs(o, c, arg);

	if (r == 1)
		r = cmd_opt_machine(o, c, arg);
	if (r == 1)
		r = cmd_opt_output(o, c, arg);
	if (r == 1)
		r = cmd_opt_host(o, c, arg);
	return r;
}
