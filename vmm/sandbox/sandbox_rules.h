/* SPDX-License-Identifier: MIT */
/*
 * sandbox_rules.h - the seccomp allowlists as data (sandbox_rules.c) for
 * sandbox_compile.c, which turns them into one BPF program per thread role
 * for sandbox.c to install.
 */
#ifndef VMLET_SANDBOX_RULES_H
#define VMLET_SANDBOX_RULES_H

#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/util/thread.h"

/*
 * One allowed syscall, optionally with one argument comparison. errno != 0
 * makes the call fail with that errno instead of being allowed (clone3
 * returns ENOSYS so glibc falls back to clone, whose flags we can check).
 */
struct sandbox_rule {
	int nr;	 /* SCMP_SYS(name) */
	int arg; /* argument index compared, -1 for none */
	enum scmp_compare op;
	uint64_t a; /* datum_a (the mask for SCMP_CMP_MASKED_EQ) */
	uint64_t b; /* datum_b */
	int err;    /* 0: allow */
};

struct sandbox_ruleset {
	const char *name;
	const struct sandbox_rule *rules;
	unsigned int n;
};

/* Rules whose datum is only known at run time use these placeholders. */
#define SANDBOX_DATUM_PID UINT64_C(0xffffffff00000001) /* getpid() */

/* Every thread. */
extern const struct sandbox_ruleset sandbox_rules_common;
/* The role's own rules (THREAD_MAIN: the event loop). */
extern const struct sandbox_ruleset sandbox_rules_role[THREAD_ROLE_COUNT];
/* What a thread started after sandbox_apply() does before its own filter. */
extern const struct sandbox_ruleset sandbox_rules_thread_start;
/* Rules the sanitizer runtime needs (empty in normal builds). */
extern const struct sandbox_ruleset sandbox_rules_sanitizer;

/*
 * The vCPU role's read and write rules (sandbox_fds.c), built from the fds
 * open now: read/write on stdout, stderr, eventfds, regular files open for
 * appending, and every fd number not open now; nothing else vmlet holds
 * (disks, /dev/kvm and KVM fds, taps, sockets, pipes). *out is malloc'd
 * (*n rules); *denied_example is an open fd the rules refuse (a disk if
 * there is one; -1: none), for the test hook. 0 or -errno.
 */
int sandbox_vcpu_fd_rules(struct sandbox_rule **out, unsigned int *n, int *denied_example);

/*
 * role's filter (sandbox_compile.c) under o (its seccomp mode: log or
 * kill by default; late_roles: main's own filter also allows what the
 * roles started after sandbox_apply() do) into prog, whose filter is
 * malloc'd; *n_rules: the rules added, also on failure. 0 or -errno
 * (logged).
 */
struct sandbox_opts;
struct sock_fprog;
int sandbox_compile(enum thread_role role, const struct sandbox_opts *o, struct sock_fprog *prog,
		    unsigned int *n_rules);

/* The test hook (sandbox_hook.c, sandbox.h): read VMLET_TEST_FORBIDDEN
 * once; make the calling thread of role attempt its forbidden call. */
void sandbox_test_hook_parse(void);
void sandbox_test_hook_run(enum thread_role role);
/* The fd the vCPU's denied-fd hook writes to (sandbox_vcpu_fd_rules()). */
extern int sandbox_test_denied_fd;

#endif /* VMLET_SANDBOX_RULES_H */
