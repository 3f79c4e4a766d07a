/* SPDX-License-Identifier: MIT */
/*
 * client.c - `vmlet ctl PATH VERB`: the control socket's client, modelled on
 * virtctl (pause / unpause / stop / console ...).
 *
 *   status         the VM's state as JSON (one line; -o text: key: value)
 *   pause, resume  (also: unpause)
 *   power-button   press the ACPI power button
 *   stop           power button, hard stop after the grace period
 *   metrics        Prometheus text
 *   console        attach to the serial console; Ctrl-] detaches
 *   snapshot DIR [--resume|--stop] [--no-freeze]
 *                  write a snapshot into DIR (made 0700 if missing):
 *                  DIR/state and DIR/memory, created here and handed to
 *                  vmlet; the state file appears only once it is complete
 *                  (docs/snapshot.md); then the VM resumes (default) or ends.
 *                  With a guest agent connected the guest's filesystems are
 *                  frozen first and thawed after, also after a failure
 *                  (--no-freeze: not); the output says whether it was frozen
 *   guest-info     ask the guest agent (agent.h) on SOCKET.org.qemu.guest_agent.0
 *                  (or on SOCKET itself when it names that channel)
 *   fsfreeze, fsthaw, fsfreeze-status
 *                  freeze / thaw the guest's filesystems through the agent
 *
 * Exit status: 0 done, 1 the VM refused or vmlet is not reachable,
 * 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "vmm/cmd/cmd.h"
#include "vmm/ctl/agent.h"
#include "vmm/ctl/ctl.h"

#define CONSOLE_ESCAPE 0x1d /* Ctrl-] */

static void usage(FILE *f)
{
	fprintf(f, "usage: vmlet ctl [-o json|text] SOCKET VERB\n\n"
		   "verbs: status, pause, resume (unpause), power-button, stop,\n"
		   "       metrics, console (Ctrl-] detaches), guest-info (the guest agent),\n"
		   "       fsfreeze, fsthaw, fsfreeze-status (through the guest agent),\n"
		   "       snapshot DIR [--resume|--stop] [--no-freeze],\n"
		   "       migrate unix:PATH|tcp:HOST:PORT [--max-downtime MS]\n"
		   "       (docs/migration.md)\n");
}

/* Copy the console both ways until either side closes or Ctrl-]. */
static int console_loop(int fd)
{
	struct termios saved, raw;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
	char buf[4096];
	int ret = 0;

	if (tty) {
		raw = saved;
		cfmakeraw(&raw);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		fprintf(stderr, "Successfully connected to the console. Ctrl-] to detach.\r\n");
	}
	for (;;) {
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (p[1].revents) {
			n = read(fd, buf, sizeof(buf));
			if (n <= 0)
				break; /* vmlet closed the console */
			if (write(STDOUT_FILENO, buf, (size_t)n) != n) {
				ret = -EIO;
				break;
			}
		}
		if (p[0].revents) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n <= 0) {
				/* stdin ended: stop sending, keep reading output */
				shutdown(fd, SHUT_WR);
				p[0].fd = -1;
				continue;
			}
			if (tty && memchr(buf, CONSOLE_ESCAPE, (size_t)n))
				break;
			if (write(fd, buf, (size_t)n) != n) {
				ret = -EIO;
				break;
			}
		}
	}
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return ret;
}

static void print_text(json_object *o)
{
	json_object_object_foreach(o, key, val)
	{
		if (strcmp(key, "ok"))
			printf("%s: %s\n", key, json_object_get_string(val));
	}
}

/* The agent's channel: SOCKET itself when it names the channel, else
 * next to the control socket. NULL without memory. */
static char *agent_path(const char *sock, bool *is_channel)
{
	size_t n = strlen(sock), m = strlen(CTL_AGENT_CHANNEL);
	char *path = NULL;

	*is_channel = n >= m && !strcmp(sock + n - m, CTL_AGENT_CHANNEL);
	if (*is_channel)
		return strdup(sock);
	return asprintf(&path, "%s.%s", sock, CTL_AGENT_CHANNEL) < 0 ? NULL : path;
}

