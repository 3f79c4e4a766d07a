/* SPDX-License-Identifier: MIT */
/*
 * The control socket end to end, on the real event loop, against a fake VM
 * (struct ctl_vm_ops): every verb reaches the right op, answers are JSON
 * lines, errors are reported, bad/oversized requests are refused, the
 * console carries bytes both ways, metrics are Prometheus text with
 * vmlet's RSS, and all of it also works with the main thread sandboxed.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <fcntl.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/ctl/ctl.h"
#include "vmm/util/event.h"
#include "vmm/util/log.h"
#include "vmm/sandbox/sandbox.h"

struct fake_vm {
	int paused, resumed, buttons, stops;
	int console_fd;
	char input[64];
	size_t input_len;
};

static int fake_status(void *p, struct ctl_status *st)
{
	struct fake_vm *vm = p;

	*st = (struct ctl_status){.state = vm->paused > vm->resumed ? "Paused" : "Running",
				  .name = "testvm",
				  .namespace = "ns1",
				  .run_strategy = "Always",
				  .vcpus = 3,
				  .memory_bytes = 256u << 20,
				  .uptime_seconds = 1.5,
				  .restarts = 2};
	return 0;
}

static int fake_pause(void *p)
{
	struct fake_vm *vm = p;

	if (vm->paused > vm->resumed)
		return -EALREADY;
	vm->paused++;
	return 0;
}

static int fake_resume(void *p)
{
	((struct fake_vm *)p)->resumed++;
	return 0;
}

static int fake_button(void *p)
{
	((struct fake_vm *)p)->buttons++;
	return 0;
}

static int fake_stop(void *p)
{
	((struct fake_vm *)p)->stops++;
	return 0;
}

static int fake_metrics(void *p, struct ctl_metrics *m)
{
	(void)p;
	ctl_metrics_add(m, "vmlet_vcpu_exits_total", "counter", "vCPU exits.", "reason=\"io\"", 42);
	ctl_metrics_add(m, "vmlet_vcpu_exits_total", "counter", "vCPU exits.", "reason=\"mmio\"",
			7);
	return 0;
}

static int fake_attach(void *p, int fd)
{
	struct fake_vm *vm = p;

	if (vm->console_fd >= 0)
		return -EBUSY;
	vm->console_fd = fd;
	return 0;
}

static void fake_detach(void *p, int fd)
{
	struct fake_vm *vm = p;

	if (vm->console_fd == fd)
		vm->console_fd = -1;
}

static int fake_input(void *p, const void *buf, size_t len)
{
	struct fake_vm *vm = p;

	if (vm->input_len + len > sizeof(vm->input))
		return -ENOSPC;
	memcpy(vm->input + vm->input_len, buf, len);
	vm->input_len += len;
	/* the guest answers on the console: goes to the attached client */
	return write(vm->console_fd, "login: ", 7) == 7 ? 0 : -EIO;
}

static const struct ctl_vm_ops fake_ops = {
    .status = fake_status,
    .pause = fake_pause,
    .resume = fake_resume,
    .power_button = fake_button,
    .stop = fake_stop,
    .metrics = fake_metrics,
    .console_attach = fake_attach,
    .console_detach = fake_detach,
    .console_input = fake_input,
};

static char sock_path[108];
static struct event_loop loop;
static volatile int client_done;

