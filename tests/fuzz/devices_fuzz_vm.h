/* SPDX-License-Identifier: MIT */
/*
 * devices_fuzz_vm.h - the VM around devices_fuzz's devices: struct vm
 * without KVM. The interrupt calls of irq.h are a fake that keeps MSI
 * routes in a table (fz_route) and aborts when a device frees, updates or
 * wires a route it does not own, or drives a GSI that does not exist; the
 * target aborts when a route is left behind at teardown. The I/O threads
 * (thread_start(): the virtio devices' workers and the AHCI ports') are
 * threads that return at once, so kicks only land in their eventfds;
 * fz_worker_run() does a thread's work (drain a queue, its timer, a SATA
 * port's next command) while the device is activated, so a run is
 * deterministic; the target sets fz_n_workers and fz_n_sata to 0 once
 * the devices are destroyed (all joined). vm_request_exit() records the
 * first reason; the fuzzer goes on after it, as other vCPUs may for a
 * moment. A disk's pause for a host error (none is expected) ends as if
 * the VM had stopped. Defines the faked functions: include once, from
 * tests/fuzz/devices_fuzz.c.
 */
#ifndef VMLET_DEVICES_FUZZ_VM_H
#define VMLET_DEVICES_FUZZ_VM_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/dev/ahci/ahci.h"
#include "vmm/virtio/virtio_worker.h"
#include "vmm/vm/device.h"
#include "vmm/vm/irq.h"
#include "vmm/util/thread.h"
#include "vmm/vm/vm.h"

/* ---- the fake interrupt controller (irq.h) ------------------------------ */

#define FZ_ROUTES 64
static struct {
	bool used;
	int fd; /* irqfd, -1 none */
} fz_route[FZ_ROUTES];

static unsigned int fz_route_index(uint32_t gsi)
{
	if (gsi < 24 || gsi >= 24 + FZ_ROUTES || !fz_route[gsi - 24].used)
		abort(); /* a route the device does not own */
	return gsi - 24;
}

int irq_line(struct vm *vm, uint32_t gsi, int level)
{
	(void)vm;
	if (gsi >= 24 || (level != 0 && level != 1))
		abort();
	return 0;
}

int irq_msi_alloc(struct vm *vm, uint64_t addr, uint32_t data, uint32_t *gsi)
{
	(void)vm, (void)addr, (void)data;
	for (unsigned int i = 0; i < FZ_ROUTES; i++)
		if (!fz_route[i].used) {
			fz_route[i].used = true;
			fz_route[i].fd = -1;
			*gsi = 24 + i;
			return 0;
		}
	return -ENOSPC;
}

int irq_msi_update(struct vm *vm, uint32_t gsi, uint64_t addr, uint32_t data)
{
	(void)vm, (void)addr, (void)data;
	fz_route_index(gsi);
	return 0;
}

void irq_msi_free(struct vm *vm, uint32_t gsi)
{
	unsigned int i = fz_route_index(gsi);

	(void)vm;
	if (fz_route[i].fd >= 0)
		abort(); /* its irqfd would fire a GSI the next alloc hands out */
	fz_route[i].used = false;
}

int irq_msi_signal(struct vm *vm, uint64_t addr, uint32_t data)
{
	(void)vm, (void)addr, (void)data;
	return 0;
}

int irq_irqfd_assign(struct vm *vm, int fd, uint32_t gsi)
{
	unsigned int i = fz_route_index(gsi);

	(void)vm;
	if (fd < 0 || fz_route[i].fd >= 0)
		abort();
	fz_route[i].fd = fd;
	return 0;
}

int irq_irqfd_deassign(struct vm *vm, int fd, uint32_t gsi)
{
	unsigned int i = fz_route_index(gsi);

	(void)vm;
	if (fz_route[i].fd != fd)
		abort();
	fz_route[i].fd = -1;
	return 0;
}

int irq_ioeventfd_assign(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			 int64_t datamatch)
{
	(void)vm, (void)fd, (void)addr, (void)len, (void)pio, (void)datamatch;
	return -ENOSYS; /* no KVM: doorbells come through the MMIO path */
}

int irq_ioeventfd_deassign(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			   int64_t datamatch)
{
	(void)vm, (void)fd, (void)addr, (void)len, (void)pio, (void)datamatch;
	abort(); /* never assigned */
}

/* ---- the rest of the VM ------------------------------------------------ */

void vm_request_exit(struct vm *vm, enum vm_exit_reason reason)
{
	int none = VM_EXIT_NONE;

	__atomic_compare_exchange_n(&vm->exit_reason, &none, (int)reason, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

/* A virtio-blk error policy's pause (a host I/O error): the VM ends. */
unsigned int device_pause_vm(struct vm *vm, const char *reason, const char *message)
{
	(void)vm, (void)reason, (void)message;
	return 1;
}

int device_wait_resume(struct vm *vm, unsigned int gen, unsigned int timeout_ms)
{
	(void)vm, (void)gen, (void)timeout_ms;
	return -ESRCH;
}

/* The virtio devices' I/O threads (virtio_worker.h: its struct is what
 * every device thread is started with): threads that return at once,
 * recorded so that the fuzzer can do their work (drain a queue, the
 * timer) itself, as they would once activated. */
#define FZ_WORKERS 12
static struct virtio_worker *fz_worker[FZ_WORKERS];
static unsigned int fz_n_workers;
static void *fz_sata[FZ_WORKERS]; /* the AHCI ports' thread arguments */
static unsigned int fz_n_sata;

static void *fz_thread_idle(void *arg)
{
	(void)arg;
	return NULL;
}

/* the fuzzer's one thread is the main one (vmm/util/thread.c's role
 * bookkeeping is not linked: thread_start above replaces it) */
enum thread_role thread_current_role(void)
{
	return THREAD_MAIN;
}

int thread_start(pthread_t *t, enum thread_role role, const char *name, void *(*fn)(void *),
		 void *arg)
{
	(void)role, (void)fn;
	if (strncmp(name, "vmlet-sata", 10) == 0) {
		if (fz_n_sata == FZ_WORKERS)
			abort();
		fz_sata[fz_n_sata++] = arg;
	} else {
		if (fz_n_workers == FZ_WORKERS)
			abort();
		fz_worker[fz_n_workers++] = arg;
	}
	return -pthread_create(t, NULL, fz_thread_idle, arg);
}

/* Worker b % n serves queue b >> 4 (drain) or, tick, its timer runs; only
 * while activated (virtio_worker_activate() and no pause since). */
static void fz_worker_run(uint8_t b, bool tick)
{
	struct virtio_worker *w;
	unsigned int k;
	bool active;

	if (!fz_n_workers && !fz_n_sata)
		return;
	k = b % (fz_n_workers + fz_n_sata);
	if (k >= fz_n_workers) {
		ahci_thread_step(fz_sata[k - fz_n_workers]);
		return;
	}
	w = fz_worker[k];
	pthread_mutex_lock(&w->lock);
	active = w->want_active && !w->quit;
	pthread_mutex_unlock(&w->lock);
	if (active && !tick)
		w->drain(w->opaque, (b >> 4) % w->nq);
	else if (active && w->tick)
		w->tick(w->opaque);
}

#endif /* VMLET_DEVICES_FUZZ_VM_H */
