/* SPDX-License-Identifier: MIT */
/*
 * migrate.h - live migration between two vmlet processes over a stream
 * socket (docs/migration.md has the protocol and the order of events).
 *
 * Source (main thread, the control socket's `migrate` verb; fd is the
 * connected stream `vmlet ctl` made with its user's rights): pre-copy
 * with KVM's dirty log (KVM_MEM_LOG_DIRTY_PAGES, then KVM's dirty ring
 * where the VM has one, vmm/vm/dirty_ring.h, else KVM_GET_DIRTY_LOG) and
 * guest_mem.h's tracking of what the device model writes from userspace,
 * iterations until the pages left fit max_downtime_ms at the measured
 * bandwidth (or MIGRATE_MAX_ITER), then pause, freeze the devices (drains
 * and flushes), send the rest and the snapshot state (snapshot.h, the same
 * format and loader), and wait for the destination's answer. Success:
 * the VM ends (exit 0, no restart). Any failure (the stream breaks, the
 * destination refuses): the guest resumes here and the error is returned.
 *
 * Destination (setup, in place of vm_boot(), before the sandbox):
 * migrate_listen() binds unix:PATH (0600, in a directory the user owns
 * and only they can write) or tcp:HOST:PORT (sock_addr.h: numeric, no
 * name resolved), migrate_receive() accepts one connection (unix: of this
 * user; tcp: the first from the address `from` names, others closed
 * unread, or with from NULL the first from anyone; its address is
 * logged), closes the
 * listener and takes the guest: every record is untrusted (lengths and
 * page numbers bounded, the state checked as a restore checks a snapshot
 * file).
 */
#ifndef VMLET_MIGRATE_H
#define VMLET_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

#define MIGRATE_MAX_ITER	 30u
#define MIGRATE_DEFAULT_DOWNTIME 300u /* ms, as QEMU's default */
/* s per GiB of guest memory an incoming migration may take (KubeVirt's
 * completionTimeoutPerGiB default); --incoming-timeout overrides it */
#define MIGRATE_TIMEOUT_PER_GIB 150u

/* Figures of the last (or running) migration, source or destination. */
struct migrate_stats {
	const char *state; /* NULL: none; "active", "completed", "failed", "incoming" */
	/* the source's dirty log: "ring" (KVM's dirty ring, vmm/vm/dirty_ring.h)
	 * or "bitmap" (KVM_GET_DIRTY_LOG); NULL at a destination */
	const char *dirty_log;
	uint64_t bytes; /* sent or received, pages and state */
	uint64_t pages;
	uint32_t iterations;	   /* passes begun */
	uint64_t dirty_pages_rate; /* pages per second, last iteration */
	uint64_t downtime_ms;	   /* paused until the destination answered */
	uint64_t total_ms;
};

/* While the migration runs: called on the main thread between two page
 * records (at most every MIGRATE_TICK_MS) and between passes, never while
 * the guest is paused for the switch; the figures (migrate_get_stats())
 * are current then. The control socket answers status there. */
struct migrate_tick {
	void (*fn)(void *ctx);
	void *ctx;
};
#define MIGRATE_TICK_MS 100u

/* msg (mlen bytes): what failed, for the client; tick may be NULL. */
int migrate_send(struct vm *vm, int fd, uint32_t max_downtime_ms, const struct migrate_tick *tick,
		 char *msg, size_t mlen);
/* unix:PATH or tcp:HOST:PORT: 0 with *lfd listening, or -errno (logged).
 * from: tcp: only, the source's address (sock_addr_parse_host()), or NULL:
 * any peer, with a warning. */
int migrate_listen(const char *spec, const char *from, int *lfd);
/* Accept one source on lfd (closed; tcp: from the host from names, as
 * migrate_listen() was given it) and take its guest into vm, created
 * from config_json, within timeout_s seconds of its connection (0: the
 * default, MIGRATE_TIMEOUT_PER_GIB per GiB of guest memory; the wait for
 * the connection itself is not bounded), with no silence longer than
 * MIG_REPLY_TIMEOUT s. 0: the guest is loaded and the source told. */
int migrate_receive(struct vm *vm, int lfd, const char *spec, const char *from,
		    const char *config_json, unsigned int timeout_s);
void migrate_get_stats(struct migrate_stats *out);

#endif /* VMLET_MIGRATE_H */