/* A raw request line; returns the answer line (malloc'd) or NULL. */
static char *raw_request(const char *line, size_t len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char *out = calloc(1, 4096);
	size_t got = 0;
	int fd;

	strcpy(sa.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    write(fd, line, len) != (ssize_t)len) {
		free(out);
		out = NULL;
		goto done;
	}
	for (;;) {
		ssize_t n = read(fd, out + got, 4095 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
done:
	if (fd >= 0)
		close(fd);
	return out;
}

static void *client(void *arg)
{
	struct fake_vm *vm = arg;
	char *reply = NULL, big[CTL_MAX_REQUEST + 10], buf[64];
	int fd;

	fd = ctl_client_request(sock_path, CTL_STATUS, &reply);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(strstr(reply, "\"ok\":true") != NULL);
		CHECK(strstr(reply, "\"state\":\"Running\"") != NULL);
		CHECK(strstr(reply, "\"name\":\"testvm\"") != NULL);
		CHECK(strstr(reply, "\"vcpus\":3") != NULL);
		CHECK(strstr(reply, "\"memory\":268435456") != NULL);
		CHECK(strstr(reply, "\"restarts\":2") != NULL);
		/* one request per connection: the server closes after it */
		CHECK(read(fd, buf, sizeof(buf)) == 0);
		close(fd);
		free(reply);
	}

	fd = ctl_client_request(sock_path, CTL_PAUSE, &reply);
	CHECK(fd >= 0 && !strcmp(reply, "{\"ok\":true}"));
	if (fd >= 0) {
		close(fd);
		free(reply);
	}
	/* the VM's error comes back as ok:false with a message */
	fd = ctl_client_request(sock_path, CTL_PAUSE, &reply);
	CHECK(fd >= 0 && strstr(reply, "\"ok\":false") && strstr(reply, "\"error\":"));
	if (fd >= 0) {
		close(fd);
		free(reply);
	}
	for (int v = CTL_RESUME; v <= CTL_STOP; v++) {
		fd = ctl_client_request(sock_path, (enum ctl_verb)v, &reply);
		CHECK(fd >= 0 && !strcmp(reply, "{\"ok\":true}"));
		if (fd >= 0) {
			close(fd);
			free(reply);
		}
	}

	fd = ctl_client_request(sock_path, CTL_METRICS, &reply);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(strstr(reply, "# TYPE vmlet_vcpu_exits_total counter") != NULL);
		CHECK(strstr(reply, "vmlet_vcpu_exits_total{reason=\\\"io\\\"} 42") != NULL);
		CHECK(strstr(reply, "vmlet_vcpu_exits_total{reason=\\\"mmio\\\"} 7") != NULL);
		CHECK(strstr(reply, "# TYPE vmlet_resident_memory_bytes gauge") != NULL);
		close(fd);
		free(reply);
	}

	/* console: guest output arrives, typed bytes reach the VM */
	fd = ctl_client_request(sock_path, CTL_CONSOLE, &reply);
	CHECK(fd >= 0 && !strcmp(reply, "{\"ok\":true}"));
	if (fd >= 0) {
		char *second = NULL;
		int fd2;

		free(reply);
		CHECK(write(fd, "root\n", 5) == 5);
		CHECK(read(fd, buf, 7) == 7 && !memcmp(buf, "login: ", 7));
		/* a second console client is refused while one is attached */
		fd2 = ctl_client_request(sock_path, CTL_CONSOLE, &second);
		CHECK(fd2 >= 0 && strstr(second, "\"ok\":false"));
		if (fd2 >= 0) {
			close(fd2);
			free(second);
		}
		close(fd);
	}

	/* garbage, unknown verbs and oversized requests are refused */
	reply = raw_request("not json\n", 9);
	CHECK(reply && strstr(reply, "\"ok\":false"));
	free(reply);
	reply = raw_request("{\"verb\":\"reboot-host\"}\n", 23);
	CHECK(reply && strstr(reply, "\"ok\":false"));
	free(reply);
	reply = raw_request("{\"verb\":5}\n", 11);
	CHECK(reply && strstr(reply, "\"ok\":false"));
	free(reply);
	memset(big, ' ', sizeof(big));
	reply = raw_request(big, sizeof(big));
	CHECK(reply && strstr(reply, "\"ok\":false"));
	free(reply);

	(void)vm;
	return NULL;
}

/*
 * The client, fn(arg), in a forked process (a process, not a thread: the
 * server's thread may be confined, and no role may open sockets), started
 * before the sandbox goes on. It reports its result as one byte on a pipe
 * (a confined server may not wait for it); client_wait() serves until that
 * byte came, or the pipe closed without it, and returns 0 (no failed
 * check), 1 (some) or -1 (died).
 */
static pid_t client_pid;
static int client_pipe = -1, client_result;

static void client_gone(void *opaque, uint32_t events)
{
	char r;

	(void)opaque;
	(void)events;
	client_result = read(client_pipe, &r, 1) == 1 ? r : -1;
	event_del(&loop, client_pipe);
	__atomic_store_n(&client_done, 1, __ATOMIC_RELEASE);
	event_loop_stop(&loop);
}

