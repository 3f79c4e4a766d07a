/* SPDX-License-Identifier: MIT */
/*
 * thread.c - start threads with an explicit role (see thread.h).
 *
 * A new thread runs a small trampoline: it records its role, names itself
 * (prctl on itself: no /proc access, so it also works once confined), runs
 * thread_sandbox_hook (the sandbox installs the role's seccomp filter) and
 * only then the caller's function. thread_start() waits for the trampoline
 * to report the hook's result, so a thread that could not be confined never
 * runs fn and the caller gets the error.
 *
 * Signals: process-directed signals (SIGTERM, SIGINT, SIGCHLD...) belong to
 * the main thread's signalfd, so every thread started here has all signals
 * blocked except the synchronous ones (a fault must still kill us) and
 * THREAD_KICK_SIGNAL, which vCPU threads use to leave KVM_RUN.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vmm/log.h"
#include "vmm/thread.h"

int (*thread_sandbox_hook)(enum thread_role role);

static __thread enum thread_role current_role = THREAD_MAIN;

static const char *const role_names[THREAD_ROLE_COUNT] = {
    [THREAD_MAIN] = "main",	[THREAD_VCPU] = "vcpu",	    [THREAD_BLK_IO] = "blk-io",
    [THREAD_NET_IO] = "net-io", [THREAD_HELPER] = "helper",
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
	char name[16];
	void *(*fn)(void *);
	void *arg;
	/* handshake: the trampoline reports the sandbox hook's result */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int err;
};

static void *thread_trampoline(void *p)
{
	struct thread_boot *boot = p;
	void *(*fn)(void *) = boot->fn;
	void *arg = boot->arg;
	int err = 0;

	current_role = boot->role;
	pthread_setname_np(pthread_self(), boot->name);
	if (thread_sandbox_hook)
		err = thread_sandbox_hook(boot->role);

	pthread_mutex_lock(&boot->lock);
	boot->err = err;
	boot->done = true;
	pthread_cond_signal(&boot->cond);
	pthread_mutex_unlock(&boot->lock);
	/* boot belongs to thread_start() again from here on */
	if (err)
		return NULL;
	return fn(arg);
}

int thread_start(pthread_t *t, enum thread_role role, const char *name, void *(*fn)(void *),
		 void *arg)
{
	static const int sync_signals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
					   SIGTRAP, SIGABRT, SIGSYS, THREAD_KICK_SIGNAL};
	struct thread_boot boot = {
	    .role = role,
	    .fn = fn,
	    .arg = arg,
	    .lock = PTHREAD_MUTEX_INITIALIZER,
	    .cond = PTHREAD_COND_INITIALIZER,
	};
	sigset_t all, old;
	size_t i;
	int err;

	if ((unsigned int)role >= THREAD_ROLE_COUNT || role == THREAD_MAIN || !fn)
		return -EINVAL;
	snprintf(boot.name, sizeof(boot.name), "%s", name ? name : role_names[role]);

	/* The new thread inherits the mask in effect at pthread_create(). */
	sigfillset(&all);
	for (i = 0; i < sizeof(sync_signals) / sizeof(sync_signals[0]); i++)
		sigdelset(&all, sync_signals[i]);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, thread_trampoline, &boot);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return error_errno(-err, "thread: cannot start %s", boot.name);

	pthread_mutex_lock(&boot.lock);
	while (!boot.done)
		pthread_cond_wait(&boot.cond, &boot.lock);
	err = boot.err;
	pthread_mutex_unlock(&boot.lock);
	if (err) {
		pthread_join(*t, NULL);
		return error_errno(err, "thread: %s could not enter the sandbox", boot.name);
	}
	return 0;
}
