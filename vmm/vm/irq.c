/* SPDX-License-Identifier: MIT */
/*
 * irq.c - interrupts for devices (irq.h) on the in-kernel irqchip.
 *
 * The GSI routing table is owned here and always set as a whole
 * (KVM_SET_GSI_ROUTING replaces the table). Its fixed part follows the PC
 * convention the MADT describes: GSIs 0..15 reach the 8259 pair (except the
 * cascade pin 2), GSIs 0..23 reach the IOAPIC pin of the same number except
 * that ISA IRQ 0 (the PIT) is wired to IOAPIC pin 2 and nothing else is;
 * the MADT carries the matching interrupt source override 0 -> 2. MSI
 * routes are allocated from GSI 24 upwards.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/vm/irq.h"
#include "vmm/vm/irq_internal.h"
#include "vmm/util/log.h"
#include "vmm/vm/vm.h"

#define IRQ_PINS       24
#define IRQ_MAX_ROUTES 1024

struct irq_state {
	pthread_mutex_t lock;
	struct kvm_irq_routing_entry *e;
	unsigned int n;
	uint8_t msi_used[IRQ_MAX_ROUTES]; /* by GSI */
	bool closing;			  /* irq_teardown(): commit nothing */
};

static void irq_route_chip(struct irq_state *s, uint32_t gsi, uint32_t chip, uint32_t pin)
{
	struct kvm_irq_routing_entry *e = &s->e[s->n++];

	memset(e, 0, sizeof(*e));
	e->gsi = gsi;
	e->type = KVM_IRQ_ROUTING_IRQCHIP;
	e->u.irqchip.irqchip = chip;
	e->u.irqchip.pin = pin;
}

/* Lock held. */
static int irq_commit(struct vm *vm)
{
	struct irq_state *s = vm->irq;
	struct kvm_irq_routing *r;
	int ret = 0;

	r = calloc(1, sizeof(*r) + s->n * sizeof(r->entries[0]));
	if (!r)
		return -ENOMEM;
	r->nr = s->n;
	memcpy(r->entries, s->e, s->n * sizeof(r->entries[0]));
	if (ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, r) < 0)
		ret = error_errno(-errno, "irq: KVM_SET_GSI_ROUTING");
	free(r);
	return ret;
}

int irq_init(struct vm *vm)
{
	struct irq_state *s;
	uint32_t gsi;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->e = calloc(IRQ_MAX_ROUTES + 2 * IRQ_PINS, sizeof(*s->e));
	if (!s->e) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	for (gsi = 0; gsi < 16; gsi++) {
		if (gsi == 2)
			continue;
		irq_route_chip(s, gsi, gsi < 8 ? KVM_IRQCHIP_PIC_MASTER : KVM_IRQCHIP_PIC_SLAVE,
			       gsi % 8);
	}
	for (gsi = 0; gsi < IRQ_PINS; gsi++) {
		if (gsi == 2)
			continue;
		irq_route_chip(s, gsi, KVM_IRQCHIP_IOAPIC, gsi == 0 ? 2 : gsi);
	}
	vm->irq = s;
	pthread_mutex_lock(&s->lock);
	ret = irq_commit(vm);
	pthread_mutex_unlock(&s->lock);
	if (ret)
		irq_release(vm);
	return ret;
}

void irq_release(struct vm *vm)
{
	struct irq_state *s = vm->irq;

	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->e);
	free(s);
	vm->irq = NULL;
}

int irq_line(struct vm *vm, uint32_t gsi, int level)
{
	struct kvm_irq_level l = {.irq = gsi, .level = level ? 1 : 0};

	if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) < 0)
		return -errno;
	return 0;
}

static struct kvm_irq_routing_entry *irq_find_msi(struct irq_state *s, uint32_t gsi)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->e[i].gsi == gsi && s->e[i].type == KVM_IRQ_ROUTING_MSI)
			return &s->e[i];
	return NULL;
}

