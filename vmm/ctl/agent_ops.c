// SPDX-License-Identifier: MIT
/*
 * agent_ops.c - what vmlet asks the guest agent (agent.h): guest-info for
 * `vmlet ctl`, and the filesystem freeze for `vmlet ctl` and the snapshot
 * code. Every answer is the guest's: its shape is checked before use.
 */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "vmm/ctl/agent.h"

static const struct {
	const char *cmd, *key;
} agent_queries[] = {
    {"guest-info", "agent"},
    {"guest-get-osinfo", "os"},
    {"guest-get-host-name", "hostname"},
    {"guest-network-get-interfaces", "interfaces"},
    {"guest-get-fsinfo", "filesystems"},
    {"guest-get-users", "users"},
};

/* One query into out[key]: its "return", or the agent's whole
 * {"error": ...} answer, or {"error": null} for an answer of neither shape. */
static int agent_query(struct ctl_agent *a, const char *cmd, const char *key, json_object *out)
{
	json_object *ret, *e;
	int r;

	r = ctl_agent_exec(a, cmd, NULL, &ret, NULL);
	if (!r) {
		json_object_object_add(out, key, ret);
		return 0;
	}
	if (r != -EREMOTEIO && r != -EPROTO)
		return r;
	e = json_object_new_object();
	json_object_object_add(e, "error", ret);
	json_object_object_add(out, key, e);
	return 0;
}

int ctl_agent_guest_info(const char *path, unsigned int timeout_ms, json_object **out)
{
	struct ctl_agent *a;
	json_object *o;
	int r;

	r = ctl_agent_open(&a, path, timeout_ms);
	if (r)
		return r;
	o = json_object_new_object();
	for (size_t i = 0; !r && i < sizeof(agent_queries) / sizeof(agent_queries[0]); i++)
		r = agent_query(a, agent_queries[i].cmd, agent_queries[i].key, o);
	ctl_agent_close(a);
	if (r) {
		json_object_put(o);
		return r;
	}
	*out = o;
	return 0;
}

/* One command whose answer is an integer (a count of filesystems). */
static int agent_count(const char *path, const char *cmd, unsigned int timeout_ms, int *count,
		       struct ctl_agent_err *err)
{
	struct ctl_agent *a;
	json_object *ret = NULL;
	int64_t v;
	int r;

	r = ctl_agent_open(&a, path, timeout_ms);
	if (!r)
		r = ctl_agent_exec(a, cmd, NULL, &ret, err);
	ctl_agent_close(a);
	if (r) {
		json_object_put(ret);
		return r;
	}
	v = json_object_is_type(ret, json_type_int) ? json_object_get_int64(ret) : -1;
	json_object_put(ret);
	if (v < 0 || v > 1000000)
		return -EPROTO;
	*count = (int)v;
	return 0;
}

int ctl_agent_fsfreeze(const char *path, unsigned int timeout_ms, int *count,
		       struct ctl_agent_err *err)
{
	return agent_count(path, "guest-fsfreeze-freeze", timeout_ms, count, err);
}

int ctl_agent_fsthaw(const char *path, unsigned int timeout_ms, int *count,
		     struct ctl_agent_err *err)
{
	return agent_count(path, "guest-fsfreeze-thaw", timeout_ms, count, err);
}

int ctl_agent_fsfreeze_status(const char *path, unsigned int timeout_ms, bool *frozen,
			      struct ctl_agent_err *err)
{
	struct ctl_agent *a;
	json_object *ret = NULL;
	const char *s;
	int r;

	r = ctl_agent_open(&a, path, timeout_ms);
	if (!r)
		r = ctl_agent_exec(a, "guest-fsfreeze-status", NULL, &ret, err);
	ctl_agent_close(a);
	if (r) {
		json_object_put(ret);
		return r;
	}
	s = json_object_is_type(ret, json_type_string) ? json_object_get_string(ret) : "";
	r = !strcmp(s, "frozen") || !strcmp(s, "thawed") ? 0 : -EPROTO;
	if (!r)
		*frozen = !strcmp(s, "frozen");
	json_object_put(ret);
	return r;
}
