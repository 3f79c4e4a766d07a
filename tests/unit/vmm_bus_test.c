/* SPDX-License-Identifier: MIT */
/*
 * vmm_bus_test.c - the PIO/MMIO bus (vmm/vm/bus.c): window lookup and offsets,
 * overlap refusal, unclaimed accesses, unregistering from inside a callback
 * and while other threads dispatch, and the event loop (vmm/util/event.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/vm/bus.h"
#include "vmm/util/event.h"

struct fake_dev {
	uint64_t last_off;
	uint32_t last_len;
	uint64_t last_val;
	int reads, writes;
	struct bus *bus; /* for self-unregistering */
	uint64_t base;
	int unregister_on_write;
};

static void fake_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct fake_dev *d = dev;
	uint64_t v = 0x1122334455667788ull + off;

	__atomic_add_fetch(&d->reads, 1, __ATOMIC_RELAXED);
	d->last_off = off;
	d->last_len = len;
	memcpy(data, &v, len);
}

static void fake_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct fake_dev *d = dev;

	__atomic_add_fetch(&d->writes, 1, __ATOMIC_RELAXED);
	d->last_off = off;
	d->last_len = len;
	d->last_val = 0;
	memcpy(&d->last_val, data, len);
	if (d->unregister_on_write)
		CHECK(bus_unregister(d->bus, d->base) == 0);
}

static const struct io_ops fake_ops = {.read = fake_read, .write = fake_write};

static void test_lookup_and_offsets(void)
{
	struct fake_dev a = {0}, b = {0};
	struct bus bus;
	uint32_t v32 = 0;
	uint8_t v8 = 0;

	CHECK(bus_init(&bus, "test") == 0);
	CHECK(bus_register(&bus, 0x3f8, 8, &fake_ops, &a) == 0);
	CHECK(bus_register(&bus, 0x60, 5, &fake_ops, &b) == 0);
	CHECK(bus_register(&bus, 0x3fc, 8, &fake_ops, &b) == -EEXIST); /* tail overlap */
	CHECK(bus_register(&bus, 0x3f0, 9, &fake_ops, &b) == -EEXIST); /* head overlap */
	CHECK(bus_register(&bus, 0x3f0, 8, &fake_ops, &b) == 0);       /* adjacent is fine */
	CHECK(bus_register(&bus, 0x10, 0, &fake_ops, &b) == -EINVAL);
	CHECK(bus_register(&bus, ~0ull, 2, &fake_ops, &b) == -EINVAL); /* wraps */

	CHECK(bus_read(&bus, 0x3fd, &v8, 1) == 0);
	CHECK_EQ_U64(a.last_off, 5);
	CHECK_EQ_U64(v8, 0x88 + 5);
	CHECK(bus_write(&bus, 0x64, &(uint8_t){0xfe}, 1) == 0);
	CHECK_EQ_U64(b.last_off, 4);
	CHECK_EQ_U64(b.last_val, 0xfe);
	CHECK(bus_write(&bus, 0x3f8, &(uint32_t){0xdeadbeef}, 4) == 0);
	CHECK_EQ_U64(a.last_val, 0xdeadbeef);
	CHECK_EQ_U64(a.last_len, 4);

	/* unclaimed, and straddling the end of a window: all ones */
	CHECK(bus_read(&bus, 0x2f8, &v32, 4) == -ENOENT);
	CHECK_EQ_U64(v32, 0xffffffff);
	v32 = 0;
	CHECK(bus_read(&bus, 0x3fe, &v32, 4) == -ENOENT);
	CHECK_EQ_U64(v32, 0xffffffff);
	CHECK(bus_write(&bus, 0x2f8, &v32, 4) == -ENOENT);
	CHECK(bus_read(&bus, 0x3f8, &v32, 3) == -EINVAL);

	CHECK(bus_unregister(&bus, 0x3f8) == 0);
	CHECK(bus_unregister(&bus, 0x3f8) == -ENOENT);
	CHECK(bus_read(&bus, 0x3f8, &v8, 1) == -ENOENT);
	CHECK(bus_read(&bus, 0x3f0, &v8, 1) == 0);
	bus_release(&bus);
}

