/* SPDX-License-Identifier: MIT */
/*
 * runStrategy for one process: the restart table, backoff, and the worker
 * loop (restarts in forked workers, SIGSYS never restarted, a stop signal
 * during backoff ends the loop, Once runs in-process, Halted never runs).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/vm/lifecycle.h"
#include "vmm/util/log.h"

static void test_parse(void)
{
	enum lifecycle_strategy s;

	CHECK(lifecycle_parse(NULL, &s) == 0 && s == LC_ONCE);
	CHECK(lifecycle_parse("Always", &s) == 0 && s == LC_ALWAYS);
	CHECK(lifecycle_parse("RerunOnFailure", &s) == 0 && s == LC_RERUN_ON_FAILURE);
	CHECK(lifecycle_parse("Manual", &s) == 0 && s == LC_MANUAL);
	CHECK(lifecycle_parse("Halted", &s) == 0 && s == LC_HALTED);
	CHECK(lifecycle_parse("Once", &s) == 0 && s == LC_ONCE);
	CHECK(lifecycle_parse("always", &s) == -EINVAL);
	CHECK(lifecycle_parse("", &s) == -EINVAL);
}

static void test_restart_table(void)
{
	/* expected[strategy][end]: 1 = restart */
	static const int expected[5][LC_END_COUNT] = {
	    [LC_ONCE] = {0, 0, 0, 0, 0},
	    [LC_ALWAYS] = {1, 1, 1, 0, 1},
	    [LC_RERUN_ON_FAILURE] = {0, 1, 1, 0, 1},
	    [LC_MANUAL] = {0, 0, 0, 0, 0},
	    [LC_HALTED] = {0, 0, 0, 0, 0},
	};
	int s, e;

	for (s = 0; s <= LC_HALTED; s++)
		for (e = 0; e < LC_END_COUNT; e++) {
			struct lifecycle lc;
			uint64_t d;

			lifecycle_init(&lc, (enum lifecycle_strategy)s);
			if ((lifecycle_next(&lc, (enum lifecycle_end)e, 5, false, &d) ==
			     LC_RESTART) != expected[s][e])
				test_fail(__FILE__, __LINE__, "%s after %s",
					  lifecycle_strategy_name((enum lifecycle_strategy)s),
					  lifecycle_end_name((enum lifecycle_end)e));
		}
}

static void test_backoff(void)
{
	struct lifecycle lc;
	uint64_t d;
	int i;

	lifecycle_init(&lc, LC_ALWAYS);
	lc.backoff_base_ms = 100;
	lc.backoff_max_ms = 1000;
	lc.next_backoff_ms = 100;
	/* short runs: 100, 200, 400, 800, then capped at 1000 */
	CHECK(lifecycle_next(&lc, LC_END_CRASH, 10, false, &d) == LC_RESTART && d == 100);
	CHECK(lifecycle_next(&lc, LC_END_REBOOT, 10, false, &d) == LC_RESTART && d == 200);
	CHECK(lifecycle_next(&lc, LC_END_CRASH, 10, false, &d) == LC_RESTART && d == 400);
	CHECK(lifecycle_next(&lc, LC_END_CRASH, 10, false, &d) == LC_RESTART && d == 800);
	for (i = 0; i < 3; i++)
		CHECK(lifecycle_next(&lc, LC_END_CRASH, 10, false, &d) == LC_RESTART && d == 1000);
	CHECK(lc.restarts == 7);
	/* a stable run resets it; a reboot after a stable run is immediate */
	CHECK(lifecycle_next(&lc, LC_END_REBOOT, lc.stable_ms, false, &d) == LC_RESTART && d == 0);
	CHECK(lifecycle_next(&lc, LC_END_CRASH, 10, false, &d) == LC_RESTART && d == 100);
	CHECK(lifecycle_next(&lc, LC_END_CRASH, lc.stable_ms + 1, false, &d) == LC_RESTART &&
	      d == 100);
	/* a seccomp kill is never restarted */
	CHECK(lifecycle_next(&lc, LC_END_FAILED, 10, true, &d) == LC_EXIT);
}

/* ---- the loop ------------------------------------------------------------ */

static int runs_pipe[2];
static int in_parent_runs;

/* crash twice, then power off; records each run (and its pid) */
static enum lifecycle_end crash_twice(void *ctx, unsigned int restarts)
{
	char c = (char)('0' + restarts);

	(void)ctx;
	in_parent_runs += getpid() == *(pid_t *)ctx;
	if (write(runs_pipe[1], &c, 1) != 1)
		return LC_END_FAILED;
	return restarts < 2 ? LC_END_CRASH : LC_END_POWEROFF;
}