static int client_start(void *(*fn)(void *), void *arg)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -1;
	client_done = 0;
	fflush(NULL);
	client_pid = fork();
	if (client_pid == 0) {
		char r;

		close(p[0]);
		test_failed_checks = 0;
		fn(arg);
		fflush(NULL);
		r = test_failed_checks ? 1 : 0;
		_exit(write(p[1], &r, 1) == 1 ? 0 : 1);
	}
	close(p[1]);
	client_pipe = p[0];
	return client_pid < 0 ? -1 : 0;
}

static int client_wait(void)
{
	int err;

	client_result = -1;
	err = event_add(&loop, client_pipe, EPOLLIN, client_gone, NULL);
	while (!err && !__atomic_load_n(&client_done, __ATOMIC_ACQUIRE))
		err = event_loop_run(&loop);
	close(client_pipe);
	client_pipe = -1;
	if (!sandbox_applied())
		waitpid(client_pid, NULL, 0);
	return err ? -1 : client_result;
}

/* Run the server and the client; sandboxed: main's filter is applied. */
static int serve(bool sandboxed)
{
	struct fake_vm vm = {.console_fd = -1};
	struct ctl_server *srv = NULL;
	int st;

	if (sandboxed) {
		struct sandbox_opts o = {.seccomp = SANDBOX_SECCOMP_KILL};

		if (sandbox_prepare(&o))
			return 2;
	}
	if (event_loop_init(&loop) || ctl_server_open(&srv, sock_path))
		return 3;
	if (ctl_server_start(srv, &loop, &fake_ops, &vm))
		return 4;
	if (client_start(client, &vm))
		return 5;
	if (sandboxed && sandbox_apply())
		return 6;
	st = client_wait();
	if (st != 0) {
		fprintf(stderr, "client result %d\n", st);
		return 7;
	}
	ctl_server_close(srv);
	event_loop_release(&loop);
	if (vm.paused != 1 || vm.resumed != 1 || vm.buttons != 1 || vm.stops != 1)
		return 8;
	if (vm.input_len != 5 || memcmp(vm.input, "root\n", 5) || vm.console_fd != -1)
		return 9;
	return test_failed_checks ? 10 : 0;
}

static void test_protocol(void)
{
	CHECK(serve(false) == 0);
	/* the socket file is removed when not sandboxed */
	CHECK(access(sock_path, F_OK) != 0);
}

static int child_sandboxed(void)
{
	alarm(60);
	return serve(true);
}

static void test_protocol_sandboxed(void)
{
	int st = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child_sandboxed());
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		test_fail(__FILE__, __LINE__, "sandboxed server: status 0x%x", st);
}

static void test_refuses_non_socket_path(void)
{
	struct ctl_server *srv = NULL;
	char path[] = "/tmp/vmlet-ctl-file.XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(ctl_server_open(&srv, path) == -EEXIST);
	CHECK(access(path, F_OK) == 0);
	close(fd);
	unlink(path);
}

/* ---- who may connect, and for how long --------------------------------- */

/* A server on sock_path for one client process; the fake VM's counters. */
static int serve_one(void *(*fn)(void *), unsigned int idle_ms, struct fake_vm *vm,
		     void (*after_open)(void))
{
	struct ctl_server *srv = NULL;
	int st;

	if (event_loop_init(&loop) || ctl_server_open(&srv, sock_path))
		return -1;
	if (ctl_server_start(srv, &loop, &fake_ops, vm))
		return -1;
	ctl_server_set_idle_timeout(srv, idle_ms);
	if (after_open)
		after_open();
	st = client_start(fn, NULL) ? -1 : client_wait();
	ctl_server_close(srv);
	event_loop_release(&loop);
	return st;
}

/* The file is 0600 from bind() on: with chmod made a no-op (as if a
 * client connected between bind and chmod), it is still 0600. */
static int child_open_without_chmod(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	struct ctl_server *srv = NULL;
	struct stat st;

	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(chmod), 0) ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(fchmodat), 0) || seccomp_load(ctx))
		return 2;
	umask(022);
	if (ctl_server_open(&srv, sock_path))
		return 3;
	if (lstat(sock_path, &st) || !S_ISSOCK(st.st_mode))
		return 4;
	if ((st.st_mode & 07777) != 0600) {
		fprintf(stderr, "socket mode %o right after ctl_server_open\n",
			(unsigned int)(st.st_mode & 07777));
		return 5;
	}
	/* the caller's umask is back */
	if (umask(0) != 022)
		return 6;
	ctl_server_close(srv);
	return 0;
}

