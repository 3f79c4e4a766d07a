// SPDX-License-Identifier: MIT
/*
 * creds_run.c - the credential agent's process (creds.h): when to apply.
 */
#include <cap-ng.h>
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm/ctl/agent.h"
#include "vmm/ctl/creds.h"
#include "vmm/ctl/ctl.h"
#include "vmm/util/log.h"

static uint64_t creds_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* 1 connected, 0 not, -1 unknown (no control socket, or no answer). */
static int creds_agent_connected(const char *api_socket)
{
	return api_socket ? ctl_client_agent_state(api_socket, NULL) : -1;
}

struct creds_state {
	bool applied, connected;
	uint64_t hash, next_try, next_resync;
};

/* One poll: apply when the agent (re)connected, the Secrets changed, a
 * retry or the periodic resync is due. */
static void creds_tick(const struct vm_config *cfg, const char *dir, const char *channel,
		       const char *api_socket, struct creds_state *st)
{
	int c = creds_agent_connected(api_socket), r;
	uint64_t now = creds_now_ms(), h = 0;

	/* not connected, or a control socket not answering (the VM is not
	 * up yet, or restarting): nothing to talk to */
	if (c == 0 || (c < 0 && api_socket)) {
		st->connected = false;
		return;
	}
	if (c == 1 && !st->connected) {
		st->connected = true;
		st->applied = false; /* a new agent: apply now */
		st->next_try = 0;
	}
	if (st->applied && now < st->next_resync) {
		/* only a change of the Secrets is worth a session now */
		if (ctl_creds_fingerprint(cfg, dir, &h) || h == st->hash)
			return;
		log_info("credentials: a Secret changed: applying again");
	}
	if (now < st->next_try)
		return;
	r = ctl_creds_apply(cfg, dir, channel, CTL_AGENT_TIMEOUT_MS, &h);
	st->hash = h;
	st->applied = !r;
	if (r) {
		st->next_try = creds_now_ms() + CTL_CREDS_RETRY_MS;
		if (r != -EINVAL && r != -EREMOTEIO)
			log_info("credentials: the guest agent did not take them (%s): retrying "
				 "in %u s",
				 strerror(-r), CTL_CREDS_RETRY_MS / 1000);
	} else {
		st->next_resync = creds_now_ms() + CTL_CREDS_RESYNC_MS;
	}
}

static void creds_loop(const struct vm_config *cfg, const char *dir, const char *channel,
		       const char *api_socket)
{
	struct creds_state st = {0};
	struct timespec ts = {CTL_CREDS_POLL_MS / 1000, (CTL_CREDS_POLL_MS % 1000) * 1000000L};

	for (;;) {
		creds_tick(cfg, dir, channel, api_socket, &st);
		nanosleep(&ts, NULL);
	}
}

void ctl_helper_confine(void)
{
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	/* the bounding set first (needs CAP_SETPCAP), then the rest */
	capng_clear(CAPNG_SELECT_BOTH);
	capng_apply(CAPNG_SELECT_BOUNDS);
	capng_clear(CAPNG_SELECT_CAPS);
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		log_warn("helper: cannot drop its capabilities");
}

int ctl_helper_fork(const char *name, pid_t *child)
{
	pid_t parent = getpid(), p;

	fflush(NULL);
	p = fork();
	if (p < 0)
		return -errno;
	if (p > 0) {
		*child = p;
		return 1;
	}
	signal(SIGINT, SIG_IGN); /* Ctrl-C is the guest's business */
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		_exit(0);
	prctl(PR_SET_NAME, name);
	ctl_helper_confine();
	return 0;
}

int ctl_creds_start(const struct vm_config *cfg, const char *secret_dir, const char *channel,
		    const char *api_socket, pid_t *pid)
{
	int r = ctl_helper_fork("vmlet-creds", pid);

	if (r)
		return r < 0 ? r : 0;
	log_info("credentials: applying accessCredentials through %s", channel);
	creds_loop(cfg, secret_dir, channel, api_socket);
	_exit(0);
}

void ctl_creds_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}