int ctl_client_agent_state(const char *sock, bool *paused)
{
	json_object *o, *v;
	char *reply = NULL;
	int fd, c = -1;

	if (paused)
		*paused = false;
	fd = ctl_client_request(sock, CTL_STATUS, &reply);
	if (fd < 0)
		return -1;
	close(fd);
	o = json_tokener_parse(reply);
	if (json_object_object_get_ex(o, "agent_connected", &v) &&
	    json_object_is_type(v, json_type_boolean))
		c = json_object_get_boolean(v);
	if (paused && json_object_object_get_ex(o, "state", &v))
		*paused = !strcmp(json_object_get_string(v), "Paused");
	json_object_put(o);
	free(reply);
	return c;
}

/* Through the control socket: is the agent connected? Quietly true when
 * the VM cannot say (then the agent's own timeout answers). */
static bool agent_connected(const char *sock)
{
	return ctl_client_agent_state(sock, NULL) != 0;
}

static int agent_fail(const char *verb, const char *path, int r, const struct ctl_agent_err *err)
{
	const char *why = strerror(-r);

	if (r == -ETIMEDOUT)
		why = "the guest agent did not answer in time";
	else if (r == -ENOENT || r == -ECONNREFUSED)
		why = "no guest-agent channel there (is the VM running?)";
	else if (r == -EREMOTEIO)
		why = err->msg;
	else if (r == -EPROTO)
		why = "the guest agent's answer has the wrong shape";
	fprintf(stderr, "vmlet ctl: %s: %s: %s\n", verb, path, why);
	return VMLET_EXIT_ERROR;
}

/* guest-info: the whole answer as JSON (or one key per line). */
static int ctl_guest_info(const char *path, bool text)
{
	json_object *o = NULL;
	int r;

	r = ctl_agent_guest_info(path, CTL_AGENT_TIMEOUT_MS, &o);
	if (r)
		return agent_fail("guest-info", path, r, NULL);
	if (text) {
		json_object_object_foreach(o, key, val)
		{
			printf("%s: %s\n", key,
			       json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN));
		}
	} else {
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	}
	json_object_put(o);
	return VMLET_EXIT_OK;
}

/* fsfreeze, fsthaw: {"ok":true,"filesystems":N}; fsfreeze-status:
 * {"ok":true,"status":"frozen"|"thawed"} (-o text: key: value). */
static int ctl_fsfreeze(const char *path, const char *verb, bool text)
{
	struct ctl_agent_err err = {""};
	bool frozen = false;
	int r, count = 0;

	if (!strcmp(verb, "fsfreeze"))
		r = ctl_agent_fsfreeze(path, CTL_AGENT_FREEZE_TIMEOUT_MS, &count, &err);
	else if (!strcmp(verb, "fsthaw"))
		r = ctl_agent_fsthaw(path, CTL_AGENT_TIMEOUT_MS, &count, &err);
	else
		r = ctl_agent_fsfreeze_status(path, CTL_AGENT_TIMEOUT_MS, &frozen, &err);
	if (r)
		return agent_fail(verb, path, r, &err);
	if (!strcmp(verb, "fsfreeze-status"))
		printf(text ? "status: %s\n" : "{\"ok\":true,\"status\":\"%s\"}\n",
		       frozen ? "frozen" : "thawed");
	else
		printf(text ? "filesystems: %d\n" : "{\"ok\":true,\"filesystems\":%d}\n", count);
	return VMLET_EXIT_OK;
}

/* The verbs served by the guest agent, not the control socket. */
static int ctl_agent_verb(const char *sock, const char *verb, bool text)
{
	bool is_channel;
	char *path = agent_path(sock, &is_channel);
	int ret;

	if (!path)
		return VMLET_EXIT_ERROR;
	if (!is_channel && !agent_connected(sock)) {
		fprintf(stderr,
			"vmlet ctl: %s: no guest agent is connected (the guest has not opened "
			"%s)\n",
			verb, CTL_AGENT_CHANNEL);
		free(path);
		return VMLET_EXIT_ERROR;
	}
	if (!strcmp(verb, "guest-info"))
		ret = ctl_guest_info(path, text);
	else
		ret = ctl_fsfreeze(path, verb, text);
	free(path);
	return ret;
}

/* snapshot: the files are made here, with this user's rights, and their
 * descriptors sent; "state" is written under a temporary name and renamed
 * once vmlet answered ok. 0 or -1 (said on stderr). */
