/* SPDX-License-Identifier: MIT */
/*
 * cmd_vm.c - the VM running shared by `vmlet run` and `vmlet probe`: the
 * configuration with the command line's overrides, the host files the
 * options name, and the run itself (the options are cmd_vm_opts.c).
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
#include "vmm/snapshot/snap_file.h"
#include "vmm/snapshot/snap_input.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/disk/blk.h"
#include "vmm/disk/image_store.h"
#include "vmm/boot/efi_vars.h"
#include "vmm/boot/ovmf_boot.h"
#include "vmm/util/timings.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

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

/* spec_options.input: each manifest text into the snapshot's input
 * section (snap_input.h) */
static void cmd_vm_record_input(void *ctx, const char *text, size_t len)
{
	snap_input_add(ctx, text, len);
}

/* --restore DIR without manifests: the manifests DIR/state recorded
 * (*n 0: none, the VM had none; an older build's snapshot records none).
 * *texts point into *data. 0 or -errno (logged). */
static int cmd_vm_snapshot_texts(const char *dir, uint8_t **data, struct spec_text **texts,
				 unsigned int *n)
{
	struct snap_file f;
	char err[256];
	size_t len = 0;
	int ret;

	ret = snapshot_read_state(dir, data, &len);
	if (ret)
		return error_errno(ret, "restore: %s/%s", dir, SNAP_STATE_FILE);
	ret = snap_file_parse(*data, len, &f, err, sizeof(err));
	if (ret)
		return error_errno(ret, "restore: %s: %s", SNAP_STATE_FILE, err);
	ret = snap_input_texts(&f, texts, n, err, sizeof(err));
	snap_file_release(&f);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return error_errno(ret, "restore: %s: %s", SNAP_STATE_FILE, err);
	log_info("restore: resolving the %u manifest text(s) the snapshot recorded", *n);
	return 0;
}

/*
 * The snapshot's manifests are not the operator's (anyone may have written
 * DIR): a host path they name must be under one of the operator's roots
 * (containerDisk and kernelBoot under --disk-root, claims under the PVC
 * directory) or given by the operator (--volume NAME=PATH). A hostDisk's
 * path, which a manifest the operator handed over may name, is refused;
 * so are the files kept beside the manifests (efi.persistent without
 * --efi-vars, tpm.persistent). 0 or -EPERM (message printed).
 */
static int cmd_vm_snapshot_paths(const struct cmd_vm_opts *o, const struct vm_config *cfg)
{
	for (unsigned int i = 0; i < cfg->n_disks; i++) {
		const struct vm_disk *d = &cfg->disks[i];

		if (!d->path || d->root || d->operator_path)
			continue;
		fprintf(stderr,
			"vmlet: restore: the snapshot's manifests give volume '%s' the host file "
			"%s, outside the roots of this command line: name it with --volume "
			"%s=PATH, or restore with the manifests (-f)\n",
			d->name ? d->name : "?", d->path, d->name ? d->name : "NAME");
		return -EPERM;
	}
	if ((cfg->kernel_path && !cfg->kernel_root) || (cfg->initrd_path && !cfg->initrd_root)) {
		fprintf(stderr, "vmlet: restore: the snapshot's manifests name a kernel or initrd "
				"outside --disk-root\n");
		return -EPERM;
	}
	if ((cfg->efi_persistent && !o->efi_vars) || cfg->tpm_persistent) {
		fprintf(stderr, "vmlet: restore: the VM keeps its EFI variables or TPM state "
				"beside its manifests: restore it with the manifests (-f), or "
				"--efi-vars FILE\n");
		return -EPERM;
	}
	return 0;
}

/* Resolve the manifests (-f, $VMLET_MANIFEST, or the texts a snapshot
 * recorded) into cfg, recording their texts into o->inputs. */
static int cmd_vm_resolve(const struct cmd_vm_opts *o, const struct spec_text *texts,
			  unsigned int n_texts, struct vm_config *cfg)
{
	struct spec_options so;
	int ret;

	/* with no -f and no texts, spec_resolve_config() reads $VMLET_MANIFEST */
	memset(&so, 0, sizeof(so));
	so.files = o->files;
	so.n_files = o->n_files;
	so.texts = texts;
	so.n_texts = n_texts;
	so.input = o->inputs ? cmd_vm_record_input : NULL;
	so.input_ctx = o->inputs;
	so.vm_name = o->vm_name;
	so.volume_overrides = o->volumes;
	so.n_volume_overrides = o->n_volumes;
	so.disk_root = o->disk_root;
	so.image_store = o->image_store;
	so.report = cmd_vm_report;
	ret = spec_resolve_config(&so, cfg);
	if (!ret && n_texts && (ret = cmd_vm_snapshot_paths(o, cfg)))
		vm_config_release(cfg);
	else if (!ret && o->image_store && (ret = image_store_resolve(o->image_store, cfg)))
		vm_config_release(cfg);
	if (ret == -ENOSYS)
		fprintf(stderr, "vmlet: -f needs the manifest resolver, which this build "
				"does not have yet: use --smp/--memory/--kernel\n");
	return ret;
}