static int count_runs(char *seen, size_t len)
{
	int n = 0;

	while (n < (int)len - 1 && read(runs_pipe[0], seen + n, 1) == 1)
		n++;
	seen[n] = 0;
	return n;
}

static void fast(struct lifecycle *lc)
{
	lc->backoff_base_ms = lc->next_backoff_ms = 10;
}

static void test_loop_rerun_on_failure(void)
{
	pid_t self = getpid();
	struct lifecycle lc;
	char seen[16];

	CHECK(pipe2(runs_pipe, O_NONBLOCK) == 0);
	lifecycle_init(&lc, LC_RERUN_ON_FAILURE);
	fast(&lc);
	in_parent_runs = 0;
	CHECK(lifecycle_run(&lc, crash_twice, &self) == LC_END_POWEROFF);
	CHECK(lc.restarts == 2);
	CHECK(count_runs(seen, sizeof(seen)) == 3 && !strcmp(seen, "012"));
	CHECK(in_parent_runs == 0); /* each run was a worker */

	/* Once: one run, in this process, however it ended */
	lifecycle_init(&lc, LC_ONCE);
	CHECK(lifecycle_run(&lc, crash_twice, &self) == LC_END_CRASH);
	CHECK(count_runs(seen, sizeof(seen)) == 1 && in_parent_runs == 1);

	/* Halted: never runs */
	lifecycle_init(&lc, LC_HALTED);
	CHECK(lifecycle_run(&lc, crash_twice, &self) == LC_END_POWEROFF);
	CHECK(count_runs(seen, sizeof(seen)) == 0);
	close(runs_pipe[0]);
	close(runs_pipe[1]);
}

static enum lifecycle_end die_sigsys(void *ctx, unsigned int restarts)
{
	(void)ctx;
	(void)restarts;
	signal(SIGSYS, SIG_DFL);
	raise(SIGSYS);
	return LC_END_POWEROFF;
}

static void test_loop_sigsys_not_restarted(void)
{
	struct lifecycle lc;

	lifecycle_init(&lc, LC_ALWAYS);
	fast(&lc);
	CHECK(lifecycle_run(&lc, die_sigsys, NULL) == LC_END_FAILED);
	CHECK(lc.restarts == 0);
}

static enum lifecycle_end always_crash(void *ctx, unsigned int restarts)
{
	(void)ctx;
	(void)restarts;
	return LC_END_CRASH;
}

/* Is process pid in a (clock_)nanosleep system call? (/proc/PID/syscall) */
static int in_sleep(pid_t pid)
{
	char path[64], buf[64] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	return atoi(buf) == 35 || atoi(buf) == 230; /* nanosleep, clock_nanosleep */
}

/* SIGTERM while waiting to restart: the loop ends at once, cleanly (no
 * guest was running) */
