/* SPDX-License-Identifier: MIT */
/*
 * sandbox_rules.c - what each thread role may do once it is confined.
 *
 * Every entry names its user. The lists were written from the code's calls
 * and checked with `strace -f` on the probe guest and the unit tests
 * (tests/unit/sandbox_role_test.c exercises each role's allowed set as well
 * as forbidden calls). Anything not listed kills the process (or is logged
 * with --seccomp=log).
 *
 * Argument filters:
 *   ioctl   request numbers per role (a vCPU thread cannot create VMs,
 *           map memory or touch a disk's ioctls);
 *   mmap/mprotect   never PROT_EXEC: no new executable memory after setup;
 *   socket/connect  no role (every socket is made or handed in during
 *           setup: passt's streams come from its supervisor, vsock's
 *           guest-initiated streams from the connector process);
 *   fallocate  punch hole or zero range, keeping the size (block I/O);
 *   write   stderr only for threads that have no other reason to write;
 *   read/write  a vCPU: only eventfds, stdout/stderr, append-only files
 *           and fds opened after its filter was built (sandbox_fds.c);
 *   tgkill  own thread group only;
 *   clone   CLONE_THREAD only: threads, never processes.
 */
#include <linux/fs.h>
#include <linux/if_tun.h>
#include <linux/kvm.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <linux/seccomp.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>

#include "vmm/sandbox/sandbox_rules.h"

/* The rules read as a table, one per line: keep clang-format out. */
/* clang-format off */
#define ALLOW(sys) { SCMP_SYS(sys), -1, SCMP_CMP_EQ, 0, 0, 0 }
#define ALLOW_EQ(sys, n, v) { SCMP_SYS(sys), n, SCMP_CMP_EQ, (v), 0, 0 }
#define ALLOW_MASKED(sys, n, mask, v) { SCMP_SYS(sys), n, SCMP_CMP_MASKED_EQ, (mask), (v), 0 }
/* ioctl's request is an int in the kernel: compare the low 32 bits. */
#define ALLOW_IOCTL(req) ALLOW_MASKED(ioctl, 1, 0xffffffffu, (uint32_t)(req))
#define FAIL(sys, e) { SCMP_SYS(sys), -1, SCMP_CMP_EQ, 0, 0, (e) }
#define RULESET(nm, arr) { nm, arr, sizeof(arr) / sizeof(arr[0]) }

static const struct sandbox_rule common[] = {
	/* pthread mutexes and condition variables: the log lock, device
	 * queues, pause/resume, thread_start()'s handshake */
	ALLOW(futex),
	/* log lines (vmm/util/log.c writes stderr unbuffered) */
	ALLOW_EQ(write, 0, 2),
	/* malloc: arenas and large blocks; never executable */
	ALLOW_MASKED(mmap, 2, PROT_EXEC, 0),
	ALLOW_MASKED(mprotect, 2, PROT_EXEC, 0),
	/* free() of large blocks and arena shrinking */
	ALLOW(munmap),
	/* free() trimming arenas, glibc releasing an exiting thread's stack,
	 * and the virtio-balloon worker releasing guest pages the guest
	 * reported free (private anonymous RAM): MADV_DONTNEED only */
	ALLOW_EQ(madvise, 2, MADV_DONTNEED),
	/* malloc in the main arena */
	ALLOW(brk),
	/* glibc blocks signals around thread exit and abort() */
	ALLOW(rt_sigprocmask),
	/* returning from the vCPU kick and SIGTERM/SIGINT handlers */
	ALLOW(rt_sigreturn),
	/* the kernel restarting a call interrupted by a signal */
	ALLOW(restart_syscall),
	/* a thread returning from its function */
	ALLOW(exit),
	/* exit() from main; abort() when everything else failed */
	ALLOW(exit_group),
	/* time stamps (log, metrics, backoff) when the vDSO cannot serve
	 * the clock */
	ALLOW(clock_gettime),
	ALLOW(gettimeofday),
	/* backoff and short waits */
	ALLOW(clock_nanosleep),
	ALLOW(nanosleep),
	/* log lines, abort() */
	ALLOW(getpid),
	ALLOW(gettid),
	/* pthread_kill() (kicking vCPUs out of KVM_RUN) and abort(): only
	 * threads of this process */
	ALLOW_EQ(tgkill, 0, SANDBOX_DATUM_PID),
};

