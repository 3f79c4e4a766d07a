/* SPDX-License-Identifier: MIT */
/*
 * irq_internal.h - set-up of the interrupt routing, for vm.c only (devices
 * use irq.h).
 */
#ifndef VMLET_IRQ_INTERNAL_H
#define VMLET_IRQ_INTERNAL_H

struct vm;

/* After KVM_CREATE_IRQCHIP: install the fixed GSI routing (GSI 0 -> IOAPIC
 * pin 2, PIC pins, IOAPIC pins 1..23). */
int irq_init(struct vm *vm);
/* Teardown (vm_destroy, vCPUs stopped): from now on irq_msi_free only
 * forgets the route; closing the VM fd frees KVM's table with it, so
 * releasing devices makes no KVM_SET_GSI_ROUTING (not in the main
 * thread's seccomp filter). */
void irq_teardown(struct vm *vm);
void irq_release(struct vm *vm);

#endif /* VMLET_IRQ_INTERNAL_H */
