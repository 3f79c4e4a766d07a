/* SPDX-License-Identifier: MIT */
/*
 * The sandbox, one thread role at a time, each in a forked child: a role's
 * everyday calls pass its filter; a forbidden call (through the
 * VMLET_TEST_FORBIDDEN hook) kills the process with SIGSYS; --seccomp=log
 * and off let it through; a confined thread has Seccomp 2, NoNewPrivs 1
 * and no capabilities.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/util/log.h"
#include "vmm/sandbox/sandbox.h"
#include "vmm/sandbox/sandbox_rules.h"
#include "vmm/util/thread.h"

static const enum thread_role all_roles[] = {
    THREAD_MAIN, THREAD_VCPU, THREAD_BLK_IO, THREAD_NET_IO, THREAD_HELPER,
};

/* opened before confinement, as vmlet's setup does */
static int scratch_fd = -1; /* a file for block I/O */
static int pipe_fds[2] = {-1, -1};
static int net_pair[2] = {-1, -1}; /* a passt stream */
/* a virtio-console port's socket, bound in setup, and a host client */
static int port_listen = -1, port_client = -1;
static int kick_fd = -1; /* an eventfd */

/* Run fn in a forked child; return its wait status. */
static int in_child(int (*fn)(void *), void *arg)
{
	int status = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static bool killed_by_sigsys(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

static bool exited_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---- what each role does every day -------------------------------------- */

static int common_work(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timespec ts = {0, 1000};
	char *big;

	big = malloc(4 << 20); /* mmap'd */
	if (!big)
		return 10;
	memset(big, 1, 4 << 20);
	free(big);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	nanosleep(&(struct timespec){0, 1000}, NULL);
	log_debug("sandbox test: %s thread alive", thread_role_name(thread_current_role()));
	return 0;
}

static int vcpu_work(void)
{
	int ret;

	uint64_t one = 1;

	/* a KVM_RUN on a non-KVM fd: ENOTTY, but the filter lets it through */
	ret = ioctl(pipe_fds[0], KVM_RUN, 0);
	if (ret != -1 || errno != ENOTTY)
		return 21;
	/* a kick: the vCPU writes eventfds */
	if (write(kick_fd, &one, sizeof(one)) != sizeof(one))
		return 22;
	return 0;
}

static int blk_work(void)
{
	char buf[512] = "sector", back[512];
	struct iovec iov = {buf, sizeof(buf)}, iov2 = {back, sizeof(back)};

	if (pwritev(scratch_fd, &iov, 1, 4096) != sizeof(buf))
		return 30;
	if (preadv(scratch_fd, &iov2, 1, 4096) != sizeof(back) || memcmp(buf, back, 512))
		return 31;
	if (fdatasync(scratch_fd))
		return 32;
	if (fallocate(scratch_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 512) &&
	    errno != EOPNOTSUPP)
		return 33;
	if (fallocate(scratch_fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 4096, 512) &&
	    errno != EOPNOTSUPP)
		return 34;
	return 0;
}

static int net_work(void)
{
	char c = 'f', d = 0;
	struct iovec out = {&c, 1}, in = {&d, 1};
	int s;

	/* passt's stream, made in setup: frames both ways, then closed */
	if (send(net_pair[0], &c, 1, 0) != 1 || recv(net_pair[1], &d, 1, 0) != 1 || d != c)
		return 40;
	s = net_pair[0];
	net_pair[0] = -1;
	close(s);
	if (writev(STDERR_FILENO, &out, 0) != 0)
		return 41;
	if (readv(-1, &in, 1) != -1 || errno != EBADF)
		return 42;
	/* virtio-console: the host client accepted, peeked at, answered */
	s = accept4(port_listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (s < 0 || recv(s, &d, 1, MSG_PEEK | MSG_DONTWAIT) != 1 ||
	    sendmsg(s, &(struct msghdr){.msg_iov = &out, .msg_iovlen = 1},
		    MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
		return 43;
	close(s);
	return 0;
}

/* An abstract unix socket listening, with a client connected and waiting. */
static int port_setup(void)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa_family_t);

	port_listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	port_client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sun_family = AF_UNIX;
	if (port_listen < 0 || port_client < 0 || bind(port_listen, (struct sockaddr *)&sa, len) ||
	    listen(port_listen, 4))
		return -1;
	len = sizeof(sa);
	if (getsockname(port_listen, (struct sockaddr *)&sa, &len) ||
	    connect(port_client, (struct sockaddr *)&sa, len) || write(port_client, "p", 1) != 1)
		return -1;
	return 0;
}

static int helper_work(void)
{
	if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD)
		return 50;
	return 0;
}

static int main_work(void)
{
	int p[2], ep;

	/* setup part: fds are created before sandbox_apply() */
	if (pipe(p))
		return 60;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return 61;
	if (sandbox_apply())
		return 62;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &(struct epoll_event){.events = EPOLLIN}))
		return 63;
	if (write(p[1], "x", 1) != 1)
		return 64;
	if (epoll_wait(ep, &(struct epoll_event){0}, 1, 1000) != 1)
		return 65;
	close(p[0]);
	close(p[1]);
	close(ep);
	return 0;
}

