/* SPDX-License-Identifier: MIT */
/*
 * client_migrate.c - `vmlet ctl SOCKET migrate unix:PATH|tcp:HOST:PORT
 * [--max-downtime MS]` (docs/migration.md): the client connects to the
 * destination with its user's rights (the sandboxed vmlet opens nothing,
 * its seccomp filters admit no socket, connect or bind) and hands the
 * connected socket to vmlet with the request, as snapshot hands its files.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/cmd/cmd.h"
#include "vmm/ctl/ctl.h"
#include "vmm/util/sock_addr.h"

/* a TCP destination must answer the connect within this */
#define MIG_CONNECT_TIMEOUT_MS 10000u

/* A connected stream to unix:PATH or tcp:HOST:PORT (a TCP connect that
 * gets no answer fails after MIG_CONNECT_TIMEOUT_MS), with time limits on
 * its silences (the source must not hang on a destination that stopped
 * answering). */
static int dest_connect(const char *spec, const struct sock_addr *a)
{
	struct timeval tv = {.tv_sec = 60};
	int fd, ret;

	ret = sock_addr_connect(a, MIG_CONNECT_TIMEOUT_MS, &fd);
	if (ret == -ETIMEDOUT && a->family != AF_UNIX)
		fprintf(stderr, "vmlet ctl: migrate: %s: no answer within %u s\n", spec,
			MIG_CONNECT_TIMEOUT_MS / 1000);
	else if (ret)
		fprintf(stderr, "vmlet ctl: migrate: %s: %s\n", spec, strerror(-ret));
	if (ret)
		return ret;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static void print_reply(json_object *o, bool text)
{
	json_object *m;

	if (!text) {
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		return;
	}
	if (!json_object_object_get_ex(o, "migration", &m))
		return;
	json_object_object_foreach(m, key, val)
	{
		printf("%s: %s\n", key, json_object_get_string(val));
	}
}

int ctl_migrate(const char *sock, int argc, char **argv, bool text)
{
	json_object *o = NULL, *ok, *err;
	char req[96], why[160], *reply = NULL, *end;
	struct sock_addr dest;
	long ms = 0;
	int dfd, fd, ret = VMLET_EXIT_ERROR;

	if (argc == 3 && !strcmp(argv[1], "--max-downtime")) {
		errno = 0;
		ms = strtol(argv[2], &end, 10);
		if (errno || *end || ms < 1 || ms > 600000) {
			fprintf(stderr, "vmlet ctl: migrate: --max-downtime takes 1..600000 ms\n");
			return VMLET_EXIT_USAGE;
		}
	} else if (argc != 1) {
		fprintf(stderr, "usage: vmlet ctl SOCKET migrate unix:PATH|tcp:HOST:PORT "
				"[--max-downtime MS]\n");
		return VMLET_EXIT_USAGE;
	}
	if (sock_addr_parse(argv[0], SOCK_ADDR_CONNECT, &dest, why, sizeof(why))) {
		fprintf(stderr, "vmlet ctl: migrate '%s': %s\n", argv[0], why);
		return VMLET_EXIT_USAGE;
	}
	dfd = dest_connect(argv[0], &dest);
	if (dfd < 0)
		return VMLET_EXIT_ERROR;
	if (ms)
		snprintf(req, sizeof(req), "{\"verb\":\"migrate\",\"max_downtime_ms\":%ld}", ms);
	else
		snprintf(req, sizeof(req), "{\"verb\":\"migrate\"}");
	fd = ctl_client_request_fds(sock, req, &dfd, 1, &reply);
	close(dfd);
	if (fd < 0) {
		fprintf(stderr, "vmlet ctl: %s: %s\n", sock, strerror(-fd));
		return VMLET_EXIT_ERROR;
	}
	close(fd);
	o = json_tokener_parse(reply);
	if (o && json_object_object_get_ex(o, "ok", &ok) && json_object_get_boolean(ok)) {
		print_reply(o, text);
		ret = VMLET_EXIT_OK;
	} else {
		fprintf(stderr, "vmlet ctl: migrate: %s; the guest runs on here\n",
			o && json_object_object_get_ex(o, "error", &err)
			    ? json_object_get_string(err)
			    : "failed (vmlet's log says why)");
	}
	json_object_put(o);
	free(reply);
	return ret;
}
