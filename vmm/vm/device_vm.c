/* SPDX-License-Identifier: MIT */
/*
 * device_vm.c - the functions of device.h that only set or read fields
 * of struct vm: the power button hook, the console (capture, copy to an
 * attached control client, input and output routing), the PCI slots in
 * use, fw_cfg, counters registration, the device table's lookup
 * (device_state()), device_map_rom()'s memory slot and
 * device_coalesce_pio()'s port range. They call nothing of vm.c, so device unit tests link them
 * without the VM (device_request_exit(), which ends the VM, is in device.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/vm/vm.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/smm.h"

#define VM_CAPTURE_MAX (4u << 20)

void device_set_power_button(struct vm *vm, void (*fn)(void *opaque), void *opaque)
{
	vm->power_button = fn;
	vm->power_button_opaque = opaque;
}

void device_console_capture(struct vm *vm, const void *buf, size_t len)
{
	pthread_mutex_lock(&vm->capture_lock);
	if (vm->capture_len + len + 1 > vm->capture_cap &&
	    vm->capture_len + len + 1 <= VM_CAPTURE_MAX) {
		size_t cap = vm->capture_cap ? vm->capture_cap : 4096;
		char *p;

		while (cap < vm->capture_len + len + 1)
			cap *= 2;
		p = realloc(vm->capture, cap);
		if (p) {
			vm->capture = p;
			vm->capture_cap = cap;
		}
	}
	if (vm->capture_len + len + 1 <= vm->capture_cap) {
		memcpy(vm->capture + vm->capture_len, buf, len);
		vm->capture_len += len;
		vm->capture[vm->capture_len] = 0;
	} else {
		log_warn_once("console: capture buffer full, output dropped");
	}
	pthread_mutex_unlock(&vm->capture_lock);
}

void device_console_tee(struct vm *vm, const void *buf, size_t len)
{
	int fd = vm ? __atomic_load_n(&vm->console_client, __ATOMIC_ACQUIRE) - 1 : -1;

	/* non-blocking socket: a client that does not read loses output,
	 * the guest never waits for it */
	if (fd >= 0 && write(fd, buf, len) < 0)
		log_debug("console: attached client did not take output");
}

bool device_console_attached(struct vm *vm)
{
	return vm && __atomic_load_n(&vm->console_client, __ATOMIC_ACQUIRE) > 0;
}

void device_set_console_input(struct vm *vm, void (*fn)(void *opaque, const void *buf, size_t len),
			      void *opaque)
{
	if (!vm)
		return;
	vm->console_input = fn;
	vm->console_input_opaque = opaque;
}

void device_set_console_output(struct vm *vm, void (*fn)(void *opaque, const void *buf, size_t len),
			       void *opaque)
{
	if (!vm)
		return;
	vm->console_output = fn;
	vm->console_output_opaque = opaque;
}

int device_console_write(struct vm *vm, const void *buf, size_t len)
{
	if (!vm || !vm->console_output)
		return -ENODEV;
	vm->console_output(vm->console_output_opaque, buf, len);
	return 0;
}

void device_set_pci_slots(struct vm *vm, uint32_t mask)
{
	if (vm)
		vm->pci_slots = mask;
}

uint32_t device_pci_slots(const struct vm *vm)
{
	return vm ? vm->pci_slots : 0;
}

/* KVM_REGISTER_COALESCED_MMIO (pio = 1) once KVM has both capabilities
 * and the ring's page lies in the vCPU mapping; vm_coalesced.c drains it. */
int device_coalesce_pio(struct vm *vm, uint16_t port, uint32_t len)
{
	struct kvm_coalesced_mmio_zone z = {.addr = port, .size = len, .pio = 1};
	int pg;

	if (!vm || vm->vm_fd < 0 || !len)
		return -EINVAL;
	pg = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_MMIO);
	if (pg <= 0 || (size_t)(pg + 1) * 4096 > vm->run_size ||
	    ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_PIO) <= 0)
		return -ENOTSUP;
	if (ioctl(vm->vm_fd, KVM_REGISTER_COALESCED_MMIO, &z) < 0)
		return -errno;
	__atomic_store_n(&vm->coalesced_pg, (uint32_t)pg, __ATOMIC_RELEASE);
	log_debug("kvm: writes to ports 0x%x..0x%x coalesced", port, port + len - 1);
	return 0;
}

void device_set_fw_cfg(struct vm *vm, struct fw_cfg *fc)
{
	if (vm)
		vm->fw_cfg = fc;
}

int device_add_counters(struct vm *vm, const char *kind, const char *name,
			void (*read)(void *opaque, struct device_counters *c), void *opaque)
{
	if (!vm) /* device unit tests */
		return 0;
	if (vm->n_counters == VM_MAX_COUNTERS)
		return -ENOSPC;
	vm->counters[vm->n_counters++] = (struct device_counters_src){kind, name, read, opaque};
	return 0;
}

void *device_state(struct vm *vm, const struct device_type *type)
{
	for (unsigned int d = 0; vm && d < vm->n_devs; d++)
		if (vm->devs[d].type == type && vm->devs[d].state)
			return vm->devs[d].state;
	return NULL;
}

int device_map_rom(struct vm *vm, unsigned int slot, uint64_t gpa, uint64_t size, void *host)
{
	struct kvm_userspace_memory_region r = {
	    .slot = GUEST_MEM_MAX_REGIONS + slot,
	    .flags = KVM_MEM_READONLY,
	    .guest_phys_addr = gpa,
	    .memory_size = size,
	    .userspace_addr = (uintptr_t)host,
	};

	if (!vm || vm->vm_fd < 0)
		return -ENODEV;
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_READONLY_MEM) <= 0)
		r.flags = 0; /* a private copy then: the guest's writes stay in it */
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
		return error_errno(-errno, "kvm: KVM_SET_USER_MEMORY_REGION (ROM at 0x%llx)",
				   (unsigned long long)gpa);
	return vm_smm_mirror(vm, r.slot, r.flags, gpa, size, host);
}

static __thread struct vcpu *device_self;

void device_set_vcpu(struct vcpu *v)
{
	device_self = v;
}

struct vcpu *device_vcpu(void)
{
	return device_self;
}

bool device_in_smm(void)
{
	const struct vcpu *v = device_self;

	return v && v->run && (__atomic_load_n(&v->run->flags, __ATOMIC_RELAXED) & KVM_RUN_X86_SMM);
}
