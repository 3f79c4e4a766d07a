/* SPDX-License-Identifier: MIT */
/*
 * virtio_test_pci.h - a fake VM for transport and device unit tests:
 * bus_register() records windows in a small table the test dispatches to
 * (tbus_read/tbus_write), the irq_*() calls record MSI routes and hand
 * back the irqfd eventfds (so a test sees interrupts by reading them), and
 * thread_start() is a plain pthread_create (with TEST_PCI_NO_THREADS
 * defined: a thread that does nothing). Plus a mini virtio-pci driver:
 * find a function, walk its capabilities, negotiate, set up queue 0.
 * Include once per test program (it defines the faked functions).
 */
#ifndef VMLET_VIRTIO_TEST_PCI_H
#define VMLET_VIRTIO_TEST_PCI_H

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "arch/x86_64/layout.h"
#include "tests/unit/virtio_test_driver.h"
#include "vmm/vm/bus.h"
#include "vmm/dev/pci.h"
#include "vmm/vm/device.h"
#include "vmm/virtio/virtio_pci.h"
#include "vmm/vm/irq.h"
#include "vmm/util/thread.h"
#include "vmm/vm/vm.h"

/* ---- fake bus ---- */
struct tbus_win {
	struct bus *b;
	uint64_t base, len;
	const struct io_ops *ops;
	void *dev;
};
static struct tbus_win tbus_wins[16];
static unsigned int tbus_n;

int bus_register(struct bus *b, uint64_t base, uint64_t len, const struct io_ops *ops, void *dev)
{
	tbus_wins[tbus_n++] = (struct tbus_win){b, base, len, ops, dev};
	return 0;
}

int bus_unregister(struct bus *b, uint64_t base)
{
	for (unsigned int i = 0; i < tbus_n; i++)
		if (tbus_wins[i].b == b && tbus_wins[i].base == base) {
			tbus_wins[i] = tbus_wins[--tbus_n];
			return 0;
		}
	return -ENOENT;
}

static inline int tbus_access(struct bus *b, uint64_t a, void *d, uint32_t len, int wr)
{
	for (unsigned int i = 0; i < tbus_n; i++) {
		struct tbus_win *w = &tbus_wins[i];

		if (w->b == b && a >= w->base && a - w->base < w->len) {
			if (wr)
				w->ops->write(w->dev, a - w->base, d, len);
			else
				w->ops->read(w->dev, a - w->base, d, len);
			return 0;
		}
	}
	memset(d, 0xff, len);
	return -ENOENT;
}

static struct bus tbus_pio, tbus_mmio;

/* pci_host_init() on the test buses, without a VM: the functions added to
 * h reach guest memory mem (NULL: none) */
static inline int thost_init(struct pci_host *h, struct guest_mem *mem)
{
	const struct device_env env = {.pio = &tbus_pio, .mmio = &tbus_mmio, .mem = mem};

	return pci_host_init(h, &env);
}

static inline uint32_t mmio_rd(uint64_t a, uint32_t len)
{
	uint32_t v = 0;

	tbus_access(&tbus_mmio, a, &v, len, 0);
	return v;
}

static inline void mmio_wr(uint64_t a, uint32_t v, uint32_t len)
{
	tbus_access(&tbus_mmio, a, &v, len, 1);
}

static inline uint32_t ecam_rd(int slot, uint32_t off, uint32_t len)
{
	return mmio_rd(ARCH_PCI_ECAM_GPA + ((uint64_t)slot << 15) + off, len);
}

static inline void ecam_wr(int slot, uint32_t off, uint32_t v, uint32_t len)
{
	mmio_wr(ARCH_PCI_ECAM_GPA + ((uint64_t)slot << 15) + off, v, len);
}

/* ---- fake irq ---- */
static int tirq_gsi_next = 24, tirq_lines[24], tirq_signals;
static int tirq_fd[64];
static uint64_t tirq_addr[64];
static uint32_t tirq_data[64];

int irq_line(struct vm *vm, uint32_t gsi, int level)
{
	(void)vm;
	if (gsi < 24)
		tirq_lines[gsi] = level;
	return 0;
}

int irq_msi_alloc(struct vm *vm, uint64_t addr, uint32_t data, uint32_t *gsi)
{
	(void)vm;
	/* 64 slots, reused round robin: the tests' devices come and go */
	*gsi = 24 + (uint32_t)(tirq_gsi_next++ - 24) % 64;
	tirq_addr[*gsi - 24] = addr;
	tirq_data[*gsi - 24] = data;
	tirq_fd[*gsi - 24] = -1;
	return 0;
}

