/* SPDX-License-Identifier: MIT */
/*
 * ctl.h - vmlet's control socket (--api-socket PATH): protocol, the server
 * on the main event loop, and the narrow interface a VM implements for it.
 *
 * Protocol: a unix stream socket; the client sends one JSON object on one
 * line, the server answers with one JSON object on one line:
 *
 *   {"verb":"status"}        -> {"ok":true,"state":"Running","name":...,
 *                                "namespace":...,"vcpus":N,"memory":BYTES,
 *                                "uptime_seconds":S,"restarts":N,
 *                                "run_strategy":...; when paused:
 *                                "reason":"PausedByUser"|"PausedIOError",
 *                                "message":"disk 'd': write ... failed: ..."}
 *   {"verb":"pause"}         -> {"ok":true}   vCPUs stop, devices idle
 *   {"verb":"resume"}        -> {"ok":true}
 *   {"verb":"power-button"}  -> {"ok":true}   ACPI power button press
 *   {"verb":"stop"}          -> {"ok":true}   power button, hard stop after
 *                                             the grace period (as SIGTERM)
 *   {"verb":"metrics"}       -> {"ok":true,"metrics":"<Prometheus text>"}
 *   {"verb":"snapshot","resume":BOOL} with two descriptors (SCM_RIGHTS:
 *                               the state file, the memory file, made by
 *                               the client) -> {"ok":true} once both are
 *                               written (docs/snapshot.md); resume false
 *                               ends the VM after it
 *   {"verb":"migrate","max_downtime_ms":N} with the connected destination
 *                               (SCM_RIGHTS) -> {"ok":true,"migration":{..}}
 *                               once it ran; meanwhile status and metrics
 *                               are answered (the migration's figures so
 *                               far, state "active"), other verbs get
 *                               {"ok":false,"error":"busy: ..."}
 *   {"verb":"console"}       -> {"ok":true}, then the connection carries
 *                               the serial console both ways, raw bytes,
 *                               until either side closes it
 *
 * Errors: {"ok":false,"error":"message"}. One request per connection (the
 * server closes it after the answer, except for console). Requests longer
 * than CTL_MAX_REQUEST bytes are refused.
 *
 * Access: the socket file is created mode 0600; a peer whose SO_PEERCRED
 * uid is neither vmlet's effective uid nor 0 gets
 * {"ok":false,"error":"permission denied"} and is closed. At most
 * CTL_MAX_CLIENTS connections: one that has not sent its request line
 * within CTL_IDLE_TIMEOUT_MS is closed, and a new connection arriving when
 * all are taken closes the oldest of those still waiting for a request
 * (an attached console keeps its slot), so `stop` always gets through.
 */
#ifndef VMLET_CTL_H
#define VMLET_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_MAX_REQUEST	    1024
#define CTL_MAX_CLIENTS	    16
#define CTL_IDLE_TIMEOUT_MS 5000 /* to send the request line */

enum ctl_verb {
	CTL_STATUS = 0,
	CTL_PAUSE,
	CTL_RESUME,
	CTL_POWER_BUTTON,
	CTL_STOP,
	CTL_METRICS,
	CTL_CONSOLE,
	CTL_SNAPSHOT,
	CTL_MIGRATE,
	CTL_VERB_COUNT,
};

const char *ctl_verb_name(enum ctl_verb v);
/* 0 and *v, or -EINVAL for an unknown name. */
int ctl_verb_parse(const char *name, enum ctl_verb *v);

/* What `status` reports. Strings are borrowed from the VM. */
struct ctl_status {
	const char *state; /* "Starting", "Running", "Paused", "Stopping",
			    * "Rebooting", "Stopped" */
	const char *name, *namespace, *run_strategy;
	unsigned int vcpus;
	uint64_t memory_bytes;
	double uptime_seconds; /* since the current guest boot */
	unsigned int restarts; /* in-process guest restarts so far */
	/* guest console output dropped because its reader did not keep up
	 * (vmm/dev/console_out.h), this guest run */
	uint64_t console_dropped_bytes;
	/* the guest has the guest-agent channel's port open (its agent
	 * runs); false without the channel */
	bool agent_connected;
	/* autoattachVSOCK: the guest's CID (0: no vsock) and the host socket
	 * (vmm/virtio/virtio_vsock.h; NULL without) */
	uint64_t vsock_cid;
	const char *vsock_socket;
	const char *reason;  /* when paused: KubeVirt's Paused condition reason */
	const char *message; /* when paused: what failed (NULL or "" = none) */
	/* the last live migration (vmm/snapshot/migrate.h); state NULL: none */
	struct ctl_migration {
		const char *state;
		const char *dirty_log; /* "ring", "bitmap"; NULL: not a source */
		uint64_t bytes, pages, iterations, dirty_pages_rate, downtime_ms, total_ms;
	} migration;
};

/* A growing Prometheus text exposition. */
struct ctl_metrics {
	char *buf;
	size_t len, cap;
	int err; /* first allocation failure, reported by the server */
};

/*
 * Add one sample. The HELP/TYPE header is written when name differs from
 * the previous sample's. labels is the inside of {...} ("reason=\"io\"")
 * or NULL. type is "counter" or "gauge".
 */
void ctl_metrics_add(struct ctl_metrics *m, const char *name, const char *type, const char *help,
		     const char *labels, double value);

