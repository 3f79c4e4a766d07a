/* SPDX-License-Identifier: MIT */
/*
 * virtio_fuzz.h - the guest side the virtio device fuzzers share: the fake
 * VM of tests/unit/virtio_test_pci.h with no threads (the fuzzer does the
 * device thread's work by hand, so a run is deterministic), one
 * exact-size RAM allocation, and every queue's rings at fixed places near
 * the start of RAM (all avail rings first, where the fuzzer finds the
 * indices soonest, then the used rings, then the descriptor tables), for
 * at most VFZ_QUEUES queues of at most VFZ_QMAX entries. Include once.
 */
#ifndef VMLET_VIRTIO_FUZZ_H
#define VMLET_VIRTIO_FUZZ_H

#define TEST_PCI_NO_THREADS
#include "tests/unit/virtio_test_pci.h"

#define VFZ_RAM	   0x10000u
#define VFZ_QMAX   64u
#define VFZ_QUEUES 5u

static inline uint64_t vfz_avail(unsigned int q)
{
	return 0x90ull * q;
}
static inline uint64_t vfz_used(unsigned int q)
{
	return 0x300 + 0x210ull * q;
}
static inline uint64_t vfz_desc(unsigned int q)
{
	return 0xd80 + 0x400ull * q;
}

/* RAM of VFZ_RAM bytes at gpa 0, starting with the n bytes of ram. */
static inline uint8_t *vfz_ram(struct guest_mem *mem, const uint8_t *ram, size_t n)
{
	uint8_t *p = calloc(1, VFZ_RAM); /* exact size: ASan catches overruns */

	if (!p)
		abort();
	memcpy(p, ram, n < VFZ_RAM ? n : VFZ_RAM);
	*mem = (struct guest_mem){.n = 1, .total = VFZ_RAM, .page_size = 4096};
	mem->r[0] = (struct guest_mem_region){0, VFZ_RAM, p};
	return p;
}

/* Negotiate (want & offered), queues 0..nq-1 of qsize entries at vfz_*()
 * (queue q on MSI-X vector q + 1), DRIVER_OK. */
static inline void vfz_start(struct tvdev *v, unsigned int nq, uint64_t want, uint16_t qsize)
{
	uint64_t c = v->common;

	tvdev_negotiate(v, want, NULL);
	mmio_wr(c + 0x10, 0, 2);
	for (unsigned int q = 0; q < nq; q++) {
		mmio_wr(c + 0x16, q, 2);
		mmio_wr(c + 0x18, qsize, 2);
		mmio_wr(c + 0x1a, q + 1, 2);
		mmio_wr(c + 0x20, (uint32_t)vfz_desc(q), 4);
		mmio_wr(c + 0x24, 0, 4);
		mmio_wr(c + 0x28, (uint32_t)vfz_avail(q), 4);
		mmio_wr(c + 0x2c, 0, 4);
		mmio_wr(c + 0x30, (uint32_t)vfz_used(q), 4);
		mmio_wr(c + 0x34, 0, 4);
		mmio_wr(c + 0x1c, 1, 2);
	}
	mmio_wr(c + 0x14, 0x0f, 1);
}

#endif /* VMLET_VIRTIO_FUZZ_H */