static void test_many_windows_sorted(void)
{
	struct fake_dev d[64];
	struct bus bus;
	uint8_t v;
	int i;

	memset(d, 0, sizeof(d));
	CHECK(bus_init(&bus, "test") == 0);
	for (i = 63; i >= 0; i--) /* reverse order: the array must stay sorted */
		CHECK(bus_register(&bus, 0x1000 + 0x10 * (uint64_t)i, 0x10, &fake_ops, &d[i]) == 0);
	for (i = 0; i < 64; i++) {
		CHECK(bus_read(&bus, 0x1000 + 0x10 * (uint64_t)i + 7, &v, 1) == 0);
		CHECK(d[i].reads == 1 && d[i].last_off == 7);
	}
	bus_release(&bus);
}

static void test_unregister_from_callback(void)
{
	struct fake_dev d = {0};
	struct bus bus;
	uint8_t v = 1;

	CHECK(bus_init(&bus, "test") == 0);
	d.bus = &bus;
	d.base = 0x80;
	d.unregister_on_write = 1;
	CHECK(bus_register(&bus, 0x80, 1, &fake_ops, &d) == 0);
	CHECK(bus_write(&bus, 0x80, &v, 1) == 0); /* unregisters itself */
	CHECK(bus_write(&bus, 0x80, &v, 1) == -ENOENT);
	CHECK(d.writes == 1);
	bus_release(&bus);
}

struct hammer {
	struct bus *bus;
	int stop;
	long hits;
};

static void *hammer_thread(void *p)
{
	struct hammer *h = p;
	uint32_t v;

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE))
		if (!bus_read(h->bus, 0x2000, &v, 4))
			h->hits++;
	return NULL;
}

/* After bus_unregister() returns, the device may be freed: no thread may
 * still be inside it (ASan catches a use after free here). */
static void test_unregister_while_dispatching(void)
{
	struct hammer h = {0};
	pthread_t t[2];
	struct bus bus;
	int round, i;

	CHECK(bus_init(&bus, "test") == 0);
	h.bus = &bus;
	for (i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, hammer_thread, &h) == 0);
	for (round = 0; round < 2000; round++) {
		struct fake_dev *d = calloc(1, sizeof(*d));

		CHECK(bus_register(&bus, 0x2000, 4, &fake_ops, d) == 0);
		usleep(10);
		CHECK(bus_unregister(&bus, 0x2000) == 0);
		memset(d, 0x5a, sizeof(*d));
		free(d);
	}
	__atomic_store_n(&h.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(h.hits > 0);
	bus_release(&bus);
}

static void on_ready(void *opaque, uint32_t events)
{
	int *count = opaque;

	(void)events;
	(*count)++;
}

static void on_timer(void *opaque, uint32_t events)
{
	struct event_loop *l = opaque;

	(void)events;
	event_loop_stop(l);
}

static void *waker(void *p)
{
	usleep(20000);
	event_loop_wake(p);
	return NULL;
}

static void test_event_loop(void)
{
	struct event_loop l;
	struct event_timer *t = NULL;
	pthread_t th;
	int efd, count = 0;
	uint64_t one = 1;

	CHECK(event_loop_init(&l) == 0);
	efd = eventfd(0, EFD_NONBLOCK);
	CHECK(event_add(&l, efd, 1 /* EPOLLIN */, on_ready, &count) == 0);
	CHECK(event_add(&l, efd, 1, on_ready, &count) == -EEXIST);
	CHECK(event_timer_create(&l, on_timer, &l, &t) == 0);
	CHECK(write(efd, &one, 8) == 8);
	CHECK(event_timer_arm(t, 30) == 0);
	CHECK(event_del(&l, efd) == 0); /* deleted: never called */
	CHECK(event_loop_run(&l) == 0); /* returns when the timer fires */
	CHECK(count == 0);
	CHECK(event_del(&l, efd) == -ENOENT);

	/* another thread can end event_loop_run() */
	CHECK(pthread_create(&th, NULL, waker, &l) == 0);
	CHECK(event_loop_run(&l) == 0);
	pthread_join(th, NULL);
	event_timer_destroy(t);
	close(efd);
	event_loop_release(&l);
}

int main(void)
{
	TEST_RUN(test_lookup_and_offsets);
	TEST_RUN(test_many_windows_sorted);
	TEST_RUN(test_unregister_from_callback);
	TEST_RUN(test_unregister_while_dispatching);
	TEST_RUN(test_event_loop);
	return test_summary();
}
