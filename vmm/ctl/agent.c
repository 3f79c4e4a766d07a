// SPDX-License-Identifier: MIT
/*
 * agent.c - `vmlet ctl SOCKET guest-info`: QEMU's guest-agent protocol
 * spoken on the guest-agent channel's host socket (SOCKET.NAME, docs/devices.md:
 * Guest-agent channel), from the client process (never the sandboxed VMM).
 *
 * The guest's answers are untrusted: every read has a deadline, a reply
 * larger than CTL_AGENT_MAX_REPLY is an error, and the handshake
 * (guest-sync-delimited: a 0xFF byte resets the agent's parser, and the
 * agent puts 0xFF before its answer) skips whatever stale bytes an earlier
 * client left in the channel.
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm/ctl/ctl.h"

struct agent {
	int fd;
	uint64_t deadline_ms;
	json_tokener *tok;
};

static uint64_t agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for ev on the socket until the deadline: 0, -ETIMEDOUT or -errno. */
static int agent_wait(struct agent *a, short ev)
{
	struct pollfd p = {a->fd, ev, 0};
	uint64_t now;
	int n;

	for (;;) {
		now = agent_now_ms();
		if (now >= a->deadline_ms)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(a->deadline_ms - now));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int agent_send(struct agent *a, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(a->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		int r;

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			r = agent_wait(a, POLLOUT);
			if (r)
				return r;
			continue;
		}
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One byte: 1, 0 at EOF, -errno. */
static int agent_byte(struct agent *a, char *c)
{
	for (;;) {
		ssize_t n = recv(a->fd, c, 1, MSG_DONTWAIT);
		int r;

		if (n >= 0)
			return (int)n;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		r = agent_wait(a, POLLIN);
		if (r)
			return r;
	}
}

/* The next JSON object the agent sends (a sentinel 0xFF restarts it). */
static int agent_read(struct agent *a, json_object **out)
{
	size_t total = 0;
	char c;
	int r;

	json_tokener_reset(a->tok);
	for (;;) {
		r = agent_byte(a, &c);
		if (r <= 0)
			return r ? r : -ECONNRESET;
		if ((unsigned char)c == 0xff) {
			json_tokener_reset(a->tok);
			total = 0;
			continue;
		}
		if (!total && (c == '\n' || c == '\r' || c == ' '))
			continue;
		if (++total > CTL_AGENT_MAX_REPLY)
			return -EMSGSIZE;
		*out = json_tokener_parse_ex(a->tok, &c, 1);
		if (*out)
			return 0;
		if (json_tokener_get_error(a->tok) != json_tokener_continue) {
			json_tokener_reset(a->tok); /* garbage: wait for the next object */
			total = 0;
		}
	}
}

/* guest-sync-delimited with a fresh id; stale answers are skipped. */
static int agent_sync(struct agent *a)
{
	int64_t id = (int64_t)(agent_now_ms() ^ ((uint64_t)getpid() << 20)) & 0x7fffffff;
	char req[128];
	json_object *o, *ret;
	int r, n;

	n = snprintf(req, sizeof(req),
		     "\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":%lld}}\n",
		     (long long)id);
	r = agent_send(a, req, (size_t)n);
	while (!r) {
		r = agent_read(a, &o);
		if (r)
			break;
		if (json_object_object_get_ex(o, "return", &ret) &&
		    json_object_get_int64(ret) == id) {
			json_object_put(o);
			return 0;
		}
		json_object_put(o);
	}
	return r;
}

/* Run one command; its "return" (or {"error": ...}) goes into out[key]. */
static int agent_cmd(struct agent *a, const char *cmd, const char *key, json_object *out)
{
	char req[96];
	json_object *o, *v;
	int r, n;

	n = snprintf(req, sizeof(req), "{\"execute\":\"%s\"}\n", cmd);
	r = agent_send(a, req, (size_t)n);
	if (!r)
		r = agent_read(a, &o);
	if (r)
		return r;
	if (json_object_object_get_ex(o, "return", &v))
		json_object_object_add(out, key, json_object_get(v));
	else if (json_object_object_get_ex(o, "error", &v))
		json_object_object_add(out, key, json_object_get(o));
	json_object_put(o);
	return 0;
}

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

int ctl_agent_guest_info(const char *path, unsigned int timeout_ms, json_object **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct agent a = {.fd = -1};
	json_object *o = NULL;
	int r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	a.deadline_ms = agent_now_ms() + timeout_ms;
	a.tok = json_tokener_new_ex(32);
	/* the agent is the guest's: text that is not UTF-8 is no answer (it
	 * would reach the ctl client's output as invalid JSON) */
	if (a.tok)
		json_tokener_set_flags(a.tok, JSON_TOKENER_VALIDATE_UTF8);
	a.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (!a.tok || a.fd < 0) {
		r = a.tok ? -errno : -ENOMEM;
		goto out;
	}
	if (connect(a.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		if (r != -EAGAIN && r != -EINPROGRESS)
			goto out;
		r = agent_wait(&a, POLLOUT);
		if (r)
			goto out;
	}
	r = agent_sync(&a);
	o = json_object_new_object();
	for (unsigned int i = 0; !r && i < sizeof(agent_queries) / sizeof(agent_queries[0]); i++)
		r = agent_cmd(&a, agent_queries[i].cmd, agent_queries[i].key, o);
out:
	if (a.fd >= 0)
		close(a.fd);
	if (a.tok)
		json_tokener_free(a.tok);
	if (r) {
		json_object_put(o);
		return r;
	}
	*out = o;
	return 0;
}
