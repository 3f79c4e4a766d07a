/* SPDX-License-Identifier: MIT */
/*
 * sandbox.c - seccomp filters per thread role, capabilities, --user (see
 * sandbox.h for the contract, sandbox_rules.c for the allowlists).
 *
 * A role's filter is compiled once with libseccomp, when it is first needed
 * (sandbox.h: "Compiled on first need"), and kept as raw BPF; installing it
 * on a thread is then one seccomp(2) call with no allocation.
 */
#include <cap-ng.h>
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "vmm/sandbox/jail.h"
#include "vmm/util/log.h"
#include "vmm/sandbox/caps.h"
#include "vmm/sandbox/connector.h"
#include "vmm/sandbox/sandbox.h"
#include "vmm/sandbox/sandbox_rules.h"

static struct {
	bool prepared;
	bool dropped; /* main dropped its privileges (sandbox_drop_privileges) */
	bool applied;
	int task_dir;	 /* /proc/self/task, opened before a --jail pivot */
	pid_t task_self; /* main's number in that directory */
	struct sandbox_opts opts;
	struct sock_fprog prog[THREAD_ROLE_COUNT]; /* .filter NULL: not compiled */
	unsigned int n_rules[THREAD_ROLE_COUNT];
	long compile_us; /* summed over every role compiled so far */
	long install_ns; /* summed over every thread's seccomp() call */
	int pdeath_sig;	 /* main's parent-death signal before the drop */
	pid_t parent;	 /* getppid() then */
} sb = {.task_dir = -1};

/* Serialises compiling (libseccomp, sb.prog[], sb.n_rules[], compile_us):
 * the first threads of two roles may start side by side. */
static pthread_mutex_t compile_lock = PTHREAD_MUTEX_INITIALIZER;

int sandbox_parse_seccomp(const char *arg, enum sandbox_seccomp *out)
{
	if (!strcmp(arg, "kill") || !strcmp(arg, "on"))
		*out = SANDBOX_SECCOMP_KILL;
	else if (!strcmp(arg, "log"))
		*out = SANDBOX_SECCOMP_LOG;
	else if (!strcmp(arg, "off"))
		*out = SANDBOX_SECCOMP_OFF;
	else
		return -EINVAL;
	return 0;
}

static int parse_id(const char *s, const char *end, unsigned long *out)
{
	char *e;

	if (s == end || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &e, 10);
	if (errno || e != end || *out >= UINT_MAX)
		return -EINVAL;
	return 0;
}

int sandbox_parse_user(const char *arg, struct sandbox_opts *opts)
{
	const char *colon = strchr(arg, ':');
	unsigned long uid, gid;

	if (!colon || parse_id(arg, colon, &uid) ||
	    parse_id(colon + 1, colon + strlen(colon), &gid))
		return -EINVAL;
	opts->set_user = true;
	opts->uid = (uid_t)uid;
	opts->gid = (gid_t)gid;
	return 0;
}

bool sandbox_default_user(struct sandbox_opts *opts)
{
	if (opts->set_user || geteuid() != 0)
		return false;
	/* root without the right to change ids (a container's root with its
	 * capabilities dropped): it stays uid 0, as before; say so */
	if (!sandbox_have_cap(CAP_SETUID) || !sandbox_have_cap(CAP_SETGID)) {
		log_warn("sandbox: running as root without CAP_SETUID/CAP_SETGID: staying uid 0 "
			 "(no capabilities); run vmlet as a non-root user, or give it the "
			 "capabilities and --user UID:GID");
		return false;
	}
	opts->set_user = true;
	opts->uid = SANDBOX_DEFAULT_UID;
	opts->gid = SANDBOX_DEFAULT_GID;
	return true;
}

static long elapsed_ns(const struct timespec *a, const struct timespec *b);
static int confine_connector(void);

int sandbox_option(struct sandbox_opts *o, int c, const char *arg)
{
	switch (c) {
	case SANDBOX_OPT_SECCOMP:
		if (!sandbox_parse_seccomp(arg, &o->seccomp))
			return 0;
		fprintf(stderr, "vmlet: --seccomp takes kill, log or off, not '%s'\n", arg);
		return -1;
	case SANDBOX_OPT_USER:
		if (!sandbox_parse_user(arg, o))
			return 0;
		fprintf(stderr, "vmlet: --user takes UID:GID (numbers), not '%s'\n", arg);
		return -1;
	default:
		return 1;
	}
}

bool sandbox_prepared(void)
{
	return sb.prepared;
}

bool sandbox_applied(void)
{
	return sb.applied;
}

long sandbox_compile_us(void)
{
	return __atomic_load_n(&sb.compile_us, __ATOMIC_RELAXED);
}

