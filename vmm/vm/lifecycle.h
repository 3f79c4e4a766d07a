/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.h - what happens when a guest ends: KubeVirt's runStrategy for
 * a single vmlet process.
 *
 *   strategy         powered off   rebooted   crashed    stopped (signal/ctl)
 *   Always           restart       restart    restart    exit
 *   RerunOnFailure   exit          restart    restart    exit
 *   Once (default)   exit          exit       exit       exit
 *   Manual           exit          exit       exit       exit
 *   Halted           the guest is not started: exit 0 at once
 *
 * "exit" ends vmlet with the status documented for how the guest ended
 * (README "Exit statuses"). Once is what a VM without runStrategy/running
 * gets, like a bare VirtualMachineInstance: run it, never restart it.
 * Manual differs from Once only in the cluster (virtctl start/stop); for
 * one process it runs the guest once.
 *
 * Restarts wait with exponential backoff (base, doubling, capped) when the
 * previous run was short; a guest that ran for at least stable_ms resets
 * the backoff, and a reboot after a stable run restarts immediately.
 *
 * Restarts happen in the same vmlet process tree without the pod
 * restarting: each guest run is a forked worker (fresh KVM VM, fresh
 * sandbox; the seccomp filter of a confined process cannot be lifted to
 * open /dev/kvm, disks and taps again). The supervising parent holds no
 * guest state; it forwards SIGTERM/SIGINT to the worker and waits. A
 * worker killed by SIGSYS (a seccomp violation) is never restarted.
 */
#ifndef VMLET_LIFECYCLE_H
#define VMLET_LIFECYCLE_H

#include <stdbool.h>
#include <stdint.h>

enum lifecycle_strategy {
	LC_ONCE = 0,
	LC_ALWAYS,
	LC_RERUN_ON_FAILURE,
	LC_MANUAL,
	LC_HALTED,
};

/* How one guest run ended. */
enum lifecycle_end {
	LC_END_POWEROFF = 0, /* the guest powered off */
	LC_END_REBOOT,	     /* the guest asked for a reset */
	LC_END_CRASH,	     /* triple fault, KVM internal error, failed entry */
	LC_END_STOPPED,	     /* vmlet stopped it: SIGTERM/SIGINT or ctl stop */
	LC_END_FAILED,	     /* the run could not start, or the worker died */
	LC_END_COUNT,
};

enum lifecycle_action { LC_EXIT = 0, LC_RESTART };

struct lifecycle {
	enum lifecycle_strategy strategy;
	uint64_t backoff_base_ms;  /* first delay after a short run (1000) */
	uint64_t backoff_max_ms;   /* cap (300000, KubeVirt's 5 minutes) */
	uint64_t stable_ms;	   /* a run this long resets the backoff (60000) */
	unsigned int restarts;	   /* restarts so far */
	int worker_signal;	   /* signal that killed the last worker, or 0 */
	unsigned long clone_flags; /* namespaces for each worker (CLONE_NEW*),
				    * 0 = a plain fork */
	bool always_fork;	   /* a single run in a worker too (the caller
				    * then has an unconfined process, e.g. to
				    * remove the control socket) */
	uint64_t next_backoff_ms;  /* delay for the next short-run restart */

	/* how the run before a restart ended (when restarts > 0) */
	enum lifecycle_end last_end;
};

/* "Always", "RerunOnFailure", "Once", "Manual", "Halted"; NULL = Once.
 * 0 or -EINVAL. */
int lifecycle_parse(const char *name, enum lifecycle_strategy *out);
const char *lifecycle_strategy_name(enum lifecycle_strategy s);
const char *lifecycle_end_name(enum lifecycle_end e);

void lifecycle_init(struct lifecycle *lc, enum lifecycle_strategy s);

/* True when the strategy may restart a guest (runs then use a worker). */
bool lifecycle_may_restart(const struct lifecycle *lc);

/*
 * The decision after a run that lasted ran_ms and ended with end. On
 * LC_RESTART, *delay_ms is how long to wait first and lc->restarts counts
 * it. A SIGSYS death is reported as LC_END_FAILED with sigsys = true.
 */
enum lifecycle_action lifecycle_next(struct lifecycle *lc, enum lifecycle_end end, uint64_t ran_ms,
				     bool sigsys, uint64_t *delay_ms);

/*
 * One guest run: returns how it ended. restarts is the number of restarts
 * before this run (for status and logs).
 */
typedef enum lifecycle_end (*lifecycle_run_fn)(void *ctx, unsigned int restarts);

/*
 * Run the guest under lc's strategy until the strategy says exit; returns
 * how the last run ended. Strategies that never restart call run in
 * this process (unless lc->always_fork); the others run each guest in a
 * forked worker. A
 * SIGTERM/SIGINT is forwarded to the worker and ends the loop after that
 * run (how the run ended is returned; a worker killed by the signal is
 * LC_END_STOPPED); during a backoff wait no guest runs, so it ends the loop
 * cleanly as LC_END_POWEROFF. A first run that fails to start
 * (LC_END_FAILED before any restart) is not restarted: it is a
 * configuration error a restart would repeat. Halted returns
 * LC_END_POWEROFF without running (and logs why).
 */
enum lifecycle_end lifecycle_run(struct lifecycle *lc, lifecycle_run_fn run, void *ctx);

/*
 * In a worker: the guest is being stopped from inside vmlet (ctl stop), so
 * when this run ends the loop must end too, as after a SIGTERM to the
 * supervisor. Async-signal-safe; harmless outside a worker.
 */
void lifecycle_request_stop(void);

#endif /* VMLET_LIFECYCLE_H */