/* vCPU: KVM_RUN and the exit handling done on the vCPU thread. */
static const struct sandbox_rule vcpu[] = {
	/* the vCPU loop */
	ALLOW_IOCTL(KVM_RUN),
	/* register access for exits handled in vmlet (PIO string ops,
	 * the probe's register dump) and for resetting the vCPU on an
	 * in-process reboot */
	ALLOW_IOCTL(KVM_GET_REGS),
	ALLOW_IOCTL(KVM_SET_REGS),
	ALLOW_IOCTL(KVM_GET_SREGS),
	ALLOW_IOCTL(KVM_SET_SREGS),
	ALLOW_IOCTL(KVM_GET_MSRS),
	ALLOW_IOCTL(KVM_SET_MSRS),
	ALLOW_IOCTL(KVM_SET_FPU),
	ALLOW_IOCTL(KVM_SET_LAPIC),
	ALLOW_IOCTL(KVM_GET_LAPIC),
	ALLOW_IOCTL(KVM_SET_CPUID2),
	ALLOW_IOCTL(KVM_SET_XCRS),
	ALLOW_IOCTL(KVM_GET_MP_STATE),
	ALLOW_IOCTL(KVM_SET_MP_STATE),
	ALLOW_IOCTL(KVM_GET_VCPU_EVENTS),
	ALLOW_IOCTL(KVM_SET_VCPU_EVENTS),
	/* device register writes that raise an interrupt (UART, PCI INTx,
	 * MSI-X) or change interrupt routing (MSI-X table, virtio queue
	 * enable) run on the vCPU thread that made the access */
	ALLOW_IOCTL(KVM_IRQ_LINE),
	ALLOW_IOCTL(KVM_IRQ_LINE_STATUS),
	ALLOW_IOCTL(KVM_SIGNAL_MSI),
	ALLOW_IOCTL(KVM_SET_GSI_ROUTING),
	ALLOW_IOCTL(KVM_IRQFD),
	ALLOW_IOCTL(KVM_IOEVENTFD),
	/* SMM (vmm/vm/smm.c): an SMI the vCPU raises on itself (APM port
	 * write) or takes when another raised it for all; SMRAM opened,
	 * closed or locked by a MCH config write adds or removes a memory
	 * slot of low RAM's pieces (slots of VMs without SMM never change) */
	ALLOW_IOCTL(KVM_SMI),
	ALLOW_IOCTL(KVM_SET_USER_MEMORY_REGION),
	/* read and write: only on the fds sandbox_vcpu_fd_rules() allows
	 * (sandbox_fds.c), added when the filter is built: serial console
	 * output (stdout, the console file, an attached control client),
	 * the EFI variable store (appends), eventfd kicks to I/O threads and
	 * the event loop, the eventfd a paused vCPU waits on */
};

/* Shared by the block and net I/O threads. */
#define IO_COMMON                                                             \
	/* drain queue-notify eventfds (ioeventfd) and the stop eventfd */  \
	ALLOW(read),                                                          \
	/* raise the completion interrupt through an irqfd, wake main */     \
	ALLOW(write),                                                         \
	/* wait for a queue notification or the stop request */              \
	ALLOW(ppoll), ALLOW(poll), ALLOW(epoll_wait), ALLOW(epoll_pwait),     \
	/* interrupt injection when no irqfd is used */                       \
	ALLOW_IOCTL(KVM_IRQ_LINE), ALLOW_IOCTL(KVM_SIGNAL_MSI)

static const struct sandbox_rule blk_io[] = {
	IO_COMMON,
	/* guest reads and writes (VIRTIO_BLK_T_IN/OUT) */
	ALLOW(preadv),
	ALLOW(pwritev),
	ALLOW(pread64),
	ALLOW(pwrite64),
	/* VIRTIO_BLK_T_FLUSH */
	ALLOW(fdatasync),
	ALLOW(fsync),
	/* DISCARD / WRITE_ZEROES (blk_raw.c), on image files and host block
	 * devices alike: punch hole or zero range, never changing the size
	 * (mode 0 would grow the file, COLLAPSE/INSERT_RANGE move data) */
	ALLOW_EQ(fallocate, 1, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE),
	ALLOW_EQ(fallocate, 1, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE),
};

static const struct sandbox_rule net_io[] = {
	IO_COMMON,
	/* frames to and from the tap device */
	ALLOW(readv),
	ALLOW(writev),
	/* frames over passt's stream; a restarted passt's new stream arrives
	 * from its supervisor (vmm/net/passt.c) as SCM_RIGHTS on the socket
	 * pair made in setup: no socket() or connect() here */
	ALLOW(recvmsg),
	ALLOW(sendmsg),
	ALLOW(recvfrom),
	ALLOW(sendto),
	/* dropping a broken passt stream, or a virtio-console port's host
	 * client that left */
	ALLOW(close),
	/* virtio-console: a port's host client connecting to the socket bound
	 * in setup (vmm/virtio/virtio_console_io.c); virtio-vsock's host
	 * clients likewise (vmm/virtio/virtio_vsock_conn.c) */
	ALLOW(accept4),
	/* virtio-vsock: the guest's SHUTDOWN passed on to the host side of a
	 * stream (SHUT_WR on a socket it holds; its guest-initiated sockets
	 * come from the connector process, vmm/sandbox/connector.h: still no
	 * socket() or connect() here) */
	ALLOW(shutdown),
	/* virtio-net: the receive offloads the guest negotiated, set on the
	 * tap at each DRIVER_OK (virtio_net_io.c) */
	ALLOW_IOCTL(TUNSETOFFLOAD),
	/* virtio-net multiqueue: only the queue pairs the guest enabled
	 * take part in the tap's steering (IFF_ATTACH/DETACH_QUEUE) */
	ALLOW_IOCTL(TUNSETQUEUE),
};

