/* SPDX-License-Identifier: MIT */
/*
 * cmd_vm.h - what `vmlet run` and `vmlet probe` share: the options that
 * select and shape the VM, turning them into a struct vm_config, and
 * running a VM to its end.
 */
#ifndef VMLET_CMD_VM_H
#define VMLET_CMD_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"
#include "vmm/vm/device.h"
#include "vmm/vm/lifecycle.h"
#include "vmm/util/log.h"
#include "vmm/sandbox/sandbox.h"

struct snap_buf;

struct vm_config;
struct vm;

#define CMD_MAX_FILES 64

struct cmd_vm_opts {
	const char *files[CMD_MAX_FILES];
	unsigned int n_files;
	const char *vm_name;		    /* --vm */
	const char *volumes[CMD_MAX_FILES]; /* --volume NAME=PATH */
	unsigned int n_volumes;
	const char *disk_root;		 /* --disk-root DIR (containerDisk images) */
	const char *image_store;	 /* --image-store DIR (vmm/disk/image_store.h) */
	const char *taps[CMD_MAX_FILES]; /* --tap IFACE=TAP */
	unsigned int n_taps;
	const char *kernel, *initrd, *cmdline;
	const char *firmware;  /* --firmware: external PVH firmware, EFI boot */
	const char *efi_vars;  /* --efi-vars: the store of an efi.persistent VM */
	const uint8_t *module; /* a built-in PVH module (vm_options.module) */
	size_t module_len;
	bool bios_payload;	  /* the payload through SeaBIOS (vm_options.bios_payload) */
	const char *smp, *memory; /* --smp S,C,T / --memory SIZE */
	const char *grace;	  /* --grace-period SECONDS */
	uint32_t dirty_ring;	  /* --dirty-ring (vmm/vm/dirty_ring.h) */
	enum arch_cpu_vendor vendor;
	bool vendor_set;
	struct vm_console console;
	enum log_format log_format;
	enum log_level log_level;
	struct sandbox_opts sandbox; /* --seccomp, --user (vmm/sandbox/sandbox.h) */
	const char *api_socket;	     /* --api-socket (vmm/ctl/ctl.h) */
	/* vmlet run: the virtio-serial channels get host sockets, DIR/NAME
	 * with --channel-dir DIR, otherwise API_SOCKET.NAME with
	 * --api-socket, else none (vmlet probe: never) */
	bool channels;
	const char *channel_dir;
	/* --secret-dir DIR: Secret NAME is DIR/NAME/KEY (vmm/util/secret.h) */
	const char *secret_dir;

	/* a VM without efi.persistent: its variables in the open file
	 * efi_vars_fd when efi_vars_volatile (vm_options, cmd_run.c) */
	bool efi_vars_volatile;
	int efi_vars_fd;
	/* a TPM without tpm.persistent: its state in the open file
	 * tpm_state_fd when tpm_state_kept (the same, cmd_run.c) */
	bool tpm_state_kept;
	int tpm_state_fd;
	/* this run follows the guest's reboot (cmd_run.c): an OVMF VM without
	 * efi.persistent keeps its variable file, as a VMI its NVRAM */
	bool after_reboot;
	/* vmlet run --restore DIR: the guest continues from a snapshot
	 * (vmm/snapshot/snapshot.h) instead of booting */
	const char *restore;
	/* vmlet run --incoming unix:PATH: the guest arrives from a live
	 * migration (vmm/snapshot/migrate.h) instead of booting */
	const char *incoming;
	/* --incoming-from ADDR (tcp: only): the source's address; a
	 * connection from any other is closed unread (NULL: any peer) */
	const char *incoming_from;
	/* --incoming-timeout SECONDS: the source must have delivered the
	 * guest this long after it connected (0: MIGRATE_TIMEOUT_PER_GIB per
	 * GiB of guest memory, vmm/snapshot/migrate.h) */
	unsigned int incoming_timeout;
	/* out, when not NULL: the manifest texts the config was resolved
	 * from, as a snapshot records them (vmm/snapshot/snap_input.h) */
	struct snap_buf *inputs;
};

/* Long options both commands accept; option values >= CMD_OPT_BASE. */
enum {
	CMD_OPT_BASE = 0x100,
	CMD_OPT_KERNEL,
	CMD_OPT_INITRD,
	CMD_OPT_CMDLINE,
	CMD_OPT_CONSOLE,
	CMD_OPT_VENDOR,
	CMD_OPT_LOG_FORMAT,
	CMD_OPT_SMP,
	CMD_OPT_MEMORY,
	CMD_OPT_VM,
	CMD_OPT_GRACE,
	CMD_OPT_LOG_LEVEL,
	CMD_OPT_VOLUME,
	CMD_OPT_DISK_ROOT,
	CMD_OPT_FIRMWARE,
	CMD_OPT_EFI_VARS,
	CMD_OPT_TAP,
	CMD_OPT_IMAGE_STORE,
	CMD_OPT_CONSOLE_MAX,
	CMD_OPT_CHANNEL_DIR,
	CMD_OPT_SECRET_DIR,
	CMD_OPT_TIMINGS,
	CMD_OPT_DIRTY_RING,
};

