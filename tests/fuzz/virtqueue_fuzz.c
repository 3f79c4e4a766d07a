// SPDX-License-Identifier: MIT
/*
 * virtqueue_fuzz.c - libFuzzer target for the split virtqueue parser.
 * The input is the guest: its first 2 bytes pick the queue size, the ring
 * features and the device's iovec capacity, the rest is guest RAM holding
 * the rings (avail at 0, used at 0x210, descriptors at 0xa20), indirect
 * tables and buffers. RAM is two regions, [0, 0x3000) and [0x3000, 0x4000),
 * in separate allocations of their exact size, so ASan catches a buffer
 * that runs off a region or straddles the two. The device pops until the
 * ring is empty or broken, touches every byte of every segment and
 * completes each head, alone or in batches (virtq_fill/virtq_flush).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/virtio/virtqueue.h"

#define RAM0_SIZE 0x3000u
#define RAM1_SIZE 0x1000u
#define AVAIL	  0x0u
#define USED	  0x210u
#define DESC	  0xa20u

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

/* Pop and complete until empty or broken; batch > 1 publishes that many
 * completions at once. */
static void drain(struct virtq *q, struct virtq_elem *e, unsigned int batch)
{
	unsigned int steps = 0, pend = 0;
	int r;

	for (;;) {
		r = virtq_pop(q, e);
		if (r <= 0)
			break;
		if (r == VIRTQ_POP_OK)
			(void)(touch(e->out, e->n_out) + touch(e->in, e->n_in));
		if (virtq_fill(q, pend++, e->head, (uint32_t)e->in_bytes))
			break;
		if (pend == batch) {
			if (virtq_flush(q, pend))
				break;
			pend = 0;
			(void)virtq_should_notify(q);
		}
		/* the ring may hand out at most 2^16 chains before idx wraps
		 * back; a guest cannot make us spin longer than that */
		if (++steps > 70000)
			abort();
	}
	if (pend && !virtq_flush(q, pend))
		(void)virtq_should_notify(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct iovec out[16], in[16];
	struct virtq_elem e = {.out = out, .in = in};
	struct guest_mem mem = {.n = 2, .total = RAM0_SIZE + RAM1_SIZE};
	struct virtq q;
	uint8_t *ram0, *ram1;
	uint16_t qsize;
	size_t n0, n1;

	if (size < 2)
		return 0;
	qsize = (uint16_t)(1u << (data[0] % 9)); /* 1 .. 256 */
	e.cap_out = 1 + (data[1] >> 2 & 15);
	e.cap_in = 1 + (data[1] >> 6) * 5;
	ram0 = calloc(1, RAM0_SIZE); /* exact sizes: ASan catches overruns */
	ram1 = calloc(1, RAM1_SIZE);
	if (!ram0 || !ram1)
		goto out;
	data += 2, size -= 2;
	n0 = size < RAM0_SIZE ? size : RAM0_SIZE;
	n1 = size - n0 < RAM1_SIZE ? size - n0 : RAM1_SIZE;
	memcpy(ram0, data, n0);
	memcpy(ram1, data + n0, n1);
	mem.r[0] = (struct guest_mem_region){0, RAM0_SIZE, ram0};
	mem.r[1] = (struct guest_mem_region){RAM0_SIZE, RAM1_SIZE, ram1};
	if (virtq_init(&q, &mem, qsize, DESC, AVAIL, USED, data[-1] & 1, data[-1] & 2))
		goto out;
	drain(&q, &e, (data[-2] & 0x80) ? 4 : 1);
	if (virtq_enable_notify(&q))
		drain(&q, &e, 1);
	virtq_disable_notify(&q);
out:
	free(ram0);
	free(ram1);
	return 0;
}
