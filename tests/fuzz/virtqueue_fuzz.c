// SPDX-License-Identifier: MIT
/*
 * virtqueue_fuzz.c - libFuzzer target for the split virtqueue parser.
 * The input is the guest: its first bytes pick the queue size and ring
 * features, the rest is guest RAM holding the rings, descriptors and
 * indirect tables. The device pops until the ring is empty or broken,
 * touches every byte of every segment (so ASan sees any pointer outside
 * guest RAM) and completes each head.
 *
 * FUZZ_SRCS: vmm/dev/virtqueue.c vmm/guest_mem.c vmm/log.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/dev/virtqueue.h"

#define RAM_SIZE 0x4000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t touch(const struct iovec *iov, unsigned int n)
{
	uint8_t x = 0;

	for (unsigned int i = 0; i < n; i++)
		for (size_t j = 0; j < iov[i].iov_len; j += 64)
			x ^= ((volatile uint8_t *)iov[i].iov_base)[j];
	for (unsigned int i = 0; i < n; i++)
		if (iov[i].iov_len)
			x ^= ((volatile uint8_t *)iov[i].iov_base)[iov[i].iov_len - 1];
	return x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct iovec out[16], in[16];
	struct virtq_elem e = {.out = out, .in = in, .cap_out = 16, .cap_in = 16};
	struct guest_mem mem = {.n = 1};
	struct virtq q;
	uint8_t *ram;
	uint16_t qsize;
	unsigned int steps = 0;
	int r;

	if (size < 2)
		return 0;
	qsize = (uint16_t)(1u << (data[0] % 9)); /* 1 .. 256 */
	ram = calloc(1, RAM_SIZE);		 /* exact size: ASan catches overruns */
	if (!ram)
		return 0;
	memcpy(ram, data + 2, size - 2 < RAM_SIZE ? size - 2 : RAM_SIZE);
	mem.r[0].host = ram;
	mem.r[0].size = RAM_SIZE;
	/* desc at 0, avail at 0x1000, used at 0x2000 */
	if (virtq_init(&q, &mem, qsize, 0, 0x1000, 0x2000, data[1] & 1, data[1] & 2))
		goto out;
	for (;;) {
		r = virtq_pop(&q, &e);
		if (r <= 0)
			break;
		if (r == VIRTQ_POP_OK)
			(void)(touch(e.out, e.n_out) + touch(e.in, e.n_in));
		if (virtq_push(&q, e.head, (uint32_t)e.in_bytes))
			break;
		(void)virtq_should_notify(&q);
		/* the ring may hand out at most 2^16 chains before idx wraps
		 * back; a guest cannot make us spin longer than that */
		if (++steps > 70000)
			abort();
	}
	(void)virtq_enable_notify(&q);
out:
	free(ram);
	return 0;
}
