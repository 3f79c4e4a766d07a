/* SPDX-License-Identifier: MIT */
/*
 * thread.h - vmlet's thread roles. Every thread vmlet creates has exactly
 * one role, set with thread_start(); the sandbox (vmm/sandbox/sandbox.c) installs
 * one seccomp filter per role, so a role is a promise about which syscalls
 * the thread makes.
 *
 *   THREAD_MAIN    setup, then the event loop: signals, control socket,
 *                  console input, timers, device events without their own
 *                  thread
 *   THREAD_VCPU    one per vCPU: KVM_RUN and exit dispatch to the buses
 *   THREAD_BLK_IO  one per disk (or queue): preadv/pwritev/fdatasync/fallocate
 *   THREAD_NET_IO  one per NIC: tap/socket read/write
 *   THREAD_HELPER  supervised children and slow helpers (passt, DHCP)
 */
#ifndef VMLET_THREAD_H
#define VMLET_THREAD_H

#include <pthread.h>
#include <signal.h>

/*
 * Threads started by thread_start() block every asynchronous signal except
 * this one, which the VMM sends to a vCPU thread to make it leave KVM_RUN
 * (its handler does nothing). Process signals go to the main thread's
 * signalfd.
 */
#define THREAD_KICK_SIGNAL SIGUSR1

enum thread_role {
	THREAD_MAIN = 0,
	THREAD_VCPU,
	THREAD_BLK_IO,
	THREAD_NET_IO,
	THREAD_HELPER,
	THREAD_ROLE_COUNT,
};

const char *thread_role_name(enum thread_role role);

/*
 * Start fn(arg) on a new thread with the given role and a name for
 * /proc (truncated to 15 characters). The thread's sandbox filter for its
 * role is installed before fn runs (when the sandbox is enabled).
 */
int thread_start(pthread_t *t, enum thread_role role, const char *name, void *(*fn)(void *),
		 void *arg);

/*
 * Start several threads of one role at once: what n thread_start() calls
 * do, but the new threads run the sandbox hook side by side and the caller
 * waits once for all of them instead of once per thread (on a loaded host
 * each wait is a scheduling delay: this is what starting 64 vCPU threads
 * costs). Each spec's err says how its thread fared: 0 it runs fn (join it
 * as usual), -errno it was never created or fn never ran (nothing to join).
 * Returns 0 when every thread runs, else one of the specs' errors.
 */
struct thread_spec {
	pthread_t thread; /* out */
	char name[16];	  /* for /proc; "" = the role's name */
	void *(*fn)(void *);
	void *arg;
	int err; /* out */
};
int thread_start_all(enum thread_role role, struct thread_spec *specs, unsigned int n);

/*
 * How many threads started here passed a thread_sandbox_hook and are
 * still running fn (counted from the hook's success until fn returns, so
 * each of them is still listed in /proc/self/task).
 */
unsigned int thread_hooked_count(void);

/* The calling thread's role (THREAD_MAIN for the initial thread). */
enum thread_role thread_current_role(void);

/*
 * Set by the sandbox (sandbox_prepare()) before any thread starts: called
 * on each new thread with its role before fn runs. A non-zero return
 * (-errno) makes thread_start() fail with it and fn never runs: a thread
 * never runs without the filter its role promises. NULL = none.
 */
extern int (*thread_sandbox_hook)(enum thread_role role);

#endif /* VMLET_THREAD_H */
