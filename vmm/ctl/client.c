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
 *   guest-info     ask the guest agent (agent.c) on SOCKET.org.qemu.guest_agent.0
 *                  (or on SOCKET itself when it names that channel)
 *
 * Exit status: 0 done, 1 the VM refused or vmlet is not reachable,
 * 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "vmm/cmd/cmd.h"
#include "vmm/ctl/ctl.h"

#define CONSOLE_ESCAPE 0x1d /* Ctrl-] */

static void usage(FILE *f)
{
	fprintf(f, "usage: vmlet ctl [-o json|text] SOCKET VERB\n\n"
		   "verbs: status, pause, resume (unpause), power-button, stop,\n"
		   "       metrics, console (Ctrl-] detaches), guest-info (the guest agent)\n");
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

/* guest-info: the agent's channel next to the control socket. */
static int ctl_guest_info(const char *sock, bool text)
{
	size_t n = strlen(sock), m = strlen(CTL_AGENT_CHANNEL);
	json_object *o = NULL;
	char *path = NULL;
	int r;

	if (n >= m && !strcmp(sock + n - m, CTL_AGENT_CHANNEL))
		path = strdup(sock);
	else if (asprintf(&path, "%s.%s", sock, CTL_AGENT_CHANNEL) < 0)
		path = NULL;
	if (!path)
		return VMLET_EXIT_ERROR;
	r = ctl_agent_guest_info(path, CTL_AGENT_TIMEOUT_MS, &o);
	if (r) {
		fprintf(stderr, "vmlet ctl: guest-info: %s: %s\n", path,
			r == -ETIMEDOUT ? "the guest agent did not answer in time" : strerror(-r));
		free(path);
		return VMLET_EXIT_ERROR;
	}
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
	free(path);
	return VMLET_EXIT_OK;
}

int cmd_ctl(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	json_object *o = NULL, *ok, *field;
	bool text = false;
	enum ctl_verb verb;
	char *reply = NULL;
	const char *vname;
	int c, fd, status = VMLET_EXIT_ERROR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				usage(stderr);
				return VMLET_EXIT_USAGE;
			}
			text = !strcmp(optarg, "text");
			break;
		case 'h':
			usage(stdout);
			return VMLET_EXIT_OK;
		default:
			usage(stderr);
			return VMLET_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return VMLET_EXIT_USAGE;
	}
	vname = argv[optind + 1];
	if (!strcmp(vname, "guest-info"))
		return ctl_guest_info(argv[optind], text);
	if (!strcmp(vname, "unpause"))
		vname = "resume";
	if (ctl_verb_parse(vname, &verb)) {
		fprintf(stderr, "vmlet ctl: unknown verb '%s'\n", argv[optind + 1]);
		usage(stderr);
		return VMLET_EXIT_USAGE;
	}
	fd = ctl_client_request(argv[optind], verb, &reply);
	if (fd < 0) {
		fprintf(stderr, "vmlet ctl: %s: %s\n", argv[optind], strerror(-fd));
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
