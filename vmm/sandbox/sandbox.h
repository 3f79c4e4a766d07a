/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - confining vmlet once the VM is set up: per-thread seccomp
 * allowlists (libseccomp), no_new_privs, no capabilities (libcap-ng) and
 * optionally another user.
 *
 * The sandbox is a phase with a contract:
 *
 *   1. sandbox_prepare(opts)    early in `run`/`probe`, before any
 *                               thread_start(): sets no_new_privs (no
 *                               filter is compiled yet: see "Compiled on
 *                               first need" below).
 *   2. setup                    open /dev/kvm, create the VM, map guest
 *                               memory, open disks, taps, sockets, the
 *                               console, load the kernel; start the I/O
 *                               threads. Each thread calls
 *                               sandbox_thread_enter(role) (thread.c's
 *                               trampoline calls it through
 *                               thread_sandbox_hook) and so is confined
 *                               before its own code runs.
 *   3. sandbox_drop_privileges() on the main thread once nothing left
 *                               needs a privilege (every file, device,
 *                               tap and socket open), before the vCPU
 *                               threads start: builds the vCPU filter's
 *                               read/write rules from the fds open now
 *                               (sandbox_rules.h), pivots into --jail DIR
 *                               (if given), switches to --user, drops every
 *                               capability, for main and, by inheritance,
 *                               every thread started afterwards.
 *   4. start the vCPU threads   (held before KVM_RUN), all at once
 *                               (thread_start_all()): each installs its
 *                               role's filter and nothing else.
 *   5. sandbox_apply()          on the main thread, before the first guest
 *                               instruction (before vCPUs enter KVM_RUN):
 *                               checks every thread is confined, does step
 *                               3 if the caller skipped it, installs the
 *                               main thread's filter.
 *
 * Why per thread and not TSYNC: a vCPU thread needs KVM_RUN and almost
 * nothing else, a block thread needs preadv/pwritev and no KVM ioctl; one
 * process-wide filter would give every thread the union. Filters stack with
 * the creator's: a thread started by main after sandbox_apply() passes
 * main's filter and its own, so main's filter would have to admit the
 * roles listed in opts->late_roles (and thread creation). vmlet starts
 * every thread before sandbox_apply() instead (vCPU threads wait at a gate
 * before their first KVM_RUN, vm_run.c), so each role's effective
 * allowlist is its own: main may not create threads or issue KVM_RUN.
 * late_roles stays for callers that need it. sandbox_apply() refuses to
 * run while a thread that never entered the sandbox exists. For the same
 * reasons the vCPU threads cannot inherit one installed filter (TSYNC
 * would put it on every thread; a vCPU thread that started the others
 * would need clone in its allowlist): each installs the precompiled vCPU
 * program itself, and the kernel checks and JIT-compiles it per install
 * (~100 us, the sandbox's remaining per-thread cost, paid side by side by
 * thread_start_all()).
 *
 * Capabilities and uids are per thread in Linux, and a new thread gets a
 * copy of its creator's. Main drops its own once (step 3), so the vCPU
 * threads (up to hundreds) are born without any and do no libcap-ng work;
 * a thread started before that (an I/O thread: main still needs
 * CAP_NET_ADMIN for the next NIC's tap) drops its own in
 * sandbox_thread_enter(). None of vmlet's threads needs a capability once
 * the file descriptors are open.
 *
 * Compiled on first need: a role's filter is compiled (libseccomp, ~0.1-0.3
 * ms each) by the first thread of that role, in sandbox_thread_enter()
 * before it installs it, and kept; later threads of the role install the
 * same program with one seccomp(2) call. sandbox_drop_privileges()
 * compiles the vCPU's (afresh, from the fds open then), main's and those
 * of opts->late_roles (a thread started by a confined main could not
 * compile its own). So a VM pays only for the roles it has threads of (a
 * VM without disks compiles no blk-io filter); the program is the one an
 * eager compile at that moment would give (sandbox_role_test.c checks).
 *
 * Test hook (inert unless set): VMLET_TEST_FORBIDDEN=ROLE[:WHAT] makes the
 * thread of that role (main, vcpu, blk-io, net-io, helper) attempt a
 * forbidden operation right after its filter is installed; WHAT is open
 * (default), exec-mmap, ioctl (KVM_CREATE_VM), socket (AF_INET), socket6
 * (AF_INET6), bind, listen, connect, setsockopt (each on no fd),
 * unix-connect (socket(AF_UNIX) + connect to an abstract name), denied-fd
 * (write nothing to an fd vmlet holds that the vCPU may not use), exec,
 * kvm-run (KVM_RUN), thread (pthread_create), fallocate (mode 0) or
 * blkdiscard (BLKDISCARD). In kill mode the process dies with SIGSYS.
 * Every WHAT is harmless if it is allowed.
 */
#ifndef VMLET_SANDBOX_H
#define VMLET_SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

#include "vmm/util/thread.h"

enum sandbox_seccomp {
	SANDBOX_SECCOMP_KILL = 0, /* default: a forbidden syscall kills vmlet */
	SANDBOX_SECCOMP_LOG,	  /* allow, but log to the kernel audit log */
	SANDBOX_SECCOMP_OFF,	  /* no filter (debugging only) */
};

struct sandbox_opts {
	enum sandbox_seccomp seccomp;
	bool set_user; /* --user given */
	uid_t uid;
	gid_t gid;
	unsigned int late_roles; /* bit (1 << role) per role main may start
				  * after sandbox_apply() */
	const char *jail_dir;	 /* --jail: sandbox_apply() pivots into it first
				  * (vmm/sandbox/jail.h; the caller made the namespaces) */
};

#define SANDBOX_ROLE_BIT(role) (1u << (role))

/* Command-line options (run, probe): getopt_long entries and values. */
enum { SANDBOX_OPT_SECCOMP = 0x180, SANDBOX_OPT_USER };
#define SANDBOX_LONGOPTS                                                                           \
	{"seccomp", required_argument, NULL, SANDBOX_OPT_SECCOMP},                                 \
	{                                                                                          \
		"user", required_argument, NULL, SANDBOX_OPT_USER                                  \
	}
/* Handle SANDBOX_OPT_*: 0 handled, 1 not a sandbox option, -1 bad value
 * (message printed). */
int sandbox_option(struct sandbox_opts *o, int c, const char *arg);

/* Help text for the options below, one per line, for usage() output. */
#define SANDBOX_USAGE                                                                              \
	"  --seccomp=kill|log|off  seccomp allowlists: kill on violation (default),\n"             \
	"                          log violations, or no filter\n"                                 \
	"  --user UID:GID          run as this user once everything is open\n"                     \
	"                          (run, started as root: 65534:65534 unless given;\n"             \
	"                          0:0 stays root)\n"

/*
 * The user `vmlet run` switches to when started as root without --user
 * (sandbox_default_user()): nobody/nogroup, which owns no file on a host.
 * As Firecracker's jailer and KubeVirt's virt-launcher (non-root since
 * KubeVirt 0.59), the VMM then holds no root identity once set up: a
 * confined thread that reached a root-owned socket or file would get
 * nowhere. `--user UID:GID` picks another user (a dedicated one per VM is
 * better still), `--user 0:0` keeps root (capabilities still dropped).
 */
#define SANDBOX_DEFAULT_UID 65534
#define SANDBOX_DEFAULT_GID 65534

/* Without --user and running as root: switch to SANDBOX_DEFAULT_UID:GID,
 * unless root may not change ids (no CAP_SETUID/CAP_SETGID, e.g. a
 * container's root with its capabilities dropped: it then stays uid 0, as
 * before, with a warning). True when it applied the default. Call after
 * log_setup(). */
bool sandbox_default_user(struct sandbox_opts *opts);

/* "kill" (or "on"), "log", "off". 0 or -EINVAL. */
int sandbox_parse_seccomp(const char *arg, enum sandbox_seccomp *out);
/* "UID:GID" (numbers). 0 or -EINVAL. */
int sandbox_parse_user(const char *arg, struct sandbox_opts *opts);

/*
 * One malloc arena for every thread: call first thing in main(), before
 * any thread starts. A thread arena's first trim makes glibc open
 * /proc/sys/vm/overcommit_memory, which a confined thread may not do
 * (SIGSYS). Warming that up in a throw-away thread did not hold: past
 * glibc's arena limit (8 per CPU) that thread shares an old arena and
 * never trims, and a vCPU thread trimmed first (nested crash scenario: 2
 * vCPUs, 6 disks, rng and the balloon on a one-CPU host). With one arena
 * there is no thread heap to trim. No hot path allocates.
 */
void sandbox_malloc_setup(void);

/*
 * Phase 1. Sets no_new_privs for the calling thread (so for every thread
 * started after it); compiles no filter yet. 0 or -errno.
 */
int sandbox_prepare(const struct sandbox_opts *opts);

/*
 * Confine the calling (new) thread for role: drop its capabilities, switch
 * to --user, install the role's filter. A no-op returning 0 when
 * sandbox_prepare() was not called (unit tests of other modules). Called by
 * thread.c; 0 or -errno.
 */
int sandbox_thread_enter(enum thread_role role);

/*
 * Step 3, on the main thread (see above): --jail pivot, --user, every
 * capability and the bounding set dropped, for main and every thread it
 * starts from now on. Idempotent; 0 or -errno (the caller must not go on:
 * the privileges may be half-dropped).
 */
int sandbox_drop_privileges(void);

/* Step 5, on the main thread (see above). 0 or -errno. */
int sandbox_apply(void);

/* True between sandbox_prepare() and sandbox_release(). */
bool sandbox_prepared(void);
/* True once sandbox_apply() succeeded. */
bool sandbox_applied(void);

/* Microseconds spent compiling filters, and nanoseconds all seccomp(2)
 * installs took, so far (for benchmarks; also logged). */
long sandbox_compile_us(void);
long sandbox_install_ns(void);

/* Number of rules in role's allowlist (for tests and benchmarks); 0 until
 * the role's filter is compiled. */
unsigned int sandbox_rule_count(enum thread_role role);

/* The role's compiled program, or NULL if it is not compiled (yet, or
 * --seccomp=off). Valid until the role is compiled again or
 * sandbox_release(). For tests. */
struct sock_fprog;
const struct sock_fprog *sandbox_program(enum thread_role role);

/*
 * Free the compiled programs. Only after every other thread has been
 * joined; sandbox_prepare() may be called again afterwards.
 */
void sandbox_release(void);

#endif /* VMLET_SANDBOX_H */
