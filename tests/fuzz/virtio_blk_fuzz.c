/* SPDX-License-Identifier: MIT */
/*
 * virtio_blk_fuzz.c - libFuzzer target for virtio-blk's request path
 * (vmm/virtio/virtio_blk.c): request headers, sector ranges, data segments,
 * discard/write-zeroes ranges and GET_ID as a hostile guest writes them.
 *
 * The device is the real one on the real virtio-pci transport, over the
 * fake VM of virtio_fuzz.h with no thread: the fuzzer is the disk's I/O
 * thread and serves a queue (the worker's drain) when the input kicks it,
 * so a run is deterministic. The disk is a raw image of 256 KiB on
 * /dev/shm, zeroed for every input.
 *
 * Input: 2 bytes of setup (read-only, EVENT_IDX, INDIRECT, two queues,
 * 4 KiB logical blocks; queue size), 2 bytes (little-endian) n, n bytes
 * of guest RAM from gpa 0 (rings at vfz_*()), then events: 'k' q (the
 * device serves queue q), 'w' off16 len8 bytes (the guest writes RAM).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/virtio_fuzz.h"
#include "vmm/virtio/virtio_blk.h"
#include "vmm/virtio/virtio_worker.h"
#include "vmm/disk/blk.h"
#include "vmm/util/log.h"

#define DISK (256u << 10)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void cleanup(void)
{
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "blk-fuzz", NULL);
	snprintf(path, sizeof(path), "/dev/shm/vmlet-blk-fuzz.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/tmp/vmlet-blk-fuzz.XXXXXX");
		fd = mkstemp(path);
	}
	if (fd < 0)
		abort();
	close(fd);
	atexit(cleanup);
	return 0;
}

static void events(struct virtio_worker *w, unsigned int nq, uint8_t *ram, const uint8_t *d,
		   size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t op = d[i++];

		if (op == 'k' && i < n) {
			w->drain(w->opaque, d[i++] % nq);
		} else if (op == 'w') {
			fuzz_ram_write(ram, VFZ_RAM, d, n, &i);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_blk_params p = {.name = "fuzz", .serial = "fuzz-serial-0123456789"};
	/* VERSION_1, SIZE_MAX, SEG_MAX, RO, BLK_SIZE, FLUSH, TOPOLOGY, MQ,
	 * DISCARD, WRITE_ZEROES; EVENT_IDX and INDIRECT from the input */
	uint64_t want = 1ull << 32 | 1 << 1 | 1 << 2 | 1 << 5 | 1 << 6 | 1 << 9 | 1 << 10 |
			1 << 12 | 1 << 13 | 1 << 14;
	struct virtio_worker *w;
	struct virtio_blk *vb;
	struct guest_mem mem;
	struct pci_host h;
	struct tvdev v;
	struct blk *be;
	uint8_t *ram;
	size_t n;
	int fd;

	if (size < 4)
		return 0;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || ftruncate(fd, DISK) || close(fd))
		abort();
	if (blk_open(&be, path, data[0] & 1, BLK_CACHE_WRITEBACK))
		abort();
	want |= (data[0] & 2 ? 1ull << 29 : 0) | (data[0] & 4 ? 1ull << 28 : 0);
	p.num_queues = data[0] & 8 ? 2 : 1;
	p.logical_block_size = data[0] & 16 ? 4096 : 512;
	n = data[2] | (size_t)data[3] << 8;
	n = n < size - 4 ? n : size - 4;
	ram = vfz_ram(&mem, data + 4, n);
	tbus_n = 0;
	if (thost_init(&h, &mem) || virtio_blk_create(&vb, &h, be, &p) || tvdev_probe(&v, 1))
		abort();
	w = tthread_arg; /* the disk's worker: its thread does nothing */
	tvdev_msix(&v, p.num_queues + 1);
	vfz_start(&v, p.num_queues, want, (uint16_t)(2u << (data[1] % 6)));
	for (unsigned int q = 0; q < p.num_queues; q++)
		w->drain(w->opaque, q); /* what was posted before DRIVER_OK */
	events(w, p.num_queues, ram, data + 4 + n, size - 4 - n);
	for (unsigned int q = 0; getenv("BLK_FUZZ_USED") && q < p.num_queues; q++)
		for (unsigned int i = 0; i < ram[vfz_used(q) + 2];
		     i++) /* to see what a seed does */
			printf("queue %u: head %u, %u bytes\n", q, ram[vfz_used(q) + 4 + 8 * i],
			       ram[vfz_used(q) + 8 + 8 * i] | ram[vfz_used(q) + 9 + 8 * i] << 8);
	virtio_blk_destroy(vb);
	pci_host_release(&h);
	free(ram);
	return 0;
}