static void test_loop_stop_during_backoff(void)
{
	struct lifecycle lc;
	struct timespec t0, t1;
	pid_t killer;

	lifecycle_init(&lc, LC_ALWAYS);
	lc.backoff_base_ms = lc.next_backoff_ms = 20000;
	killer = fork();
	if (killer == 0) {
		/* the stop comes during the backoff wait, however long a
		 * loaded host takes to get there (without /proc: 0.3 s) */
		pid_t parent = getppid();
		int i;

		for (i = 0; i < 3000 && in_sleep(parent) == 0; i++)
			usleep(10000);
		if (in_sleep(parent) < 0)
			usleep(300000);
		kill(parent, SIGTERM);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(lifecycle_run(&lc, always_crash, NULL) == LC_END_POWEROFF);
	CHECK(lc.restarts == 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 10);
	waitpid(killer, NULL, 0);
}

/* fail to start first: not restarted; fail after a restart: restarted */
static enum lifecycle_end fail_first(void *ctx, unsigned int restarts)
{
	(void)ctx;
	(void)restarts;
	return LC_END_FAILED;
}

static enum lifecycle_end crash_then_fail(void *ctx, unsigned int restarts)
{
	(void)ctx;
	if (restarts == 0)
		return LC_END_CRASH;
	if (restarts == 1)
		return LC_END_FAILED;
	return LC_END_POWEROFF;
}

static void test_loop_failed_start(void)
{
	struct lifecycle lc;

	lifecycle_init(&lc, LC_ALWAYS);
	fast(&lc);
	CHECK(lifecycle_run(&lc, fail_first, NULL) == LC_END_FAILED);
	CHECK(lc.restarts == 0);
	lifecycle_init(&lc, LC_RERUN_ON_FAILURE);
	fast(&lc);
	CHECK(lifecycle_run(&lc, crash_then_fail, NULL) == LC_END_POWEROFF);
	CHECK(lc.restarts == 2);
}

/* a worker asked to stop from inside (ctl stop) ends the loop */
static enum lifecycle_end stop_from_inside(void *ctx, unsigned int restarts)
{
	(void)ctx;
	if (restarts == 0)
		return LC_END_REBOOT;
	lifecycle_request_stop();
	return LC_END_POWEROFF; /* powered off on the power button */
}

static void test_loop_stop_from_inside(void)
{
	struct lifecycle lc;

	lifecycle_init(&lc, LC_ALWAYS);
	fast(&lc);
	CHECK(lifecycle_run(&lc, stop_from_inside, NULL) == LC_END_POWEROFF);
	CHECK(lc.restarts == 1);
}

/* SIGTERM reaches the running worker; the loop does not restart it */
static int ready_pipe[2];

static enum lifecycle_end wait_for_term(void *ctx, unsigned int restarts)
{
	sigset_t set;
	int sig;

	(void)ctx;
	(void)restarts;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (write(ready_pipe[1], "r", 1) != 1) /* now the stop may come */
		return LC_END_FAILED;
	sigwait(&set, &sig);
	return LC_END_POWEROFF; /* the guest shut down after the power button */
}

/* lifecycle_run (Always) with run, the supervisor sent SIGTERM once the
 * worker said it is ready (ready_pipe) */
static enum lifecycle_end run_with_stop(struct lifecycle *lc, lifecycle_run_fn run)
{
	enum lifecycle_end end;
	pid_t killer;
	char c;

	CHECK(pipe(ready_pipe) == 0);
	lifecycle_init(lc, LC_ALWAYS);
	fast(lc);
	killer = fork();
	if (killer == 0) {
		if (read(ready_pipe[0], &c, 1) == 1)
			kill(getppid(), SIGTERM);
		_exit(0);
	}
	end = lifecycle_run(lc, run, NULL);
	waitpid(killer, NULL, 0);
	close(ready_pipe[0]);
	close(ready_pipe[1]);
	return end;
}

static void test_loop_forwards_stop(void)
{
	struct lifecycle lc;

	/* the guest powered off on the power button: a clean end, no restart */
	CHECK(run_with_stop(&lc, wait_for_term) == LC_END_POWEROFF);
	CHECK(lc.restarts == 0);
}

/* the guest reboots just as the stop comes: the restart it would get is
 * not done, and that is a clean stop (exit 0), not "rebooted" (exit 3) */
static enum lifecycle_end term_then_reboot(void *ctx, unsigned int restarts)
{
	(void)wait_for_term(ctx, restarts);
	return LC_END_REBOOT;
}

static void test_loop_stop_as_guest_reboots(void)
{
	struct lifecycle lc;

	CHECK(run_with_stop(&lc, term_then_reboot) == LC_END_POWEROFF);
	CHECK(lc.restarts == 0);
}

/* the worker is told to stop, then a seccomp violation kills it while it
 * tears down: that is reported (128+31 from vmlet), never a clean stop */
static enum lifecycle_end term_then_sigsys(void *ctx, unsigned int restarts)
{
	(void)wait_for_term(ctx, restarts);
	signal(SIGSYS, SIG_DFL);
	raise(SIGSYS);
	return LC_END_POWEROFF;
}

static void test_loop_sigsys_after_stop(void)
{
	struct lifecycle lc;

	CHECK(run_with_stop(&lc, term_then_sigsys) == LC_END_FAILED);
	CHECK(lc.worker_signal == SIGSYS);
	CHECK(lc.restarts == 0);
}

int main(void)
{
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "lifecycle-test", NULL);
	alarm(60);
	TEST_RUN(test_parse);
	TEST_RUN(test_restart_table);
	TEST_RUN(test_backoff);
	TEST_RUN(test_loop_rerun_on_failure);
	TEST_RUN(test_loop_sigsys_not_restarted);
	TEST_RUN(test_loop_stop_during_backoff);
	TEST_RUN(test_loop_forwards_stop);
	TEST_RUN(test_loop_stop_as_guest_reboots);
	TEST_RUN(test_loop_sigsys_after_stop);
	TEST_RUN(test_loop_failed_start);
	TEST_RUN(test_loop_stop_from_inside);
	return test_summary();
}
