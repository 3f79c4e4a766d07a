/* SPDX-License-Identifier: MIT */
/*
 * server.c - the control socket's server on the main event loop (see
 * ctl.h for the protocol).
 *
 * Everything that needs a path or a new socket happens in
 * ctl_server_open(), before the sandbox: afterwards the server only
 * accepts, reads, writes and closes, which the main thread's seccomp
 * allowlist permits. Connections are non-blocking; a client that sends
 * garbage, too much, or does not read its answer is dropped, never waited
 * for.
 *
 * Who may talk to it: the socket file is born 0600 (bound under umask
 * 0177: no window in which another user could connect), and every peer's
 * SO_PEERCRED uid must be vmlet's effective uid or root, so a socket made
 * reachable by mistake (a chmod, a shared directory) still serves no one
 * else. A client that has not sent its request line within the idle
 * timeout is dropped, and when every slot is taken the oldest client still
 * waiting for its request makes room: silent clients cannot lock out
 * `stop`.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm/ctl/ctl.h"
#include "vmm/ctl/server_verbs.h"
#include "vmm/util/event.h"
#include "vmm/util/log.h"
#include "vmm/sandbox/sandbox.h"
#include "vmm/util/unix_addr.h"

struct ctl_conn {
	struct ctl_server *srv;
	int fd;
	bool console;
	uint64_t deadline_ms; /* dropped then unless it sent its request */
	size_t len;
	char buf[CTL_MAX_REQUEST];
	/* descriptors that came with the request (SCM_RIGHTS), -1 none */
	int fds[CTL_MAX_FDS];
	unsigned int nfds;
};

struct ctl_server {
	int listen_fd;
	int statm_fd;
	char *path;
	struct event_loop *loop;
	const struct ctl_vm_ops *ops;
	void *vm;
	struct event_timer *idle; /* fires at the earliest deadline */
	unsigned int idle_ms;
	struct ctl_conn *conns[CTL_MAX_CLIENTS];
	/* the connection whose migrate request runs (NULL: none): while it
	 * does, other requests are served from the migration's ticks */
	struct ctl_conn *busy;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int ctl_server_open(struct ctl_server **out, const char *path)
{
	struct ctl_server *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->statm_fd = -1;
	s->listen_fd = -1;
	s->idle_ms = CTL_IDLE_TIMEOUT_MS;
	s->path = strdup(path);
	if (!s->path) {
		err = -ENOMEM;
		goto fail;
	}
	/* Only the user vmlet runs as (and root) may talk to it: the file is
	 * created 0600 (no chmod after bind, which would leave a window and
	 * follow whatever a path swap put there), replacing a stale socket of
	 * an earlier run and nothing else, and named only once it listens.
	 * Setup is single-threaded here, so the umask touches nothing else. */
	err = unix_listen(path, CTL_MAX_CLIENTS, SOCK_NONBLOCK, &s->listen_fd);
	if (err) {
		err = err == -EEXIST ? error_errno(err, "ctl: %s exists and is not a socket", path)
				     : error_errno(err, "ctl: listening on %s", path);
		goto fail;
	}
	s->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	/* a client that hangs up before its answer (or during console
	 * output) must not kill vmlet: writes fail with EPIPE instead */
	signal(SIGPIPE, SIG_IGN);
	/* json-c seeds its string hash on first use (getrandom or
	 * /dev/urandom): do it now, not under the sandbox */
	json_object_put(json_tokener_parse("{\"verb\":\"status\"}"));
	*out = s;
	return 0;
fail:
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	free(s->path);
	free(s);
	return err;
}

static void conn_close(struct ctl_conn *c)
{
	struct ctl_server *s = c->srv;
	int i;

	if (c->console && s->ops->console_detach)
		s->ops->console_detach(s->vm, c->fd);
	event_del(s->loop, c->fd);
	close(c->fd);
	for (unsigned int k = 0; k < c->nfds; k++)
		close(c->fds[k]);
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->conns[i] == c)
			s->conns[i] = NULL;
	free(c);
}

/* Best effort: answers are small and the socket buffer is empty. */
static void conn_send(struct ctl_conn *c, json_object *o)
{
	const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(txt);

	if (write(c->fd, txt, len) != (ssize_t)len || write(c->fd, "\n", 1) != 1)
		log_debug("ctl: client did not take its answer");
}

/* Read request bytes, keeping descriptors sent with them (at most
 * CTL_MAX_FDS in all; others are closed at once). */