static void irq_set_msi(struct kvm_irq_routing_entry *e, uint32_t gsi, uint64_t addr, uint32_t data)
{
	memset(e, 0, sizeof(*e));
	e->gsi = gsi;
	e->type = KVM_IRQ_ROUTING_MSI;
	e->u.msi.address_lo = (uint32_t)addr;
	e->u.msi.address_hi = (uint32_t)(addr >> 32);
	e->u.msi.data = data;
}

int irq_msi_alloc(struct vm *vm, uint64_t addr, uint32_t data, uint32_t *gsi)
{
	struct irq_state *s = vm->irq;
	uint32_t g;
	int ret;

	pthread_mutex_lock(&s->lock);
	for (g = IRQ_PINS; g < IRQ_MAX_ROUTES && s->msi_used[g]; g++)
		;
	if (g == IRQ_MAX_ROUTES) {
		ret = -ENOSPC;
		goto out;
	}
	irq_set_msi(&s->e[s->n++], g, addr, data);
	ret = irq_commit(vm);
	if (ret) {
		s->n--;
		goto out;
	}
	s->msi_used[g] = 1;
	*gsi = g;
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int irq_msi_update(struct vm *vm, uint32_t gsi, uint64_t addr, uint32_t data)
{
	struct irq_state *s = vm->irq;
	struct kvm_irq_routing_entry *e;
	int ret = -ENOENT;

	pthread_mutex_lock(&s->lock);
	e = irq_find_msi(s, gsi);
	if (e) {
		irq_set_msi(e, gsi, addr, data);
		ret = irq_commit(vm);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void irq_msi_free(struct vm *vm, uint32_t gsi)
{
	struct irq_state *s = vm->irq;
	struct kvm_irq_routing_entry *e;

	pthread_mutex_lock(&s->lock);
	e = irq_find_msi(s, gsi);
	if (e) {
		*e = s->e[--s->n];
		s->msi_used[gsi] = 0;
		if (!s->closing)
			irq_commit(vm);
	}
	pthread_mutex_unlock(&s->lock);
}

void irq_teardown(struct vm *vm)
{
	struct irq_state *s = vm->irq;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->closing = true;
	pthread_mutex_unlock(&s->lock);
}

int irq_msi_signal(struct vm *vm, uint64_t addr, uint32_t data)
{
	struct kvm_msi msi = {
	    .address_lo = (uint32_t)addr,
	    .address_hi = (uint32_t)(addr >> 32),
	    .data = data,
	};
	int ret = ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &msi);

	return ret < 0 ? -errno : 0;
}

int irq_irqfd_assign(struct vm *vm, int fd, uint32_t gsi)
{
	struct kvm_irqfd f = {.fd = (uint32_t)fd, .gsi = gsi};

	return ioctl(vm->vm_fd, KVM_IRQFD, &f) < 0 ? -errno : 0;
}

int irq_irqfd_deassign(struct vm *vm, int fd, uint32_t gsi)
{
	struct kvm_irqfd f = {.fd = (uint32_t)fd, .gsi = gsi, .flags = KVM_IRQFD_FLAG_DEASSIGN};

	return ioctl(vm->vm_fd, KVM_IRQFD, &f) < 0 ? -errno : 0;
}

static int irq_ioeventfd(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			 int64_t datamatch, uint32_t flags)
{
	struct kvm_ioeventfd e = {.addr = addr, .len = len, .fd = fd, .flags = flags};

	if (pio)
		e.flags |= KVM_IOEVENTFD_FLAG_PIO;
	if (datamatch >= 0) {
		e.flags |= KVM_IOEVENTFD_FLAG_DATAMATCH;
		e.datamatch = (uint64_t)datamatch;
	}
	return ioctl(vm->vm_fd, KVM_IOEVENTFD, &e) < 0 ? -errno : 0;
}

int irq_ioeventfd_assign(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			 int64_t datamatch)
{
	return irq_ioeventfd(vm, fd, addr, len, pio, datamatch, 0);
}

int irq_ioeventfd_deassign(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			   int64_t datamatch)
{
	return irq_ioeventfd(vm, fd, addr, len, pio, datamatch, KVM_IOEVENTFD_FLAG_DEASSIGN);
}