int cmd_vm_config(const struct cmd_vm_opts *o, struct vm_config *cfg)
{
	bool manifests = o->n_files || getenv("VMLET_MANIFEST");
	struct spec_text *texts = NULL;
	unsigned int n_texts = 0;
	uint8_t *data = NULL;
	int ret = 0;

	/* --restore DIR alone: the manifests the snapshot recorded */
	if (o->restore && !manifests)
		ret = cmd_vm_snapshot_texts(o->restore, &data, &texts, &n_texts);
	if (ret)
		goto out;
	if (!manifests && !n_texts)
		vm_config_init(cfg);
	else if ((ret = cmd_vm_resolve(o, texts, n_texts, cfg)))
		goto out;
	ret = cmd_vm_overrides(o, cfg);
	if (!ret)
		ret = cmd_vm_access(o, cfg);
	if (ret)
		vm_config_release(cfg);
	else
		timings_mark(TIMINGS_RESOLVED);
out:
	free(texts);
	free(data);
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
	/* features.smm (KubeVirt's requirement for secure boot): OVMF's SMM
	 * build on a platform with SMM, as KubeVirt runs it. VMLET_OVMF_SMM=0
	 * keeps the build without SMM (its variable store open to the guest's
	 * kernel); =1 gives SMM to a firmware of one's own too (docs/firmware.md
	 * "SMM") */
	bool smm_off = smm_env && !strcmp(smm_env, "0");
	bool smm = cfg->smm && smm_env && !strcmp(smm_env, "1");
	char *dflt;
	size_t n;

	if (cfg->boot != VM_BOOT_EFI || payload)
		return 0;
	if (o->firmware && ovmf_is_flash_image(o->firmware))
		code = o->firmware;
	else if (o->firmware || !cfg->efi_secure_boot)
		return 0; /* a PVH firmware or vmlet's own */
	else if (!code || !*code) {
		smm = cfg->smm && !smm_off;
		code = smm ? OVMF_CODE_SMM : OVMF_CODE_DEFAULT;
	}
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

/* The run's options for vm_create() (the host files come later). */
static struct vm_options cmd_vm_options(const struct cmd_vm_opts *o, const uint8_t *payload,
					size_t payload_len)
{
	return (struct vm_options){
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
	    .dirty_ring = o->dirty_ring,
	};
}

/* The host files a run names (vo points into them until they are freed). */
struct cmd_vm_files {
	char *efi_vars, *ovmf_vars, *ovmf_tmpl, *chan, *tpm_state;
};

static void cmd_vm_files_free(struct cmd_vm_files *f)
{
	free(f->chan);
	free(f->efi_vars);
	free(f->tpm_state);
	free(f->ovmf_vars);
	free(f->ovmf_tmpl);
}

/* OVMF's flash, the channels' prefix, the TPM's state and efi.persistent's
 * variables, into vo. 0 or -errno (f holds what was made). */
static int cmd_vm_files(const struct vm_config *cfg, const struct cmd_vm_opts *o, bool payload,
			struct vm_options *vo, struct cmd_vm_files *f)
{
	int ret;

	ret = cmd_vm_ovmf(cfg, o, payload, vo, &f->ovmf_vars, &f->ovmf_tmpl);
	if (!ret)
		ret = cmd_vm_channel_prefix(o, &f->chan);
	if (ret)
		return ret;
	vo->channel_prefix = f->chan;
	ret = cmd_vm_tpm_state(cfg, o, &f->tpm_state);
	if (ret)
		return ret;
	vo->tpm_state = f->tpm_state;
	/* efi.persistent: --efi-vars, else <name>.efivars next to the manifest */
	if (cfg->boot == VM_BOOT_EFI && cfg->efi_persistent && !vo->flash_code) {
		f->efi_vars =
		    o->efi_vars ? strdup(o->efi_vars)
				: efi_vars_default_path(o->n_files ? o->files[0] : NULL, cfg->name);
		if (!f->efi_vars)
			return -ENOMEM;
		vo->efi_vars = f->efi_vars;
	}
	return 0;
}

/* The guest comes in (a snapshot restored, a migration received, or a
 * boot) and runs; *mig_fd is closed once received. */
static int cmd_vm_start(struct vm *vm, const struct cmd_vm_opts *o, struct ctl_server *ctl,
			const char *json, int *mig_fd)
{
	int ret = 0;

	if (ctl)
		ret = ctl_vm_serve(ctl, vm);
	if (!ret && o->restore && json)
		ret = snapshot_restore(vm, o->restore, json);
	else if (!ret && *mig_fd >= 0) {
		ret = migrate_receive(vm, *mig_fd, o->incoming, o->incoming_from, json,
				      o->incoming_timeout);
		*mig_fd = -1; /* closed */
	} else if (!ret)
		ret = vm_boot(vm);
	if (!ret) {
		timings_mark(TIMINGS_LOADED); /* or the snapshot restored */
		ret = vm_run(vm);
	}
	return ret;
}

int cmd_vm_run(const struct vm_config *cfg, const struct cmd_vm_opts *o, const uint8_t *payload,
	       size_t payload_len, struct vm **keep)
{
	struct vm_options vo = cmd_vm_options(o, payload, payload_len);
	struct cmd_vm_files files = {0};
	struct sandbox_opts sb = o->sandbox;
	struct ctl_server *ctl = NULL;
	struct vm *vm = NULL;
	char *json = NULL;
	sigset_t stop;
	int ret, mig_fd = -1;

	ret = cmd_vm_files(cfg, o, payload != NULL, &vo, &files);
	if (ret)
		goto out_free;
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
	if (o->incoming &&
	    (!json || (ret = migrate_listen(o->incoming, o->incoming_from, &mig_fd)))) {
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
	if (o->inputs && o->inputs->len && !o->inputs->err) {
		vm->snapshot_inputs = o->inputs->p;
		vm->snapshot_inputs_len = o->inputs->len;
	}
	ret = cmd_vm_start(vm, o, ctl, json, &mig_fd);
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
	free(json);
	cmd_vm_files_free(&files);
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
