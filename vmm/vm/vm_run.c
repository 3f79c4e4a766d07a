/* SPDX-License-Identifier: MIT */
/*
 * vm_run.c - run a created and booted VM: start the vCPU threads, then run
 * the main thread's event loop until the VM ends.
 *
 * Stopping from outside follows KubeVirt: SIGTERM or SIGINT presses the ACPI
 * power button so the guest can shut down cleanly; when it has not powered
 * off after terminationGracePeriodSeconds, the VM is stopped hard
 * (VM_EXIT_HARD_STOP). A second SIGINT (Ctrl-C twice) stops it at once.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "vmm/util/log.h"
#include "vmm/sandbox/sandbox.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

struct vm_stopper {
	struct vm *vm;
	int sfd;
	int presses;
	struct event_timer *grace;
};

static void vm_grace_expired(void *opaque, uint32_t events)
{
	struct vm_stopper *s = opaque;

	(void)events;
	log_warn("vm: guest did not power off within %lld s: stopping it",
		 (long long)s->vm->cfg->termination_grace_seconds);
	vm_request_exit(s->vm, VM_EXIT_HARD_STOP);
}

static void vm_on_signal(void *opaque, uint32_t events)
{
	struct vm_stopper *s = opaque;
	struct signalfd_siginfo si;
	int64_t grace = s->vm->cfg->termination_grace_seconds;

	(void)events;
	if (read(s->sfd, &si, sizeof(si)) != sizeof(si))
		return;
	if (s->presses++) {
		if (si.ssi_signo == SIGINT) {
			log_warn("vm: second SIGINT: stopping the guest now");
			vm_request_exit(s->vm, VM_EXIT_HARD_STOP);
		}
		return;
	}
	log_info("vm: %s: pressing the ACPI power button (grace period %lld s)",
		 strsignal((int)si.ssi_signo), (long long)grace);
	vm_power_button(s->vm);
	if (grace <= 0 || event_timer_arm(s->grace, (uint64_t)grace * 1000))
		vm_request_exit(s->vm, VM_EXIT_HARD_STOP);
}

static int vm_stopper_init(struct vm_stopper *s, struct vm *vm)
{
	sigset_t set;
	int ret;

	memset(s, 0, sizeof(*s));
	s->vm = vm;
	s->sfd = -1;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	/* Before any thread starts, so that only the signalfd sees them. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	s->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sfd < 0)
		return error_errno(-errno, "vm: signalfd");
	ret = event_add(&vm->loop, s->sfd, EPOLLIN, vm_on_signal, s);
	if (!ret)
		ret = event_timer_create(&vm->loop, vm_grace_expired, s, &s->grace);
	return ret ? error_errno(ret, "vm: event loop setup") : 0;
}

/*
 * SIGTERM/SIGINT stay blocked: one arriving while we tear down must not
 * kill vmlet with the default action and hide the guest's exit status.
 */
static void vm_stopper_release(struct vm_stopper *s)
{
	event_timer_destroy(s->grace);
	if (s->sfd >= 0) {
		event_del(&s->vm->loop, s->sfd);
		close(s->sfd);
	}
}

static void vm_join_vcpus(struct vm *vm)
{
	uint32_t i;

	for (i = 0; i < vm->n_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
	for (i = 0; i < vm->n_vcpus; i++) {
		if (!vm->vcpus[i].started)
			continue;
		pthread_join(vm->vcpus[i].thread, NULL);
		vm->vcpus[i].started = false;
	}
}

/*
 * The vCPU threads start now, each confined by its own filter, and are
 * held before their first KVM_RUN (the pause gate, vmm/vm/vm_pause.c): the
 * main thread then installs its filter, which need not admit thread
 * creation or vCPU ioctls (filters stack on the creator's), and only then
 * lets guest code run (vmm/sandbox/sandbox.h, vm_serve()). They start
 * together (each enters its sandbox on its own CPU time, main waits
 * once), APs first: they wait in the kernel for the BSP's INIT-SIPI-SIPI.
 * 0, or -errno: the VM cannot run (the caller ends it).
 */
static int vm_start_vcpus(struct vm *vm)
{
	int ret;

	__atomic_store_n(&vm->paused, 1, __ATOMIC_SEQ_CST);
	/* Everything is open: main gives up its privileges now, so the vCPU
	 * threads are born without them (no per-thread capability work). */
	if (sandbox_prepared()) {
		ret = sandbox_drop_privileges();
		if (ret)
			return ret;
	}
	ret = vcpu_start_all(vm->vcpus, vm->n_vcpus);
	if (!ret)
		ret = vm_pin_vcpus(vm);
	if (ret)
		return ret;
	vm_stamp(vm, "threads");
	if (sandbox_prepared()) {
		ret = sandbox_apply();
		if (ret)
			return ret;
	}
	vm_stamp(vm, "sandboxed");
	return 0;
}

/* Let the held vCPUs run (unless the VM starts paused), then serve the
 * main thread's event loop until the VM ends. */
static void vm_serve(struct vm *vm)
{
	int ret;

	if (vm->cfg->start_paused) /* startStrategy: Paused: ctl resume lets them run */
		log_info("vm: started paused (startStrategy Paused): the vCPUs wait for a resume");
	else if (vm->start_paused)
		log_info("vm: the guest arrived paused: the vCPUs wait for a resume");
	else
		vm_pause_wake(vm); /* the first guest instruction */
	while (vm_exit_reason(vm) == VM_EXIT_NONE) {
		ret = event_loop_run(&vm->loop);
		if (ret) {
			error_errno(ret, "vm: event loop");
			vm_request_exit(vm, VM_EXIT_HARD_STOP);
		}
		vm_pause_pending(vm); /* a disk's errorPolicy stop */
	}
}

int vm_run(struct vm *vm)
{
	struct vm_stopper s;
	int ret;

	vm_stamp(vm, "booted");
	ret = vcpu_signals_init();
	if (ret)
		return error_errno(ret, "vm: cannot install the vCPU kick handler");
	ret = vm_stopper_init(&s, vm);
	if (ret)
		goto out;
	ret = vm_start_vcpus(vm);
	if (ret)
		vm_request_exit(vm, VM_EXIT_CRASH);
	else
		vm_serve(vm);
	vm_join_vcpus(vm);
	vm_stamp(vm, "joined");
	/* where a guest that had to be stopped was stuck */
	if (vm_exit_reason(vm) == VM_EXIT_HARD_STOP && vm->n_vcpus)
		vcpu_log_regs(&vm->vcpus[0]);
out:
	vm_stopper_release(&s);
	if (ret)
		return ret;
	vm_log_counters(vm);
	log_info("vm: guest %s", vm_exit_reason_name(vm_exit_reason(vm)));
	return (int)vm_exit_reason(vm);
}
