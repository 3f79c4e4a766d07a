/* SPDX-License-Identifier: MIT */
/*
 * cmd_probe.c - `vmlet probe`: boot the built-in probe guest (firmware/probe,
 * a PVH ELF embedded in vmlet) with the resolved configuration, capture its
 * serial report, and print what it saw next to what the configuration
 * promises. Exit status 0 when they agree, 1 when they differ or the probe
 * could not run.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/arch.h"
#include "vmm/cmd/cmd.h"
#include "vmm/cmd/cmd_vm.h"
#include "vmm/boot/bios_boot.h"
#include "vmm/boot/efi_boot.h"
#include "vmm/ctl/ctl.h"
#include "vmm/vm/lifecycle.h"
#include "vmm/dev/pci_devices.h"
#include "vmm/virtio/virtio_net.h"
#include "vmm/probe/report.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

extern const uint8_t fw_probe_start[], fw_probe_end[];

enum { PROBE_OPT_DUMP = 0x200, PROBE_OPT_SHOW_CONSOLE, PROBE_OPT_IO_TEST };

struct probe_opts {
	struct cmd_vm_opts vm;
	const char *output; /* json | text */
	const char *dump_guest;
	const char *io_test; /* disk name */
	int show_console;
};

static void probe_usage(FILE *f)
{
	fprintf(f,
		"usage: vmlet probe [-f FILE|DIR ...] [--vm NAME] [-o json|text]\n"
		"                   [--cpu-vendor intel|amd] [--smp S,C,T] [--memory SIZE]\n"
		"                   [--cmdline C] [--show-console] [--dump-guest FILE]\n"
		"                   [--volume NAME=PATH ...] [--disk-root DIR] [--io-test DISK]\n"
		"                   [--image-store DIR] [--tap IFACE=TAP ...]\n"
		"\n"
		"Boots the built-in probe guest with the VM's CPU topology, memory and ACPI\n"
		"tables and compares what it reports with what is expected. Without -f, the\n"
		"VM is vmlet's default (1 vCPU, 64Mi) shaped by --smp/--memory.\n"
		"--dump-guest writes the probe as a standalone PVH ELF (it boots under QEMU\n"
		"too) and exits. --io-test lets the guest overwrite the first 64 KiB of the\n"
		"disk DISK (a scratch disk!) with patterns, flush, read back, write zeroes\n"
		"and discard (on a read-only disk: a write must be refused).\n"
		"Exit status: 0 match, 1 mismatch or failure, 2 usage.\n"
		"\n" SANDBOX_USAGE CTL_USAGE);
}

static const struct option probe_options[] = {
    CMD_VM_LONGOPTS,
    {"output", required_argument, NULL, 'o'},
    {"dump-guest", required_argument, NULL, PROBE_OPT_DUMP},
    {"show-console", no_argument, NULL, PROBE_OPT_SHOW_CONSOLE},
    {"io-test", required_argument, NULL, PROBE_OPT_IO_TEST},
    SANDBOX_LONGOPTS,
    CTL_LONGOPTS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* 0, 1 (help printed), -1 usage error. */
static int probe_parse(struct probe_opts *p, int argc, char **argv)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:h", probe_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			probe_usage(stdout);
			return 1;
		case 'o':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				fprintf(stderr, "vmlet probe: -o takes json or text\n");
				return -1;
			}
			p->output = optarg;
			break;
		case PROBE_OPT_DUMP:
			p->dump_guest = optarg;
			break;
		case PROBE_OPT_SHOW_CONSOLE:
			p->show_console = 1;
			break;
		case PROBE_OPT_IO_TEST:
			p->io_test = optarg;
			break;
		default:
			if (cmd_vm_option(&p->vm, c, optarg))
				return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vmlet probe: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int probe_dump(const char *path, const uint8_t *elf, size_t len)
{
	size_t done = 0;
	ssize_t r;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_errno(-errno, "probe: cannot create '%s'", path);
	while (done < len) {
		r = write(fd, elf + done, len - done);
		if (r < 0) {
			int ret = error_errno(-errno, "probe: cannot write '%s'", path);

			close(fd);
			return ret;
		}
		done += (size_t)r;
	}
	if (close(fd))
		return error_errno(-errno, "probe: cannot write '%s'", path);
	return 0;
}

#define PROBE_BIOS_RAM_SLACK (1ull << 20)

