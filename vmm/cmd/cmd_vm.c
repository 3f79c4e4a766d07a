/* SPDX-License-Identifier: MIT */
/*
 * cmd_vm.c - options and VM running shared by `vmlet run` and `vmlet probe`.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spec/spec.h"
#include "vmm/cmd/cmd.h"
#include "vmm/cmd/cmd_vm.h"
#include "vmm/virtio/virtio_vsock.h"
#include "vmm/ctl/ctl.h"
#include "vmm/snapshot/migrate.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/disk/blk.h"
#include "vmm/disk/image_store.h"
#include "vmm/boot/efi_vars.h"
#include "vmm/boot/ovmf_boot.h"
#include "vmm/util/timings.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

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

int cmd_vm_option(struct cmd_vm_opts *o, int c, const char *arg)
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
	case CMD_OPT_TIMINGS: /* vmm/util/timings.h */
		if (!timings_enable())
			return 0;
		fprintf(stderr, "vmlet: --timings: cannot map its table\n");
		return -1;
	case CMD_OPT_GRACE:
		o->grace = arg;
		return cmd_check_grace(arg);
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
	case CMD_OPT_VENDOR:
		o->vendor_set = true;
		if (!strcmp(arg, "intel") || !strcmp(arg, "amd")) {
			o->vendor = arg[0] == 'a' ? ARCH_VENDOR_AMD : ARCH_VENDOR_INTEL;
			return 0;
		}
		fprintf(stderr, "vmlet: --cpu-vendor takes intel or amd, not '%s'\n", arg);
		return -1;
	case CMD_OPT_LOG_FORMAT:
		if (!strcmp(arg, "json") || !strcmp(arg, "text")) {
			o->log_format = arg[0] == 'j' ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
			return 0;
		}
		fprintf(stderr, "vmlet: --log-format takes json or text, not '%s'\n", arg);
		return -1;
	case CMD_OPT_LOG_LEVEL: {
		static const char *const names[] = {"debug", "info", "warning", "error"};
		unsigned int i;

		for (i = 0; i < 4; i++)
			if (!strcmp(arg, names[i])) {
				o->log_level = (enum log_level)i;
				return 0;
			}
		fprintf(stderr,
			"vmlet: --log-level takes debug, info, warning or error, not '%s'\n", arg);
		return -1;
	}
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