long sandbox_install_ns(void)
{
	return __atomic_load_n(&sb.install_ns, __ATOMIC_RELAXED);
}

unsigned int sandbox_rule_count(enum thread_role role)
{
	unsigned int n;

	if ((unsigned int)role >= THREAD_ROLE_COUNT)
		return 0;
	pthread_mutex_lock(&compile_lock);
	n = sb.n_rules[role];
	pthread_mutex_unlock(&compile_lock);
	return n;
}

const struct sock_fprog *sandbox_program(enum thread_role role)
{
	const struct sock_fprog *p = NULL;

	if ((unsigned int)role >= THREAD_ROLE_COUNT)
		return NULL;
	pthread_mutex_lock(&compile_lock);
	if (sb.prog[role].filter)
		p = &sb.prog[role];
	pthread_mutex_unlock(&compile_lock);
	return p;
}

/* ---- compiling (sandbox_compile.c) -------------------------------------- */

/*
 * Compile role's filter if it is not compiled yet, or again if fresh (the
 * vCPU's, whose read/write rules follow the fds open now). Threads that
 * installed the earlier program keep it (the kernel holds its own copy).
 * Nothing to do with --seccomp=off. 0 or -errno (logged).
 */
static int compile_role(enum thread_role role, bool fresh)
{
	struct timespec t0, t1;
	int err = 0;

	if (sb.opts.seccomp == SANDBOX_SECCOMP_OFF)
		return 0;
	pthread_mutex_lock(&compile_lock);
	if (fresh || !sb.prog[role].filter) {
		free(sb.prog[role].filter);
		sb.prog[role].filter = NULL;
		sb.prog[role].len = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = sandbox_compile(role, &sb.opts, &sb.prog[role], &sb.n_rules[role]);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		__atomic_add_fetch(&sb.compile_us, elapsed_ns(&t0, &t1) / 1000, __ATOMIC_RELAXED);
		log_debug("sandbox: %s filter compiled in %ld us (%u rules)",
			  thread_role_name(role), elapsed_ns(&t0, &t1) / 1000, sb.n_rules[role]);
	}
	pthread_mutex_unlock(&compile_lock);
	return err;
}

/*
 * libc state that is set up lazily from files: do it now, while files may
 * still be opened. (gmtime_r(), used by the JSON log, loads the time zone
 * on first use. A thread arena's first trim, which reads
 * /proc/sys/vm/overcommit_memory, cannot happen: main() keeps one arena.)
 */
static void warm_up_libc(void)
{
	time_t now = time(NULL);
	struct tm tm;
	char buf[64];

	tzset();
	gmtime_r(&now, &tm);
	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, sizeof(buf), "%s", strerror(EPERM));
	/* json-c seeds its string hash on first use (getrandom or
	 * /dev/urandom): the probe's -o json and the control socket */
	json_object_put(json_tokener_parse("{\"verb\":\"status\"}"));
}

void sandbox_malloc_setup(void)
{
	mallopt(M_ARENA_MAX, 1);
}

int sandbox_prepare(const struct sandbox_opts *opts)
{
	if (sb.prepared)
		sandbox_release();
	sb.opts = *opts;
	connector_confine = confine_connector;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_errno(-errno, "sandbox: PR_SET_NO_NEW_PRIVS");
	sandbox_test_hook_parse();
	warm_up_libc();
	/* No filter is compiled here: each role's on first need. */
	sb.compile_us = 0;
	sb.install_ns = 0;
	sb.prepared = true;
	thread_sandbox_hook = sandbox_thread_enter;
	return 0;
}

void sandbox_release(void)
{
	int r;

	for (r = 0; r < THREAD_ROLE_COUNT; r++) {
		free(sb.prog[r].filter);
		sb.prog[r].filter = NULL;
		sb.prog[r].len = 0;
		sb.n_rules[r] = 0;
	}
	if (sb.task_dir >= 0)
		close(sb.task_dir);
	sb.task_dir = -1;
	sb.prepared = false;
	sb.dropped = false;
	sb.applied = false;
	thread_sandbox_hook = NULL;
}

/* ---- confining a thread -------------------------------------------------- */

/*
 * Drop the calling thread's privileges: the capability bounding set while
 * we may, then uid/gid (raw syscalls: glibc's wrappers would broadcast to
 * every thread, including confined ones that may not call them), then every
 * remaining capability. Threads started after main dropped its own
 * (sandbox_drop_privileges()) inherited the result and have nothing to do.
 */
