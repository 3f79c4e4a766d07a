// SPDX-License-Identifier: MIT
/*
 * agent.c - a session of QEMU's guest-agent protocol on the guest-agent
 * channel's host socket (agent.h): connect, the guest-sync-delimited
 * handshake, one command at a time, every read against the session's
 * deadline.
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

#include "vmm/ctl/agent.h"
#include "vmm/ctl/ctl.h"
#include "vmm/util/unix_addr.h"

struct ctl_agent {
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
static int agent_wait(struct ctl_agent *a, short ev)
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

static int agent_send(struct ctl_agent *a, const char *buf, size_t len)
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
static int agent_byte(struct ctl_agent *a, char *c)
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
static int agent_read(struct ctl_agent *a, json_object **out)
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
static int agent_sync(struct ctl_agent *a)
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

void ctl_agent_set_timeout(struct ctl_agent *a, unsigned int timeout_ms)
{
	a->deadline_ms = agent_now_ms() + timeout_ms;
}

/* The agent's error, printable: "Class: desc", control bytes as '?'. */
static void agent_err_fill(json_object *e, struct ctl_agent_err *err)
{
	json_object *cls = NULL, *desc = NULL;
	size_t i;

	if (!err)
		return;
	json_object_object_get_ex(e, "class", &cls);
	json_object_object_get_ex(e, "desc", &desc);
	snprintf(err->msg, sizeof(err->msg), "%s: %s",
		 json_object_is_type(cls, json_type_string) ? json_object_get_string(cls) : "error",
		 json_object_is_type(desc, json_type_string) ? json_object_get_string(desc)
							     : "(no description)");
	for (i = 0; err->msg[i]; i++)
		if ((unsigned char)err->msg[i] < 0x20 || err->msg[i] == 0x7f)
			err->msg[i] = '?';
}

int ctl_agent_exec(struct ctl_agent *a, const char *cmd, json_object *args, json_object **ret,
		   struct ctl_agent_err *err)
{
	json_object *req = json_object_new_object(), *o = NULL, *v;
	const char *txt;
	char *line = NULL;
	int r;

	*ret = NULL;
	if (!req)
		return -ENOMEM;
	json_object_object_add(req, "execute", json_object_new_string(cmd));
	if (args)
		json_object_object_add(req, "arguments", json_object_get(args));
	txt = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	r = txt && asprintf(&line, "%s\n", txt) > 0 ? 0 : -ENOMEM;
	if (!r)
		r = agent_send(a, line, strlen(line));
	if (!r)
		r = agent_read(a, &o);
	if (r)
		goto out;
	if (json_object_object_get_ex(o, "return", &v)) {
		*ret = json_object_get(v);
	} else if (json_object_object_get_ex(o, "error", &v)) {
		agent_err_fill(v, err);
		*ret = json_object_get(v);
		r = -EREMOTEIO;
	} else {
		r = -EPROTO;
	}
out:
	json_object_put(o);
	json_object_put(req);
	if (line) {
		explicit_bzero(line, strlen(line)); /* may carry a password */
		free(line);
	}
	return r;
}

int ctl_agent_open(struct ctl_agent **out, const char *path, unsigned int timeout_ms)
{
	struct sockaddr_un sa;
	struct ctl_agent *a;
	int r;

	*out = NULL;
	r = unix_addr_fill(&sa, path);
	if (r)
		return r;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fd = -1;
	a->deadline_ms = agent_now_ms() + timeout_ms;
	a->tok = json_tokener_new_ex(32);
	/* the agent is the guest's: text that is not UTF-8 is no answer (it
	 * would reach the ctl client's output as invalid JSON) */
	if (a->tok)
		json_tokener_set_flags(a->tok, JSON_TOKENER_VALIDATE_UTF8);
	a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (!a->tok || a->fd < 0) {
		r = a->tok ? -errno : -ENOMEM;
		goto fail;
	}
	if (connect(a->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		if (r != -EAGAIN && r != -EINPROGRESS)
			goto fail;
		r = agent_wait(a, POLLOUT);
		if (r)
			goto fail;
	}
	r = agent_sync(a);
	if (r)
		goto fail;
	*out = a;
	return 0;
fail:
	ctl_agent_close(a);
	return r;
}

void ctl_agent_close(struct ctl_agent *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	if (a->tok)
		json_tokener_free(a->tok);
	free(a);
}