int irq_msi_update(struct vm *vm, uint32_t gsi, uint64_t addr, uint32_t data)
{
	(void)vm;
	tirq_addr[gsi - 24] = addr;
	tirq_data[gsi - 24] = data;
	return 0;
}

void irq_msi_free(struct vm *vm, uint32_t gsi)
{
	(void)vm;
	(void)gsi;
}

int irq_msi_signal(struct vm *vm, uint64_t addr, uint32_t data)
{
	(void)vm;
	(void)addr;
	(void)data;
	__atomic_fetch_add(&tirq_signals, 1, __ATOMIC_SEQ_CST);
	return 0;
}

int irq_irqfd_assign(struct vm *vm, int fd, uint32_t gsi)
{
	(void)vm;
	tirq_fd[gsi - 24] = fd;
	return 0;
}

int irq_irqfd_deassign(struct vm *vm, int fd, uint32_t gsi)
{
	(void)vm;
	(void)fd;
	tirq_fd[gsi - 24] = -1;
	return 0;
}

int irq_ioeventfd_deassign(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			   int64_t datamatch)
{
	(void)vm;
	(void)fd;
	(void)addr;
	(void)len;
	(void)pio;
	(void)datamatch;
	return 0;
}

int irq_ioeventfd_assign(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool pio,
			 int64_t datamatch)
{
	irq_ioeventfd_deassign(vm, fd, addr, len, pio, datamatch);
	return -ENOSYS; /* no KVM: kicks come through the MMIO path */
}

/* Interrupts raised on the MSI whose data is `data` since the last call
 * (reads the irqfd counter), waiting up to ms for at least one. */
static inline uint64_t tirq_wait(uint32_t data, int ms)
{
	for (int i = 0; i < tirq_gsi_next - 24 && i < 64; i++) {
		struct pollfd p = {tirq_fd[i], POLLIN, 0};
		uint64_t v = 0;

		if (tirq_data[i] != data || tirq_fd[i] < 0)
			continue;
		if (poll(&p, 1, ms) == 1 && read(tirq_fd[i], &v, sizeof(v)) == sizeof(v))
			return v;
		return 0;
	}
	return 0;
}

/* The fake VM's pauses for a disk error (virtio-blk errorPolicy stop):
 * tvm_pauses counts them, tvm_pause_msg holds the last message; a waiter
 * is let go when the test bumps tvm_resumes. */
static unsigned int tvm_pauses, tvm_resumes;
static char tvm_pause_msg[256];

unsigned int device_pause_vm(struct vm *vm, const char *reason, const char *message)
{
	(void)vm;
	(void)reason;
	snprintf(tvm_pause_msg, sizeof(tvm_pause_msg), "%s", message);
	__atomic_add_fetch(&tvm_pauses, 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&tvm_resumes, __ATOMIC_SEQ_CST);
}

