/* SPDX-License-Identifier: MIT */
/*
 * net_testns.h - helpers for the network tests that need root: each test
 * process moves itself into a fresh network namespace (unshare), so all
 * its interfaces, addresses and traffic stay inside namespaces it created
 * and vanish with it. Header-only: included by tests/unit/net_*_test.c.
 */
#ifndef VMLET_TESTS_NET_TESTNS_H
#define VMLET_TESTS_NET_TESTNS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm/net/backend.h"

/* Enter a new netns with lo up and IPv6 off (no RS/MLD noise). 0 or -1. */
static inline int testns_enter(void)
{
	int fd;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0)
		return -1;
	fd = open("/proc/sys/net/ipv6/conf/default/disable_ipv6", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			perror("disable_ipv6");
		close(fd);
	}
	return system("ip link set lo up") == 0 ? 0 : -1;
}

/* Run a shell command (printf format); its exit status. */
static inline int testns_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int testns_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st != 0)
		printf("  command failed (%d): %s\n", st, cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline long testns_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Receive one frame from a backend, waiting up to ms. Length or -errno. */
static inline ssize_t testns_recv(struct net_backend *be, void *buf, size_t cap, int ms)
{
	long end = testns_now_ms() + ms;

	for (;;) {
		struct pollfd p = {.fd = be->fd, .events = POLLIN};
		struct iovec iov = {buf, cap};
		ssize_t n = be->ops->recv(be, &iov, 1);
		long left = end - testns_now_ms();

		if (n != -EAGAIN && n != NET_BE_RECONNECTED)
			return n;
		if (left <= 0)
			return -ETIMEDOUT;
		if (be->fd >= 0)
			poll(&p, 1, (int)left);
		else
			usleep(10000);
	}
}

/* Send a frame (without vnet header) through a backend, zero header. */
static inline int testns_send(struct net_backend *be, const void *frame, size_t len)
{
	struct net_vnet_hdr h = {0};
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)frame, len}};

	return be->ops->send(be, iov, 2);
}

/*
 * A pod and a node: a fresh netns for this process (the pod: eth0 with
 * 10.200.0.2/24 and a default route via 10.200.0.1) wired by a veth to a
 * second fresh netns held by a child (the node: 10.200.0.1). *outside is
 * the child's pid (kill it, or it dies with us); run commands on the node
 * with `nsenter -t PID -n`. Returns 0 or -1.
 */
static inline int testns_pod(pid_t *outside)
{
	int p[2];
	char c;

	if (*outside > 0) {
		kill(*outside, SIGKILL);
		waitpid(*outside, NULL, 0);
		*outside = -1;
	}
	if (testns_enter() < 0 || pipe(p) < 0)
		return -1;
	*outside = fork();
	if (*outside == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (unshare(CLONE_NEWNET) < 0 || write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		return -1;
	close(p[0]);
	return testns_sh("ip link add eth0 type veth peer name node0 && "
			 "ip link set node0 netns %d && "
			 "ip addr add 10.200.0.2/24 dev eth0 && ip link set eth0 up && "
			 "ip route add default via 10.200.0.1 && "
			 "nsenter -t %d -n sh -c 'ip link set lo up && "
			 "ip addr add 10.200.0.1/24 dev node0 && ip link set node0 up && "
			 "echo 1 > /proc/sys/net/ipv6/conf/node0/disable_ipv6'",
			 *outside, *outside) == 0
		   ? 0
		   : -1;
}

#endif /* VMLET_TESTS_NET_TESTNS_H */