static void test_socket_born_private(void)
{
	int st = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child_open_without_chmod());
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		test_fail(__FILE__, __LINE__, "socket not born 0600: status 0x%x", st);
	unlink(sock_path);
}

/* A peer of another uid (nobody) asks for stop on a socket someone made
 * world-writable. */
static void *other_uid_client(void *arg)
{
	char *reply = NULL;
	int fd;

	(void)arg;
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		_exit(3);
	/* refused: the error line, or a reset when the server's close beat
	 * it (the request was still unread) */
	fd = ctl_client_request(sock_path, CTL_STOP, &reply);
	CHECK(fd < 0 || (reply && strstr(reply, "permission denied")));
	if (fd >= 0)
		close(fd);
	free(reply);
	return NULL;
}

static void expose_socket(void)
{
	CHECK(chmod(sock_path, 0666) == 0);
}

static void test_peer_of_other_uid_refused(void)
{
	struct fake_vm vm = {.console_fd = -1};
	int st;

	if (geteuid() != 0)
		SKIP("needs root to run a client as another uid");
	st = serve_one(other_uid_client, 0, &vm, expose_socket);
	if (st != 0)
		test_fail(__FILE__, __LINE__, "other-uid client: status 0x%x", st);
	CHECK(vm.stops == 0);
}

/* CTL_MAX_CLIENTS clients connect and say nothing; stop still works. */
static void *silent_then_stop(void *arg)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fds[CTL_MAX_CLIENTS], i;
	char *reply = NULL;
	int fd;

	(void)arg;
	strcpy(sa.sun_path, sock_path);
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		fds[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(fds[i] >= 0 && !connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)));
	}
	fd = ctl_client_request(sock_path, CTL_STOP, &reply);
	CHECK(fd >= 0 && reply && !strcmp(reply, "{\"ok\":true}"));
	if (fd >= 0)
		close(fd);
	free(reply);
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		close(fds[i]);
	return NULL;
}

static void test_silent_clients_do_not_lock_out_stop(void)
{
	struct fake_vm vm = {.console_fd = -1};
	int st;

	/* a long timeout: the slots are made by eviction, not by expiry */
	st = serve_one(silent_then_stop, 600000, &vm, NULL);
	if (st != 0)
		test_fail(__FILE__, __LINE__, "silent clients: status 0x%x", st);
	CHECK(vm.stops == 1);
}

/* A client that never sends its request is hung up on. */
static void *silent_client(void *arg)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct pollfd pf;
	char c;
	int fd;

	(void)arg;
	strcpy(sa.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	pf = (struct pollfd){.fd = fd, .events = POLLIN};
	/* the server's idle timeout is 100 ms: 20 s means never */
	CHECK(poll(&pf, 1, 20000) == 1 && read(fd, &c, 1) == 0);
	close(fd);
	return NULL;
}

static void test_idle_client_dropped(void)
{
	struct fake_vm vm = {.console_fd = -1};
	int st = serve_one(silent_client, 100, &vm, NULL);

	if (st != 0)
		test_fail(__FILE__, __LINE__, "idle client: status 0x%x", st);
}

int main(void)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/vmlet-ctl-test.%d.sock", (int)getpid());
	log_setup(LOG_FORMAT_TEXT, LOG_WARN, "ctl-test", NULL);
	signal(SIGPIPE, SIG_IGN);
	alarm(60);
	TEST_RUN(test_refuses_non_socket_path);
	/* sandboxed first: nothing json-c or libc set up lazily is inherited */
	TEST_RUN(test_protocol_sandboxed);
	TEST_RUN(test_protocol);
	TEST_RUN(test_socket_born_private);
	TEST_RUN(test_peer_of_other_uid_refused);
	TEST_RUN(test_silent_clients_do_not_lock_out_stop);
	TEST_RUN(test_idle_client_dropped);
	unlink(sock_path);
	return test_summary();
}
