/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c - runStrategy: restart decisions, backoff and the worker
 * loop (see lifecycle.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm/vm/lifecycle.h"
#include "vmm/util/log.h"

static const char *const strategy_names[] = {
    [LC_ONCE] = "Once",	    [LC_ALWAYS] = "Always", [LC_RERUN_ON_FAILURE] = "RerunOnFailure",
    [LC_MANUAL] = "Manual", [LC_HALTED] = "Halted",
};

static const char *const end_names[LC_END_COUNT] = {
    [LC_END_POWEROFF] = "powered off", [LC_END_REBOOT] = "rebooted", [LC_END_CRASH] = "crashed",
    [LC_END_STOPPED] = "stopped",      [LC_END_FAILED] = "failed",
};

int lifecycle_parse(const char *name, enum lifecycle_strategy *out)
{
	size_t i;

	if (!name) {
		*out = LC_ONCE;
		return 0;
	}
	for (i = 0; i < sizeof(strategy_names) / sizeof(strategy_names[0]); i++)
		if (!strcmp(name, strategy_names[i])) {
			*out = (enum lifecycle_strategy)i;
			return 0;
		}
	return -EINVAL;
}

const char *lifecycle_strategy_name(enum lifecycle_strategy s)
{
	return (unsigned int)s <= LC_HALTED ? strategy_names[s] : "?";
}

const char *lifecycle_end_name(enum lifecycle_end e)
{
	return (unsigned int)e < LC_END_COUNT ? end_names[e] : "?";
}

void lifecycle_init(struct lifecycle *lc, enum lifecycle_strategy s)
{
	*lc = (struct lifecycle){
	    .strategy = s,
	    .backoff_base_ms = 1000,
	    .backoff_max_ms = 300000,
	    .stable_ms = 60000,
	};
	lc->next_backoff_ms = lc->backoff_base_ms;
}

bool lifecycle_may_restart(const struct lifecycle *lc)
{
	return lc->strategy == LC_ALWAYS || lc->strategy == LC_RERUN_ON_FAILURE;
}

static bool wants_restart(enum lifecycle_strategy s, enum lifecycle_end end)
{
	switch (end) {
	case LC_END_POWEROFF:
		return s == LC_ALWAYS;
	case LC_END_REBOOT:
	case LC_END_CRASH:
	case LC_END_FAILED:
		return s == LC_ALWAYS || s == LC_RERUN_ON_FAILURE;
	default:
		return false; /* stopped: the user wants it down */
	}
}

enum lifecycle_action lifecycle_next(struct lifecycle *lc, enum lifecycle_end end, uint64_t ran_ms,
				     bool sigsys, uint64_t *delay_ms)
{
	*delay_ms = 0;
	if (sigsys || !wants_restart(lc->strategy, end))
		return LC_EXIT;
	if (ran_ms >= lc->stable_ms) {
		/* a healthy run: forget earlier trouble */
		lc->next_backoff_ms = lc->backoff_base_ms;
		if (end != LC_END_REBOOT)
			*delay_ms = lc->backoff_base_ms;
	} else {
		*delay_ms = lc->next_backoff_ms;
		lc->next_backoff_ms *= 2;
		if (lc->next_backoff_ms > lc->backoff_max_ms)
			lc->next_backoff_ms = lc->backoff_max_ms;
	}
	lc->restarts++;
	return LC_RESTART;
}

/* ---- the worker loop ----------------------------------------------------- */

/* The child's exit status encodes how the run ended, plus
 * WORKER_STOP_FLAG when the worker was asked to stop from inside. */
#define WORKER_STATUS_BASE 100
#define WORKER_STOP_FLAG   16

static volatile sig_atomic_t stop_signal;
static volatile pid_t worker_pid;
static volatile sig_atomic_t stop_requested; /* in a worker */

void lifecycle_request_stop(void)
{
	stop_requested = 1;
}

/* A stop signal for the supervisor: passed on to the worker, unless the
 * kernel sent it (Ctrl-C or Ctrl-\ typed on the terminal): that goes to
 * the whole foreground process group, the worker got its own, and a copy
 * from here would be a second SIGINT (stop at once) it never had. */
static void forward_signal(int sig, siginfo_t *si, void *uctx)
{
	pid_t pid = worker_pid;

	(void)uctx;
	stop_signal = sig;
	if (pid > 0 && !(si && si->si_code == SI_KERNEL))
		kill(pid, sig);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The worker (the child of run_worker): the default stop handlers, no
 * life beyond the supervisor's, then one run of the guest; never returns. */
static void __attribute__((noreturn)) worker_main(const struct lifecycle *lc, lifecycle_run_fn run,
						  void *ctx, pid_t parent, const sigset_t *old)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	bool new_pidns = lc->clone_flags & CLONE_NEWPID;
	enum lifecycle_end end;

	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGINT, &dfl, NULL);
	/* no orphaned guest when the supervisor is killed (in a
	 * new PID namespace the parent is not visible: 0) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != (new_pidns ? 0 : parent))
		_exit(WORKER_STATUS_BASE + LC_END_FAILED);
	/* The init of a PID namespace drops a signal from outside
	 * that it neither handles nor blocks: keep the stop signals
	 * blocked there (vm_run() reads them from a signalfd). */
	if (!new_pidns)
		sigprocmask(SIG_SETMASK, old, NULL);
	stop_requested = 0;
	end = run(ctx, lc->restarts);
	fflush(NULL);
	_exit(WORKER_STATUS_BASE + (int)end + (stop_requested ? WORKER_STOP_FLAG : 0));
}

