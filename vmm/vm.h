/* SPDX-License-Identifier: MIT */
/*
 * vm.h - one virtual machine on /dev/kvm: guest memory, buses, in-kernel
 * irqchip, vCPUs, devices and the main event loop.
 *
 * Lifecycle (all on the main thread):
 *   vm_create()   open /dev/kvm, create the VM, memory slots, irqchip + PIT,
 *                 devices (table order) and the vCPUs (not yet running)
 *   vm_boot()     load the kernel / PVH ELF, ACPI tables, boot registers
 *                 (vmm/boot.c)
 *   vm_run()      start one thread per vCPU, run the event loop until the
 *                 VM ends; returns why (enum vm_exit_reason)
 *   vm_destroy()  join threads, destroy devices, close fds, free memory
 */
#ifndef VMLET_VM_H
#define VMLET_VM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "vmm/bus.h"
#include "vmm/device.h"
#include "vmm/event.h"
#include "vmm/guest_mem.h"

struct vm_config;
struct vcpu;
struct irq_state;

struct vm_options {
	enum arch_cpu_vendor vendor;
	bool vendor_set; /* false: the host's vendor */
	struct vm_console console;
	/* A built-in payload instead of cfg->kernel_path (the probe). */
	const uint8_t *payload;
	size_t payload_len;
	/* --firmware: an external PVH firmware ELF for EFI boot (NULL: the
	 * built-in one) */
	const char *firmware;
};

struct vm {
	const struct vm_config *cfg;
	struct vm_options opt;
	int kvm_fd, vm_fd;
	size_t run_size; /* KVM_GET_VCPU_MMAP_SIZE */
	struct guest_mem mem;
	struct bus pio, mmio;
	struct event_loop loop;
	struct irq_state *irq;

	struct arch_topology topo;
	enum arch_cpu_vendor vendor;
	struct kvm_cpuid2 *host_cpuid; /* KVM_GET_SUPPORTED_CPUID */
	uint32_t n_vcpus;
	uint32_t *apic_ids; /* by vCPU index */
	struct vcpu *vcpus;

	struct device_instance *devs;
	unsigned int n_devs;

	int exit_reason; /* enum vm_exit_reason, atomic */
	void (*power_button)(void *opaque);
	void *power_button_opaque;

	pthread_mutex_t capture_lock; /* VM_CONSOLE_CAPTURE buffer */
	char *capture;
	size_t capture_len, capture_cap;
};

int vm_create(struct vm **out, const struct vm_config *cfg, const struct vm_options *opt);
int vm_boot(struct vm *vm);
/* Returns the enum vm_exit_reason (> 0) or -errno if it could not start. */
int vm_run(struct vm *vm);
void vm_destroy(struct vm *vm);

/* Thread-safe: record why the VM ends (first call wins), stop every vCPU
 * and wake the main loop. */
void vm_request_exit(struct vm *vm, enum vm_exit_reason reason);
static inline enum vm_exit_reason vm_exit_reason(struct vm *vm)
{
	return (enum vm_exit_reason)__atomic_load_n(&vm->exit_reason, __ATOMIC_ACQUIRE);
}

/* Press the ACPI power button (no-op without an ACPI device). */
void vm_power_button(struct vm *vm);

/* The captured console output (VM_CONSOLE_CAPTURE), NUL-terminated. */
const char *vm_console_captured(struct vm *vm, size_t *len);

const char *vm_exit_reason_name(enum vm_exit_reason r);

#endif /* VMLET_VM_H */
