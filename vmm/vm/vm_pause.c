/* SPDX-License-Identifier: MIT */
/*
 * vm_pause.c - the VM's pause (vm.h): the main thread pauses and resumes
 * it (the control socket's pause and resume verbs), a device thread asks
 * for a pause and waits for its end (device_pause_vm(), device.h).
 *
 * Pause: the main thread sets vm->paused and kicks every vCPU
 * (vcpu_kick(): immediate_exit plus the kick signal, so a vCPU inside or
 * about to enter KVM_RUN leaves it). Each vCPU thread checks the flag
 * before KVM_RUN (vm_pause_point()), counts itself parked and waits on a
 * condition variable; vm_pause() returns when all started vCPUs are
 * parked. Resume clears the flag and wakes them; each clears its own
 * immediate_exit before running again. A VM that ends while paused wakes
 * them too (vm_pause_wake() from vm_request_exit()): they see the exit
 * reason and finish. Device threads keep running: requests the guest
 * queued before the pause complete, and received frames still fill the
 * guest's buffers.
 *
 * A device thread cannot pause the VM itself (vm_pause() waits for the
 * vCPUs and belongs to the main thread): device_pause_vm() leaves the request
 * and its reason under pause_lock and wakes the main loop, which calls
 * vm_pause_pending(). Every end of a pause (resume, a pause that failed,
 * the VM's end) bumps resume_gen, which device threads wait on.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"

#define PAUSE_TIMEOUT_S 2

void vm_pause_init(struct vm *vm)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&vm->pause_lock, NULL);
	pthread_mutex_init(&vm->coalesced_lock, NULL); /* vm_coalesced.c */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&vm->pause_cond, &ca);
	/* the dirty ring's waiters (dirty_ring.h), which a pause also ends */
	pthread_mutex_init(&vm->ring_lock, NULL);
	pthread_cond_init(&vm->ring_cond, &ca);
	pthread_condattr_destroy(&ca);
}

static unsigned int started_vcpus(struct vm *vm)
{
	unsigned int i, n = 0;

	for (i = 0; i < vm->n_vcpus; i++)
		n += vm->vcpus[i].started;
	return n;
}

int vm_pause(struct vm *vm)
{
	unsigned int i, want = started_vcpus(vm);
	struct timespec deadline;
	int err = 0;

	if (vm_is_paused(vm))
		return -EALREADY;
	if (vm_exit_reason(vm) != VM_EXIT_NONE)
		return -ESRCH;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += PAUSE_TIMEOUT_S;
	pthread_mutex_lock(&vm->pause_lock);
	__atomic_store_n(&vm->paused, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < vm->n_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
	pthread_mutex_lock(&vm->ring_lock); /* a vCPU waiting on a full dirty ring */
	pthread_cond_broadcast(&vm->ring_cond);
	pthread_mutex_unlock(&vm->ring_lock);
	while (vm->parked < want && vm_exit_reason(vm) == VM_EXIT_NONE && !err)
		err = pthread_cond_timedwait(&vm->pause_cond, &vm->pause_lock, &deadline);
	pthread_mutex_unlock(&vm->pause_lock);
	if (err || vm_exit_reason(vm) != VM_EXIT_NONE) {
		vm_pause_wake(vm);
		return err ? error_errno(-ETIMEDOUT, "vm: a vCPU did not stop for the pause")
			   : -ESRCH;
	}
	log_info("vm: paused (%u vCPUs held)", want);
	return 0;
}

void vm_pause_wake(struct vm *vm)
{
	pthread_mutex_lock(&vm->pause_lock);
	__atomic_store_n(&vm->paused, 0, __ATOMIC_SEQ_CST);
	vm->pause_reason[0] = vm->pause_message[0] = 0;
	vm->resume_gen++;
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
}

unsigned int device_pause_vm(struct vm *vm, const char *reason, const char *message)
{
	unsigned int gen;

	pthread_mutex_lock(&vm->pause_lock);
	gen = vm->resume_gen;
	if (!vm->pause_reason[0]) {
		snprintf(vm->pause_reason, sizeof(vm->pause_reason), "%s", reason);
		snprintf(vm->pause_message, sizeof(vm->pause_message), "%s", message);
	}
	vm->pause_wanted = true;
	pthread_mutex_unlock(&vm->pause_lock);
	event_loop_wake(&vm->loop);
	return gen;
}

int device_wait_resume(struct vm *vm, unsigned int gen, unsigned int timeout_ms)
{
	struct timespec deadline;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&vm->pause_lock);
	while (vm->resume_gen == gen && vm_exit_reason(vm) == VM_EXIT_NONE && !err)
		err = pthread_cond_timedwait(&vm->pause_cond, &vm->pause_lock, &deadline);
	pthread_mutex_unlock(&vm->pause_lock);
	if (vm_exit_reason(vm) != VM_EXIT_NONE)
		return -ESRCH;
	return err ? -ETIMEDOUT : 0;
}

void vm_pause_pending(struct vm *vm)
{
	char reason[sizeof(vm->pause_reason)], msg[sizeof(vm->pause_message)];
	bool want;

	pthread_mutex_lock(&vm->pause_lock);
	want = vm->pause_wanted;
	vm->pause_wanted = false;
	pthread_mutex_unlock(&vm->pause_lock);
	if (!want || vm_is_paused(vm))
		return;
	if (!vm_pause(vm) && vm_paused_because(vm, reason, sizeof(reason), msg, sizeof(msg)))
		log_warn("vm: paused (%s): %s; `vmlet ctl SOCKET resume` retries", reason, msg);
}

bool vm_paused_because(struct vm *vm, char *reason, size_t rlen, char *msg, size_t mlen)
{
	bool paused;

	pthread_mutex_lock(&vm->pause_lock);
	paused = vm_is_paused(vm);
	snprintf(reason, rlen, "%s", vm->pause_reason[0] ? vm->pause_reason : "PausedByUser");
	snprintf(msg, mlen, "%s", vm->pause_message);
	pthread_mutex_unlock(&vm->pause_lock);
	return paused;
}

int vm_resume(struct vm *vm)
{
	if (!vm_is_paused(vm))
		return -EALREADY;
	vm_pause_wake(vm);
	log_info("vm: resumed");
	return 0;
}

void vm_pause_point(struct vcpu *v)
{
	struct vm *vm = v->vm;

	pthread_mutex_lock(&vm->pause_lock);
	if (!__atomic_load_n(&vm->paused, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&vm->pause_lock);
		return;
	}
	vm->parked++;
	pthread_cond_broadcast(&vm->pause_cond); /* vm_pause() counts us */
	while (__atomic_load_n(&vm->paused, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&vm->pause_cond, &vm->pause_lock);
	vm->parked--;
	pthread_mutex_unlock(&vm->pause_lock);
	/* The pause's kick left immediate_exit set. Clear it with a full
	 * barrier before the caller re-reads the exit reason: a stop that
	 * kicked us meanwhile is then seen, not lost. */
	__atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
}
