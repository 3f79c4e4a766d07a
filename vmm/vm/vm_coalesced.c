// SPDX-License-Identifier: MIT
/*
 * vm_coalesced.c - KVM's coalesced port I/O (KVM_CAP_COALESCED_PIO,
 * KVM_REGISTER_COALESCED_MMIO with pio = 1): a guest's writes to a
 * registered port range do not exit to vmlet; KVM appends each to a ring
 * (one page of the vCPU mapping, KVM_CAP_COALESCED_MMIO's page offset)
 * and resumes the guest. Every vCPU thread replays the ring, in order,
 * through the port bus right after each KVM_RUN returns (vcpu.c), before
 * it handles that exit: so any access that does exit (a read of the PCI
 * data port, of the latch itself) and any pause or snapshot sees every
 * write the guest made before it, as if each had exited.
 *
 * What uses it: the PCI configuration address latch, port 0xcf8 (as
 * QEMU's q35 and i440fx do). Each config access of mechanism #1 is a write
 * there and an access of 0xcfc: one exit to vmlet instead of two. The
 * range is registered by device_coalesce_pio() (device_vm.c, which device
 * unit tests link without the bus).
 */
#include <linux/kvm.h>

#include "vmm/vm/vm.h"

/* x86's page: the ring fills one (KVM_COALESCED_MMIO_MAX needs PAGE_SIZE) */
#define VM_RING_ENTRIES                                                                            \
	((4096 - sizeof(struct kvm_coalesced_mmio_ring)) / sizeof(struct kvm_coalesced_mmio))

unsigned int vm_coalesced_replay(struct kvm_coalesced_mmio_ring *ring, uint32_t entries,
				 struct bus *pio, struct bus *mmio)
{
	uint32_t first = __atomic_load_n(&ring->first, __ATOMIC_RELAXED);
	uint32_t last = __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	if (first >= entries || last >= entries)
		return 0; /* not a ring KVM wrote: leave it */
	while (first != last) {
		const struct kvm_coalesced_mmio *e = &ring->coalesced_mmio[first];

		if (e->len && e->len <= sizeof(e->data))
			bus_write(e->pio ? pio : mmio, e->phys_addr, e->data, e->len);
		first = (first + 1) % entries;
		/* the slot is free for KVM once first has moved past it */
		__atomic_store_n(&ring->first, first, __ATOMIC_RELEASE);
		n++;
	}
	return n;
}

void vm_coalesced_drain(struct vm *vm, struct kvm_run *run)
{
	uint32_t pg = __atomic_load_n(&vm->coalesced_pg, __ATOMIC_ACQUIRE);
	struct kvm_coalesced_mmio_ring *ring;

	if (!pg || !run)
		return;
	ring = (struct kvm_coalesced_mmio_ring *)((uint8_t *)run + (size_t)pg * 4096);
	if (__atomic_load_n(&ring->first, __ATOMIC_RELAXED) ==
	    __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE))
		return; /* the usual case: nothing to replay, no lock */
	pthread_mutex_lock(&vm->coalesced_lock);
	vm_coalesced_replay(ring, (uint32_t)VM_RING_ENTRIES, &vm->pio, &vm->mmio);
	pthread_mutex_unlock(&vm->coalesced_lock);
}
