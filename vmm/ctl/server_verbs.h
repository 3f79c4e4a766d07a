/* SPDX-License-Identifier: MIT */
/*
 * server_verbs.h - the control socket's answers, for server.c: each
 * function returns a new JSON object (the caller sends it and puts it),
 * {"ok": true, ...} or {"ok": false, "error": "..."}; an op the VM does not
 * have is "not supported". ops and vm are the server's (ctl_server_start);
 * req is the parsed request, fds/nfds the descriptors that came with it
 * (the callee neither keeps nor closes them).
 */
#ifndef VMLET_CTL_SERVER_VERBS_H
#define VMLET_CTL_SERVER_VERBS_H

#include <json-c/json.h>

#include "vmm/ctl/ctl.h"

/* {"ok": err == 0} and, for an error, its text. */
json_object *ctl_answer(int err);

/* status: the VM's state, identity, sizes, counters and a migration's
 * figures. */
json_object *ctl_verb_status(const struct ctl_vm_ops *ops, void *vm);

/* metrics: the VM's Prometheus text plus vmlet's resident memory (from
 * statm_fd, /proc/self/statm opened before the sandbox; -1: none) and
 * whether it is sandboxed. */
json_object *ctl_verb_metrics(const struct ctl_vm_ops *ops, void *vm, int statm_fd);

/* snapshot: the state and memory files came with the request (two fds,
 * else -EBADF); "resume" (boolean, default true). */
json_object *ctl_verb_snapshot(const struct ctl_vm_ops *ops, void *vm, json_object *req,
			       const int *fds, unsigned int nfds);

/* migrate: the connected stream to the destination came with the
 * request (one fd); "max_downtime_ms" 1..600000. The answer has the
 * migration's figures, or what failed. tick(tick_ctx): called while it
 * runs (ctl_vm_ops.migrate). */
json_object *ctl_verb_migrate(const struct ctl_vm_ops *ops, void *vm, json_object *req,
			      const int *fds, unsigned int nfds, void (*tick)(void *),
			      void *tick_ctx);

#endif /* VMLET_CTL_SERVER_VERBS_H */