static const struct sandbox_rule helper[] = {
	/* pipes to and from a supervised child */
	ALLOW(read),
	ALLOW(write),
	ALLOW(ppoll),
	ALLOW(poll),
	/* reaping a supervised child (passt) */
	ALLOW(wait4),
	ALLOW(waitid),
	/* stopping it: SIGTERM, then SIGKILL */
	ALLOW_EQ(kill, 1, SIGTERM),
	ALLOW_EQ(kill, 1, SIGKILL),
	ALLOW(close),
};

/* The main thread once set up: the event loop. */
static const struct sandbox_rule main_loop[] = {
	/* the PIT's lost-tick re-injection turned off once the guest runs
	 * (vm.c: KVM waits for a grace period there, not at teardown) */
	ALLOW_IOCTL(KVM_REINJECT_CONTROL),
	/* --log-level debug: how much guest RAM the host backed, logged
	 * when the VM is destroyed (vm.c, for scripts/bench-boot) */
	ALLOW(mincore),
	/* the event loop */
	ALLOW(epoll_wait),
	ALLOW(epoll_pwait),
	ALLOW(epoll_ctl),
	/* signalfd, eventfds, timerfds, control connections, console input */
	ALLOW(read),
	/* control replies, console output relay, eventfd kicks */
	ALLOW(write),
	ALLOW(writev),
	/* new control-socket connections (the socket was bound in setup),
	 * each peer's uid checked against vmlet's own (ctl/server.c) */
	ALLOW(accept4),
	ALLOW_EQ(getsockopt, 2, SO_PEERCRED),
	ALLOW(geteuid),
	/* ending control connections; closing fds at teardown */
	ALLOW(close),
	ALLOW(shutdown),
	/* non-blocking control connections */
	ALLOW_EQ(fcntl, 1, F_GETFL),
	ALLOW_EQ(fcntl, 1, F_SETFL),
	/* grace-period and restart-backoff timers (created in setup) */
	ALLOW(timerfd_settime),
	ALLOW(timerfd_gettime),
	/* metrics: vmlet's RSS from /proc/self/statm, opened in setup;
	 * a capped console file read for its copy to PATH.1 */
	ALLOW(pread64),
	/* ... and emptied, with PATH.1 before the copy (dev/console_out.c:
	 * both were opened in setup) */
	ALLOW_EQ(ftruncate, 1, 0),
	/* the ACPI power button's SCI and interrupts raised by devices the
	 * event loop serves */
	ALLOW_IOCTL(KVM_IRQ_LINE),
	ALLOW_IOCTL(KVM_IRQ_LINE_STATUS),
	ALLOW_IOCTL(KVM_SIGNAL_MSI),
	/* flushing disks before exit */
	ALLOW(fdatasync),
	ALLOW(fsync),
	/* teardown: devices detach their ioeventfds and irqfds from the VM
	 * (KVM_*_FLAG_DEASSIGN) */
	ALLOW_IOCTL(KVM_IOEVENTFD),
	ALLOW_IOCTL(KVM_IRQFD),
	/* where a guest that had to be stopped was stuck: the BSP's
	 * registers, read once its thread has been joined (vm_run.c) */
	ALLOW_IOCTL(KVM_GET_REGS),
	ALLOW_IOCTL(KVM_GET_SREGS),
	/* `vmlet ctl SOCKET snapshot` (vmm/snapshot/): the two files arrive
	 * as SCM_RIGHTS with the request (no path is opened); the state is
	 * read from KVM (GET only) and written there, guest RAM sparsely */
	ALLOW(recvmsg),
	ALLOW(pwrite64),
	ALLOW_IOCTL(KVM_GET_MSR_INDEX_LIST),
	ALLOW_IOCTL(KVM_GET_XSAVE),
	ALLOW_IOCTL(KVM_GET_XCRS),
	ALLOW_IOCTL(KVM_GET_LAPIC),
	ALLOW_IOCTL(KVM_GET_MSRS),
	ALLOW_IOCTL(KVM_GET_VCPU_EVENTS),
	ALLOW_IOCTL(KVM_GET_MP_STATE),
	ALLOW_IOCTL(KVM_GET_DEBUGREGS),
	ALLOW_IOCTL(KVM_GET_CLOCK),
	ALLOW_IOCTL(KVM_GET_IRQCHIP),
	ALLOW_IOCTL(KVM_GET_PIT2),
	/* `vmlet ctl SOCKET migrate` (vmm/snapshot/migrate.h): the connected
	 * stream arrives as SCM_RIGHTS (read/write on it); KVM's dirty log
	 * is turned on and off for the RAM slots set up in setup (the same
	 * slots, addresses and sizes: only the flag changes) and read */
	ALLOW_IOCTL(KVM_SET_USER_MEMORY_REGION),
	ALLOW_IOCTL(KVM_GET_DIRTY_LOG),
	/* ... or, where the VM has KVM's dirty ring (vmm/vm/dirty_ring.h),
	 * the harvested entries handed back (each vCPU's ring was mapped in
	 * setup; a vCPU whose ring is full only waits for this) */
	ALLOW_IOCTL(KVM_RESET_DIRTY_RINGS),
	/* ... and the disks change hands (vmm/disk/blk.h): the source drops
	 * its image locks, and takes them back when the migration failed */
	ALLOW_EQ(fcntl, 1, F_OFD_SETLK),
	ALLOW_EQ(fcntl, 1, F_OFD_GETLK),
	/* stdio's first use of a stream (console on stdout): fstat only,
	 * never a path */
	ALLOW(fstat),
	ALLOW_EQ(newfstatat, 3, AT_EMPTY_PATH),
	ALLOW(lseek),
	/* vmlet probe: the expected report stats the disk images after the
	 * run (vmm/probe/report_pci.c); metadata only, nothing is opened */
	ALLOW_EQ(newfstatat, 3, 0),
	/* ... and whether the stream is a terminal (isatty) */
	ALLOW_IOCTL(TCGETS),
	/* the console on a terminal: its saved modes restored at teardown
	 * (serial8250.c: tcsetattr TCSANOW) */
	ALLOW_IOCTL(TCSETS),
};

