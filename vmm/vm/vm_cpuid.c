/* SPDX-License-Identifier: MIT */
/*
 * vm_cpuid.c - the CPU a VM presents (vm_create()): KVM's supported CPUID
 * table, the requested CPU model checked against it (vmlet presents the
 * host CPU), what vmlet adds to the table (the TSC-deadline timer, the
 * host's brand string) and the vendor the guest is shown (the options',
 * else the host's).
 */
#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/util/log.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

int vm_kvm_cpuid2(int fd, unsigned long req, const char *name, unsigned int nent, unsigned int max,
		  struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *c;

	for (;;) {
		c = calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]));
		if (!c)
			return -ENOMEM;
		c->nent = nent;
		if (!ioctl(fd, req, c))
			break;
		free(c);
		if (errno != E2BIG || nent >= max)
			return error_errno(-errno, "kvm: %s", name);
		nent *= 2;
	}
	*out = c;
	return 0;
}

static int vm_get_host_cpuid(struct vm *vm)
{
	return vm_kvm_cpuid2(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, "KVM_GET_SUPPORTED_CPUID", 128,
			     4096, &vm->host_cpuid);
}

/*
 * What the CPUID table adds to KVM_GET_SUPPORTED_CPUID (arch_cpuid_host_
 * extras): the TSC-deadline timer when KVM emulates it (QEMU sets the bit
 * on the same capability) and the brand string of the CPU vmlet runs on.
 */
static void vm_cpuid_extras(struct vm *vm)
{
	struct kvm_cpuid2 *c = vm->host_cpuid;
	char brand[48] = "";
	unsigned int r[4];

	vm->tsc_deadline = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_DEADLINE_TIMER) > 0;
	if ((unsigned int)__get_cpuid_max(0x80000000, NULL) >= 0x80000004u) /* int in clang */
		for (unsigned int i = 0; i < 3; i++) {
			__cpuid(0x80000002 + i, r[0], r[1], r[2], r[3]);
			memcpy(brand + 16 * i, r, 16);
		}
	arch_cpuid_host_extras(c->entries, c->nent, vm->tsc_deadline, brand);
	for (uint32_t i = 0; i < c->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];
		uint32_t fn = e->function - 0x80000002;

		if (fn < 3) {
			memcpy(vm->cpu_brand + 16 * fn, &e->eax, 4);
			memcpy(vm->cpu_brand + 16 * fn + 4, &e->ebx, 4);
			memcpy(vm->cpu_brand + 16 * fn + 8, &e->ecx, 4);
			memcpy(vm->cpu_brand + 16 * fn + 12, &e->edx, 4);
		}
	}
}

int vm_cpuid_setup(struct vm *vm)
{
	struct kvm_cpuid2 *c;
	int ret = vm_get_host_cpuid(vm);

	if (ret)
		return ret;
	c = vm->host_cpuid;
	if (arch_cpu_model_apply(vm->cfg->cpu_model, c->entries, c->nent))
		return error_errno(
		    -EINVAL,
		    "spec.template.spec.domain.cpu.model: vmlet presents the host CPU "
		    "(host-model, host-passthrough), not \"%s\"",
		    vm->cfg->cpu_model);
	vm_cpuid_extras(vm);
	vm->vendor =
	    vm->opt.vendor_set ? vm->opt.vendor : arch_cpuid_host_vendor(c->entries, c->nent);
	return 0;
}
