/* SPDX-License-Identifier: MIT */
/*
 * dirty_ring_test.c - KVM's dirty ring as the migration harvests it
 * (vmm/vm/dirty_ring.h), on a fake ring: entries taken in order up to the
 * first one not dirty, each handed back for reset, the fetch index
 * wrapping; entries outside the RAM slots (another address space, a slot
 * or page past the end) refused and never used as an index; --dirty-ring's
 * values; a vCPU waiting on a full ring released by a harvest, a pause or
 * the VM's end.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/lib/test.h"
#include "vmm/vm/dirty_ring.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"

#define N 16

static struct kvm_dirty_gfn ring[N];
static uint64_t bits0[2], bits1[1];
static const struct dirty_ring_slot slots[2] = {{100, bits0}, {40, bits1}};

static void push(uint32_t i, uint32_t slot, uint64_t off)
{
	ring[i % N] = (struct kvm_dirty_gfn){KVM_DIRTY_GFN_F_DIRTY, slot, off};
}

static bool bit(const uint64_t *b, uint64_t p)
{
	return b[p >> 6] & (1ull << (p & 63));
}

static void reset_all(void)
{
	memset(ring, 0, sizeof(ring));
	memset(bits0, 0, sizeof(bits0));
	memset(bits1, 0, sizeof(bits1));
}

static void test_order_and_reset(void)
{
	uint32_t fetch = 0;
	uint64_t bad = 0;

	reset_all();
	push(0, 0, 3);
	push(1, 1, 39);
	push(2, 0, 99);
	/* ring[3] is not dirty: ring[4] must wait for it (never skipped) */
	push(4, 0, 7);
	CHECK_EQ_U64(dirty_ring_harvest(ring, N, &fetch, slots, 2, &bad), 3);
	CHECK_EQ_U64(fetch, 3);
	CHECK_EQ_U64(bad, 0);
	CHECK(bit(bits0, 3) && bit(bits0, 99) && bit(bits1, 39));
	CHECK(!bit(bits0, 7));
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64(ring[i].flags, KVM_DIRTY_GFN_F_RESET);
	CHECK_EQ_U64(ring[4].flags, KVM_DIRTY_GFN_F_DIRTY); /* untouched */
	/* an entry harvested and not yet reset by KVM is not taken twice */
	fetch = 0;
	CHECK_EQ_U64(dirty_ring_harvest(ring, N, &fetch, slots, 2, &bad), 0);
	/* KVM fills ring[3]: the next harvest takes 3 and 4 */
	fetch = 3;
	push(3, 1, 0);
	CHECK_EQ_U64(dirty_ring_harvest(ring, N, &fetch, slots, 2, &bad), 2);
	CHECK(bit(bits1, 0) && bit(bits0, 7));
	CHECK_EQ_U64(fetch, 5);
}

static void test_wrap(void)
{
	uint32_t fetch = 2 * N - 2; /* a free-running index past a wrap */
	uint64_t bad = 0;

	reset_all();
	push(N - 2, 0, 1);
	push(N - 1, 0, 2);
	push(0, 0, 64);
	CHECK_EQ_U64(dirty_ring_harvest(ring, N, &fetch, slots, 2, &bad), 3);
	CHECK_EQ_U64(fetch, 2 * N + 1);
	CHECK(bit(bits0, 1) && bit(bits0, 2) && bit(bits0, 64));
	/* a ring all dirty: at most N per call */
	for (uint32_t i = 0; i < N; i++)
		push(i, 0, i);
	fetch = 0;
	CHECK_EQ_U64(dirty_ring_harvest(ring, N, &fetch, slots, 2, &bad), N);
}