static int drop_privileges_self(void)
{
	const struct sandbox_opts *o = &sb.opts;
	bool switch_user;

	if (__atomic_load_n(&sb.dropped, __ATOMIC_ACQUIRE))
		return 0; /* started by an unprivileged main: inherited all of it */
	switch_user = o->set_user && (geteuid() != o->uid || getegid() != o->gid);
	/* Empty the bounding set. Without CAP_SETPCAP this fails and there
	 * is nothing to gain back from it anyway (no_new_privs is set). */
	capng_clear(CAPNG_SELECT_BOTH);
	capng_apply(CAPNG_SELECT_BOUNDS);
	if (switch_user) {
		if (getuid() == 0 && syscall(SYS_setgroups, 0, NULL) < 0)
			return error_errno(-errno, "sandbox: setgroups");
		if (syscall(SYS_setresgid, o->gid, o->gid, o->gid) < 0)
			return error_errno(-errno, "sandbox: setresgid(%u)", o->gid);
		if (syscall(SYS_setresuid, o->uid, o->uid, o->uid) < 0)
			return error_errno(-errno, "sandbox: setresuid(%u)", o->uid);
	}
	capng_clear(CAPNG_SELECT_CAPS);
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return error_errno(-EPERM, "sandbox: dropping capabilities");
	return 0;
}

/* The connector's child (connector.h), single-threaded after fork: as
 * confined as vmlet will be (--user, no capability) and its own filter. */
static int confine_connector(void)
{
	int err;

	if (!sb.prepared)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	err = drop_privileges_self();
	return err ? err : connector_filter(sb.opts.seccomp);
}

static long elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec);
}

static int install_filter(enum thread_role role)
{
	struct timespec t0, t1;

	if (sb.opts.seccomp == SANDBOX_SECCOMP_OFF)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &sb.prog[role]) < 0)
		return error_errno(-errno, "sandbox: installing the %s filter",
				   thread_role_name(role));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__atomic_add_fetch(&sb.install_ns, elapsed_ns(&t0, &t1), __ATOMIC_RELAXED);
	return 0;
}

int sandbox_thread_enter(enum thread_role role)
{
	int err;

	if (!sb.prepared)
		return 0;
	if ((unsigned int)role >= THREAD_ROLE_COUNT || role == THREAD_MAIN)
		return -EINVAL;
	/* Set up this thread's malloc arena while mmap is unrestricted. */
	free(malloc(64));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_errno(-errno, "sandbox: PR_SET_NO_NEW_PRIVS");
	err = drop_privileges_self();
	if (!err)
		err = compile_role(role, false);
	if (!err)
		err = install_filter(role);
	if (!err)
		sandbox_test_hook_run(role);
	return err;
}

/* This thread's id as /proc numbers it: in a new PID namespace (--jail)
 * gettid() is the namespace's number, /proc shows the host's. */
static pid_t proc_tid(void)
{
	char link[64];
	ssize_t n = readlink("/proc/thread-self", link, sizeof(link) - 1);
	const char *t;

	if (n > 0) {
		link[n] = 0;
		t = strstr(link, "/task/");
		if (t)
			return (pid_t)atoi(t + 6);
	}
	return (pid_t)syscall(SYS_gettid);
}

/* /proc/self/task, or the handle kept across a --jail pivot. */
static DIR *open_task_dir(void)
{
	int fd = sb.task_dir >= 0 ? openat(sb.task_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
				  : open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0)
		close(fd);
	return d;
}

/*
 * The quick answer: as many tasks as main plus the threads that entered
 * the sandbox through thread_start() and still run (those are all listed:
 * thread.c counts one from its hook's success until its fn returns, and a
 * thread that got here another way would make the listing longer). Saves
 * reading every thread's status (~30 us each) on the way to the first guest
 * instruction. False: look at each one.
 */
static bool all_tasks_hooked(void)
{
	unsigned int tasks = 0, hooked = thread_hooked_count();
	struct dirent *de;
	DIR *d = open_task_dir();

	if (!d)
		return false;
	while ((de = readdir(d)))
		if (atoi(de->d_name) > 0)
			tasks++;
	closedir(d);
	return tasks == hooked + 1 && hooked == thread_hooked_count();
}