/*
 * One label, key="value", into out (cap bytes, NUL-terminated), value
 * escaped as the Prometheus text format requires (\\, \" and \n): a
 * disk or interface name from a manifest cannot end the label, add
 * labels or start a new sample line. A value too long for out is cut
 * between escapes, never inside one. Returns out.
 */
char *ctl_metrics_label(char *out, size_t cap, const char *key, const char *value);

/*
 * What the VM implements for the server. Every op runs on the main thread
 * and returns 0 or -errno; NULL ops answer "not supported".
 */
struct ctl_vm_ops {
	int (*status)(void *vm, struct ctl_status *st);
	int (*pause)(void *vm);
	int (*resume)(void *vm);
	int (*power_button)(void *vm);
	int (*stop)(void *vm);
	/* Append the VM's samples: vCPU exits by reason, block and net
	 * counters. (The server adds vmlet's own RSS.) */
	int (*metrics)(void *vm, struct ctl_metrics *m);
	/* Console attach: from now on copy guest serial output to fd too
	 * (non-blocking; drop what does not fit), but not before returning:
	 * the server answers {"ok":true} after attach succeeded. One client
	 * at a time: -EBUSY otherwise. */
	int (*console_attach)(void *vm, int fd);
	void (*console_detach)(void *vm, int fd);
	/* Bytes the attached client typed, for the guest's serial input. */
	int (*console_input)(void *vm, const void *buf, size_t len);
	/* Write a snapshot into the two files (vmm/snapshot/snapshot.h);
	 * the server closes the fds afterwards. */
	int (*snapshot)(void *vm, int state_fd, int mem_fd, bool resume);
	/* Live migration to the destination connected on fd (migrate.h); msg
	 * says what failed. The server closes fd afterwards. While it runs the
	 * op calls tick(tick_ctx) now and then (migrate.h's migrate_tick):
	 * the server answers status and metrics there, and refuses the other
	 * verbs as busy. */
	int (*migrate)(void *vm, int fd, uint32_t max_downtime_ms, void (*tick)(void *),
		       void *tick_ctx, char *msg, size_t mlen);
};

/* --api-socket PATH for run/probe: getopt_long entry and value. */
enum { CTL_OPT_API_SOCKET = 0x190 };
#define CTL_LONGOPTS                                                                               \
	{                                                                                          \
		"api-socket", required_argument, NULL, CTL_OPT_API_SOCKET                          \
	}
#define CTL_USAGE "  --api-socket PATH       control socket (vmlet ctl PATH status|stop|...)\n"

struct event_loop;
struct ctl_server;

/*
 * Setup phase (before sandbox_apply()): create the socket at path
 * (replacing a stale socket file, never another kind of file), listen, and
 * open what metrics need later (/proc/self/statm). 0 or -errno.
 */
int ctl_server_open(struct ctl_server **out, const char *path);
/* Serve requests on loop for vm through ops (creates the idle timer: setup
 * phase too). 0 or -errno. */
int ctl_server_start(struct ctl_server *s, struct event_loop *loop, const struct ctl_vm_ops *ops,
		     void *vm);
/* Clients must send their request within ms (0: CTL_IDLE_TIMEOUT_MS);
 * for tests. */
void ctl_server_set_idle_timeout(struct ctl_server *s, unsigned int ms);
/* Stop serving, close every connection and the socket. Removes the socket
 * file when the sandbox allows it (before sandbox_apply(), or with
 * --seccomp=off); a confined `vmlet run` worker leaves that to its
 * unconfined supervisor (ctl_remove_socket()). A stale socket file (after
 * SIGKILL) is replaced by the next ctl_server_open(). */
void ctl_server_close(struct ctl_server *s);

/* Remove the socket file at path if it is a socket (after the server that
 * made it is gone, from a process that may still unlink). */
void ctl_remove_socket(const char *path);

/* Serve s for a struct vm (vmm/ctl/server_vm.c: the ctl_vm_ops of a VM). */
struct vm;
int ctl_vm_serve(struct ctl_server *s, struct vm *vm);
/* In-process restarts so far, for status (vmm/vm/lifecycle.c's count). */
void ctl_vm_set_restarts(unsigned int restarts);

/* vmlet's resident set size in bytes from an open /proc/self/statm fd. */
int ctl_rss_bytes(int statm_fd, uint64_t *out);

/* Client side (vmlet ctl): send verb, put the answer in *reply (malloc'd,
 * NUL-terminated, one line). Returns the connected fd (for console) or
 * -errno. */
int ctl_client_request(const char *path, enum ctl_verb verb, char **reply);
/* The same with a whole request object (one line, without its newline)
 * and up to CTL_MAX_FDS descriptors sent with it. */
#define CTL_MAX_FDS 2
/* `vmlet ctl SOCKET migrate unix:PATH [--max-downtime MS]`
 * (client_migrate.c): argv[0] the destination. An exit status. */
int ctl_migrate(const char *sock, int argc, char **argv, bool text);
int ctl_client_request_fds(const char *path, const char *request, const int *fds, unsigned int nfds,
			   char **reply);

/* From sock's status: 1 the guest agent is connected, 0 not, -1 unknown
 * (no answer, or no such field); with paused, whether the VM is Paused
 * (false when unknown). */
int ctl_client_agent_state(const char *sock, bool *paused);

/* The guest agent: vmm/ctl/agent.h. */

#endif /* VMLET_CTL_H */