static int snap_write(const char *sock, const char *dir, bool resume)
{
	char req[64], *reply = NULL;
	json_object *o = NULL, *ok, *field;
	int dfd = -1, fds[2] = {-1, -1}, fd, ret = -1;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "vmlet ctl: snapshot: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) { /* new files: a link planted in DIR is removed, never followed */
		unlinkat(dfd, "state", 0);
		unlinkat(dfd, "state.partial", 0);
		unlinkat(dfd, "memory", 0);
		fds[0] = openat(dfd, "state.partial",
				O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		fds[1] =
		    openat(dfd, "memory", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (dfd < 0 || fds[0] < 0 || fds[1] < 0) {
		fprintf(stderr, "vmlet ctl: snapshot: %s: %s\n", dir, strerror(errno));
		goto out;
	}
	snprintf(req, sizeof(req), "{\"verb\":\"snapshot\",\"resume\":%s}",
		 resume ? "true" : "false");
	fd = ctl_client_request_fds(sock, req, fds, 2, &reply);
	if (fd < 0) {
		fprintf(stderr, "vmlet ctl: %s: %s\n", sock, strerror(-fd));
		goto out;
	}
	close(fd);
	o = json_tokener_parse(reply);
	if (!o || !json_object_object_get_ex(o, "ok", &ok) || !json_object_get_boolean(ok)) {
		fprintf(stderr, "vmlet ctl: snapshot: %s\n",
			o && json_object_object_get_ex(o, "error", &field)
			    ? json_object_get_string(field)
			    : "failed (vmlet's log says why)");
		goto out;
	}
	if (renameat(dfd, "state.partial", dfd, "state") || fsync(dfd)) {
		fprintf(stderr, "vmlet ctl: snapshot: %s: %s\n", dir, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	json_object_put(o);
	free(reply);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (dfd >= 0)
		close(dfd);
	return ret;
}

/* Should the snapshot freeze? Only when the control socket says an agent
 * is connected and the guest runs (a paused guest's agent cannot answer);
 * else *why says why not. */
static bool snap_can_freeze(const char *sock, const char **why)
{
	bool paused;

	*why = "no agent"; /* (no answer: the snapshot request will say why) */
	if (ctl_client_agent_state(sock, &paused) != 1)
		return false;
	if (paused) {
		*why = "paused";
		return false;
	}
	return true;
}

/* Freeze through the agent at path. 0, or -1 (said; the caller thaws). */
static int snap_freeze(const char *path, int *count)
{
	struct ctl_agent_err err = {""};
	int r = ctl_agent_fsfreeze(path, CTL_AGENT_FREEZE_TIMEOUT_MS, count, &err);

	if (r) {
		agent_fail("snapshot: fsfreeze", path, r, &err);
		fprintf(stderr, "vmlet ctl: snapshot: not taken (--no-freeze takes it unfrozen)\n");
		return -1;
	}
	return 0;
}

/* Thaw after a freeze was tried, whatever came of it. 0, or -1 (said).
 * After a --stop snapshot the VM is gone or ending (its channel missing,
 * closed or silent): any failure then means the snapshot holds a frozen
 * guest, to be thawed once restored. */
static int snap_thaw(const char *path, bool stopped, bool *note)
{
	struct ctl_agent_err err = {""};
	int count = 0, r = ctl_agent_fsthaw(path, CTL_AGENT_TIMEOUT_MS, &count, &err);

	*note = false;
	if (!r)
		return 0;
	if (stopped) { /* gone, going (no answer) or not: it is the snapshot's */
		*note = true;
		return 0;
	}
	agent_fail("snapshot: fsthaw", path, r, &err);
	fprintf(stderr, "vmlet ctl: snapshot: the guest may still be frozen: "
			"vmlet ctl SOCKET fsthaw\n");
	return -1;
}

static void snap_report(bool text, bool frozen, int count, const char *why, bool note)
{
	char msg[128];

	if (frozen)
		snprintf(msg, sizeof(msg), "frozen (%d filesystems), %s", count,
			 note ? "the snapshot holds it frozen: thaw it once restored" : "thawed");
	else
		snprintf(msg, sizeof(msg), "not frozen (%s)", why);
	if (text)
		printf("freeze: %s\n", msg);
	else
		printf("{\"ok\":true,\"frozen\":%s,\"freeze\":\"%s\"}\n", frozen ? "true" : "false",
		       msg);
}

/* snapshot DIR [--resume|--stop] [--no-freeze]: with a guest agent
 * connected, freeze the guest's filesystems first and thaw them after,
 * also when the snapshot or the freeze failed (as KubeVirt does). */
static int ctl_snapshot(const char *sock, int argc, char **argv, bool text)
{
	bool resume = true, freeze = true, note = false;
	const char *why = "--no-freeze";
	char *path = NULL;
	int count = 0, r;

	if (argc < 1 || argc > 3)
		goto usage;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--resume") || !strcmp(argv[i], "--stop"))
			resume = !strcmp(argv[i], "--resume");
		else if (!strcmp(argv[i], "--no-freeze"))
			freeze = false;
		else
			goto usage;
	}
	if (freeze && snap_can_freeze(sock, &why)) {
		bool is_channel;

		path = agent_path(sock, &is_channel);
		if (!path)
			return VMLET_EXIT_ERROR;
	}
	r = path ? snap_freeze(path, &count) : 0;
	if (!r)
		r = snap_write(sock, argv[0], resume);
	if (path && snap_thaw(path, !resume && !r, &note))
		r = -1;
	if (!r)
		snap_report(text, path != NULL, count, why, note);
	free(path);
	return r ? VMLET_EXIT_ERROR : VMLET_EXIT_OK;
usage:
	usage(stderr);
	return VMLET_EXIT_USAGE;
}

/* cmd_ctl's options: -1 to go on (*text set), else the exit status. */
static int ctl_options(int argc, char **argv, bool *text)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				usage(stderr);
				return VMLET_EXIT_USAGE;
			}
			*text = !strcmp(optarg, "text");
			break;
		case 'h':
			usage(stdout);
			return VMLET_EXIT_OK;
		default:
			usage(stderr);
			return VMLET_EXIT_USAGE;
		}
	}
	return -1;
}