static ssize_t conn_recv(struct ctl_conn *c)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {c->buf + c->len, sizeof(c->buf) - 1 - c->len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;
	ssize_t n;

	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	n = recvmsg(c->fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return n;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t k, nf;
		int fd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nf = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nf; k++) {
			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (c->nfds < CTL_MAX_FDS)
				c->fds[c->nfds++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

static bool console_taken(const struct ctl_server *s)
{
	int i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->conns[i] && s->conns[i]->console)
			return true;
	return false;
}

static void listen_event(void *opaque, uint32_t events);
static void conn_event(void *opaque, uint32_t events);

/* A migration's tick (ctl_vm_ops.migrate): the main thread is in the
 * migration, so the event loop does not run. New connections are taken
 * and every waiting client's bytes read, without blocking (the sockets
 * are non-blocking): a whole request is answered now (handle_request()
 * lets only status and metrics through). The migrating connection and an
 * attached console wait for the loop. */
static void serve_during(void *p)
{
	struct ctl_server *s = p;

	listen_event(s, EPOLLIN);
	for (int i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_conn *c = s->conns[i];

		if (c && c != s->busy && !c->console)
			conn_event(c, EPOLLIN);
	}
}

/* ctl_answer(err) with the reason in "error" */
static json_object *answer_refused(int err, const char *why)
{
	json_object *o = ctl_answer(err);

	json_object_object_add(o, "error", json_object_new_string(why));
	return o;
}

/* one verb's work: its answer, or NULL when it was sent already (console) */
static json_object *dispatch_verb(struct ctl_conn *c, enum ctl_verb verb, json_object *req)
{
	struct ctl_server *s = c->srv;
	const struct ctl_vm_ops *ops = s->ops;
	json_object *o;
	int err;

	switch (verb) {
	case CTL_STATUS:
		return ctl_verb_status(ops, s->vm);
	case CTL_METRICS:
		return ctl_verb_metrics(ops, s->vm, s->statm_fd);
	case CTL_PAUSE:
		return ctl_answer(ops->pause ? ops->pause(s->vm) : -ENOTSUP);
	case CTL_RESUME:
		return ctl_answer(ops->resume ? ops->resume(s->vm) : -ENOTSUP);
	case CTL_STOP:
		return ctl_answer(ops->stop ? ops->stop(s->vm) : -ENOTSUP);
	case CTL_POWER_BUTTON:
		return ctl_answer(ops->power_button ? ops->power_button(s->vm) : -ENOTSUP);
	case CTL_SNAPSHOT:
		return ctl_verb_snapshot(ops, s->vm, req, c->fds, c->nfds);
	case CTL_MIGRATE:
		s->busy = c;
		o = ctl_verb_migrate(ops, s->vm, req, c->fds, c->nfds, serve_during, s);
		s->busy = NULL;
		return o;
	case CTL_CONSOLE:
		err = !ops->console_attach ? -ENOTSUP : console_taken(s) ? -EBUSY : 0;
		o = ctl_answer(err);
		if (err)
			return o;
		/* the answer first: console bytes follow it, never precede it */
		conn_send(c, o);
		json_object_put(o);
		c->console = ops->console_attach(s->vm, c->fd) == 0;
		return NULL;
	default:
		return ctl_answer(-EINVAL);
	}
}

static void handle_request(struct ctl_conn *c)
{
	json_object *req, *verb_obj, *o;
	enum ctl_verb verb;

	req = json_tokener_parse(c->buf);
	if (!req || !json_object_is_type(req, json_type_object) ||
	    !json_object_object_get_ex(req, "verb", &verb_obj) ||
	    !json_object_is_type(verb_obj, json_type_string) ||
	    ctl_verb_parse(json_object_get_string(verb_obj), &verb)) {
		o = answer_refused(-EINVAL,
				   "bad request: want {\"verb\":\"status|pause|resume|"
				   "power-button|stop|metrics|console|snapshot|migrate\"}");
		goto send;
	}
	log_info("ctl: %s", ctl_verb_name(verb));
	if (c->srv->busy && verb != CTL_STATUS && verb != CTL_METRICS)
		o = answer_refused(-EBUSY, "busy: a migration is running (status and metrics are "
					   "answered)");
	else
		o = dispatch_verb(c, verb, req);
send:
	if (o)
		conn_send(c, o);
	json_object_put(o);
	json_object_put(req);
}

static void conn_event(void *opaque, uint32_t events)
{
	struct ctl_conn *c = opaque;
	ssize_t n;
	char *nl;

	if (c->console) {
		char buf[512];

		if (events & (EPOLLHUP | EPOLLERR)) { /* the client is gone */
			conn_close(c);
			return;
		}
		n = read(c->fd, buf, sizeof(buf));
		if (n > 0 && c->srv->ops->console_input)
			c->srv->ops->console_input(c->srv->vm, buf, (size_t)n);
		/* the client stopped sending (its stdin ended): keep sending
		 * it the output until it hangs up */
		if (n == 0 && event_mod(c->srv->loop, c->fd, 0))
			conn_close(c);
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			conn_close(c);
		return;
	}
	n = conn_recv(c);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = 0;
	nl = memchr(c->buf, '\n', c->len);
	if (!nl && c->len < sizeof(c->buf) - 1)
		return; /* more to come */
	if (!nl) {
		json_object *o = ctl_answer(-E2BIG);

		conn_send(c, o);
		json_object_put(o);
		conn_close(c);
		return;
	}
	*nl = 0;
	handle_request(c);
	if (!c->console)
		conn_close(c);
}

/* Arm the idle timer for the earliest deadline of a client still sending
 * its request (console clients have none); disarm when there is none. */
static void idle_rearm(struct ctl_server *s)
{
	uint64_t now = now_ms(), first = UINT64_MAX;
	int i;

	if (!s->idle)
		return;
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->conns[i] && !s->conns[i]->console && s->conns[i]->deadline_ms < first)
			first = s->conns[i]->deadline_ms;
	if (first == UINT64_MAX)
		event_timer_arm(s->idle, 0);
	else
		event_timer_arm(s->idle, first > now ? first - now : 1);
}

static void idle_event(void *opaque, uint32_t events)
{
	struct ctl_server *s = opaque;
	uint64_t now = now_ms();
	int i, dropped = 0;

	(void)events;
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_conn *c = s->conns[i];

		if (c && !c->console && c->deadline_ms <= now) {
			conn_close(c);
			dropped++;
		}
	}
	if (dropped)
		log_warn("ctl: dropped %d client(s) that sent no request within %u ms", dropped,
			 s->idle_ms);
	idle_rearm(s);
}

