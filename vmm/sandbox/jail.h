/* SPDX-License-Identifier: MIT */
/*
 * jail.h - `vmlet run --jail DIR` for bare hosts: each guest run (the
 * lifecycle worker) is born in new mount, PID and IPC namespaces, opens
 * everything the VM needs (/dev/kvm, disks, taps, sockets, the console)
 * from the host's tree, and then, right before its seccomp filter goes on,
 * moves into a new, empty network namespace (no host abstract unix socket
 * is reachable; taps and sockets opened before keep the host's) and pivots
 * into DIR: afterwards its whole filesystem is DIR, read-only, nosuid,
 * nodev, noexec. DIR needs nothing in it (an empty directory is
 * the best jail: every file descriptor is already open); it must not be
 * "/". The worker is PID 1 of its namespace, so anything it started (passt)
 * dies with it.
 *
 * Resource limits, set by the unconfined supervisor before the first run:
 *   cgroup v2, when /sys/fs/cgroup is a writable cgroup2 with the cpu and
 *   memory controllers: the supervisor moves itself into a new leaf
 *   "vmlet-PID" under its cgroup, enables cpu and memory below that
 *   cgroup (which fails, and is skipped, while other processes live there)
 *   and sets on the leaf
 *     cpu.max     resources.limits.cpu (millicores), else one CPU per vCPU
 *     memory.max  guest memory + JAIL_MEM_OVERHEAD + guest memory / 64
 *                 (vmlet itself, KVM's page tables, thread stacks)
 *   Every other case (cgroup v1, read-only, no controllers, a busy
 *   parent) is skipped with one warning saying why.
 *   rlimits on the worker: no core dumps (they would hold guest memory),
 *   at most JAIL_NOFILE open files.
 */
#ifndef VMLET_JAIL_H
#define VMLET_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm_config;

#define JAIL_MEM_OVERHEAD  (64ull << 20)
#define JAIL_CPU_PERIOD_US 100000
#define JAIL_NOFILE	   4096

struct jail_limits {
	uint64_t cpu_quota_us; /* per JAIL_CPU_PERIOD_US */
	uint64_t memory_max;   /* bytes */
};

/* What the VM may use (see above). */
void jail_limits(const struct vm_config *cfg, struct jail_limits *out);

/* A leaf cgroup vmlet made for itself (jail_cgroup_enter()). */
struct jail_cgroup {
	char parent[512];	  /* the cgroup vmlet was in */
	char leaf[560];		  /* parent/vmlet-PID */
	bool enabled_controllers; /* we wrote +cpu +memory in the parent */
	bool active;
};

/*
 * Below cgroup directory parent (a cgroup2 directory, or any directory in
 * tests): make parent/vmlet-PID, move this process into it, enable cpu and
 * memory in parent's subtree (unless already), write the limits. On failure
 * everything is undone and -errno returned (message in why[]).
 */
int jail_cgroup_enter(struct jail_cgroup *cg, const char *parent, const struct jail_limits *l,
		      char *why, size_t why_len);
/* Undo what can be undone once the VM is gone: move back, remove the leaf,
 * disable what we enabled. */
void jail_cgroup_leave(struct jail_cgroup *cg);

/*
 * The host's cgroup v2 directory of this process ("/sys/fs/cgroup" + the
 * "0::" line of /proc/self/cgroup) when /sys/fs/cgroup is a cgroup2 mount
 * offering cpu and memory. 0, or -ENOTSUP/-errno with the reason in why[].
 */
int jail_cgroup_find(char *dir, size_t len, char *why, size_t why_len);

/* Supervisor, before the first run: the limits of cfg, logged (or the
 * reason they are skipped). */
void jail_setup_limits(struct jail_cgroup *cg, const struct vm_config *cfg);

/* Worker, everything open: rlimits, a new network namespace, then pivot
 * into dir. Refuses (-EPERM)
 * unless this process is PID 1 of its namespace, i.e. the lifecycle
 * cloned it into new mount, PID and IPC namespaces. 0 or -errno. */
int jail_enter(const char *dir);

#endif /* VMLET_JAIL_H */
