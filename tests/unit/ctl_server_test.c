/* SPDX-License-Identifier: MIT */
/*
 * The control socket end to end, on the real event loop, against a fake VM
 * (struct ctl_vm_ops): every verb reaches the right op, answers are JSON
 * lines, errors are reported, bad/oversized requests are refused, the
 * console carries bytes both ways, metrics are Prometheus text with
 * vmlet's RSS, and all of it also works with the main thread sandboxed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/ctl/ctl.h"
#include "vmm/event.h"
#include "vmm/log.h"
#include "vmm/sandbox.h"

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

	/* the loop saw everything; console input made it to the VM */
	usleep(20000);
	__atomic_store_n(&client_done, 1, __ATOMIC_RELEASE);
	event_loop_wake(&loop);
	(void)vm;
	return NULL;
}

/* Run the server and the client; sandboxed: main's filter is applied. */
static int serve(bool sandboxed)
{
	struct fake_vm vm = {.console_fd = -1};
	struct ctl_server *srv = NULL;
	pthread_t t;
	int err;

	client_done = 0;
	if (sandboxed) {
		struct sandbox_opts o = {.seccomp = SANDBOX_SECCOMP_KILL};

		if (sandbox_prepare(&o))
			return 2;
	}
	if (event_loop_init(&loop) || ctl_server_open(&srv, sock_path))
		return 3;
	if (ctl_server_start(srv, &loop, &fake_ops, &vm))
		return 4;
	/* the client thread is a plain test thread, started before apply; it
	 * has no filter of its own, so apply must not see it: start it
	 * through thread_start as a net-io thread (unix sockets allowed) */
	if (sandboxed) {
		if (thread_start(&t, THREAD_NET_IO, "client", client, &vm))
			return 5;
	} else if (pthread_create(&t, NULL, client, &vm)) {
		return 5;
	}
	if (sandboxed && sandbox_apply())
		return 6;
	while (!__atomic_load_n(&client_done, __ATOMIC_ACQUIRE)) {
		err = event_loop_run(&loop);
		if (err)
			return 7;
	}
	pthread_join(t, NULL);
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

static void test_metrics_builder(void)
{
	struct ctl_metrics m = {0};
	int i;

	ctl_metrics_add(&m, "a_total", "counter", "A.", "x=\"1\"", 1);
	ctl_metrics_add(&m, "a_total", "counter", "A.", "x=\"2\"", 2);
	ctl_metrics_add(&m, "b", "gauge", "B.", NULL, 0.25);
	for (i = 0; i < 200; i++)
		ctl_metrics_add(&m, "c", "gauge", "C.", NULL, i);
	CHECK(m.err == 0);
	CHECK(!strncmp(
	    m.buf,
	    "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 1\n"
	    "a_total{x=\"2\"} 2\n# HELP b B.\n# TYPE b gauge\nb 0.25\n# HELP c C.\n",
	    strlen("# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 1\n"
		   "a_total{x=\"2\"} 2\n# HELP b B.\n# TYPE b gauge\nb 0.25\n# HELP c C.\n")));
	CHECK(strstr(m.buf, "\nc 199\n") != NULL);
	free(m.buf);
}

int main(void)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/vmlet-ctl-test.%d.sock", (int)getpid());
	log_setup(LOG_FORMAT_TEXT, LOG_WARN, "ctl-test", NULL);
	signal(SIGPIPE, SIG_IGN);
	alarm(60);
	TEST_RUN(test_metrics_builder);
	TEST_RUN(test_refuses_non_socket_path);
	/* sandboxed first: nothing json-c or libc set up lazily is inherited */
	TEST_RUN(test_protocol_sandboxed);
	TEST_RUN(test_protocol);
	unlink(sock_path);
	return test_summary();
}
