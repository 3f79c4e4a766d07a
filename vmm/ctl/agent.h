/* SPDX-License-Identifier: MIT */
/*
 * agent.h - QEMU's guest-agent protocol (qemu-ga) on a guest-agent
 * channel's host socket (docs/devices.md: Guest-agent channel), spoken from
 * a process outside the sandboxed VMM: `vmlet ctl` (guest-info, fsfreeze),
 * the credential agent (vmm/ctl/creds.h), the snapshot code.
 *
 * Everything the agent sends is untrusted: every read has a deadline (the
 * session's, set at open), an answer larger than CTL_AGENT_MAX_REPLY is an
 * error, text that is not UTF-8 is no answer, and the handshake
 * (guest-sync-delimited: a 0xFF byte resets the agent's parser, the agent
 * puts 0xFF before its answer) skips stale bytes an earlier client left.
 * The channel serves one host client at a time: hold a session only as long
 * as the exchange takes.
 */
#ifndef VMLET_CTL_AGENT_H
#define VMLET_CTL_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#define CTL_AGENT_MAX_REPLY  (1u << 20)
#define CTL_AGENT_CHANNEL    "org.qemu.guest_agent.0"
#define CTL_AGENT_TIMEOUT_MS 10000

struct json_object;
struct ctl_agent;

/* An error answer's class and desc, cut to fit, control characters
 * replaced by '?': safe to print. */
struct ctl_agent_err {
	char msg[256];
};

/*
 * Connect to the channel socket at path and do the guest-sync-delimited
 * handshake; every later call shares the deadline now + timeout_ms.
 * 0, -ENOENT / -ECONNREFUSED (no channel socket, no VM), -ETIMEDOUT (no
 * agent answered), -ECONNRESET (the channel closed), -EMSGSIZE, -errno.
 */
int ctl_agent_open(struct ctl_agent **out, const char *path, unsigned int timeout_ms);
/* Push the deadline to now + timeout_ms (a long command such as a freeze). */
void ctl_agent_set_timeout(struct ctl_agent *a, unsigned int timeout_ms);
void ctl_agent_close(struct ctl_agent *a); /* NULL is a no-op */

/*
 * Run cmd with args (an object, borrowed; NULL: none) and wait for its
 * answer. 0 with *ret the "return" value (owned by the caller, may be
 * NULL for a JSON null), -EREMOTEIO when the agent answered {"error":...}
 * (*ret its value, owned by the caller; described in *err when err is not
 * NULL), -EPROTO for an answer that is
 * neither, or the errors of ctl_agent_open().
 */
int ctl_agent_exec(struct ctl_agent *a, const char *cmd, struct json_object *args,
		   struct json_object **ret, struct ctl_agent_err *err);

/*
 * guest-info (agent.c): guest-sync-delimited, then guest-info,
 * guest-get-osinfo, -host-name, guest-network-get-interfaces,
 * guest-get-fsinfo and -users, all within timeout_ms. *out (the caller
 * puts it): {"agent": ..., "os": ..., "hostname": ..., "interfaces": ...,
 * "filesystems": ..., "users": ...}, each the command's "return" or its
 * whole {"error": ...} answer. 0 or the errors of ctl_agent_open().
 */
int ctl_agent_guest_info(const char *path, unsigned int timeout_ms, struct json_object **out);

/*
 * Filesystem freeze through the agent (agent_ops.c), for `vmlet ctl
 * fsfreeze|fsthaw|fsfreeze-status` and the snapshot code. path is the
 * guest-agent channel's socket. Each call is one session.
 *
 * ctl_agent_fsfreeze: guest-fsfreeze-freeze, *count the filesystems the
 * agent froze. timeout_ms bounds the whole exchange (a guest flushing
 * much may take long; CTL_AGENT_FREEZE_TIMEOUT_MS is a sane value). A
 * timeout does not tell whether the guest froze: call ctl_agent_fsthaw()
 * after any failure (thawing a thawed guest is harmless: count 0).
 * ctl_agent_fsthaw: guest-fsfreeze-thaw, *count the filesystems thawed.
 * ctl_agent_fsfreeze_status: guest-fsfreeze-status, *frozen.
 * 0, -EREMOTEIO (the agent refused: *err says why), -EPROTO (an answer of
 * the wrong shape), or the errors of ctl_agent_open(); err may be NULL.
 */
#define CTL_AGENT_FREEZE_TIMEOUT_MS 60000
int ctl_agent_fsfreeze(const char *path, unsigned int timeout_ms, int *count,
		       struct ctl_agent_err *err);
int ctl_agent_fsthaw(const char *path, unsigned int timeout_ms, int *count,
		     struct ctl_agent_err *err);
int ctl_agent_fsfreeze_status(const char *path, unsigned int timeout_ms, bool *frozen,
			      struct ctl_agent_err *err);

#endif /* VMLET_CTL_AGENT_H */
