// SPDX-License-Identifier: MIT
/*
 * creds.c - one application of the qemuGuestAgent credentials through the
 * guest agent (creds.h); the process that repeats it is creds_run.c.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/ctl/agent.h"
#include "vmm/ctl/creds.h"
#include "vmm/util/log.h"
#include "vmm/util/secret.h"
#include "vmm/vm_config.h"

static bool creds_agent_cred(const struct vm_access_cred *ac)
{
	return ac->method == VM_CRED_AGENT;
}

int ctl_creds_wanted(const struct vm_config *cfg)
{
	for (unsigned int i = 0; i < cfg->n_access_creds; i++)
		if (creds_agent_cred(&cfg->access_creds[i]))
			return 1;
	return 0;
}

static bool creds_user_ok(const char *u, size_t n)
{
	if (!n || n > 256)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)u[i] <= ' ' || u[i] == 0x7f || strchr(":/,", u[i]))
			return false;
	return true;
}

/* FNV-1a over what was read: a change of any Secret changes it. */
static void creds_hash(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001b3ull;
}

/* sec[i]: the Secret of cfg's credential i when it is the agent's. */
static int creds_read(const struct vm_config *cfg, const char *dir, struct secret *sec,
		      uint64_t *hash, bool quiet)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int r;

	for (unsigned int i = 0; i < cfg->n_access_creds; i++) {
		if (!creds_agent_cred(&cfg->access_creds[i]))
			continue;
		r = secret_read(dir, cfg->access_creds[i].secret, &sec[i]);
		if (r && !quiet)
			log_warn("credentials: Secret '%s' under %s: %s",
				 cfg->access_creds[i].secret, dir, strerror(-r));
		if (r)
			return -EINVAL;
		creds_hash(&h, &i, sizeof(i));
		for (unsigned int k = 0; k < sec[i].n; k++) {
			creds_hash(&h, sec[i].keys[k].name, strlen(sec[i].keys[k].name) + 1);
			creds_hash(&h, sec[i].keys[k].value, sec[i].keys[k].len + 1);
		}
	}
	if (hash)
		*hash = h;
	return 0;
}

/* Every usable line of a key file into arr. */
static void creds_key_lines(const struct secret_key *k, json_object *arr)
{
	const char *p = k->value, *end = k->value + k->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *q;
		bool ok = true;

		while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		for (q = p; q < e; q++)
			ok &= (unsigned char)*q >= ' ' && *q != 0x7f;
		if (ok && e > p && *p != '#')
			json_object_array_add(arr, json_object_new_string_len(p, (int)(e - p)));
		p = nl ? nl + 1 : end;
	}
}

static bool creds_has_user(const struct vm_access_cred *ac, const char *u)
{
	for (unsigned int j = 0; j < ac->n_users; j++)
		if (!strcmp(ac->users[j], u))
			return true;
	return false;
}

/* Was user u already served by a credential before index i? */
static bool creds_user_done(const struct vm_config *cfg, unsigned int i, const char *u)
{
	for (unsigned int j = 0; j < i; j++) {
		const struct vm_access_cred *ac = &cfg->access_creds[j];

		if (creds_agent_cred(ac) && ac->type == VM_CRED_SSH_KEY && creds_has_user(ac, u))
			return true;
	}
	return false;
}

static int creds_exec(struct ctl_agent *a, const char *cmd, json_object *args, const char *user)
{
	struct ctl_agent_err err = {""};
	json_object *ret = NULL;
	int r;

	r = ctl_agent_exec(a, cmd, args, &ret, &err);
	json_object_put(ret);
	if (r == -EREMOTEIO)
		log_warn("credentials: %s for user '%s': the agent refused: %s", cmd, user,
			 err.msg);
	else if (r)
		log_warn("credentials: %s for user '%s': %s", cmd, user, strerror(-r));
	else
		log_info("credentials: %s for user '%s' done", cmd, user);
	return r;
}

