/* SPDX-License-Identifier: MIT */
/*
 * irq.h - interrupts and doorbells as devices see them. Implemented by
 * vmm/vm/irq.c on top of the in-kernel irqchip (KVM_IRQ_LINE, KVM_IRQFD,
 * KVM_IOEVENTFD, KVM_SET_GSI_ROUTING). Devices never make KVM ioctls.
 *
 * GSIs 0..23 are the IOAPIC pins; MSI routes are allocated above them.
 */
#ifndef VMLET_IRQ_H
#define VMLET_IRQ_H

#include <stdbool.h>
#include <stdint.h>

struct vm;

/* Drive an IOAPIC pin (level 0/1; edge devices pulse 1 then 0). */
int irq_line(struct vm *vm, uint32_t gsi, int level);

/* Allocate a GSI routed to the MSI (addr, data); update it later with
 * irq_msi_update (e.g. when the guest rewrites an MSI-X entry). */
int irq_msi_alloc(struct vm *vm, uint64_t addr, uint32_t data, uint32_t *gsi);
int irq_msi_update(struct vm *vm, uint32_t gsi, uint64_t addr, uint32_t data);
void irq_msi_free(struct vm *vm, uint32_t gsi);
/* Inject one MSI directly (KVM_SIGNAL_MSI). */
int irq_msi_signal(struct vm *vm, uint64_t addr, uint32_t data);

/* Bind an eventfd so that writing it raises gsi (irqfd). */
int irq_irqfd_assign(struct vm *vm, int fd, uint32_t gsi);
int irq_irqfd_deassign(struct vm *vm, int fd, uint32_t gsi);

/* Doorbells: guest writes of len bytes to addr (PIO when pio) signal fd
 * instead of exiting to userspace. datamatch < 0: any value. */
int irq_ioeventfd_assign(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			 int64_t datamatch);
int irq_ioeventfd_deassign(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			   int64_t datamatch);

#endif /* VMLET_IRQ_H */
