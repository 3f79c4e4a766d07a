/* SPDX-License-Identifier: MIT */
/*
 * hyperv.c - Hyper-V enlightenments on KVM (hyperv.h). QEMU's order is
 * kept: check the host's support before any vCPU, enable the per-vCPU
 * capabilities before the vCPU's CPUID is set (the enlightened VMCS's
 * version goes into CPUID), then KVM_SET_CPUID2 with the Hyper-V leaves,
 * which is what turns KVM's Hyper-V emulation on for the vCPU (KVM looks
 * for "Hv#1" at 0x4000_0001).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/arch.h"
#include "vmm/vm/hyperv.h"
#include "vmm/util/log.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

#define HV_FIELD	     "spec.template.spec.domain.features.hyperv"
#define HV_EVMCS_VERSION     0x0101 /* eVMCS 1..1, QEMU's DEFAULT_EVMCS_VERSION */
#define HVCALL_POST_MESSAGE  0x005c
#define HVCALL_SIGNAL_EVENT  0x005d
#define HV_STATUS_INVALID_HC 2	  /* HV_STATUS_INVALID_HYPERCALL_CODE */
#define HV_STATUS_INVALID_CI 0x12 /* HV_STATUS_INVALID_CONNECTION_ID */

static uint32_t hv_features(const struct vm_hyperv *h)
{
	const struct {
		bool on;
		uint32_t bit;
	} f[] = {{h->relaxed, ARCH_HV_RELAXED},
		 {h->vapic, ARCH_HV_VAPIC},
		 {h->spinlocks, ARCH_HV_SPINLOCKS},
		 {h->vpindex, ARCH_HV_VPINDEX},
		 {h->runtime, ARCH_HV_RUNTIME},
		 {h->synic, ARCH_HV_SYNIC},
		 {h->synictimer, ARCH_HV_STIMER},
		 {h->synictimer_direct, ARCH_HV_STIMER_DIRECT},
		 {h->reset, ARCH_HV_RESET},
		 {h->frequencies, ARCH_HV_FREQUENCIES},
		 {h->reenlightenment, ARCH_HV_REENLIGHTENMENT},
		 {h->tlbflush, ARCH_HV_TLBFLUSH},
		 {h->tlbflush_direct, ARCH_HV_TLBFLUSH_DIRECT},
		 {h->tlbflush_extended, ARCH_HV_TLBFLUSH_EXT},
		 {h->ipi, ARCH_HV_IPI},
		 {h->evmcs, ARCH_HV_EVMCS},
		 {h->vendor_id[0] != 0, ARCH_HV_VENDOR_ID},
		 {h->time, ARCH_HV_TIME}};
	uint32_t v = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].on)
			v |= f[i].bit;
	return v;
}

/* KVM_GET_SUPPORTED_HV_CPUID on /dev/kvm (grown until it fits, as QEMU). */
static int hv_get_supported(struct vm *vm, int kvm_fd)
{
	return vm_kvm_cpuid2(kvm_fd, KVM_GET_SUPPORTED_HV_CPUID, "KVM_GET_SUPPORTED_HV_CPUID", 16,
			     256, &vm->hv_sup);
}