int device_wait_resume(struct vm *vm, unsigned int gen, unsigned int timeout_ms)
{
	(void)vm;
	for (unsigned int i = 0; i < timeout_ms; i++) {
		if (__atomic_load_n(&tvm_resumes, __ATOMIC_SEQ_CST) != gen)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

#ifndef TEST_PCI_NO_THREADS
int thread_start(pthread_t *t, enum thread_role role, const char *name, void *(*fn)(void *),
		 void *arg)
{
	(void)role;
	(void)name;
	return -pthread_create(t, NULL, fn, arg);
}
#else
/* Single-threaded users (fuzzers) do the thread's work by hand: the thread
 * started ends at once, so that joining it works; tthread_arg is what the
 * last one was given (a struct virtio_worker, a struct virtio_net). */
static void *tthread_arg;

static void *tthread_none(void *arg)
{
	return arg;
}

int thread_start(pthread_t *t, enum thread_role role, const char *name, void *(*fn)(void *),
		 void *arg)
{
	(void)role;
	(void)name;
	(void)fn;
	tthread_arg = arg;
	return -pthread_create(t, NULL, tthread_none, arg);
}
#endif

/* ---- mini driver ---- */
struct tvdev {
	int slot;
	uint64_t common, notify, isr, device;
	uint32_t notify_mult;
	uint64_t bar0;
	int ncaps;
	int msix_cap;
};

/* Find slot's virtio caps (returns 0 and fills v, or -1). */
static inline int tvdev_probe(struct tvdev *v, int slot)
{
	uint8_t c;

	memset(v, 0, sizeof(*v));
	v->slot = slot;
	if ((ecam_rd(slot, 0, 2) & 0xffff) != 0x1af4)
		return -1;
	v->bar0 = ecam_rd(slot, PCI_BASE_ADDRESS_0, 4) & ~0xfull;
	ecam_wr(slot, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	for (c = (uint8_t)ecam_rd(slot, PCI_CAPABILITY_LIST, 1); c;
	     c = (uint8_t)ecam_rd(slot, c + 1, 1)) {
		uint8_t id = (uint8_t)ecam_rd(slot, c, 1);
		uint64_t off;

		if (++v->ncaps > 16)
			return -1;
		if (id == PCI_CAP_ID_MSIX) {
			v->msix_cap = c;
			continue;
		}
		if (id != PCI_CAP_ID_VNDR)
			continue;
		off = v->bar0 + ecam_rd(slot, c + 8, 4);
		switch (ecam_rd(slot, c + 3, 1)) {
		case 1:
			v->common = off;
			break;
		case 2:
			v->notify = off;
			v->notify_mult = ecam_rd(slot, c + 16, 4);
			break;
		case 3:
			v->isr = off;
			break;
		case 4:
			v->device = off;
			break;
		}
	}
	return v->common && v->notify && v->isr ? 0 : -1;
}

/* MSI-X on: vector i gets data 0x40 + i; all unmasked. */
static inline void tvdev_msix(struct tvdev *v, unsigned int nvec)
{
	for (unsigned int i = 0; i < nvec; i++) {
		uint64_t e = v->bar0 + VIRTIO_PCI_MSIX_TABLE + 16 * i;

		mmio_wr(e, 0xfee00000u, 4);
		mmio_wr(e + 4, 0, 4);
		mmio_wr(e + 8, 0x40 + i, 4);
		mmio_wr(e + 12, 0, 4);
	}
	ecam_wr(v->slot, v->msix_cap + 2, PCI_MSIX_FLAGS_ENABLE, 2);
}

/* Reset, ACKNOWLEDGE | DRIVER, accept want & what is offered (*offered:
 * the offer), FEATURES_OK. */
static inline void tvdev_negotiate(struct tvdev *v, uint64_t want, uint64_t *offered)
{
	uint64_t f;

	mmio_wr(v->common + 0x14, 0, 1);
	mmio_wr(v->common + 0x14, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER, 1);
	mmio_wr(v->common + 0x00, 0, 4);
	f = mmio_rd(v->common + 0x04, 4);
	mmio_wr(v->common + 0x00, 1, 4);
	f |= (uint64_t)mmio_rd(v->common + 0x04, 4) << 32;
	if (offered)
		*offered = f;
	f &= want;
	mmio_wr(v->common + 0x08, 0, 4);
	mmio_wr(v->common + 0x0c, (uint32_t)f, 4);
	mmio_wr(v->common + 0x08, 1, 4);
	mmio_wr(v->common + 0x0c, (uint32_t)(f >> 32), 4);
	mmio_wr(v->common + 0x14, 0x0b, 1);
}

/* Reset, negotiate (features & offered), queue 0..nq-1 at the tdrv rings
 * (only queue 0 is backed by d), DRIVER_OK. Returns the status read back. */
static inline uint8_t tvdev_start(struct tvdev *v, struct tdrv *d, uint64_t want, uint64_t *offered)
{
	tvdev_negotiate(v, want, offered);
	if (!(mmio_rd(v->common + 0x14, 1) & VIRTIO_CONFIG_S_FEATURES_OK))
		return (uint8_t)mmio_rd(v->common + 0x14, 1);
	mmio_wr(v->common + 0x10, 0, 2); /* config vector 0 */
	mmio_wr(v->common + 0x16, 0, 2);
	mmio_wr(v->common + 0x18, d->size, 2);
	mmio_wr(v->common + 0x1a, 1, 2); /* queue 0 -> vector 1 */
	mmio_wr(v->common + 0x20, TDRV_DESC, 4);
	mmio_wr(v->common + 0x24, 0, 4);
	mmio_wr(v->common + 0x28, TDRV_AVAIL, 4);
	mmio_wr(v->common + 0x2c, 0, 4);
	mmio_wr(v->common + 0x30, TDRV_USED, 4);
	mmio_wr(v->common + 0x34, 0, 4);
	mmio_wr(v->common + 0x1c, 1, 2);
	mmio_wr(v->common + 0x14, 0x0f, 1);
	return (uint8_t)mmio_rd(v->common + 0x14, 1);
}

static inline void tvdev_kick(struct tvdev *v, uint16_t q)
{
	mmio_wr(v->notify + (uint64_t)q * v->notify_mult, q, 2);
}

/* Wait up to ms for the next used entry. */
static inline int tvdev_wait_used(struct tdrv *d, uint32_t *id, uint32_t *len, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (tdrv_used(d, id, len))
			return 1;
		usleep(1000);
	}
	return 0;
}

#endif /* VMLET_VIRTIO_TEST_PCI_H */