static int replace_str(char **dst, const char *src)
{
	char *s = strdup(src);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* --tap IFACE=TAP: that interface uses the existing tap TAP. */
static int cmd_vm_taps(const struct cmd_vm_opts *o, struct vm_config *cfg)
{
	for (unsigned int t = 0; t < o->n_taps; t++) {
		const char *eq = strchr(o->taps[t], '=');
		size_t len = (size_t)(eq - o->taps[t]);
		unsigned int i;

		for (i = 0; i < cfg->n_nics; i++)
			if (cfg->nics[i].name && strlen(cfg->nics[i].name) == len &&
			    !strncmp(cfg->nics[i].name, o->taps[t], len))
				break;
		if (i == cfg->n_nics) {
			fprintf(stderr, "vmlet: --tap %s: the VM has no interface '%.*s'\n",
				o->taps[t], (int)len, o->taps[t]);
			return -EINVAL;
		}
		if (strlen(eq + 1) >= 16) {
			fprintf(stderr, "vmlet: --tap %s: tap name too long\n", o->taps[t]);
			return -EINVAL;
		}
		if (replace_str(&cfg->nics[i].tap, eq + 1))
			return -ENOMEM;
	}
	return 0;
}

static int cmd_vm_overrides(const struct cmd_vm_opts *o, struct vm_config *cfg)
{
	int ret = 0;

	/* checked by cmd_vm_option(): they parse */
	if (o->smp)
		cmd_parse_smp(o->smp, &cfg->sockets, &cfg->cores, &cfg->threads);
	if (o->memory)
		spec_parse_size(o->memory, &cfg->memory_bytes);
	if (o->grace)
		cfg->termination_grace_seconds = strtoll(o->grace, NULL, 10);
	if (o->firmware) /* the VM boots that firmware: EFI boot */
		cfg->boot = VM_BOOT_EFI;
	if (o->kernel) { /* the operator's path: not under the disk root */
		cfg->boot = VM_BOOT_KERNEL;
		ret = replace_str(&cfg->kernel_path, o->kernel);
		free(cfg->kernel_root);
		cfg->kernel_root = NULL;
	}
	if (!ret && o->initrd) {
		ret = replace_str(&cfg->initrd_path, o->initrd);
		free(cfg->initrd_root);
		cfg->initrd_root = NULL;
	}
	if (!ret && o->cmdline)
		ret = replace_str(&cfg->cmdline, o->cmdline);
	if (!ret)
		ret = cmd_vm_taps(o, cfg);
	return ret;
}

/* Resolution errors as resolve prints them; warnings (a field vmlet runs
 * differently, docs/fields.md) as log lines naming the field and source. */
static void cmd_vm_report(void *ctx, const struct spec_message *m)
{
	char src[512];

	(void)ctx;
	if (m->file)
		snprintf(src, sizeof(src), "%s:%u:%u", m->file, m->line, m->col);
	if (m->warning) {
		log_field(LOG_WARN, m->file ? src : NULL, m->path, "%s", m->msg);
		return;
	}
	fprintf(stderr, "%s: %s%s%s\n", m->file ? src : "vmlet", m->path ? m->path : "",
		m->path ? ": " : "", m->msg);
}

int cmd_vm_config(const struct cmd_vm_opts *o, struct vm_config *cfg)
{
	struct spec_options so;
	int ret;

	if (!o->n_files && !getenv("VMLET_MANIFEST")) {
		vm_config_init(cfg);
	} else {
		/* with no -f, spec_resolve_config() reads $VMLET_MANIFEST */
		memset(&so, 0, sizeof(so));
		so.files = o->files;
		so.n_files = o->n_files;
		so.vm_name = o->vm_name;
		so.volume_overrides = o->volumes;
		so.n_volume_overrides = o->n_volumes;
		so.disk_root = o->disk_root;
		so.image_store = o->image_store;
		so.report = cmd_vm_report;
		ret = spec_resolve_config(&so, cfg);
		if (!ret && o->image_store && (ret = image_store_resolve(o->image_store, cfg)))
			vm_config_release(cfg);
		if (ret) {
			if (ret == -ENOSYS)
				fprintf(stderr,
					"vmlet: -f needs the manifest resolver, which this build "
					"does not have yet: use --smp/--memory/--kernel\n");
			return ret;
		}
	}
	ret = cmd_vm_overrides(o, cfg);
	if (!ret)
		ret = cmd_vm_access(o, cfg);
	if (ret)
		vm_config_release(cfg);
	else
		timings_mark(TIMINGS_RESOLVED);
	return ret;
}

/* The vars template for an OVMF code image: $VMLET_OVMF_VARS, else the
 * matching Debian name in the image's directory (OVMF_VARS_4M* next to a
 * 4M build), with Microsoft's and Debian's keys when secure boot is on. */
static char *cmd_vm_ovmf_template(const char *code, bool secure)
{
	const char *env = getenv("VMLET_OVMF_VARS"), *slash = strrchr(code, '/');
	const char *base = strstr(slash ? slash + 1 : code, "_4M") ? "OVMF_VARS_4M" : "OVMF_VARS";
	char *out = NULL;

	if (env && *env)
		return strdup(env);
	if (asprintf(&out, "%.*s%s%s", slash ? (int)(slash - code + 1) : 0, code, base,
		     secure ? ".ms.fd" : ".fd") < 0)
		return NULL;
	return out;
}

/*
 * An OVMF VM (ovmf_boot.h): --firmware with a flash image, or an EFI VM
 * that wants secure boot (not the probe: OVMF cannot run it). Its
 * variables: --efi-vars, else NAME.ovmf-vars.fd next to the manifest,
 * created afresh at each start (not after the guest's reboot) unless
 * efi.persistent or --efi-vars.
 */
static int cmd_vm_ovmf(const struct vm_config *cfg, const struct cmd_vm_opts *o, bool payload,
		       struct vm_options *vo, char **vars, char **tmpl)
{
	const char *code = getenv("VMLET_OVMF_CODE"), *smm_env = getenv("VMLET_OVMF_SMM");
	/* SMM only when asked for (docs/firmware.md "SMM": not yet seen
	 * booting OVMF's SMM build under the nested KVM) */
	bool smm = cfg->smm && smm_env && !strcmp(smm_env, "1");
	char *dflt;
	size_t n;

	if (cfg->boot != VM_BOOT_EFI || payload)
		return 0;
	if (o->firmware && ovmf_is_flash_image(o->firmware))
		code = o->firmware;
	else if (o->firmware || !cfg->efi_secure_boot)
		return 0; /* a PVH firmware or vmlet's own */
	else if (!code || !*code)
		code = smm ? OVMF_CODE_SMM : OVMF_CODE_DEFAULT;
	*tmpl = cmd_vm_ovmf_template(code, cfg->efi_secure_boot);
	if (o->efi_vars) {
		*vars = strdup(o->efi_vars);
	} else if ((dflt = efi_vars_default_path(o->n_files ? o->files[0] : NULL, cfg->name))) {
		n = strlen(dflt);
		if (n > 8 && !strcmp(dflt + n - 8, ".efivars"))
			dflt[n - 8] = 0;
		if (asprintf(vars, "%s%s", dflt, OVMF_VARS_SUFFIX) < 0)
			*vars = NULL;
		free(dflt);
	}
	if (!*vars || !*tmpl)
		return -ENOMEM;
	vo->flash_code = code;
	vo->flash_vars = *vars;
	vo->flash_vars_template = *tmpl;
	vo->smm = smm; /* SMM: SMRAM, SMIs, the flash written only from SMM */
	/* without efi.persistent the variables last as long as KubeVirt's
	 * VMI: through the guest's reboots, not a new start */
	vo->flash_vars_fresh = !o->efi_vars && !cfg->efi_persistent && !o->after_reboot;
	return 0;
}

/* devices.tpm.persistent: <name>.tpm beside the manifest (as .efivars) */
static int cmd_vm_tpm_state(const struct vm_config *cfg, const struct cmd_vm_opts *o, char **out)
{
	char *p;
	size_t n;

	*out = NULL;
	if (!cfg->tpm_persistent)
		return 0;
	p = efi_vars_default_path(o->n_files ? o->files[0] : NULL, cfg->name);
	if (!p)
		return -ENOMEM;
	n = strlen(p);
	if (n > 8 && !strcmp(p + n - 8, ".efivars"))
		strcpy(p + n - 8, ".tpm");
	*out = p;
	return 0;
}

int cmd_vm_run(const struct vm_config *cfg, const struct cmd_vm_opts *o, const uint8_t *payload,
	       size_t payload_len, struct vm **keep)
{
	struct vm_options vo = {
	    .vendor = o->vendor,
	    .vendor_set = o->vendor_set,
	    .console = o->console,
	    .payload = payload,
	    .payload_len = payload_len,
	    .efi_vars_volatile = o->efi_vars_volatile,
	    .efi_vars_fd = o->efi_vars_fd,
	    .tpm_state_kept = o->tpm_state_kept,
	    .tpm_state_fd = o->tpm_state_fd,
	    .run_as_set = o->sandbox.set_user,
	    .run_as_uid = o->sandbox.uid,
	    .run_as_gid = o->sandbox.gid,
	    .firmware = o->firmware,
	    .module = o->module,
	    .module_len = o->module_len,
	    .bios_payload = o->bios_payload,
	};
	struct sandbox_opts sb = o->sandbox;
	struct ctl_server *ctl = NULL;
	struct vm *vm = NULL;
	char *efi_vars = NULL, *ovmf_vars = NULL, *ovmf_tmpl = NULL, *chan = NULL, *json = NULL;
	char *tpm_state = NULL;
	sigset_t stop;
	int ret, mig_fd = -1;

	ret = cmd_vm_ovmf(cfg, o, payload != NULL, &vo, &ovmf_vars, &ovmf_tmpl);
	if (ret)
		goto out_free;
	ret = cmd_vm_channel_prefix(o, &chan);
	if (ret)
		goto out_free;
	vo.channel_prefix = chan;
	ret = cmd_vm_tpm_state(cfg, o, &tpm_state);
	if (ret)
		goto out_free;
	vo.tpm_state = tpm_state;
	/* efi.persistent: --efi-vars, else <name>.efivars next to the manifest */
	if (cfg->boot == VM_BOOT_EFI && cfg->efi_persistent && !vo.flash_code) {
		efi_vars = o->efi_vars
			       ? strdup(o->efi_vars)
			       : efi_vars_default_path(o->n_files ? o->files[0] : NULL, cfg->name);
		if (!efi_vars) {
			ret = -ENOMEM;
			goto out_free;
		}
		vo.efi_vars = efi_vars;
	}

	/* A SIGTERM during set-up must not kill vmlet: it stays pending and
	 * presses the power button as soon as vm_run() listens. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	/* every thread starts before sandbox_apply() (vm_run.c): main's
	 * filter admits no thread start and no vCPU ioctl */
	ret = sandbox_prepare(&sb);
	if (ret)
		goto out_free;
	if (o->api_socket) {
		ret = ctl_server_open(&ctl, o->api_socket);
		if (ret)
			goto out;
	}
	/* the config a snapshot records and a restore compares (not the
	 * probe's: its payload is built in) */
	if (!payload && spec_config_json(cfg, &json)) {
		ret = -ENOMEM;
		goto out;
	}
	if (o->incoming && (!json || (ret = migrate_listen(o->incoming, &mig_fd)))) {
		ret = ret ? ret : -ENOTSUP;
		goto out;
	}
	/* a guest arriving: its disks are locked once the source let go */
	blk_lock_defer(o->incoming != NULL);
	ret = vm_create(&vm, cfg, &vo);
	blk_lock_defer(false); /* the deferred ones wait for blk_locks_take() */
	if (ret)
		goto out;
	vm->snapshot_config = json;
	if (ctl)
		ret = ctl_vm_serve(ctl, vm);
	if (!ret && o->restore && json)
		ret = snapshot_restore(vm, o->restore, json);
	else if (!ret && mig_fd >= 0) {
		ret = migrate_receive(vm, mig_fd, o->incoming, json);
		mig_fd = -1; /* closed */
	} else if (!ret)
		ret = vm_boot(vm);
	if (!ret) {
		timings_mark(TIMINGS_LOADED); /* or the snapshot restored */
		ret = vm_run(vm);
	}
	ctl_server_close(ctl); /* before vm_destroy(): it uses the VM's loop */
	ctl = NULL;
	if (keep && ret > 0)
		*keep = vm;
	else
		vm_destroy(vm);
out:
	if (mig_fd >= 0)
		close(mig_fd);
	ctl_server_close(ctl);
	sandbox_release();
out_free:
	free(chan);
	free(json);
	free(efi_vars);
	free(tpm_state);
	free(ovmf_vars);
	free(ovmf_tmpl);
	return ret;
}

int cmd_vm_channel_prefix(const struct cmd_vm_opts *o, char **out)
{
	*out = NULL;
	if (!o->channels || (!o->channel_dir && !o->api_socket))
		return 0;
	/* DIR/NAME, or next to the control socket: API_SOCKET.NAME */
	if (asprintf(out, "%s%s", o->channel_dir ? o->channel_dir : o->api_socket,
		     o->channel_dir ? "/" : ".") < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

void cmd_vm_remove_channels(const struct cmd_vm_opts *o, const struct vm_config *cfg)
{
	char *prefix, *path;

	if (cmd_vm_channel_prefix(o, &prefix) || !prefix)
		return;
	for (unsigned int i = 0; i < cfg->n_channels; i++)
		if (asprintf(&path, "%s%s", prefix, cfg->channels[i]) >= 0) {
			ctl_remove_socket(path);
			free(path);
		}
	if (cfg->vsock_cid && asprintf(&path, "%s%s", prefix, VIRTIO_VSOCK_SOCKET_NAME) >= 0) {
		ctl_remove_socket(path);
		free(path);
	}
	free(prefix);
}

enum lifecycle_end cmd_vm_supervise(const struct cmd_vm_opts *o, struct lifecycle *lc,
				    lifecycle_run_fn run, void *ctx)
{
	enum lifecycle_end end;

	/* a confined or unprivileged process may not unlink the socket: a
	 * worker runs the guest and this process removes it */
	if ((o->api_socket || (o->channels && o->channel_dir)) &&
	    (o->sandbox.seccomp != SANDBOX_SECCOMP_OFF || o->sandbox.set_user))
		lc->always_fork = true;
	end = lifecycle_run(lc, run, ctx);
	if (o->api_socket)
		ctl_remove_socket(o->api_socket);
	return end;
}

int cmd_vm_exit_status(int reason)
{
	switch (reason) {
	case VM_EXIT_POWEROFF:
		return VMLET_EXIT_OK;
	case VM_EXIT_REBOOT:
		return VMLET_EXIT_REBOOT;
	case VM_EXIT_CRASH:
		return VMLET_EXIT_CRASH;
	case VM_EXIT_HARD_STOP:
		return VMLET_EXIT_STOPPED;
	default:
		return VMLET_EXIT_ERROR;
	}
}
