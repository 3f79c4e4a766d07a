// SPDX-License-Identifier: MIT
/*
 * cmd_access.c - `vmlet run`'s side of spec.accessCredentials (cmd_vm.h):
 * the Secrets are files beneath --secret-dir (vmm/util/secret.h). Keys
 * propagated through cloud-init (noCloud, configDrive) go into the seed
 * disk's meta-data now, as KubeVirt's virt-launcher puts them there
 * (pkg/cloud-init: resolveSSHPublicKeys: every non-empty key of every such
 * Secret, numbered "0", "1"... in order); those propagated through the
 * guest agent are checked readable now and applied while the guest runs
 * by the credential agent (vmm/ctl/creds.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cmd/cmd_vm.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"
#include "vmm/util/secret.h"
#include "vmm/vm_config.h"

static const char *access_why(int r)
{
	switch (r) {
	case -EINVAL:
		return ": not a Secret name";
	case -ENOENT:
		return ": no such directory";
	case -EFBIG:
		return ": a key or the whole is too large";
	case -E2BIG:
		return ": too many keys";
	default:
		return *file_why(r) ? file_why(r) : "";
	}
}

/* Append the key value to every cloud-init disk of source src. */
static int access_add_key(struct vm_config *cfg, enum vm_disk_source src, const char *value)
{
	for (unsigned int i = 0; i < cfg->n_disks; i++) {
		struct vm_disk *d = &cfg->disks[i];
		char **keys;

		if (d->source != src)
			continue;
		keys = realloc(d->meta_public_keys, (d->n_meta_public_keys + 1) * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		d->meta_public_keys = keys;
		keys[d->n_meta_public_keys] = strdup(value);
		if (!keys[d->n_meta_public_keys])
			return -ENOMEM;
		d->n_meta_public_keys++;
	}
	return 0;
}

static int access_one(const struct cmd_vm_opts *o, struct vm_config *cfg, unsigned int idx)
{
	const struct vm_access_cred *ac = &cfg->access_creds[idx];
	enum vm_disk_source src = ac->method == VM_CRED_NOCLOUD ? VM_DISK_CLOUDINIT_NOCLOUD
								: VM_DISK_CLOUDINIT_CONFIGDRIVE;
	struct secret s;
	int r;

	r = secret_read(o->secret_dir, ac->secret, &s);
	if (r) {
		error("run: accessCredentials[%u]: Secret '%s' (%s/%s)%s%s", idx, ac->secret,
		      o->secret_dir, ac->secret, access_why(r),
		      *access_why(r) ? "" : ": cannot read");
		return r == -ENOMEM ? r : -EINVAL;
	}
	for (unsigned int k = 0; !r && ac->method != VM_CRED_AGENT && k < s.n; k++)
		if (s.keys[k].len)
			r = access_add_key(cfg, src, s.keys[k].value);
	secret_free(&s);
	return r;
}

int cmd_vm_access(const struct cmd_vm_opts *o, struct vm_config *cfg)
{
	bool agent = false;
	int r = 0;

	if (!cfg->n_access_creds || !o->channels)
		return 0; /* vmlet probe: its guest reads neither */
	if (!o->secret_dir) {
		error("run: spec.accessCredentials: the Secrets they name are files vmlet reads: "
		      "--secret-dir DIR (Secret NAME = DIR/NAME/KEY)");
		return -EINVAL;
	}
	for (unsigned int i = 0; !r && i < cfg->n_access_creds; i++) {
		agent |= cfg->access_creds[i].method == VM_CRED_AGENT;
		r = access_one(o, cfg, i);
	}
	if (!r && agent && !o->api_socket && !o->channel_dir)
		log_warn("run: accessCredentials with propagationMethod qemuGuestAgent: no "
			 "guest-agent socket (--api-socket or --channel-dir), nothing is "
			 "propagated to the guest agent");
	return r;
}
