/* SPDX-License-Identifier: MIT */
/*
 * creds.h - the credential agent: spec.accessCredentials with
 * propagationMethod qemuGuestAgent, applied through the guest agent
 * (vmm/ctl/agent.h) as KubeVirt's virt-launcher does
 * (access-credentials/access_credentials.go).
 *
 * `vmlet run` forks it beside the guest (never inside the sandboxed VMM:
 * it reads Secrets, the VMM must not), without capabilities and with
 * no_new_privs (ctl_helper_confine()): a process that, every
 * CTL_CREDS_POLL_MS, asks the control socket whether the agent is
 * connected (while it does not answer, the VM is not up: nothing is tried;
 * without a control socket it just tries) and reads the
 * Secrets (vmm/util/secret.h). It applies them when the agent has
 * (re)connected, when a Secret's content changed, after a failure every
 * CTL_CREDS_RETRY_MS, and every CTL_CREDS_RESYNC_MS regardless (KubeVirt:
 * 15 s, 5 min). An application is one agent session (the channel serves
 * one client at a time: it is held for one exchange only):
 *  - SSH keys: every user named by a qemuGuestAgent sshPublicKey gets, in
 *    one guest-ssh-add-authorized-keys with reset true, exactly the keys of
 *    all such Secrets that name them (each key file split into lines;
 *    empty lines, '#' comments and lines with control characters left
 *    out): the keys vmlet manages replace the file, as KubeVirt rewrites
 *    it; keys the Secret no longer has are gone at the next application.
 *  - passwords: each key of a userPassword Secret is a user name, its
 *    value the password (bytes as they are), set with
 *    guest-set-user-password (crypted false).
 * User names are checked (1-256 bytes, no control character, ':', '/',
 * ',' or space); a bad one is skipped with a warning. What happened is
 * logged (the agent's errors with control characters as '?').
 */
#ifndef VMLET_CTL_CREDS_H
#define VMLET_CTL_CREDS_H

#include <stdint.h>
#include <sys/types.h>

#define CTL_CREDS_POLL_MS   2000
#define CTL_CREDS_RETRY_MS  15000
#define CTL_CREDS_RESYNC_MS 300000

struct vm_config;

/* Does cfg have credentials for the guest agent? */
int ctl_creds_wanted(const struct vm_config *cfg);

/*
 * Read cfg's qemuGuestAgent Secrets under secret_dir and apply them once
 * through the agent at channel (one session within timeout_ms). *hash (may
 * be NULL) gets the fingerprint of what was read, also on failure to
 * apply. 0, -EINVAL (a Secret unreadable: logged), -EREMOTEIO (the agent
 * refused something: logged), or the errors of ctl_agent_open().
 */
int ctl_creds_apply(const struct vm_config *cfg, const char *secret_dir, const char *channel,
		    unsigned int timeout_ms, uint64_t *hash);

/* The fingerprint of cfg's qemuGuestAgent Secrets as they are now: 0 or
 * -EINVAL (one unreadable: logged). */
int ctl_creds_fingerprint(const struct vm_config *cfg, const char *secret_dir, uint64_t *hash);

/*
 * Fork the credential agent for cfg (channel: the guest-agent socket;
 * api_socket: the control socket or NULL). 0 and *pid, or -errno. The
 * child dies with its parent (PR_SET_PDEATHSIG); ctl_creds_stop() ends it.
 */
int ctl_creds_start(const struct vm_config *cfg, const char *secret_dir, const char *channel,
		    const char *api_socket, pid_t *pid);
/*
 * Fork a helper child named name (vmlet-creds, vmlet-dmetrics): in the
 * parent 1 and *child; in the child 0, once it dies with its parent
 * (SIGTERM), ignores SIGINT and SIGPIPE, and is confined
 * (ctl_helper_confine()); -errno if fork failed. The child never returns
 * from its caller: it ends with _exit().
 */
int ctl_helper_fork(const char *name, pid_t *child);
/* In a helper child (this one, vmlet-dmetrics): no_new_privs, and no
 * capabilities left, the bounding set emptied too (it keeps its uid: the
 * channel sockets and the Secrets are that user's). */
void ctl_helper_confine(void);

/* SIGTERM the child pid and reap it (0: none). */
void ctl_creds_stop(pid_t pid);

#endif /* VMLET_CTL_CREDS_H */