/* Sum of the RAM entries of the e820 map the guest is given. */
static uint64_t probe_ram_visible(uint64_t mem_bytes)
{
	struct arch_e820_entry e[ARCH_E820_MAX];
	uint64_t sum = 0;
	size_t n = 0, i;

	if (arch_e820_build(mem_bytes, e, ARCH_E820_MAX, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (e[i].type == ARCH_E820_RAM)
			sum += e[i].size;
	return sum;
}

/* The NICs as the VM attached them (bridge takes the pod's MAC, ...). */
static void probe_nics_attached(struct vm *vm, const struct vm_config *cfg,
				struct probe_report *exp)
{
	struct virtio_net_info info;
	struct virtio_net *n;

	/* the expected NICs are the virtio ones, in order (an e1000e has no
	 * virtio_net: skipped, as probe_report_net_expected() skips it) */
	for (unsigned int k = 0, i = 0; i < exp->n_nics && k < cfg->n_nics; k++) {
		if (!(n = pci_devices_nic(vm, k)))
			continue;
		virtio_net_get_info(n, &info);
		probe_report_net_attached(exp, i++, info.mac, info.mtu, info.binding, info.lease_ip,
					  info.lease_prefix, info.want_dhcp);
	}
}

/* Compare and print; returns the exit status. */
static int probe_report(const struct probe_opts *p, const struct vm_config *cfg, struct vm *vm,
			const char *text, size_t len)
{
	struct probe_report *exp = calloc(1, sizeof(*exp));
	struct probe_report *got = calloc(1, sizeof(*got));
	int status = VMLET_EXIT_ERROR, ret;
	bool match;

	if (!exp || !got)
		goto out;
	if (probe_report_expected(cfg, (int)vm->vendor, probe_ram_visible(vm->mem.total), exp)) {
		error("probe: cannot compute the expected report for this configuration");
		goto out;
	}
	/* through SeaBIOS: its e820 map, which keeps the top of low RAM for
	 * the tables it placed (16 KiB with SeaBIOS 1.16) */
	if (p->vm.bios_payload)
		exp->memory_slack = PROBE_BIOS_RAM_SLACK;
	/* whose SMBIOS the guest found: SeaBIOS puts its own type 0 in front
	 * of vmlet's tables; vmlet's own (direct boot, its UEFI firmware) says
	 * "vmlet" */
	snprintf(exp->bios_vendor, sizeof(exp->bios_vendor), "%s",
		 p->vm.bios_payload ? "SeaBIOS" : "vmlet");
	if (cfg->boot == VM_BOOT_BIOS && cfg->bios_default)
		snprintf(exp->note, sizeof(exp->note),
			 "no bootloader in the manifest (BIOS, KubeVirt's default): the probe "
			 "booted directly, not through SeaBIOS; firmware.bootloader.bios: {} "
			 "probes the SeaBIOS path");
	probe_report_expect_cpu(exp, vm->tsc_deadline, vm->cpu_brand);
	probe_nics_attached(vm, cfg, exp);
	ret = probe_report_parse(text, len, got);
	if (ret)
		error_errno(ret, "probe: the guest's report is %s",
			    ret == -ENOENT ? "missing" : "malformed or incomplete");
	match = !ret && probe_report_compare(exp, got, stderr);
	if (p->output && !strcmp(p->output, "json")) {
		ret = probe_report_print_json(stdout, exp, got, match);
		if (ret) {
			error_errno(ret, "probe: cannot write the report as JSON");
			match = false;
		}
	} else
		probe_report_print_text(stdout, exp, got, match);
	status = match ? VMLET_EXIT_OK : VMLET_EXIT_ERROR;
	/* the verdict is out before the VM is torn down (the kernel's part
	 * of that can take milliseconds) */
	fflush(stdout);
out:
	free(exp);
	free(got);
	return status;
}

/* --io-test DISK: ask the guest (vmlet.iotest=#N on its command line) to
 * test the Nth virtio-blk function, DISK's: disks are attached in the
 * order of the configuration (vmm/dev/pci_devices.c). */
static int probe_io_test_arg(const char *name, struct vm_config *cfg)
{
	char *c = NULL;
	unsigned int i;

	for (i = 0; i < cfg->n_disks && strcmp(cfg->disks[i].name, name); i++)
		;
	if (i == cfg->n_disks) {
		error("probe: --io-test: the VM has no disk '%s'", name);
		return -ENOENT;
	}
	if (asprintf(&c, "%s%svmlet.iotest=#%u", cfg->cmdline ? cfg->cmdline : "",
		     cfg->cmdline && *cfg->cmdline ? " " : "", i) < 0)
		return -ENOMEM;
	free(cfg->cmdline);
	cfg->cmdline = c;
	return 0;
}

/* The guest's verdict on --io-test: its ioTest= line must say ok. */
static int probe_io_test_result(const char *name, const char *text, size_t len)
{
	const char *end = text + len, *l, *nl;

	for (l = text; l < end; l = nl + 1) {
		nl = memchr(l, '\n', (size_t)(end - l));
		if (!nl)
			nl = end;
		if ((size_t)(nl - l) < 7 || memcmp(l, "ioTest=", 7))
			continue;
		if ((size_t)(nl - l) > 10 && !memcmp(nl - 3, " ok", 3))
			return 0;
		error("probe: --io-test on disk '%s' failed: %.*s", name, (int)(nl - l), l);
		return -EIO;
	}
	error("probe: --io-test on disk '%s': the guest did not report", name);
	return -EIO;
}

static int probe_run(struct probe_opts *p, const uint8_t *elf, size_t elf_len)
{
	struct vm_config cfg;
	struct vm *vm = NULL;
	const char *text;
	size_t len;
	int ret, status;

	if (cmd_vm_config(&p->vm, &cfg))
		return VMLET_EXIT_ERROR;
	cfg.start_paused = false; /* the probe reports at once */
	if (p->io_test && probe_io_test_arg(p->io_test, &cfg)) {
		vm_config_release(&cfg);
		return VMLET_EXIT_ERROR;
	}
	p->vm.console.kind = VM_CONSOLE_CAPTURE;
	if (cfg.boot == VM_BOOT_EFI) {
		/* the probe as the EFI firmware's payload (firmware/efi/payload.c) */
		const void *fw;
		size_t fw_len;

		if (efi_boot_check(&cfg, false) || efi_boot_embedded(&fw, &fw_len)) {
			vm_config_release(&cfg);
			return VMLET_EXIT_ERROR;
		}
		p->vm.module = elf;
		p->vm.module_len = elf_len;
		elf = fw;
		elf_len = fw_len;
	}
	/* firmware.bootloader.bios: the probe through SeaBIOS and QEMU's PVH
	 * option ROM. Without any bootloader (BIOS by KubeVirt's default) the
	 * probe boots directly as vmlet's quick check (SeaBIOS's real mode
	 * takes seconds where CPL0 is emulated). */
	if (cfg.boot == VM_BOOT_BIOS && !cfg.bios_default) {
		p->vm.bios_payload = access(BIOS_PVH_ROM, R_OK) == 0;
		if (!p->vm.bios_payload)
			log_warn("probe: no %s (Debian package qemu-system-data): the probe boots "
				 "directly, without SeaBIOS",
				 BIOS_PVH_ROM);
	}
	ret = cmd_vm_run(&cfg, &p->vm, elf, elf_len, &vm);
	if (ret < 0) {
		vm_config_release(&cfg);
		return VMLET_EXIT_ERROR;
	}
	text = vm_console_captured(vm, &len);
	if (p->show_console)
		fwrite(text, 1, len, stderr);
	if (ret != VM_EXIT_POWEROFF)
		error("probe: the guest %s instead of powering off", vm_exit_reason_name(ret));
	status = probe_report(p, &cfg, vm, text, len);
	if (p->io_test && probe_io_test_result(p->io_test, text, len))
		status = VMLET_EXIT_ERROR;
	if (ret != VM_EXIT_POWEROFF)
		status = VMLET_EXIT_ERROR;
	vm_destroy(vm);
	vm_config_release(&cfg);
	return status;
}

/* One probe run (in a forked worker or not); its exit status lands in *status. */
struct probe_worker {
	struct probe_opts *p;
	const uint8_t *elf;
	size_t elf_len;
	int *status; /* shared with the supervising process */
};

static enum lifecycle_end probe_worker_run(void *arg, unsigned int restarts)
{
	struct probe_worker *w = arg;

	(void)restarts;
	*w->status = probe_run(w->p, w->elf, w->elf_len);
	return LC_END_POWEROFF;
}

/*
 * The probe runs once (runStrategy Once) under cmd_vm_supervise(), as
 * `vmlet run` does: with a control socket and the sandbox on it is a
 * worker (SIGTERM/SIGINT reach it through lifecycle_run()) and the socket
 * file is removed after the run.
 */
static int probe_run_supervised(struct probe_opts *p, const uint8_t *elf, size_t elf_len)
{
	struct probe_worker w = {p, elf, elf_len, NULL};
	struct lifecycle lc;
	int status;

	w.status =
	    mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w.status == MAP_FAILED) {
		error_errno(-errno, "probe: cannot share the worker's status");
		return VMLET_EXIT_ERROR;
	}
	*w.status = VMLET_EXIT_ERROR; /* unless the worker says otherwise */
	lifecycle_init(&lc, LC_ONCE);
	cmd_vm_supervise(&p->vm, &lc, probe_worker_run, &w);
	status = lc.worker_signal ? 128 + lc.worker_signal : *w.status;
	munmap(w.status, sizeof(int));
	return status;
}

int cmd_probe(int argc, char **argv)
{
	size_t elf_len = (size_t)((uintptr_t)fw_probe_end - (uintptr_t)fw_probe_start);
	struct probe_opts p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.vm.log_format = LOG_FORMAT_TEXT;
	p.vm.log_level = LOG_WARN;
	ret = probe_parse(&p, argc, argv);
	if (ret) {
		if (ret < 0)
			probe_usage(stderr);
		return ret < 0 ? VMLET_EXIT_USAGE : VMLET_EXIT_OK;
	}
	log_setup(p.vm.log_format, p.vm.log_level, "vmlet", NULL);
	if (!elf_len) {
		error("probe: this vmlet was built without the probe guest (firmware/probe)");
		return VMLET_EXIT_ERROR;
	}
	if (p.dump_guest)
		return probe_dump(p.dump_guest, fw_probe_start, elf_len) ? VMLET_EXIT_ERROR
									 : VMLET_EXIT_OK;
	return probe_run_supervised(&p, fw_probe_start, elf_len);
}