/* One user: all keys of every agent SSH credential from i on naming it. */
static int creds_ssh_user(struct ctl_agent *a, const struct vm_config *cfg,
			  const struct secret *sec, unsigned int i, const char *u)
{
	json_object *args = json_object_new_object(), *keys = json_object_new_array();
	int r;

	for (unsigned int j = i; j < cfg->n_access_creds; j++) {
		const struct vm_access_cred *ac = &cfg->access_creds[j];

		if (!creds_agent_cred(ac) || ac->type != VM_CRED_SSH_KEY || !creds_has_user(ac, u))
			continue;
		for (unsigned int k = 0; k < sec[j].n; k++)
			creds_key_lines(&sec[j].keys[k], keys);
	}
	json_object_object_add(args, "username", json_object_new_string(u));
	json_object_object_add(args, "keys", keys);
	json_object_object_add(args, "reset", json_object_new_boolean(1));
	r = creds_exec(a, "guest-ssh-add-authorized-keys", args, u);
	json_object_put(args);
	return r;
}

static char *creds_b64(const char *s, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *b = (const unsigned char *)s;
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; out && i < n; i += 3) {
		uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) |
			     (i + 2 < n ? b[i + 2] : 0);

		*o++ = t[v >> 18 & 63];
		*o++ = t[v >> 12 & 63];
		*o++ = i + 1 < n ? t[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? t[v & 63] : '=';
	}
	if (out)
		*o = '\0';
	return out;
}

static int creds_password(struct ctl_agent *a, const struct secret_key *k)
{
	json_object *args;
	char *b64;
	int r;

	if (!creds_user_ok(k->name, strlen(k->name))) {
		log_warn("credentials: userPassword key '%.64s' is no user name: skipped", k->name);
		return 0;
	}
	b64 = creds_b64(k->value, k->len);
	if (!b64)
		return -ENOMEM;
	args = json_object_new_object();
	json_object_object_add(args, "username", json_object_new_string(k->name));
	json_object_object_add(args, "password", json_object_new_string(b64));
	json_object_object_add(args, "crypted", json_object_new_boolean(0));
	explicit_bzero(b64, strlen(b64));
	free(b64);
	r = creds_exec(a, "guest-set-user-password", args, k->name);
	json_object_put(args);
	return r;
}

static int creds_session(struct ctl_agent *a, const struct vm_config *cfg, const struct secret *sec)
{
	int r = 0, e;

	for (unsigned int i = 0; i < cfg->n_access_creds; i++) {
		const struct vm_access_cred *ac = &cfg->access_creds[i];

		if (!creds_agent_cred(ac))
			continue;
		for (unsigned int u = 0; ac->type == VM_CRED_SSH_KEY && u < ac->n_users; u++) {
			if (creds_user_done(cfg, i, ac->users[u]))
				continue;
			if (!creds_user_ok(ac->users[u], strlen(ac->users[u]))) {
				log_warn("credentials: '%.64s' is no user name: skipped",
					 ac->users[u]);
				continue;
			}
			e = creds_ssh_user(a, cfg, sec, i, ac->users[u]);
			r = r ?: e;
		}
		for (unsigned int k = 0; ac->type == VM_CRED_PASSWORD && k < sec[i].n; k++) {
			e = creds_password(a, &sec[i].keys[k]);
			r = r ?: e;
		}
		/* the channel is gone or the agent silent: stop here */
		if (r && r != -EREMOTEIO && r != -EPROTO)
			break;
	}
	return r;
}

int ctl_creds_fingerprint(const struct vm_config *cfg, const char *secret_dir, uint64_t *hash)
{
	struct secret *sec = calloc(cfg->n_access_creds + 1, sizeof(*sec));
	int r;

	if (!sec)
		return -ENOMEM;
	r = creds_read(cfg, secret_dir, sec, hash, true);
	for (unsigned int i = 0; i < cfg->n_access_creds; i++)
		secret_free(&sec[i]);
	free(sec);
	return r;
}

int ctl_creds_apply(const struct vm_config *cfg, const char *secret_dir, const char *channel,
		    unsigned int timeout_ms, uint64_t *hash)
{
	struct secret *sec = calloc(cfg->n_access_creds + 1, sizeof(*sec));
	struct ctl_agent *a = NULL;
	int r;

	if (!sec)
		return -ENOMEM;
	r = creds_read(cfg, secret_dir, sec, hash, false);
	if (!r)
		r = ctl_agent_open(&a, channel, timeout_ms);
	if (!r)
		r = creds_session(a, cfg, sec);
	ctl_agent_close(a);
	for (unsigned int i = 0; i < cfg->n_access_creds; i++)
		secret_free(&sec[i]);
	free(sec);
	return r;
}
