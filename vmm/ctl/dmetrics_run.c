// SPDX-License-Identifier: MIT
/*
 * dmetrics_run.c - vmlet-dmetrics, the process that serves the vhostmd
 * port (dmetrics.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm/ctl/creds.h"
#include "vmm/ctl/dmetrics.h"
#include "vmm/util/log.h"
#include "vmm/util/unix_addr.h"

static uint64_t dm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void dm_sleep_ms(uint64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The VMM: the parent's other child (the guest's worker), else the
 * parent itself (the guest runs in it). */
static pid_t dm_vmm(pid_t parent)
{
	char p[64];
	int pid, found = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	f = fopen(p, "re");
	while (f && fscanf(f, "%d", &pid) == 1)
		if (pid != getpid())
			found = pid;
	if (f)
		fclose(f);
	return found ? found : parent;
}

static int dm_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd = unix_addr_fill(&sa, path);

	if (fd)
		return fd;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int dm_write(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Serve one connection until it ends. */
static void dm_serve(const struct vm_config *cfg, int fd, pid_t parent)
{
	static char buf[3 * CTL_DMETRICS_MAX_LINE];
	uint64_t last = 0, now;
	size_t have = 0, used;
	ssize_t n;
	int r;

	for (;;) {
		n = recv(fd, buf + have, sizeof(buf) - have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		have += (size_t)n;
		while ((r = ctl_dmetrics_request(buf, have, &used)) != 0 || used) {
			struct dmetrics_src src = {.vmm = dm_vmm(parent)};
			char *doc = NULL;
			size_t len = 0;

			now = dm_now_ms();
			if (last && now < last + 1000) /* KubeVirt: 1 request a second */
				dm_sleep_ms(last + 1000 - now);
			last = dm_now_ms();
			if (r > 0 && !ctl_dmetrics_document(cfg, &src, &doc, &len))
				r = dm_write(fd, doc, len);
			else
				r = dm_write(fd, CTL_DMETRICS_INVALID,
					     strlen(CTL_DMETRICS_INVALID));
			free(doc);
			memmove(buf, buf + used, have - used);
			have -= used;
			if (r)
				return;
		}
	}
}

int ctl_dmetrics_start(const struct vm_config *cfg, const char *channel, pid_t *pid)
{
	pid_t parent = getpid();
	int fd, r = ctl_helper_fork("vmlet-dmetrics", pid);

	if (r)
		return r < 0 ? r : 0;
	for (;;) {
		fd = dm_connect(channel);
		if (fd >= 0) {
			dm_serve(cfg, fd, parent);
			close(fd);
		}
		dm_sleep_ms(1000); /* the guest (re)starts: its socket comes back */
	}
}
