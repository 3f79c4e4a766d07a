/* SPDX-License-Identifier: MIT */
/*
 * connector.h - the one place vmlet may connect(2) once it is confined.
 *
 * No thread role may call socket() or connect() (sandbox_rules.c): every
 * socket is made or handed in during setup. A device that must open new
 * host connections at run time, on the guest's request (virtio-vsock: a
 * guest connecting to host port P reaches the listener PREFIX_P), asks a
 * connector instead: a small process forked in setup, before the sandbox,
 * that holds nothing but its end of a socket pair (every other descriptor
 * closed), runs as the user vmlet switches to (--user), and confines itself
 * with its own seccomp filter (socket(AF_UNIX) only, connect, recvmsg,
 * sendmsg, close, exit). It receives a port number, connects a
 * non-blocking AF_UNIX stream socket to PREFIX "_" PORT, the one path
 * family it knows (the prefix is copied into the child at fork, out of
 * reach of vmlet's memory afterwards), and hands the connected socket back
 * with SCM_RIGHTS. So vmlet's threads gain no socket(), no connect() and
 * no path: the worst a compromised I/O thread can do with the connector is
 * what the guest may do anyway, connect to PREFIX_P.
 *
 * The connector never waits for a listener: a full backlog (EAGAIN) or no
 * listener counts as refused. It is a grandchild (its parent exits at once
 * and is reaped in connector_start()), so vmlet never waits for it; it
 * exits when its socket pair closes (connector_stop(), or vmlet's end).
 */
#ifndef VMLET_CONNECTOR_H
#define VMLET_CONNECTOR_H

#include <stdint.h>

#include "vmm/sandbox/sandbox.h"

struct connector {
	int fd; /* vmlet's end of the socket pair, -1 none */
};

/* Longest prefix: PREFIX "_4294967295" must fit sockaddr_un.sun_path. */
#define CONNECTOR_PREFIX_MAX 96

/* Fork the connector for prefix (0 or -errno, logged). The seccomp
 * filter follows the sandbox's options (none with --seccomp=off). */
int connector_start(struct connector *c, const char *prefix);
/*
 * A socket connected to PREFIX_port, non-blocking and close-on-exec: the
 * fd, or -ECONNREFUSED (no listener there, or its backlog is full),
 * -ETIMEDOUT (no answer within timeout_ms), -EPIPE (the connector is
 * gone). Uses sendmsg, poll and recvmsg only.
 */
int connector_connect(struct connector *c, uint32_t port, int timeout_ms);
/*
 * How the connector's child confines itself before it serves (0 or
 * -errno: it exits): set by sandbox_prepare() (--user, no capability,
 * connector_filter() in the sandbox's mode); NULL, no sandbox (device unit
 * tests): not confined.
 */
extern int (*connector_confine)(void);
/* Install the connector's allowlist on the calling thread (mode OFF: none). */
int connector_filter(enum sandbox_seccomp mode);
/* Close vmlet's end: the connector exits. Safe on a stopped one. */
void connector_stop(struct connector *c);

#endif /* VMLET_CONNECTOR_H */