static int role_work(enum thread_role role)
{
	int err = common_work();

	if (err)
		return err;
	switch (role) {
	case THREAD_MAIN:
		return main_work();
	case THREAD_VCPU:
		return vcpu_work();
	case THREAD_BLK_IO:
		return blk_work();
	case THREAD_NET_IO:
		return net_work();
	case THREAD_HELPER:
		return helper_work();
	default:
		return 99;
	}
}

static void *role_thread(void *arg)
{
	return (void *)(intptr_t)role_work(thread_current_role());
	(void)arg;
}

/* ---- child bodies ------------------------------------------------------- */

struct child_args {
	enum thread_role role;
	enum sandbox_seccomp mode;
	const char *forbidden; /* VMLET_TEST_FORBIDDEN value, or NULL */
	unsigned int late_roles;
	bool late; /* start the role's thread after sandbox_apply() */
};

static int child_run_role(void *p)
{
	const struct child_args *a = p;
	struct sandbox_opts o = {.seccomp = a->mode, .late_roles = a->late_roles};
	void *ret = NULL;
	pthread_t t;

	if (a->forbidden)
		setenv("VMLET_TEST_FORBIDDEN", a->forbidden, 1);
	else
		unsetenv("VMLET_TEST_FORBIDDEN");
	if (sandbox_prepare(&o))
		return 2;
	if (a->role == THREAD_MAIN)
		return role_work(THREAD_MAIN);
	if (a->late && sandbox_apply())
		return 3;
	if (thread_start(&t, a->role, "test", role_thread, NULL))
		return 4;
	pthread_join(t, &ret);
	return (int)(intptr_t)ret;
}

static void test_roles_allowed_work(void)
{
	size_t i;

	for (i = 0; i < sizeof(all_roles) / sizeof(all_roles[0]); i++) {
		struct child_args a = {.role = all_roles[i]};
		int st = in_child(child_run_role, &a);

		if (!exited_ok(st))
			test_fail(__FILE__, __LINE__, "%s: everyday work: status 0x%x",
				  thread_role_name(a.role), st);
	}
}

