/* SPDX-License-Identifier: MIT */
/*
 * vcpu.h - one vCPU: its KVM fd, kvm_run page and thread.
 *
 * Each vCPU is created with KVM vCPU id = its APIC ID (KVM derives the
 * x2APIC ID from the vCPU id, see docs/hosts.md). The BSP
 * (index 0) starts runnable; APs start in KVM_MP_STATE_UNINITIALIZED and
 * wait in the kernel for INIT-SIPI-SIPI from the guest.
 */
#ifndef VMLET_VCPU_H
#define VMLET_VCPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct vm;
struct kvm_run;

#define VCPU_EXIT_STATS 40

struct vcpu {
	struct vm *vm;
	uint32_t index, apic_id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool started;
	/* KVM exits by exit_reason (the last slot counts larger reasons);
	 * written by the vCPU thread, read atomically by the metrics */
	uint64_t exits[VCPU_EXIT_STATS];
	int smi_pending; /* device_smm_raise() (smm.c); atomic */
	/* KVM's dirty ring of this vCPU (vmm/vm/dirty_ring.h; NULL: none)
	 * and the harvester's next index in it (main thread only) */
	struct kvm_dirty_gfn *ring;
	uint32_t ring_fetch;
	/* the TSC (and TSC deadline) that go with a snapshot's KVM clock
	 * (vmm/snapshot/snap_vcpu.c), main thread, vCPU not running. Saving:
	 * clock_tsc[0] is read beside KVM_GET_CLOCK at the pause and saved in
	 * place of the TSC read later. Restoring: [0] the TSC and [1] the
	 * deadline wait until just before KVM_SET_CLOCK. Either way the
	 * guest's TSC and kvmclock stay in step. Bit i of clock_tsc_have:
	 * clock_tsc[i] holds a value. */
	uint64_t clock_tsc[2];
	uint32_t clock_tsc_have;
};

/* Create vCPU index of vm: fd, run page, CPUID, MSRs, mp_state. */
int vcpu_create(struct vm *vm, uint32_t index, struct vcpu *v);
/* The BSP's LAPIC (LINT0 ExtINT, LINT1 NMI), written once every vCPU
 * exists: that write also completes KVM's APIC-ID map (vcpu.c). */
int vcpu_lapic_init(struct vcpu *bsp);
/* Start the threads of vcpus[0..n) (THREAD_VCPU: KVM_RUN and exit dispatch
 * until the VM ends) together with thread_start_all(), so that they enter
 * the sandbox side by side; the last one first. 0 when every one runs,
 * else -errno; either way each vcpu's `started` says whether it runs. */
int vcpu_start_all(struct vcpu *vcpus, uint32_t n);
/* Make the vCPU leave KVM_RUN and its thread finish (any thread). */
void vcpu_kick(struct vcpu *v);
/* Join the thread (if started), unmap and close. */
void vcpu_destroy(struct vcpu *v);

/* Log the vCPU's rip, rsp, mode registers (a warning: for post-mortems;
 * call only while its thread is not in KVM_RUN). After a triple fault
 * that left the reset state (KVM on AMD reinitialises the vCPU) it says
 * the registers are lost instead of dumping F000:FFF0. */
void vcpu_log_regs(struct vcpu *v);

/* Install the kick signal's handler (once per process, before vcpu_start_all). */
int vcpu_signals_init(void);

#endif /* VMLET_VCPU_H */