static int hv_cap(int kvm_fd, long cap)
{
	int r = ioctl(kvm_fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? 0 : r;
}

int hv_vm_init(struct vm *vm)
{
	int kvm_fd = vm->kvm_fd;
	const struct vm_hyperv *h = &vm->cfg->hyperv;
	const char *field = h->passthrough ? HV_FIELD "Passthrough" : HV_FIELD;
	const char *missing;
	int ret;

	memset(&vm->hv, 0, sizeof(vm->hv));
	vm->hv.features = hv_features(h);
	vm->hv.spinlock_retries = h->spinlock_retries;
	memcpy(vm->hv.vendor_id, h->vendor_id, strnlen(h->vendor_id, sizeof(vm->hv.vendor_id)));
	vm->hv.kvm_hidden = vm->cfg->kvm_hidden;
	if (!arch_hv_enabled(&vm->hv) && !h->passthrough)
		return 0;
	if (h->evmcs && vm->vendor != ARCH_VENDOR_INTEL)
		return error_errno(-ENOTSUP, HV_FIELD
				   ".evmcs: the enlightened VMCS is Intel's (VMX); this "
				   "guest's CPU is AMD (KubeVirt would not schedule it on this "
				   "host either: evmcs requires the vmx CPU feature)");
	if (hv_cap(kvm_fd, KVM_CAP_HYPERV) <= 0)
		return error_errno(-ENOTSUP,
				   "%s: this host's KVM has no Hyper-V emulation (KVM_CAP_HYPERV; "
				   "kvm-pvm has none: docs/hosts.md)",
				   field);
	if (hv_cap(kvm_fd, KVM_CAP_SYS_HYPERV_CPUID) <= 0)
		return error_errno(-ENOTSUP,
				   "%s: this host's KVM cannot say which Hyper-V features it "
				   "emulates (KVM_CAP_SYS_HYPERV_CPUID, Linux 5.11)",
				   field);
	ret = hv_get_supported(vm, kvm_fd);
	if (ret)
		return ret;
	if (h->passthrough && arch_hv_passthrough(&vm->hv, vm->hv_sup->entries, vm->hv_sup->nent))
		return error_errno(-ENOTSUP, HV_FIELD "Passthrough: this host's KVM reports no "
						      "Hyper-V vendor leaf");
	if (h->evmcs && hv_cap(kvm_fd, KVM_CAP_HYPERV_ENLIGHTENED_VMCS) > 0)
		for (uint32_t i = 0; i < vm->hv_sup->nent; i++)
			if (vm->hv_sup->entries[i].function == 0x40000004)
				vm->hv_sup->entries[i].eax |= 1u << 14; /* as QEMU */
	missing = arch_hv_unsupported(&vm->hv, vm->hv_sup->entries, vm->hv_sup->nent);
	if (missing)
		return error_errno(
		    -ENOTSUP, HV_FIELD ": Hyper-V %s is not supported by this host's KVM", missing);
	if ((vm->hv.features & ARCH_HV_SYNIC) && hv_cap(kvm_fd, KVM_CAP_HYPERV_SYNIC2) <= 0)
		return error_errno(-ENOTSUP, HV_FIELD
				   ".synic: this host's KVM has no SynIC (KVM_CAP_HYPERV_SYNIC2)");
	log_debug("hyperv: enlightenments 0x%x%s", vm->hv.features,
		  vm->hv.kvm_hidden ? ", KVM signature hidden" : "");
	return 0;
}

static int hv_enable(struct vcpu *v, uint32_t cap, uint64_t arg0, const char *what)
{
	struct kvm_enable_cap c = {.cap = cap, .args = {arg0}};

	if (ioctl(v->fd, KVM_ENABLE_CAP, &c) < 0)
		return error_errno(-errno, "vcpu%u: " HV_FIELD ".%s: KVM refused to enable it",
				   v->index, what);
	return 0;
}

int hv_vcpu_init(struct vcpu *v)
{
	struct vm *vm = v->vm;
	uint16_t evmcs = 0;
	int ret = 0;

	if (!arch_hv_enabled(&vm->hv))
		return 0;
	if (vm->hv.features & ARCH_HV_SYNIC)
		ret = hv_enable(v, KVM_CAP_HYPERV_SYNIC2, 0, "synic");
	if (!ret && (vm->hv.features & ARCH_HV_EVMCS)) {
		ret = hv_enable(v, KVM_CAP_HYPERV_ENLIGHTENED_VMCS, (uintptr_t)&evmcs, "evmcs");
		/* KVM's range [evmcs & 0xff, evmcs >> 8] must hold version 1 */
		if (!ret && ((evmcs & 0xff) > 1 || (evmcs >> 8) < 1))
			ret = error_errno(-ENOTSUP,
					  "vcpu%u: " HV_FIELD ".evmcs: KVM offers eVMCS "
					  "versions %u..%u, not 1",
					  v->index, evmcs & 0xff, evmcs >> 8);
		vm->hv.evmcs_version = HV_EVMCS_VERSION;
	}
	/* tlbflush.direct needs no capability: it lets a guest that is a
	 * hypervisor itself have KVM flush for its own guests
	 * (KVM_CAP_HYPERV_DIRECT_TLBFLUSH is the other way round, KVM on
	 * Hyper-V, and QEMU does not enable it for hv-tlbflush-direct) */
	return ret;
}

int hv_cpuid(const struct vm *vm, struct kvm_cpuid_entry2 *e, size_t *n, size_t cap)
{
	return arch_hv_cpuid(&vm->hv, e, n, cap);
}

void hv_vcpu_exit(struct vcpu *v)
{
	struct kvm_run *r = v->run;
	uint16_t code;

	switch (r->hyperv.type) {
	case KVM_EXIT_HYPERV_SYNIC:
		return;
	case KVM_EXIT_HYPERV_HCALL:
		code = (uint16_t)r->hyperv.u.hcall.input;
		r->hyperv.u.hcall.result =
		    code == HVCALL_POST_MESSAGE || code == HVCALL_SIGNAL_EVENT
			? HV_STATUS_INVALID_CI
			: HV_STATUS_INVALID_HC;
		return;
	default:
		log_debug("vcpu%u: Hyper-V exit type %u ignored", v->index, r->hyperv.type);
		return;
	}
}

void hv_vm_release(struct vm *vm)
{
	free(vm->hv_sup);
	vm->hv_sup = NULL;
}