/* Every other thread must have entered the sandbox (Seccomp: 2). */
static int check_threads_confined(void)
{
	pid_t self = sb.task_dir >= 0 ? sb.task_self : proc_tid();
	struct dirent *de;
	char path[32], line[128];
	int err = 0, fd;
	DIR *d;

	if (sb.opts.seccomp == SANDBOX_SECCOMP_OFF || all_tasks_hooked())
		return 0;
	d = open_task_dir();
	if (!d)
		return error_errno(-errno, "sandbox: /proc/self/task");
	while (!err && (de = readdir(d))) {
		int tid = atoi(de->d_name);
		bool confined = false;
		FILE *f;

		if (tid <= 0 || tid == self)
			continue;
		snprintf(path, sizeof(path), "%d/status", tid);
		fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
		f = fd >= 0 ? fdopen(fd, "re") : NULL;
		if (!f) {
			if (fd >= 0)
				close(fd);
			continue; /* the thread exited meanwhile */
		}
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "Seccomp:", 8))
				confined = atoi(line + 8) == SECCOMP_MODE_FILTER;
		fclose(f);
		if (!confined)
			err = error_errno(-EPERM,
					  "sandbox: thread %d was started without "
					  "thread_start() and is not confined",
					  tid);
	}
	closedir(d);
	return err;
}

/*
 * A change of user clears the parent-death signal (prctl(2)), by which a
 * lifecycle worker dies with its supervisor (lifecycle.c): set it again,
 * then make sure the parent did not die in between (its pid, 0 in a new
 * PID namespace where the parent is not visible, would change).
 */
static int rearm_parent_death(void)
{
	if (!sb.pdeath_sig || prctl(PR_SET_PDEATHSIG, sb.pdeath_sig, 0, 0, 0) == 0) {
		if (!sb.pdeath_sig || getppid() == sb.parent)
			return 0;
		return error_errno(-ESRCH, "sandbox: the supervising process is gone");
	}
	return error_errno(-errno, "sandbox: PR_SET_PDEATHSIG");
}

int sandbox_drop_privileges(void)
{
	int r, err = 0;

	if (!sb.prepared)
		return error_errno(-EINVAL,
				   "sandbox: dropping privileges before sandbox_prepare()");
	if (sb.dropped)
		return 0;
	if (thread_current_role() != THREAD_MAIN)
		return error_errno(-EINVAL, "sandbox: privileges are dropped on the main thread");
	if (prctl(PR_GET_PDEATHSIG, &sb.pdeath_sig, 0, 0, 0) < 0)
		sb.pdeath_sig = 0;
	sb.parent = getppid();
	/* sandbox_apply() still looks at every thread through /proc, which
	 * a --jail pivot leaves behind: keep a handle on it */
	if (sb.opts.jail_dir && sb.opts.seccomp != SANDBOX_SECCOMP_OFF) {
		sb.task_dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sb.task_dir < 0)
			return error_errno(-errno, "sandbox: /proc/self/task");
		sb.task_self = proc_tid();
	}
	/* The vCPU threads start after this, everything is open: build their
	 * read/write rules from the fds open now (before a --jail pivot hides
	 * /proc). Main's filter, and those of the roles main may start once
	 * confined (which could not compile then), are compiled now too. */
	err = compile_role(THREAD_VCPU, true);
	if (!err)
		err = compile_role(THREAD_MAIN, false);
	for (r = 1; !err && r < THREAD_ROLE_COUNT; r++)
		if (sb.opts.late_roles & SANDBOX_ROLE_BIT(r))
			err = compile_role(r, false);
	if (err)
		return err;
	if (sb.opts.jail_dir)
		err = jail_enter(sb.opts.jail_dir);
	if (!err)
		err = drop_privileges_self();
	if (!err)
		err = rearm_parent_death();
	if (err)
		return err;
	__atomic_store_n(&sb.dropped, true, __ATOMIC_RELEASE);
	return 0;
}

int sandbox_apply(void)
{
	unsigned int uid;
	int err;

	if (!sb.prepared)
		return error_errno(-EINVAL, "sandbox: sandbox_apply() before sandbox_prepare()");
	err = check_threads_confined();
	if (!err)
		err = sandbox_drop_privileges();
	uid = (unsigned int)geteuid(); /* not allowed once confined */
#if defined(__SANITIZE_ADDRESS__)
	/* LeakSanitizer's exit-time check cannot run confined (it needs
	 * ptrace and /proc): check now, which also disables the later one. */
	if (!err)
		__lsan_do_leak_check();
#endif
	if (!err)
		err = install_filter(THREAD_MAIN);
	if (err)
		return err;
	sb.applied = true;
	log_info("sandbox: applied: seccomp %s, %u main rules, filters compiled in %ld us, "
		 "installed in %ld us (all threads so far), uid %u, no capabilities",
		 sb.opts.seccomp == SANDBOX_SECCOMP_OFF	  ? "off"
		 : sb.opts.seccomp == SANDBOX_SECCOMP_LOG ? "log"
							  : "kill",
		 sb.n_rules[THREAD_MAIN], sb.compile_us, sandbox_install_ns() / 1000, uid);
	sandbox_test_hook_run(THREAD_MAIN);
	return 0;
}
