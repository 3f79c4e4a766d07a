/* SPDX-License-Identifier: MIT */
/*
 * hyperv.h - Hyper-V enlightenments on KVM (cfg->hyperv, cfg->kvm_hidden):
 * what the host's KVM must offer, the per-vCPU capabilities, the CPUID
 * leaves (arch_hv_cpuid), and the exits KVM's Hyper-V emulation leaves to
 * userspace. KVM itself emulates the synthetic MSRs (hypercall page,
 * VP index and runtime, SynIC and its timers, the reference TSC page,
 * reset, frequencies, reenlightenment) and the TLB-flush and IPI
 * hypercalls; vmlet only switches them on and presents them.
 */
#ifndef VMLET_VMM_HYPERV_H
#define VMLET_VMM_HYPERV_H

#include <stddef.h>
#include <linux/kvm.h>

struct vm;
struct vcpu;

/*
 * After KVM_GET_SUPPORTED_CPUID and the vendor are known: vm->hv from
 * the config and, when it presents Hyper-V, the host's check: KVM's
 * Hyper-V emulation (KVM_CAP_HYPERV, KVM_CAP_SYS_HYPERV_CPUID: Linux
 * 5.11) and every enlightenment's bits in KVM_GET_SUPPORTED_HV_CPUID
 * (kept in vm->hv_sup). The enlightened VMCS is Intel's: refused on an
 * AMD guest. 0, or -ENOTSUP/-errno with the error logged naming the
 * field.
 */
int hv_vm_init(struct vm *vm);

/* Before the vCPU's KVM_SET_CPUID2 (on the thread that creates it): the
 * SynIC (KVM_CAP_HYPERV_SYNIC2) and enlightened VMCS capabilities the
 * config asks for. 0 or -errno, logged. */
int hv_vcpu_init(struct vcpu *v);

/* The vCPU's CPUID table e[0..*n) (room for cap) rewritten for vm->hv
 * (arch_hv_cpuid). 0 or -errno. */
int hv_cpuid(const struct vm *vm, struct kvm_cpuid_entry2 *e, size_t *n, size_t cap);

/* KVM_EXIT_HYPERV: a SynIC control MSR written (nothing to do: KVM keeps
 * the state; there is no VMBus), or a hypercall KVM leaves to userspace
 * (post message, signal event: no VMBus either), answered with Hyper-V's
 * error status. */
void hv_vcpu_exit(struct vcpu *v);

/* Free what hv_vm_init() kept. */
void hv_vm_release(struct vm *vm);

#endif /* VMLET_VMM_HYPERV_H */
