// SPDX-License-Identifier: MIT
/*
 * config_access.c - spec.accessCredentials and devices.downwardMetrics
 * into struct vm_config (config.h). Admission (spec/admit_spec.c) has
 * already checked each credential's shape (one type, one source, one
 * propagation method, users for qemuGuestAgent); here they are copied.
 * The secrets themselves are files vmm/ reads (vmm/util/secret.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spec/config.h"

static int map_cred(const struct resolver *r, const struct node *ac, const char *path,
		    struct vm_access_cred *out)
{
	const struct node *k = node_get(ac, "sshPublicKey"), *u = node_get(ac, "userPassword");
	const struct node *c = !node_is_null(k) ? k : u, *pm = node_get(c, "propagationMethod");
	const struct node *users = node_path(pm, "qemuGuestAgent.users");

	out->type = !node_is_null(k) ? VM_CRED_SSH_KEY : VM_CRED_PASSWORD;
	out->secret = config_strdup(resolve_str(node_path(c, "source.secret.secretName")));
	if (!node_is_null(node_get(pm, "noCloud")))
		out->method = VM_CRED_NOCLOUD;
	else if (!node_is_null(node_get(pm, "configDrive")))
		out->method = VM_CRED_CONFIG_DRIVE;
	else
		out->method = VM_CRED_AGENT;
	if (out->type != VM_CRED_SSH_KEY || !node_is_seq(users) || !users->n)
		return 0;
	if (users->n > VM_MAX_CRED_USERS) {
		diag_err(r->d, users, arena_printf(r->a, "%s.sshPublicKey.propagationMethod", path),
			 "%u users: vmlet propagates keys to at most %u", users->n,
			 VM_MAX_CRED_USERS);
		return -EINVAL;
	}
	out->users = calloc(users->n, sizeof(*out->users));
	if (!out->users)
		spec_oom();
	for (unsigned int i = 0; i < users->n; i++)
		out->users[out->n_users++] = config_strdup(resolve_str(users->items[i]));
	return 0;
}

int config_access(const struct resolver *r, const struct node *spec, struct vm_config *cfg)
{
	const struct node *acs = node_get(spec, "accessCredentials");
	const char *pfx = r->vmi_only ? "spec." : "spec.template.spec.";
	const char *path;
	int ret = 0;

	if (!node_is_null(node_path(spec, "domain.devices.downwardMetrics")) &&
	    cfg->n_channels < VM_MAX_CHANNELS) {
		strcpy(cfg->channels[cfg->n_channels++], VM_CHANNEL_DOWNWARD_METRICS);
		cfg->downward_metrics = true;
	}
	if (!node_is_seq(acs) || !acs->n)
		return 0;
	if (acs->n > VM_MAX_ACCESS_CREDS) {
		diag_err(r->d, acs, arena_printf(r->a, "%saccessCredentials", pfx),
			 "%u items: vmlet propagates at most %u", acs->n, VM_MAX_ACCESS_CREDS);
		return -EINVAL;
	}
	cfg->access_creds = calloc(acs->n, sizeof(*cfg->access_creds));
	if (!cfg->access_creds)
		spec_oom();
	for (unsigned int i = 0; i < acs->n && !ret; i++) {
		path = arena_printf(r->a, "%saccessCredentials[%u]", pfx, i);
		cfg->n_access_creds++;
		ret = map_cred(r, acs->items[i], path, &cfg->access_creds[i]);
	}
	return ret;
}