/* How worker pid ended (its wait status): the run's end, or LC_END_FAILED
 * with *signo (and *sigsys) for a worker killed by a signal. */
static enum lifecycle_end worker_end(pid_t pid, int status, bool *sigsys, int *signo)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) - WORKER_STATUS_BASE : -1;

	if (code >= 0 && (code & WORKER_STOP_FLAG)) {
		/* stopped from inside (ctl stop): end the loop as a signal would */
		stop_signal = SIGTERM;
		code &= ~WORKER_STOP_FLAG;
	}
	if (code >= 0 && code < LC_END_COUNT)
		return (enum lifecycle_end)code;
	if (WIFSIGNALED(status)) {
		*signo = WTERMSIG(status);
		*sigsys = WTERMSIG(status) == SIGSYS;
		error("lifecycle: worker %d killed by signal %d%s", (int)pid, WTERMSIG(status),
		      *sigsys ? " (seccomp violation: not restarting)" : "");
	} else {
		error("lifecycle: worker %d exited with status %d", (int)pid,
		      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	return LC_END_FAILED;
}

/* Run once in a forked worker; *sigsys when a seccomp violation killed it. */
static enum lifecycle_end run_worker(const struct lifecycle *lc, lifecycle_run_fn run, void *ctx,
				     bool *sigsys, int *signo)
{
	sigset_t stop_set, old;
	pid_t pid, parent;
	int status;

	*sigsys = false;
	*signo = 0;
	/* No stop signal in between: the parent learns worker_pid first, the
	 * worker restores the default handlers first. */
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	sigprocmask(SIG_BLOCK, &stop_set, &old);
	fflush(NULL);
	parent = getpid();
	/* clone with namespace flags is a fork into new namespaces (no
	 * CLONE_VM, no new stack: the child runs on a copy of ours) */
	pid = lc->clone_flags
		  ? (pid_t)syscall(SYS_clone, lc->clone_flags | SIGCHLD, NULL, NULL, NULL, NULL)
		  : fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		error_errno(-errno, "lifecycle: cannot start the worker%s",
			    lc->clone_flags ? " in new namespaces (--jail needs root)" : "");
		return LC_END_FAILED;
	}
	if (pid == 0)
		worker_main(lc, run, ctx, parent, &old);
	worker_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (stop_signal) /* asked to stop before this worker existed */
		kill(pid, stop_signal);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			error_errno(-errno, "lifecycle: waitpid");
			worker_pid = 0;
			return LC_END_FAILED;
		}
	worker_pid = 0;
	return worker_end(pid, status, sigsys, signo);
}

/* Sleep ms unless a stop signal arrives; false when stopped. */
static bool backoff_sleep(uint64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};

	while (!stop_signal && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return !stop_signal;
}

enum lifecycle_end lifecycle_run(struct lifecycle *lc, lifecycle_run_fn run, void *ctx)
{
	struct sigaction sa = {.sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO}, old_term,
			 old_int;
	enum lifecycle_end end;
	uint64_t t0, delay;
	bool sigsys;

	if (lc->strategy == LC_HALTED) {
		log_warn("lifecycle: runStrategy is Halted: the guest is not started (exit 0); "
			 "set runStrategy Always, RerunOnFailure, Once or Manual to run it");
		return LC_END_POWEROFF;
	}
	if (!lifecycle_may_restart(lc) && !lc->always_fork)
		return run(ctx, 0);

	stop_signal = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGINT, &sa, &old_int);
	for (;;) {
		t0 = now_ms();
		end = run_worker(lc, run, ctx, &sigsys, &lc->worker_signal);
		if (stop_signal) {
			/* asked to stop: never restart; a guest that powered
			 * off on the power button still ended cleanly; a
			 * seccomp kill is never taken for a stop */
			if (end == LC_END_FAILED && !sigsys)
				end = LC_END_STOPPED;
			/* the guest rebooted as the stop came, and would
			 * have been restarted: stopped before the restart */
			if (end == LC_END_REBOOT && wants_restart(lc->strategy, end))
				end = LC_END_POWEROFF;
			break;
		}
		if (end == LC_END_FAILED && !lc->restarts) {
			/* the first run could not start: a configuration
			 * error that a restart would repeat */
			log_warn("lifecycle: the guest failed to start: not restarting");
			break;
		}
		if (lifecycle_next(lc, end, now_ms() - t0, sigsys, &delay) == LC_EXIT)
			break;
		lc->last_end = end;
		log_warn("lifecycle: guest %s; runStrategy %s: restart %u in %llu ms",
			 lifecycle_end_name(end), lifecycle_strategy_name(lc->strategy),
			 lc->restarts, (unsigned long long)delay);
		if (!backoff_sleep(delay)) {
			/* no guest is running: stopping it is a clean end */
			log_info("lifecycle: stopped while waiting to restart the guest");
			end = LC_END_POWEROFF;
			break;
		}
	}
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	return end;
}