/* One of the server's own verbs (ctl.h) on socket sock: its answer shown
 * as the verb wants (metrics text, status JSON or text, the console). */
static int ctl_server_verb(const char *sock, const char *vname, enum ctl_verb verb, bool text)
{
	json_object *o = NULL, *ok, *field;
	char *reply = NULL;
	int fd, status = VMLET_EXIT_ERROR;

	fd = ctl_client_request(sock, verb, &reply);
	if (fd < 0) {
		fprintf(stderr, "vmlet ctl: %s: %s\n", sock, strerror(-fd));
		return VMLET_EXIT_ERROR;
	}
	o = json_tokener_parse(reply);
	if (!o || !json_object_object_get_ex(o, "ok", &ok)) {
		fprintf(stderr, "vmlet ctl: bad answer: %s\n", reply);
		goto out;
	}
	if (!json_object_get_boolean(ok)) {
		fprintf(stderr, "vmlet ctl: %s: %s\n", vname,
			json_object_object_get_ex(o, "error", &field)
			    ? json_object_get_string(field)
			    : "failed");
		goto out;
	}
	status = VMLET_EXIT_OK;
	if (verb == CTL_METRICS && json_object_object_get_ex(o, "metrics", &field))
		fputs(json_object_get_string(field), stdout);
	else if (verb == CTL_STATUS && text)
		print_text(o);
	else if (verb == CTL_STATUS)
		printf("%s\n", reply);
	else if (verb == CTL_CONSOLE && console_loop(fd))
		status = VMLET_EXIT_ERROR;
out:
	json_object_put(o);
	free(reply);
	close(fd);
	return status;
}

int cmd_ctl(int argc, char **argv)
{
	bool text = false;
	enum ctl_verb verb;
	const char *vname;
	int r = ctl_options(argc, argv, &text);

	if (r >= 0)
		return r;
	if (argc - optind >= 2 && !strcmp(argv[optind + 1], "snapshot"))
		return ctl_snapshot(argv[optind], argc - optind - 2, argv + optind + 2, text);
	if (argc - optind >= 2 && !strcmp(argv[optind + 1], "migrate"))
		return ctl_migrate(argv[optind], argc - optind - 2, argv + optind + 2, text);
	if (argc - optind != 2) {
		usage(stderr);
		return VMLET_EXIT_USAGE;
	}
	vname = argv[optind + 1];
	if (!strcmp(vname, "guest-info") || !strcmp(vname, "fsfreeze") ||
	    !strcmp(vname, "fsthaw") || !strcmp(vname, "fsfreeze-status"))
		return ctl_agent_verb(argv[optind], vname, text);
	if (!strcmp(vname, "unpause"))
		vname = "resume";
	if (ctl_verb_parse(vname, &verb)) {
		fprintf(stderr, "vmlet ctl: unknown verb '%s'\n", argv[optind + 1]);
		usage(stderr);
		return VMLET_EXIT_USAGE;
	}
	return ctl_server_verb(argv[optind], vname, verb, text);
}