static void test_out_of_range_refused(void)
{
	uint32_t fetch = 0;
	uint64_t bad = 0;

	reset_all();
	push(0, 1u << 16, 5);	     /* SMM's address space */
	push(1, 2, 0);		     /* no such slot */
	push(2, 0, 100);	     /* one page past slot 0 */
	push(3, 1, 1ull << 40);	     /* far past slot 1 */
	push(4, 0xffffffffu, ~0ull); /* everything set */
	push(5, 0, 10);		     /* a good one after them */
	CHECK_EQ_U64(dirty_ring_harvest(ring, N, &fetch, slots, 2, &bad), 6);
	CHECK_EQ_U64(bad, 5);
	CHECK_EQ_U64(fetch, 6);
	/* only the good one is marked; the bad ones are consumed (reset) */
	CHECK_EQ_U64(bits0[0], 1ull << 10);
	CHECK_EQ_U64(bits0[1], 0);
	CHECK_EQ_U64(bits1[0], 0);
	for (int i = 0; i < 6; i++)
		CHECK_EQ_U64(ring[i].flags, KVM_DIRTY_GFN_F_RESET);
	/* flags other than DIRTY alone (RESET pending, junk) stop the harvest */
	reset_all();
	fetch = 0;
	ring[0] = (struct kvm_dirty_gfn){KVM_DIRTY_GFN_F_DIRTY | KVM_DIRTY_GFN_F_RESET, 0, 1};
	CHECK_EQ_U64(dirty_ring_harvest(ring, N, &fetch, slots, 2, &bad), 0);
	/* discarding (no slots) marks nothing and counts nothing bad */
	bad = 0;
	push(0, 7, 1);
	CHECK_EQ_U64(dirty_ring_harvest(ring, N, &fetch, NULL, 0, &bad), 1);
	CHECK_EQ_U64(bad, 0);
}

static void test_parse(void)
{
	uint32_t v = 1;

	CHECK(!dirty_ring_parse("auto", &v) && v == DIRTY_RING_AUTO);
	CHECK(!dirty_ring_parse("off", &v) && v == DIRTY_RING_OFF);
	CHECK(!dirty_ring_parse("1024", &v) && v == 1024);
	CHECK(!dirty_ring_parse("65536", &v) && v == 65536);
	CHECK(dirty_ring_parse("512", &v) == -EINVAL);
	CHECK(dirty_ring_parse("131072", &v) == -EINVAL);
	CHECK(dirty_ring_parse("3000", &v) == -EINVAL);
	CHECK(dirty_ring_parse("-4096", &v) == -EINVAL);
	CHECK(dirty_ring_parse("4096k", &v) == -EINVAL);
	CHECK(dirty_ring_parse("", &v) == -EINVAL);
	CHECK(dirty_ring_parse("99999999999999999999", &v) == -EINVAL);
}

/* ---- a vCPU waiting on its full ring ---- */

static struct vm wvm;
static struct vcpu wv = {.vm = &wvm};
static int waited;

static void *waiter(void *arg)
{
	(void)arg;
	vm_dirty_ring_full(&wv);
	__atomic_store_n(&waited, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start a waiter and see it wait (it asks for a harvest). */
static pthread_t start_waiter(void)
{
	pthread_t t;

	__atomic_store_n(&waited, 0, __ATOMIC_RELEASE);
	pthread_create(&t, NULL, waiter, NULL);
	while (!vm_dirty_ring_wanted(&wvm))
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	return t;
}

static void test_full_waits(void)
{
	pthread_t t;
	uint64_t bad = 0;

	memset(&wvm, 0, sizeof(wvm));
	vm_pause_init(&wvm);
	wvm.ring_entries = N; /* no vCPU has a ring: the collect resets nothing */
	wvm.vm_fd = -1;
	t = start_waiter();
	CHECK(!__atomic_load_n(&waited, __ATOMIC_ACQUIRE));
	CHECK_EQ_U64(vm_dirty_ring_collect(&wvm, slots, 2, &bad), 0);
	pthread_join(t, NULL);
	CHECK(waited && !vm_dirty_ring_wanted(&wvm));
	/* a pause lets it go (to park) */
	t = start_waiter();
	__atomic_store_n(&wvm.paused, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	CHECK(waited);
	__atomic_store_n(&wvm.paused, 0, __ATOMIC_SEQ_CST);
	/* so does the VM's end */
	t = start_waiter();
	__atomic_store_n(&wvm.exit_reason, VM_EXIT_POWEROFF, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	CHECK(waited);
	/* without a ring there is nothing to collect */
	wvm.ring_entries = 0;
	CHECK(vm_dirty_ring_collect(&wvm, slots, 2, &bad) == -ENOTSUP);
}

int main(void)
{
	TEST_RUN(test_order_and_reset);
	TEST_RUN(test_wrap);
	TEST_RUN(test_out_of_range_refused);
	TEST_RUN(test_parse);
	TEST_RUN(test_full_waits);
	return test_summary();
}
