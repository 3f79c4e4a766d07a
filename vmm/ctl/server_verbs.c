/* SPDX-License-Identifier: MIT */
/*
 * server_verbs.c - the control socket's answers (server_verbs.h): the JSON
 * object each verb gets back, built from what the ctl_vm_ops report. The
 * connections, their requests and the dispatch are server.c's.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/ctl/ctl.h"
#include "vmm/ctl/server_verbs.h"
#include "vmm/sandbox/sandbox.h"

json_object *ctl_answer(int err)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(err == 0));
	if (err)
		json_object_object_add(
		    o, "error",
		    json_object_new_string(err == -ENOTSUP ? "not supported" : strerror(-err)));
	return o;
}

static void add_str(json_object *o, const char *key, const char *val)
{
	if (val)
		json_object_object_add(o, key, json_object_new_string(val));
}

static void add_migration(json_object *o, const struct ctl_migration *m)
{
	json_object *mo = json_object_new_object();

	add_str(mo, "state", m->state);
	add_str(mo, "dirty_log", m->dirty_log);
	json_object_object_add(mo, "bytes", json_object_new_int64((int64_t)m->bytes));
	json_object_object_add(mo, "pages", json_object_new_int64((int64_t)m->pages));
	json_object_object_add(mo, "iterations", json_object_new_int64((int64_t)m->iterations));
	json_object_object_add(mo, "dirty_pages_rate",
			       json_object_new_int64((int64_t)m->dirty_pages_rate));
	json_object_object_add(mo, "downtime_ms", json_object_new_int64((int64_t)m->downtime_ms));
	json_object_object_add(mo, "total_ms", json_object_new_int64((int64_t)m->total_ms));
	json_object_object_add(o, "migration", mo);
}

json_object *ctl_verb_status(const struct ctl_vm_ops *ops, void *vm)
{
	struct ctl_status st = {0};
	int err = ops->status ? ops->status(vm, &st) : -ENOTSUP;
	json_object *o = ctl_answer(err);

	if (err)
		return o;
	add_str(o, "state", st.state);
	add_str(o, "name", st.name);
	add_str(o, "namespace", st.namespace);
	add_str(o, "run_strategy", st.run_strategy);
	add_str(o, "reason", st.reason);
	if (st.message && *st.message)
		add_str(o, "message", st.message);
	json_object_object_add(o, "vcpus", json_object_new_int64(st.vcpus));
	json_object_object_add(o, "memory", json_object_new_int64((int64_t)st.memory_bytes));
	json_object_object_add(o, "uptime_seconds", json_object_new_double(st.uptime_seconds));
	json_object_object_add(o, "restarts", json_object_new_int64(st.restarts));
	json_object_object_add(o, "console_dropped_bytes",
			       json_object_new_int64((int64_t)st.console_dropped_bytes));
	json_object_object_add(o, "agent_connected", json_object_new_boolean(st.agent_connected));
	if (st.vsock_cid) {
		json_object_object_add(o, "vsock_cid",
				       json_object_new_int64((int64_t)st.vsock_cid));
		add_str(o, "vsock_socket", st.vsock_socket);
	}
	if (st.migration.state)
		add_migration(o, &st.migration);
	return o;
}

json_object *ctl_verb_metrics(const struct ctl_vm_ops *ops, void *vm, int statm_fd)
{
	struct ctl_metrics m = {0};
	uint64_t rss;
	json_object *o;
	int err = 0;

	if (ops->metrics)
		err = ops->metrics(vm, &m);
	if (!err && statm_fd >= 0 && !ctl_rss_bytes(statm_fd, &rss))
		ctl_metrics_add(&m, "vmlet_resident_memory_bytes", "gauge",
				"Resident set size of the vmlet process (guest pages included).",
				NULL, (double)rss);
	ctl_metrics_add(&m, "vmlet_sandboxed", "gauge", "1 when the seccomp sandbox is applied.",
			NULL, sandbox_applied());
	if (!err)
		err = m.err;
	o = ctl_answer(err);
	if (!err)
		json_object_object_add(o, "metrics", json_object_new_string_len(m.buf, (int)m.len));
	free(m.buf);
	return o;
}

json_object *ctl_verb_snapshot(const struct ctl_vm_ops *ops, void *vm, json_object *req,
			       const int *fds, unsigned int nfds)
{
	json_object *resume;
	bool r = true;

	if (json_object_object_get_ex(req, "resume", &resume)) {
		if (!json_object_is_type(resume, json_type_boolean))
			return ctl_answer(-EINVAL);
		r = json_object_get_boolean(resume);
	}
	if (!ops->snapshot)
		return ctl_answer(-ENOTSUP);
	if (nfds != 2)
		return ctl_answer(-EBADF);
	return ctl_answer(ops->snapshot(vm, fds[0], fds[1], r));
}

json_object *ctl_verb_migrate(const struct ctl_vm_ops *ops, void *vm, json_object *req,
			      const int *fds, unsigned int nfds, void (*tick)(void *),
			      void *tick_ctx)
{
	struct ctl_status st = {0};
	json_object *v, *o;
	int64_t ms = 0;
	char msg[512];
	int err;

	if (json_object_object_get_ex(req, "max_downtime_ms", &v)) {
		if (!json_object_is_type(v, json_type_int))
			return ctl_answer(-EINVAL);
		ms = json_object_get_int64(v);
		if (ms < 1 || ms > 600000)
			return ctl_answer(-ERANGE);
	}
	if (!ops->migrate)
		return ctl_answer(-ENOTSUP);
	if (nfds != 1)
		return ctl_answer(-EBADF);
	msg[0] = 0;
	err = ops->migrate(vm, fds[0], (uint32_t)ms, tick, tick_ctx, msg, sizeof(msg));
	o = ctl_answer(err);
	if (err && msg[0])
		json_object_object_add(o, "error", json_object_new_string(msg));
	if (ops->status && !ops->status(vm, &st) && st.migration.state)
		add_migration(o, &st.migration);
	return o;
}
