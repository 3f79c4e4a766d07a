/* SPDX-License-Identifier: MIT */
/*
 * sandbox_hook.c - the test hook VMLET_TEST_FORBIDDEN=ROLE[:WHAT] (see
 * sandbox.h): the thread of that role attempts a forbidden call right
 * after its filter is installed. Inert unless the variable is set.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/util/log.h"
#include "vmm/sandbox/sandbox_rules.h"

static struct {
	int role; /* -1 when unset */
	char what[16];
} hook = {.role = -1};

int sandbox_test_denied_fd = -1;

void sandbox_test_hook_parse(void)
{
	const char *env = getenv("VMLET_TEST_FORBIDDEN");
	const char *colon;
	size_t len;
	int r;

	hook.role = -1;
	if (!env || !*env)
		return;
	colon = strchr(env, ':');
	len = colon ? (size_t)(colon - env) : strlen(env);
	for (r = 0; r < THREAD_ROLE_COUNT; r++)
		if (strlen(thread_role_name(r)) == len && !strncmp(env, thread_role_name(r), len))
			hook.role = r;
	snprintf(hook.what, sizeof(hook.what), "%s", colon ? colon + 1 : "open");
	if (hook.role >= 0)
		log_warn("sandbox: test hook armed: %s thread will attempt '%s'",
			 thread_role_name(hook.role), hook.what);
}

static void *test_thread_fn(void *arg)
{
	return arg;
}

/* socket(AF_UNIX) and connect() to the abstract name "vmlet-test-hook":
 * the way out to a host daemon's socket. ECONNREFUSED if both are allowed. */
static long test_unix_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	long fd = syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	long ret;

	if (fd < 0)
		return fd;
	memcpy(sa.sun_path + 1, "vmlet-test-hook", 15);
	ret = syscall(SYS_connect, (int)fd, &sa,
		      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 16));
	close((int)fd);
	return ret;
}

/* What a TCP migration's ends do (bind, listen, connect, setsockopt) on no
 * fd: EBADF if allowed; 1 if what is one of them. No confined thread may:
 * the destination listens before it is confined, `vmlet ctl` connects
 * for the source (vmm/snapshot/migrate.h). */
static int test_tcp_call(const char *what, long *ret)
{
	static const struct {
		const char *what;
		long nr;
	} calls[] = {
	    {"bind", SYS_bind},
	    {"listen", SYS_listen},
	    {"connect", SYS_connect},
	    {"setsockopt", SYS_setsockopt},
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(what, calls[i].what)) {
			*ret = syscall(calls[i].nr, -1, NULL, 0, NULL, 0);
			return 1;
		}
	return 0;
}

/* The test hook: attempt something the role may not do. */
void sandbox_test_hook_run(enum thread_role role)
{
	const char *w = hook.what;
	long ret = 0;

	if (hook.role != (int)role)
		return;
	if (!strcmp(w, "open")) {
		ret = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (ret >= 0)
			close((int)ret);
	} else if (!strcmp(w, "exec-mmap")) {
		void *p =
		    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ret = p == MAP_FAILED ? -1 : 0;
		if (p != MAP_FAILED)
			munmap(p, 4096);
	} else if (!strcmp(w, "ioctl")) {
		/* KVM_CREATE_VM on no fd: EBADF if allowed */
		ret = syscall(SYS_ioctl, -1, 0xae01, 0);
	} else if (!strcmp(w, "reset-rings")) {
		/* KVM_RESET_DIRTY_RINGS on no fd: EBADF if allowed (main only) */
		ret = syscall(SYS_ioctl, -1, 0xaec7, 0);
	} else if (!strcmp(w, "socket")) {
		ret = syscall(SYS_socket, 2 /* AF_INET */, 1 /* SOCK_STREAM */, 0);
		if (ret >= 0)
			close((int)ret);
	} else if (!strcmp(w, "socket6")) {
		ret = syscall(SYS_socket, 10 /* AF_INET6 */, 1 /* SOCK_STREAM */, 0);
		if (ret >= 0)
			close((int)ret);
	} else if (test_tcp_call(w, &ret)) {
		/* done */
	} else if (!strcmp(w, "denied-fd")) {
		/* write nothing to an fd vmlet holds (a disk): 0 if allowed */
		ret = syscall(SYS_write, sandbox_test_denied_fd, "", 0);
	} else if (!strcmp(w, "unix-connect")) {
		ret = test_unix_connect();
	} else if (!strcmp(w, "fallocate")) {
		/* mode 0 (allocate, may grow the file) on no fd: EBADF if allowed */
		ret = syscall(SYS_fallocate, -1, 0, 0L, 4096L);
	} else if (!strcmp(w, "blkdiscard")) {
		uint64_t range[2] = {0, 4096};

		ret = syscall(SYS_ioctl, -1, BLKDISCARD, range);
	} else if (!strcmp(w, "exec")) {
		/* execve of nothing: EFAULT/ENOENT if allowed */
		ret = syscall(SYS_execve, "", NULL, NULL);
	} else if (!strcmp(w, "kvm-run")) {
		/* KVM_RUN on no fd: EBADF if allowed */
		ret = syscall(SYS_ioctl, -1, KVM_RUN, 0);
	} else if (!strcmp(w, "thread")) {
		/* start a thread that returns at once: joined if allowed */
		pthread_t t;

		ret = pthread_create(&t, NULL, test_thread_fn, NULL);
		if (!ret)
			pthread_join(t, NULL);
	}
	log_warn("sandbox: test hook: %s thread survived '%s' (%ld)", thread_role_name(role), w,
		 ret);
}