/* The getopt_long entries of the options both commands take (handled by
 * cmd_vm_option()). */
/* clang-format off */
#define CMD_VM_LONGOPTS                                                         \
	{"file", required_argument, NULL, 'f'},                                 \
	{"vm", required_argument, NULL, CMD_OPT_VM},                            \
	{"volume", required_argument, NULL, CMD_OPT_VOLUME},                    \
	{"disk-root", required_argument, NULL, CMD_OPT_DISK_ROOT},              \
	{"image-store", required_argument, NULL, CMD_OPT_IMAGE_STORE},          \
	{"tap", required_argument, NULL, CMD_OPT_TAP},                          \
	{"cmdline", required_argument, NULL, CMD_OPT_CMDLINE},                  \
	{"cpu-vendor", required_argument, NULL, CMD_OPT_VENDOR},                \
	{"log-format", required_argument, NULL, CMD_OPT_LOG_FORMAT},            \
	{"log-level", required_argument, NULL, CMD_OPT_LOG_LEVEL},              \
	{"smp", required_argument, NULL, CMD_OPT_SMP},                          \
	{"memory", required_argument, NULL, CMD_OPT_MEMORY},                    \
	{"timings", no_argument, NULL, CMD_OPT_TIMINGS},                        \
	{"dirty-ring", required_argument, NULL, CMD_OPT_DIRTY_RING}
/* clang-format on */

/* Handle one shared option (getopt_long result c with optarg arg):
 * 0 handled, 1 not a shared option, -1 bad value (message printed). */
int cmd_vm_option(struct cmd_vm_opts *o, int c, const char *arg);

/* "S,C,T" (or "N" = N,1,1). 0 or -EINVAL. */
int cmd_parse_smp(const char *s, uint32_t *sockets, uint32_t *cores, uint32_t *threads);

/* Resolve -f manifests (or vmlet's defaults without any) and apply the
 * command-line overrides. With --restore DIR and no manifests (no -f, no
 * $VMLET_MANIFEST): the manifests DIR/state recorded, under this command
 * line's rules, their host paths checked (docs/snapshot.md). 0 or -errno
 * (message printed). */
int cmd_vm_config(const struct cmd_vm_opts *o, struct vm_config *cfg);

/* spec.accessCredentials for vmlet run (cmd_access.c): read the Secrets
 * under o->secret_dir, put the cloud-init ones into the seed disks'
 * meta-data; the guest agent's are applied later (vmm/ctl/creds.h).
 * 0 or -errno (message printed). */
int cmd_vm_access(const struct cmd_vm_opts *o, struct vm_config *cfg);

/* Create, boot and run a VM to its end. Returns the enum vm_exit_reason
 * (> 0), or -errno when it could not start. When keep is not NULL the VM is
 * returned there after it ended (for its captured console); the caller
 * then calls vm_destroy(). */
int cmd_vm_run(const struct vm_config *cfg, const struct cmd_vm_opts *o, const uint8_t *payload,
	       size_t payload_len, struct vm **keep);

/*
 * Run the guest under lc (lifecycle_run(), which calls run(ctx, ...) for
 * each guest run), as `vmlet run` and `vmlet probe` do: with a control
 * socket (or channel sockets) and the sandbox on, every run is a forked worker even when lc
 * would run it in this process (the confined worker cannot unlink the
 * socket file), and this process removes the socket file once the last run
 * ended. Returns how the last run ended; lc->worker_signal says whether a
 * signal killed the last worker.
 */
/* The channels' socket path prefix for o (cmd_vm_opts.channels): 0 and
 * a malloc'd *out, or NULL when they get no sockets; -ENOMEM. */
int cmd_vm_channel_prefix(const struct cmd_vm_opts *o, char **out);
/* After the last run (an unconfined process): remove cfg's channel
 * sockets (only sockets). */
void cmd_vm_remove_channels(const struct cmd_vm_opts *o, const struct vm_config *cfg);

enum lifecycle_end cmd_vm_supervise(const struct cmd_vm_opts *o, struct lifecycle *lc,
				    lifecycle_run_fn run, void *ctx);

/* The process exit status for how the VM ended (README "Exit statuses"). */
int cmd_vm_exit_status(int reason);

#endif /* VMLET_CMD_VM_H */
