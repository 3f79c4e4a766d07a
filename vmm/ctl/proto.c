/* SPDX-License-Identifier: MIT */
/*
 * proto.c - the control protocol's shared pieces: verb names, the
 * Prometheus text builder, vmlet's RSS, and the client request.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/ctl/ctl.h"
#include "vmm/util/unix_addr.h"

static const char *const verb_names[CTL_VERB_COUNT] = {
    [CTL_STATUS] = "status",   [CTL_PAUSE] = "pause",
    [CTL_RESUME] = "resume",   [CTL_POWER_BUTTON] = "power-button",
    [CTL_STOP] = "stop",       [CTL_METRICS] = "metrics",
    [CTL_CONSOLE] = "console", [CTL_SNAPSHOT] = "snapshot",
    [CTL_MIGRATE] = "migrate",
};

const char *ctl_verb_name(enum ctl_verb v)
{
	return (unsigned int)v < CTL_VERB_COUNT ? verb_names[v] : "?";
}

int ctl_verb_parse(const char *name, enum ctl_verb *v)
{
	int i;

	for (i = 0; i < CTL_VERB_COUNT; i++)
		if (!strcmp(name, verb_names[i])) {
			*v = (enum ctl_verb)i;
			return 0;
		}
	return -EINVAL;
}

static void metrics_printf(struct ctl_metrics *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void metrics_printf(struct ctl_metrics *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->err)
		return;
	for (;;) {
		size_t room = m->cap - m->len;

		va_start(ap, fmt);
		n = vsnprintf(m->buf ? m->buf + m->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			m->err = -EINVAL;
			return;
		}
		if ((size_t)n < room) {
			m->len += (size_t)n;
			return;
		}
		size_t cap = m->cap ? m->cap * 2 : 1024;
		while (cap < m->len + (size_t)n + 1)
			cap *= 2;
		char *nb = realloc(m->buf, cap);
		if (!nb) {
			m->err = -ENOMEM;
			return;
		}
		m->buf = nb;
		m->cap = cap;
	}
}

/* The last metric name written, to emit HELP/TYPE once per family. */
static const char *metrics_family(const struct ctl_metrics *m)
{
	const char *p, *line;

	if (!m->len)
		return NULL;
	/* find the start of the last line */
	p = m->buf + m->len - 1;
	while (p > m->buf && p[-1] != '\n')
		p--;
	line = p;
	return line;
}

void ctl_metrics_add(struct ctl_metrics *m, const char *name, const char *type, const char *help,
		     const char *labels, double value)
{
	const char *last = metrics_family(m);
	size_t nlen = strlen(name);

	if (!last || strncmp(last, name, nlen) || (last[nlen] != '{' && last[nlen] != ' '))
		metrics_printf(m, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	if (value > -1e15 && value < 1e15 && value == (double)(long long)value)
		metrics_printf(m, "%s%s%s%s %.0f\n", name, labels ? "{" : "", labels ? labels : "",
			       labels ? "}" : "", value);
	else
		metrics_printf(m, "%s%s%s%s %.6g\n", name, labels ? "{" : "", labels ? labels : "",
			       labels ? "}" : "", value);
}

char *ctl_metrics_label(char *out, size_t cap, const char *key, const char *value)
{
	size_t n = 0, k = strlen(key);

	if (cap < k + 4) {
		if (cap)
			out[0] = 0;
		return out;
	}
	memcpy(out, key, k);
	n = k;
	out[n++] = '=';
	out[n++] = '"';
	for (const char *v = value ? value : ""; *v; v++) {
		char e = *v == '\\' ? '\\' : *v == '"' ? '"' : *v == '\n' ? 'n' : 0;

		if (n + (e ? 2 : 1) + 2 > cap) /* room for the quote and the NUL */
			break;
		if (e) {
			out[n++] = '\\';
			out[n++] = e;
		} else {
			out[n++] = *v;
		}
	}
	out[n++] = '"';
	out[n] = 0;
	return out;
}

int ctl_rss_bytes(int statm_fd, uint64_t *out)
{
	unsigned long long size, resident;
	char buf[128];
	ssize_t n;

	n = pread(statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return -EIO;
	*out = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	return 0;
}

/* Read one line (up to '\n', not included) byte by byte, so nothing after
 * it (console output) is consumed. */
static int read_line(int fd, char **out)
{
	size_t len = 0, cap = 256;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		char c;
		ssize_t n = read(fd, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -ECONNRESET;
		}
		if (c == '\n')
			break;
		if (len + 1 >= cap) {
			char *nb;

			if (cap >= (1u << 24)) {
				free(buf);
				return -E2BIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		buf[len++] = c;
	}
	buf[len] = 0;
	*out = buf;
	return 0;
}

int ctl_client_request(const char *path, enum ctl_verb verb, char **reply)
{
	char req[64];

	snprintf(req, sizeof(req), "{\"verb\":\"%s\"}", ctl_verb_name(verb));
	return ctl_client_request_fds(path, req, NULL, 0, reply);
}

int ctl_client_request_fds(const char *path, const char *request, const int *fds, unsigned int nfds,
			   char **reply)
{
	struct sockaddr_un sa;
	union {
		char buf[CMSG_SPACE(CTL_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {0};
	struct iovec iov[2];
	int fd, err;

	err = unix_addr_fill(&sa, path);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto fail;
	}
	if (nfds > CTL_MAX_FDS || strlen(request) + 1 > CTL_MAX_REQUEST) {
		err = -EINVAL;
		goto fail;
	}
	iov[0] = (struct iovec){(void *)request, strlen(request)};
	iov[1] = (struct iovec){(void *)"\n", 1};
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	if (nfds) { /* the descriptors travel with the request's first byte */
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) != (ssize_t)(iov[0].iov_len + 1)) {
		err = -EIO;
		goto fail;
	}
	err = read_line(fd, reply);
	if (err)
		goto fail;
	return fd;
fail:
	close(fd);
	return err;
}