static void test_roles_forbidden_kill(void)
{
	static const struct {
		enum thread_role role;
		const char *what;
	} cases[] = {
	    {THREAD_MAIN, "main:open"},
	    {THREAD_MAIN, "main:exec-mmap"},
	    {THREAD_MAIN, "main:socket"},
	    {THREAD_MAIN, "main:exec"},
	    {THREAD_MAIN, "main:kvm-run"},
	    {THREAD_MAIN, "main:thread"},
	    {THREAD_VCPU, "vcpu"},
	    {THREAD_VCPU, "vcpu:ioctl"},
	    {THREAD_VCPU, "vcpu:exec-mmap"},
	    {THREAD_VCPU, "vcpu:socket"},
	    {THREAD_VCPU, "vcpu:thread"},
	    {THREAD_BLK_IO, "blk-io:open"},
	    {THREAD_BLK_IO, "blk-io:ioctl"},
	    {THREAD_BLK_IO, "blk-io:socket"},
	    /* issue 28: a mode that grows the file, the unused discard ioctl */
	    {THREAD_BLK_IO, "blk-io:fallocate"},
	    {THREAD_BLK_IO, "blk-io:blkdiscard"},
	    {THREAD_NET_IO, "net-io:open"},
	    {THREAD_NET_IO, "net-io:socket"},
	    /* issue 28: no way out to a host daemon's unix socket */
	    {THREAD_NET_IO, "net-io:unix-connect"},
	    {THREAD_VCPU, "vcpu:unix-connect"},
	    {THREAD_MAIN, "main:unix-connect"},
	    /* live migration over TCP: no confined thread opens, binds,
	     * connects or tunes a socket (the destination's listener and
	     * accept come before its sandbox, the source's stream from
	     * `vmlet ctl`); main and net-io accept4 for their unix sockets */
	    {THREAD_MAIN, "main:socket6"},
	    {THREAD_MAIN, "main:bind"},
	    {THREAD_MAIN, "main:listen"},
	    {THREAD_MAIN, "main:connect"},
	    {THREAD_MAIN, "main:setsockopt"},
	    {THREAD_NET_IO, "net-io:socket6"},
	    {THREAD_NET_IO, "net-io:bind"},
	    {THREAD_NET_IO, "net-io:listen"},
	    {THREAD_NET_IO, "net-io:connect"},
	    {THREAD_NET_IO, "net-io:setsockopt"},
	    {THREAD_VCPU, "vcpu:connect"},
	    {THREAD_BLK_IO, "blk-io:listen"},
	    {THREAD_HELPER, "helper:bind"},
	    {THREAD_NET_IO, "net-io:exec-mmap"},
	    {THREAD_HELPER, "helper:open"},
	    {THREAD_HELPER, "helper:exec"},
	    {THREAD_HELPER, "helper:ioctl"},
	    /* KVM's dirty ring is reset by the migration on main only */
	    {THREAD_VCPU, "vcpu:reset-rings"},
	    {THREAD_NET_IO, "net-io:reset-rings"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct child_args a = {.role = cases[i].role, .forbidden = cases[i].what};
		int st = in_child(child_run_role, &a);

		if (!killed_by_sigsys(st))
			test_fail(__FILE__, __LINE__, "%s: expected SIGSYS, status 0x%x",
				  cases[i].what, st);
	}
}

/* The live migration's harvest on main: KVM_RESET_DIRTY_RINGS passes
 * (EBADF on no fd), where a vCPU's is killed (above). */
static void test_main_resets_dirty_rings(void)
{
	struct child_args a = {.role = THREAD_MAIN, .forbidden = "main:reset-rings"};

	CHECK(exited_ok(in_child(child_run_role, &a)));
}

static void test_log_and_off_let_it_through(void)
{
	struct child_args a = {.role = THREAD_VCPU, .forbidden = "vcpu:open"};

	a.mode = SANDBOX_SECCOMP_LOG;
	CHECK(exited_ok(in_child(child_run_role, &a)));
	a.mode = SANDBOX_SECCOMP_OFF;
	CHECK(exited_ok(in_child(child_run_role, &a)));
	a.role = THREAD_MAIN;
	a.forbidden = "main:socket";
	a.mode = SANDBOX_SECCOMP_LOG;
	CHECK(exited_ok(in_child(child_run_role, &a)));
}

/*
 * The block thread's O_DIRECT bounce buffers (vmm/disk/blk_io.c): 64 KiB
 * aligned blocks freed at the top of the thread's fresh malloc arena make
 * glibc trim it, which the first time reads /proc/sys/vm/overcommit_memory
 * (an open() the block filter kills: vmlet died with SIGSYS at a guest's
 * power-off). sandbox_malloc_setup(), main()'s first call, leaves one
 * arena, so there is no thread arena to trim.
 */
static void *bounce_thread(void *arg)
{
	static void *volatile blocks[2];

	for (int i = 0; i < 2; i++) {
		if (posix_memalign((void **)&blocks[i], 4096, 64 << 10))
			return (void *)1;
		memset(blocks[i], 0, 64 << 10);
	}
	free(blocks[1]);
	free(blocks[0]);
	return arg;
}

static int child_bounce(void *p)
{
	struct sandbox_opts o = {.seccomp = SANDBOX_SECCOMP_KILL};
	void *ret = (void *)1;
	pthread_t t;

	(void)p;
	unsetenv("VMLET_TEST_FORBIDDEN");
	sandbox_malloc_setup();
	if (sandbox_prepare(&o))
		return 2;
	if (thread_start(&t, THREAD_BLK_IO, "test", bounce_thread, NULL))
		return 4;
	pthread_join(t, &ret);
	return (int)(intptr_t)ret;
}

static void test_blk_bounce_buffers(void)
{
	int st = in_child(child_bounce, NULL);

	if (!exited_ok(st))
		test_fail(__FILE__, __LINE__, "blk-io bounce buffers: status 0x%x%s", st,
			  killed_by_sigsys(st) ? " (SIGSYS)" : "");
}

static void test_late_threads(void)
{
	/* a block thread started by a confined main: allowed when declared */
	struct child_args a = {
	    .role = THREAD_BLK_IO,
	    .late = true,
	    .late_roles = SANDBOX_ROLE_BIT(THREAD_BLK_IO),
	};

	int st = in_child(child_run_role, &a);

	if (!exited_ok(st))
		test_fail(__FILE__, __LINE__, "late blk-io thread: status 0x%x", st);
	/* ... and the process dies when main may not start threads */
	a.late_roles = 0;
	CHECK(killed_by_sigsys(in_child(child_run_role, &a)));
	/* a late thread still gets its own, narrower filter */
	a.late_roles = SANDBOX_ROLE_BIT(THREAD_BLK_IO);
	a.forbidden = "blk-io:socket";
	CHECK(killed_by_sigsys(in_child(child_run_role, &a)));
}

/* ---- what /proc says about a confined thread ---------------------------- */

static int status_field(pid_t tid, const char *key, char *out, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	out[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			snprintf(out, len, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
			out[strcspn(out, "\n")] = 0;
		}
	fclose(f);
	return out[0] ? 0 : -1;
}

struct parked {
	int fd;
	pid_t tid;
};

static void *parked_thread(void *arg)
{
	struct parked *pk = arg;
	uint64_t v;

	__atomic_store_n(&pk->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	/* a vCPU waits on an eventfd (the pause gate) */
	if (read(pk->fd, &v, sizeof(v)) < 0)
		return (void *)1;
	return NULL;
}

struct status_case {
	const char *user; /* --user, or NULL */
	bool drop_first;  /* main drops its privileges before the thread starts */
};

static int child_proc_status(void *arg)
{
	struct sandbox_opts o = {.seccomp = SANDBOX_SECCOMP_KILL};
	struct parked pk = {.tid = 0};
	const struct status_case *c = arg;
	const char *user = c->user;
	char v[128];
	int p[2], bad = 0;
	pthread_t t;

	if (user && sandbox_parse_user(user, &o))
		return 2;
	p[0] = p[1] = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (p[0] < 0 || sandbox_prepare(&o))
		return 3;
	if (c->drop_first && sandbox_drop_privileges())
		return 5;
	pk.fd = p[0];
	if (thread_start(&t, THREAD_VCPU, "vcpu0", parked_thread, &pk))
		return 4;
	while (!__atomic_load_n(&pk.tid, __ATOMIC_ACQUIRE))
		usleep(100);
	if (status_field(pk.tid, "Seccomp", v, sizeof(v)) || strcmp(v, "2"))
		bad |= 1;
	if (status_field(pk.tid, "NoNewPrivs", v, sizeof(v)) || strcmp(v, "1"))
		bad |= 2;
	if (status_field(pk.tid, "CapEff", v, sizeof(v)) || strcmp(v, "0000000000000000"))
		bad |= 4;
	if (status_field(pk.tid, "CapPrm", v, sizeof(v)) || strcmp(v, "0000000000000000"))
		bad |= 8;
	if (user &&
	    (status_field(pk.tid, "Uid", v, sizeof(v)) || strncmp(v, "65534\t65534\t65534", 17)))
		bad |= 16;
	if (geteuid() == 0 && !user &&
	    (status_field(pk.tid, "CapBnd", v, sizeof(v)) || strcmp(v, "0000000000000000")))
		bad |= 64;
	if (write(p[1], &(uint64_t){1}, 8) != 8)
		bad |= 32;
	pthread_join(t, NULL);
	return bad ? 10 + bad : 0;
}

/* A thread that drops its own privileges, and one born after main dropped
 * them (sandbox_drop_privileges()): /proc shows the same for both. */
static void test_proc_status_of_confined_thread(void)
{
	static const struct status_case cases[] = {
	    {NULL, false},
	    {NULL, true},
	    {"65534:65534", false},
	    {"65534:65534", true},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st;

		if (cases[i].user && geteuid() != 0)
			SKIP("--user needs root");
		st = in_child(child_proc_status, (void *)&cases[i]);
		if (!exited_ok(st))
			test_fail(__FILE__, __LINE__, "user %s, main dropped first %d: status 0x%x",
				  cases[i].user ? cases[i].user : "-", cases[i].drop_first, st);
	}
}

/* thread_start_all(): a batch of vCPU threads born after main dropped its
 * privileges, each confined with its own filter, none with a capability. */
static int child_batch_status(void *arg)
{
	static const char *const want[][2] = {
	    {"Seccomp", "2"},
	    {"NoNewPrivs", "1"},
	    {"CapEff", "0000000000000000"},
	    {"CapPrm", "0000000000000000"},
	};
	struct sandbox_opts o = {.seccomp = SANDBOX_SECCOMP_KILL};
	struct thread_spec specs[8];
	struct parked pk[8];
	char v[128];
	int p[2], bad = 0;
	unsigned int i, k;

	(void)arg;
	p[0] = p[1] = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (p[0] < 0 || sandbox_prepare(&o) || sandbox_drop_privileges())
		return 2;
	memset(specs, 0, sizeof(specs));
	for (i = 0; i < 8; i++) {
		pk[i] = (struct parked){.fd = p[0]};
		specs[i].fn = parked_thread;
		specs[i].arg = &pk[i];
	}
	if (thread_start_all(THREAD_VCPU, specs, 8))
		return 3;
	for (i = 0; i < 8; i++) {
		while (!__atomic_load_n(&pk[i].tid, __ATOMIC_ACQUIRE))
			usleep(100);
		for (k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (status_field(pk[i].tid, want[k][0], v, sizeof(v)) ||
			    strcmp(v, want[k][1]))
				bad |= 1 << k;
		if (geteuid() == 0 && (status_field(pk[i].tid, "CapBnd", v, sizeof(v)) ||
				       strcmp(v, "0000000000000000")))
			bad |= 16;
	}
	for (i = 0; i < 8; i++)
		if (write(p[1], &(uint64_t){1}, 8) != 8)
			bad |= 32;
	for (i = 0; i < 8; i++)
		pthread_join(specs[i].thread, NULL);
	return bad ? 10 + bad : 0;
}

static void test_batch_of_confined_threads(void)
{
	int st = in_child(child_batch_status, NULL);

	if (!exited_ok(st))
		test_fail(__FILE__, __LINE__, "status 0x%x", st);
}

static void *bare_thread(void *arg)
{
	int fd = *(int *)arg;
	char c;

	return (void *)(intptr_t)read(fd, &c, 1);
}

/* sandbox_apply() refuses while a thread skipped thread_start() */
static int child_unconfined_thread(void *arg)
{
	struct sandbox_opts o = {.seccomp = SANDBOX_SECCOMP_KILL};
	int p[2], err;
	pthread_t t;

	(void)arg;
	if (pipe(p) || sandbox_prepare(&o))
		return 2;
	if (pthread_create(&t, NULL, bare_thread, &p[0]))
		return 3;
	err = sandbox_apply();
	if (write(p[1], "x", 1) != 1)
		return 4;
	pthread_join(t, NULL);
	return err == -EPERM ? 0 : 5;
}

/* ---- the fds a vCPU may read and write (issue 28) ------------------------ */

struct fd_case {
	int fd;	      /* what the vCPU thread writes */
	bool allowed; /* expected to pass the filter */
	const char *what;
};

static int vcpu_fds_fd; /* the case's fd, read by the thread */

static void *vcpu_write_thread(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	/* 8 bytes: an eventfd takes them, anything else too */
	return (void *)(intptr_t)(write(vcpu_fds_fd, &one, sizeof(one)) == sizeof(one) ? 0 : 1);
}

/*
 * As vm_run() does: everything opened, main drops its privileges (which
 * builds the vCPU's fd rules), then the vCPU thread starts and writes to
 * the case's fd.
 */
static int child_vcpu_fds(void *arg)
{
	struct sandbox_opts o = {.seccomp = SANDBOX_SECCOMP_KILL};
	const struct fd_case *c = arg;
	char path[] = "/tmp/vmlet-sandbox-append.XXXXXX";
	void *ret = (void *)1;
	int later = -1;
	pthread_t t;

	unsetenv("VMLET_TEST_FORBIDDEN");
	if (sandbox_prepare(&o))
		return 2;
	/* opened in setup, after prepare: the console file (append) */
	if (c->fd == -2) {
		vcpu_fds_fd = mkstemp(path);
		if (vcpu_fds_fd < 0 || fcntl(vcpu_fds_fd, F_SETFL, O_APPEND))
			return 3;
		unlink(path);
	} else {
		vcpu_fds_fd = c->fd;
	}
	if (sandbox_drop_privileges())
		return 4;
	/* a control client accepted once the guest runs: a new number */
	if (c->fd == -3) {
		later = eventfd(0, EFD_CLOEXEC);
		vcpu_fds_fd = later;
	}
	if (thread_start(&t, THREAD_VCPU, "vcpu0", vcpu_write_thread, NULL))
		return 5;
	pthread_join(t, &ret);
	return (int)(intptr_t)ret;
}

static void test_vcpu_fds(void)
{
	const struct fd_case cases[] = {
	    {-1, true, "an eventfd (a kick)"},
	    {-2, true, "a file open for appending (console file, EFI variables)"},
	    {-3, true, "an fd opened after the filter was built"},
	    {STDERR_FILENO, true, "stderr"},
	    {0, false, "a disk image (a regular file, not appending)"},
	    {0, false, "a pipe"},
	    {0, false, "a socket (passt's stream)"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fd_case c = cases[i];
		int st;

		if (i == 0)
			c.fd = kick_fd;
		else if (i == 4)
			c.fd = scratch_fd;
		else if (i == 5)
			c.fd = pipe_fds[1];
		else if (i == 6)
			c.fd = net_pair[0] >= 0 ? net_pair[0] : net_pair[1];
		st = in_child(child_vcpu_fds, &c);
		if (c.allowed ? !exited_ok(st) : !killed_by_sigsys(st))
			test_fail(__FILE__, __LINE__, "vCPU writes %s: status 0x%x, want %s",
				  c.what, st, c.allowed ? "success" : "SIGSYS");
	}
}

static void test_apply_refuses_unconfined_threads(void)
{
	CHECK(exited_ok(in_child(child_unconfined_thread, NULL)));
}

static void test_parse(void)
{
	struct sandbox_opts o = {0};
	enum sandbox_seccomp m;

	CHECK(sandbox_parse_seccomp("kill", &m) == 0 && m == SANDBOX_SECCOMP_KILL);
	CHECK(sandbox_parse_seccomp("log", &m) == 0 && m == SANDBOX_SECCOMP_LOG);
	CHECK(sandbox_parse_seccomp("off", &m) == 0 && m == SANDBOX_SECCOMP_OFF);
	CHECK(sandbox_parse_seccomp("yes", &m) == -EINVAL);
	CHECK(sandbox_parse_user("1000:100", &o) == 0 && o.set_user && o.uid == 1000 &&
	      o.gid == 100);
	CHECK(sandbox_parse_user("1000", &o) == -EINVAL);
	CHECK(sandbox_parse_user(":1", &o) == -EINVAL);
	CHECK(sandbox_parse_user("1:x", &o) == -EINVAL);
	CHECK(sandbox_parse_user("-1:2", &o) == -EINVAL);
	CHECK(sandbox_parse_user("99999999999:2", &o) == -EINVAL);
}

/* ---- filters compiled on first need ------------------------------------- */

/* role's program as compiled now equals a fresh, eager compile under o:
 * 0, else a code naming what differs. */
static int same_as_eager(enum thread_role role, const struct sandbox_opts *o)
{
	const struct sock_fprog *lazy = sandbox_program(role);
	struct sock_fprog eager = {0};
	unsigned int n = 0;
	int bad = 0;

	if (!lazy)
		return 1;
	if (sandbox_compile(role, o, &eager, &n))
		return 2;
	if (eager.len != lazy->len || memcmp(eager.filter, lazy->filter, eager.len * 8u))
		bad = 3;
	else if (n != sandbox_rule_count(role))
		bad = 4;
	free(eager.filter);
	return bad;
}

static int child_lazy(void *arg)
{
	struct sandbox_opts o = {.seccomp = *(enum sandbox_seccomp *)arg,
				 .late_roles = SANDBOX_ROLE_BIT(THREAD_HELPER)};
	void *ret = (void *)1;
	pthread_t t;
	size_t i;
	int err;

	unsetenv("VMLET_TEST_FORBIDDEN");
	if (sandbox_prepare(&o))
		return 2;
	for (i = 0; i < sizeof(all_roles) / sizeof(all_roles[0]); i++)
		if (sandbox_program(all_roles[i]))
			return 10 + (int)all_roles[i]; /* compiled before any need */
	/* a block thread: its role's filter, and no other, compiled by it */
	if (thread_start(&t, THREAD_BLK_IO, "test", role_thread, NULL))
		return 3;
	pthread_join(t, &ret);
	if (ret)
		return 4;
	err = same_as_eager(THREAD_BLK_IO, &o);
	if (err)
		return 20 + err;
	if (sandbox_program(THREAD_MAIN) || sandbox_program(THREAD_VCPU) ||
	    sandbox_program(THREAD_NET_IO) || sandbox_program(THREAD_HELPER))
		return 5;
	/* main's, the vCPU's and the late role's before main is confined */
	if (sandbox_drop_privileges())
		return 6;
	err = same_as_eager(THREAD_MAIN, &o);
	if (!err)
		err = same_as_eager(THREAD_VCPU, &o);
	if (!err)
		err = same_as_eager(THREAD_HELPER, &o);
	if (err)
		return 30 + err;
	if (sandbox_program(THREAD_NET_IO)) /* no thread, not late: never */
		return 7;
	return 0;
}

/* A role's filter is compiled by its first thread (or when main drops its
 * privileges), never for a role without threads, and is the program an
 * eager compile gives. */
static void test_filters_compiled_on_first_need(void)
{
	enum sandbox_seccomp modes[] = {SANDBOX_SECCOMP_KILL, SANDBOX_SECCOMP_LOG};
	size_t i;

	for (i = 0; i < 2; i++) {
		int st = in_child(child_lazy, &modes[i]);

		if (!exited_ok(st))
			test_fail(__FILE__, __LINE__, "mode %zu: status 0x%x", i, st);
	}
}

int main(void)
{
	char path[] = "/tmp/vmlet-sandbox-test.XXXXXX";

	log_setup(LOG_FORMAT_JSON, LOG_DEBUG, "sandbox-test",
		  "testvm"); /* every log path under the filters */
	scratch_fd = mkstemp(path);
	if (scratch_fd < 0 || ftruncate(scratch_fd, 1 << 20))
		return 1;
	unlink(path);
	kick_fd = eventfd(0, EFD_CLOEXEC);
	if (pipe(pipe_fds) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, net_pair) ||
	    kick_fd < 0 || port_setup())
		return 1;
	TEST_RUN(test_parse);
	TEST_RUN(test_blk_bounce_buffers); /* first: before any large block is freed */
	TEST_RUN(test_roles_allowed_work);
	TEST_RUN(test_roles_forbidden_kill);
	TEST_RUN(test_main_resets_dirty_rings);
	TEST_RUN(test_log_and_off_let_it_through);
	TEST_RUN(test_late_threads);
	TEST_RUN(test_proc_status_of_confined_thread);
	TEST_RUN(test_batch_of_confined_threads);
	TEST_RUN(test_apply_refuses_unconfined_threads);
	TEST_RUN(test_vcpu_fds);
	TEST_RUN(test_filters_compiled_on_first_need);
	return test_summary();
}