/* A free slot, making one when all are taken: the client waiting longest
 * for its request line goes (a console client keeps its slot). -1: none. */
static int free_slot(struct ctl_server *s)
{
	int i, oldest = -1;

	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		if (!s->conns[i])
			return i;
		if (!s->conns[i]->console &&
		    (oldest < 0 || s->conns[i]->deadline_ms < s->conns[oldest]->deadline_ms))
			oldest = i;
	}
	if (oldest < 0)
		return -1;
	log_warn_once("ctl: all %d control connections taken, dropping the oldest silent one",
		      CTL_MAX_CLIENTS);
	conn_close(s->conns[oldest]);
	return oldest;
}

/* SO_PEERCRED: only vmlet's own (effective) uid and root may use the
 * socket. A refused peer gets one error line (or a reset, when its request
 * is still unread at the close). */
static bool peer_allowed(int fd)
{
	static const char refused[] = "{\"ok\":false,\"error\":\"permission denied\"}\n";
	struct ucred cred;
	socklen_t len = sizeof(cred);
	uid_t self = geteuid();

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred) &&
	    (cred.uid == self || cred.uid == 0))
		return true;
	log_warn("ctl: refused a client of uid %d (vmlet runs as uid %u)",
		 len == sizeof(cred) ? (int)cred.uid : -1, (unsigned int)self);
	if (write(fd, refused, sizeof(refused) - 1) < 0)
		log_debug("ctl: refused client did not take its answer");
	return false;
}

static void listen_event(void *opaque, uint32_t events)
{
	struct ctl_server *s = opaque;
	int fd, i;

	(void)events;
	while ((fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct ctl_conn *c = NULL;

		if (!peer_allowed(fd)) {
			close(fd);
			continue;
		}
		i = free_slot(s);
		if (i >= 0)
			c = calloc(1, sizeof(*c));
		if (!c) {
			log_warn_once("ctl: too many control connections, refusing");
			close(fd);
			continue;
		}
		c->srv = s;
		c->fd = fd;
		c->deadline_ms = now_ms() + s->idle_ms;
		if (event_add(s->loop, fd, EPOLLIN, conn_event, c)) {
			close(fd);
			free(c);
			continue;
		}
		s->conns[i] = c;
	}
	idle_rearm(s);
}

void ctl_server_set_idle_timeout(struct ctl_server *s, unsigned int ms)
{
	s->idle_ms = ms ? ms : CTL_IDLE_TIMEOUT_MS;
}

int ctl_server_start(struct ctl_server *s, struct event_loop *loop, const struct ctl_vm_ops *ops,
		     void *vm)
{
	int err;

	s->loop = loop;
	s->ops = ops;
	s->vm = vm;
	/* created now, in setup: the sandbox allows arming, not creating */
	err = event_timer_create(loop, idle_event, s, &s->idle);
	if (err)
		return error_errno(err, "ctl: idle timer");
	err = event_add(loop, s->listen_fd, EPOLLIN, listen_event, s);
	if (err)
		return error_errno(err, "ctl: watching %s", s->path);
	log_info("ctl: listening on %s", s->path);
	return 0;
}

void ctl_remove_socket(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
}

void ctl_server_close(struct ctl_server *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->conns[i])
			conn_close(s->conns[i]);
	if (s->idle)
		event_timer_destroy(s->idle);
	if (s->loop)
		event_del(s->loop, s->listen_fd);
	close(s->listen_fd);
	if (s->statm_fd >= 0)
		close(s->statm_fd);
	if (!sandbox_applied())
		ctl_remove_socket(s->path);
	free(s->path);
	free(s);
}