const struct sandbox_ruleset sandbox_rules_common = RULESET("common", common);

const struct sandbox_ruleset sandbox_rules_role[THREAD_ROLE_COUNT] = {
	[THREAD_MAIN] = RULESET("main", main_loop),
	[THREAD_VCPU] = RULESET("vcpu", vcpu),
	[THREAD_BLK_IO] = RULESET("blk-io", blk_io),
	[THREAD_NET_IO] = RULESET("net-io", net_io),
	[THREAD_HELPER] = RULESET("helper", helper),
};

/*
 * A thread started after sandbox_apply() runs under main's filter until it
 * installs its own, so main's filter admits these when late roles exist.
 */
static const struct sandbox_rule late_thread[] = {
	/* pthread_create(): threads only, never a new process */
	ALLOW_MASKED(clone, 0, CLONE_THREAD, CLONE_THREAD),
	/* clone3's flags live in memory a filter cannot read: fail it so
	 * glibc falls back to clone */
	FAIL(clone3, ENOSYS),
	/* glibc installs its internal SIGCANCEL/SIGSETXID handlers at the
	 * process's first pthread_create() */
	ALLOW_EQ(rt_sigaction, 0, 32),
	ALLOW_EQ(rt_sigaction, 0, 33),
	/* glibc's start_thread() */
	ALLOW(set_robust_list),
	ALLOW(rseq),
	/* thread.c names the thread (PR_SET_NAME), sandbox.c sets
	 * no_new_privs, then installs the role's filter */
	ALLOW_EQ(prctl, 0, PR_SET_NAME),
	ALLOW_EQ(prctl, 0, PR_SET_NO_NEW_PRIVS),
	ALLOW_EQ(seccomp, 0, SECCOMP_SET_MODE_FILTER),
};

const struct sandbox_ruleset sandbox_rules_thread_start = RULESET("thread-start", late_thread);

#if defined(__SANITIZE_ADDRESS__)
/*
 * ASan builds only (build/san): the sanitizer runtime's own calls at thread
 * start and exit. LeakSanitizer's exit-time check (a ptrace helper reading
 * /proc) cannot run confined: sandbox_apply() runs it early instead.
 */
static const struct sandbox_rule sanitizer[] = {
	ALLOW(sigaltstack), ALLOW(rt_sigaction), ALLOW(sched_yield), ALLOW(getrlimit),
	ALLOW(prlimit64),   ALLOW(sched_getaffinity), ALLOW(madvise), ALLOW(prctl),
};
const struct sandbox_ruleset sandbox_rules_sanitizer = RULESET("sanitizer", sanitizer);
#else
const struct sandbox_ruleset sandbox_rules_sanitizer = { .name = "sanitizer", .rules = NULL, .n = 0 };
#endif
/* clang-format on */
