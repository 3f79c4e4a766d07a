/* SPDX-License-Identifier: MIT */
/*
 * thread.c - start threads with an explicit role (see thread.h).
 *
 * Signals: process-directed signals (SIGTERM, SIGINT, SIGCHLD...) belong to
 * the main thread's signalfd, so every thread started here has all signals
 * blocked except the synchronous ones (a fault must still kill us) and
 * THREAD_KICK_SIGNAL, which vCPU threads use to leave KVM_RUN.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/thread.h"

static __thread enum thread_role current_role = THREAD_MAIN;

static const char *const role_names[THREAD_ROLE_COUNT] = {
	[THREAD_MAIN] = "main",
	[THREAD_VCPU] = "vcpu",
	[THREAD_BLK_IO] = "blk-io",
	[THREAD_NET_IO] = "net-io",
	[THREAD_HELPER] = "helper",
};

const char *thread_role_name(enum thread_role role)
{
	if ((unsigned int)role >= THREAD_ROLE_COUNT)
		return "?";
	return role_names[role];
}

enum thread_role thread_current_role(void)
{
	return current_role;
}

struct thread_boot {
	enum thread_role role;
	void *(*fn)(void *);
	void *arg;
};

/* Hook for the sandbox: installs the role's filter; 0 when disabled. */
int (*thread_sandbox_hook)(enum thread_role role);

static void *thread_trampoline(void *p)
{
	struct thread_boot boot = *(struct thread_boot *)p;

	free(p);
	current_role = boot.role;
	if (thread_sandbox_hook && thread_sandbox_hook(boot.role))
		abort(); /* never run a thread without the filter it promised */
	return boot.fn(boot.arg);
}

int thread_start(pthread_t *t, enum thread_role role, const char *name,
		 void *(*fn)(void *), void *arg)
{
	static const int sync_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
					    SIGTRAP, SIGABRT, SIGSYS,
					    THREAD_KICK_SIGNAL };
	struct thread_boot *boot;
	sigset_t all, old;
	char comm[16];
	size_t i;
	int ret;

	if ((unsigned int)role >= THREAD_ROLE_COUNT || !fn)
		return -EINVAL;
	boot = malloc(sizeof(*boot));
	if (!boot)
		return -ENOMEM;
	*boot = (struct thread_boot){ .role = role, .fn = fn, .arg = arg };

	/* The new thread inherits the mask in effect at pthread_create(). */
	sigfillset(&all);
	for (i = 0; i < sizeof(sync_signals) / sizeof(sync_signals[0]); i++)
		sigdelset(&all, sync_signals[i]);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(t, NULL, thread_trampoline, boot);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		free(boot);
		return -ret;
	}
	if (name) {
		snprintf(comm, sizeof(comm), "%s", name);
		pthread_setname_np(*t, comm);
	}
	return 0;
}
