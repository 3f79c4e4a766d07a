// SPDX-License-Identifier: MIT
/*
 * connector.c - the connector process (connector.h).
 */
#include <errno.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/util/log.h"
#include "vmm/sandbox/connector.h"

/* What the connector answers: 0 and the fd, or -errno alone. */
struct connector_reply {
	int32_t err;
};

int (*connector_confine)(void);

/* The child's allowlist: its loop and nothing else. */
int connector_filter(enum sandbox_seccomp mode)
{
	const struct scmp_arg_cmp unix_only = {
	    .arg = 0, .op = SCMP_CMP_EQ, .datum_a = AF_UNIX, .datum_b = 0};
	scmp_filter_ctx ctx;
	int r = 0;

	if (mode == SANDBOX_SECCOMP_OFF)
		return 0;
	ctx = seccomp_init(mode == SANDBOX_SECCOMP_LOG ? SCMP_ACT_LOG : SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, unix_only);
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(connect), 0);
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 0);
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 0);
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(close), 0);
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit), 0);
	r |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit_group), 0);
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

static void connector_answer(int ctl, int err, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct connector_reply rep = {.err = err};
	struct iovec iov = {&rep, sizeof(rep)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	if (fd >= 0) {
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	sendmsg(ctl, &m, MSG_NOSIGNAL);
}

static void __attribute__((noreturn)) connector_main(int ctl, const char *prefix)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t plen = strlen(prefix);
	uint32_t port;
	int fd, err;

	memcpy(sa.sun_path, prefix, plen);
	if (connector_confine && connector_confine())
		_exit(1);
	for (;;) {
		struct iovec iov = {&port, sizeof(port)};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t n = recvmsg(ctl, &m, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(port))
			_exit(0); /* vmlet closed its end (or spoke nonsense) */
		/* "_%u" by hand: snprintf may allocate, the filter has no mmap */
		{
			char digits[10];
			size_t k = 0, o = plen;

			do
				digits[k++] = (char)('0' + port % 10);
			while ((port /= 10) != 0);
			sa.sun_path[o++] = '_';
			while (k)
				sa.sun_path[o++] = digits[--k];
			sa.sun_path[o] = 0;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		err = fd < 0 ? -errno : 0;
		if (!err && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			err = errno == EAGAIN || errno == EINPROGRESS || errno == ENOENT
				  ? -ECONNREFUSED
				  : -errno;
		connector_answer(ctl, err, err ? -1 : fd);
		if (fd >= 0)
			close(fd);
	}
}

int connector_start(struct connector *c, const char *prefix)
{
	int sv[2], st;
	pid_t mid;

	c->fd = -1;
	if (strlen(prefix) > CONNECTOR_PREFIX_MAX)
		return error_errno(-ENAMETOOLONG, "connector: prefix %s too long", prefix);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_errno(-errno, "connector: socketpair");
	fflush(NULL);
	mid = fork();
	if (mid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_errno(-errno, "connector: fork");
	}
	if (mid == 0) {
		close(sv[0]);
		if (fork() == 0) {
			setsid();
			/* keep none of vmlet's descriptors (KVM, disks, taps) */
			if (sv[1] != 3 && dup2(sv[1], 3) < 0)
				_exit(1);
			syscall(SYS_close_range, 4U, ~0U, 0U);
			connector_main(3, prefix);
		}
		_exit(0);
	}
	close(sv[1]);
	while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
		;
	c->fd = sv[0];
	return 0;
}

int connector_connect(struct connector *c, uint32_t port, int timeout_ms)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct connector_reply rep;
	struct iovec iov = {&rep, sizeof(rep)};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct pollfd pf = {.fd = c->fd, .events = POLLIN};
	struct cmsghdr *cm;
	ssize_t n;
	int fd = -1;

	if (c->fd < 0)
		return -EPIPE;
	/* an answer that came after its request timed out: dropped */
	while (recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) > 0) {
		cm = CMSG_FIRSTHDR(&m);
		if (cm && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int))) {
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
			close(fd);
		}
		m = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1};
		iov = (struct iovec){&rep, sizeof(rep)};
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
	}
	fd = -1;
	iov = (struct iovec){&port, sizeof(port)};
	m = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1};
	if (sendmsg(c->fd, &m, MSG_NOSIGNAL) != sizeof(port))
		return -EPIPE;
	n = poll(&pf, 1, timeout_ms);
	if (n == 0)
		return -ETIMEDOUT; /* a late answer is read and dropped next time */
	iov = (struct iovec){&rep, sizeof(rep)};
	m = (struct msghdr){
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n != sizeof(rep))
		return -EPIPE;
	cm = CMSG_FIRSTHDR(&m);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (rep.err == 0 && fd >= 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return rep.err < 0 ? rep.err : -EPROTO;
}

void connector_stop(struct connector *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
