/* SPDX-License-Identifier: MIT */
/*
 * thread.c - start threads with an explicit role (see thread.h).
 *
 * A new thread runs a small trampoline: it records its role, names itself
 * (prctl on itself: no /proc access, so it also works once confined), runs
 * thread_sandbox_hook (the sandbox installs the role's seccomp filter) and
 * only then the caller's function. thread_start() waits for the trampoline
 * to report the hook's result, so a thread that could not be confined never
 * runs fn and the caller gets the error. thread_start_all() does the same
 * for many threads with one wait: they enter the sandbox side by side.
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
#include <stdlib.h>
#include <string.h>

#include "vmm/util/log.h"
#include "vmm/util/thread.h"

int (*thread_sandbox_hook)(enum thread_role role);

static __thread enum thread_role current_role = THREAD_MAIN;
static unsigned int hooked; /* thread_hooked_count() */

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

/* What the starter and its new threads share while they start. */
struct thread_batch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int pending; /* threads that have not reported yet */
};

struct thread_boot {
	enum thread_role role;
	char name[16];
	void *(*fn)(void *);
	void *arg;
	struct thread_batch *batch;
	pthread_t thread; /* out */
	int err;	  /* out: the sandbox hook's result (under batch->lock) */
};

static void *thread_trampoline(void *p)
{
	struct thread_boot *boot = p;
	struct thread_batch *batch = boot->batch;
	void *(*fn)(void *) = boot->fn;
	void *arg = boot->arg;
	bool hook_ran = false;
	void *ret;
	int err = 0;

	current_role = boot->role;
	pthread_setname_np(pthread_self(), boot->name);
	if (thread_sandbox_hook) {
		err = thread_sandbox_hook(boot->role);
		hook_ran = !err;
	}
	if (hook_ran)
		__atomic_add_fetch(&hooked, 1, __ATOMIC_SEQ_CST);

	pthread_mutex_lock(&batch->lock);
	boot->err = err;
	if (!--batch->pending)
		pthread_cond_signal(&batch->cond);
	pthread_mutex_unlock(&batch->lock);
	/* boot and batch belong to the starter again from here on */
	if (err)
		return NULL;
	ret = fn(arg);
	if (hook_ran)
		__atomic_sub_fetch(&hooked, 1, __ATOMIC_SEQ_CST);
	return ret;
}

unsigned int thread_hooked_count(void)
{
	return __atomic_load_n(&hooked, __ATOMIC_SEQ_CST);
}

/*
 * Create a thread for each boot[i], then wait until every one has run the
 * sandbox hook. boot[i].err: 0 running fn, else -errno (not created, or
 * failed the hook and joined here). Returns the first error.
 */
static int start_batch(struct thread_boot *boot, unsigned int n)
{
	static const int sync_signals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
					   SIGTRAP, SIGABRT, SIGSYS, THREAD_KICK_SIGNAL};
	struct thread_batch batch = {
	    .lock = PTHREAD_MUTEX_INITIALIZER,
	    .cond = PTHREAD_COND_INITIALIZER,
	    .pending = n,
	};
	unsigned int i, created;
	int first = 0, e;
	sigset_t all, old;

	/* The new threads inherit the mask in effect at pthread_create(). */
	sigfillset(&all);
	for (i = 0; i < sizeof(sync_signals) / sizeof(sync_signals[0]); i++)
		sigdelset(&all, sync_signals[i]);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (created = 0; created < n; created++) {
		boot[created].batch = &batch;
		e = pthread_create(&boot[created].thread, NULL, thread_trampoline, &boot[created]);
		if (e) {
			first = error_errno(-e, "thread: cannot start %s", boot[created].name);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&batch.lock);
	batch.pending -= n - created; /* those will never report */
	while (batch.pending)
		pthread_cond_wait(&batch.cond, &batch.lock);
	pthread_mutex_unlock(&batch.lock);
	for (i = created; i < n; i++)
		boot[i].err = first;
	for (i = 0; i < created; i++) {
		if (!boot[i].err)
			continue;
		pthread_join(boot[i].thread, NULL);
		error_errno(boot[i].err, "thread: %s could not enter the sandbox", boot[i].name);
		if (!first)
			first = boot[i].err;
	}
	return first;
}

static int boot_init(struct thread_boot *b, enum thread_role role, const char *name,
		     void *(*fn)(void *), void *arg)
{
	if ((unsigned int)role >= THREAD_ROLE_COUNT || role == THREAD_MAIN || !fn)
		return -EINVAL;
	*b = (struct thread_boot){.role = role, .fn = fn, .arg = arg};
	snprintf(b->name, sizeof(b->name), "%s", name && *name ? name : role_names[role]);
	return 0;
}

int thread_start(pthread_t *t, enum thread_role role, const char *name, void *(*fn)(void *),
		 void *arg)
{
	struct thread_boot boot;
	int err = boot_init(&boot, role, name, fn, arg);

	if (!err)
		err = start_batch(&boot, 1);
	if (!err)
		*t = boot.thread;
	return err;
}

int thread_start_all(enum thread_role role, struct thread_spec *specs, unsigned int n)
{
	struct thread_boot *boot;
	bool started = false;
	unsigned int i;
	int ret = 0;

	boot = n ? calloc(n, sizeof(*boot)) : NULL;
	if (n && !boot)
		ret = -ENOMEM;
	for (i = 0; i < n && !ret; i++)
		ret = boot_init(&boot[i], role, specs[i].name, specs[i].fn, specs[i].arg);
	if (!ret) {
		ret = start_batch(boot, n);
		started = true;
	}
	for (i = 0; i < n; i++) {
		specs[i].err = started ? boot[i].err : ret;
		if (!specs[i].err)
			specs[i].thread = boot[i].thread;
	}
	free(boot);
	return ret;
}
