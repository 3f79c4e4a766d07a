// SPDX-License-Identifier: MIT
/* vm_coalesced_replay(): the writes KVM queued in its coalesced ring reach
 * the port (or MMIO) bus in the order the guest made them, the ring's
 * first index follows, it wraps, and a ring that is not KVM's (indices
 * out of range, an entry longer than its data) writes nothing wrong. */
#include <stdlib.h>
#include <string.h>

#include <linux/kvm.h>

#include "tests/lib/test.h"
#include "vmm/vm/bus.h"
#include "vmm/vm/vm.h"

#define ENTRIES 8

/* what the fake device saw, in order */
static struct seen {
	uint64_t off;
	uint32_t len, val;
	int mmio;
} seen[32];
static unsigned int n_seen;

static void rec(uint64_t off, const void *data, uint32_t len, int mmio)
{
	uint32_t v = 0;

	memcpy(&v, data, len < 4 ? len : 4);
	if (n_seen < 32)
		seen[n_seen++] = (struct seen){off, len, v, mmio};
}

static void pio_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	(void)opaque;
	rec(off, data, len, 0);
}

static void mmio_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	(void)opaque;
	rec(off, data, len, 1);
}

static void no_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	(void)opaque;
	(void)off;
	memset(data, 0xff, len);
}

static const struct io_ops pio_ops = {no_read, pio_write};
static const struct io_ops mmio_ops = {no_read, mmio_write};

static struct kvm_coalesced_mmio_ring *ring_new(void)
{
	return calloc(1, sizeof(struct kvm_coalesced_mmio_ring) +
			     ENTRIES * sizeof(struct kvm_coalesced_mmio));
}

/* what KVM does on a coalesced write: fill slot last, then move last */
static void ring_put(struct kvm_coalesced_mmio_ring *r, uint64_t addr, uint32_t val, uint32_t len,
		     int pio)
{
	struct kvm_coalesced_mmio *e = &r->coalesced_mmio[r->last];

	memset(e, 0, sizeof(*e));
	e->phys_addr = addr;
	e->len = len;
	e->pio = (uint32_t)pio;
	memcpy(e->data, &val, 4);
	r->last = (r->last + 1) % ENTRIES;
}

static void test_replay_in_order(void)
{
	struct kvm_coalesced_mmio_ring *r = ring_new();
	struct bus pio, mmio;

	CHECK(r != NULL);
	CHECK(bus_init(&pio, "pio") == 0 && bus_init(&mmio, "mmio") == 0);
	CHECK(bus_register(&pio, 0xcf8, 4, &pio_ops, NULL) == 0);
	CHECK(bus_register(&mmio, 0x1000, 0x100, &mmio_ops, NULL) == 0);
	n_seen = 0;

	CHECK_EQ_U64(vm_coalesced_replay(r, ENTRIES, &pio, &mmio), 0); /* empty */
	ring_put(r, 0xcf8, 0x80000800, 4, 1);
	ring_put(r, 0xcf8, 0x80001000, 4, 1);
	ring_put(r, 0x1010, 0xab, 1, 0);
	CHECK_EQ_U64(vm_coalesced_replay(r, ENTRIES, &pio, &mmio), 3);
	CHECK_EQ_U64(r->first, 3);
	CHECK_EQ_U64(n_seen, 3);
	CHECK(seen[0].off == 0 && seen[0].len == 4 && seen[0].val == 0x80000800 && !seen[0].mmio);
	CHECK(seen[1].val == 0x80001000 && !seen[1].mmio);
	CHECK(seen[2].off == 0x10 && seen[2].len == 1 && seen[2].val == 0xab && seen[2].mmio);

	/* around the end of the ring: 3..7, then 0..1 */
	n_seen = 0;
	for (uint32_t i = 0; i < 7; i++)
		ring_put(r, 0xcf8, 0x80000000 | i << 11, 4, 1);
	CHECK_EQ_U64(r->last, 2);
	CHECK_EQ_U64(vm_coalesced_replay(r, ENTRIES, &pio, &mmio), 7);
	CHECK_EQ_U64(r->first, 2);
	for (uint32_t i = 0; i < 7 && i < n_seen; i++)
		CHECK_EQ_U64(seen[i].val, 0x80000000 | i << 11);

	/* an entry longer than its data is skipped, the next one still lands */
	n_seen = 0;
	ring_put(r, 0xcf8, 1, 4, 1);
	r->coalesced_mmio[(r->last + ENTRIES - 1) % ENTRIES].len = 64;
	ring_put(r, 0xcf8, 2, 4, 1);
	CHECK_EQ_U64(vm_coalesced_replay(r, ENTRIES, &pio, &mmio), 2);
	CHECK_EQ_U64(n_seen, 1);
	CHECK_EQ_U64(seen[0].val, 2);

	/* indices beyond the ring: nothing replayed, nothing moved */
	n_seen = 0;
	r->first = ENTRIES + 5;
	r->last = 1;
	CHECK_EQ_U64(vm_coalesced_replay(r, ENTRIES, &pio, &mmio), 0);
	CHECK_EQ_U64(r->first, ENTRIES + 5);
	CHECK_EQ_U64(n_seen, 0);

	bus_release(&pio);
	bus_release(&mmio);
	free(r);
}

int main(void)
{
	TEST_RUN(test_replay_in_order);
	return test_summary();
}
