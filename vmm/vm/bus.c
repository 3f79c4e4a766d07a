/* SPDX-License-Identifier: MIT */
/*
 * bus.c - the port I/O and MMIO buses: a sorted array of windows searched
 * with a binary search under a read lock.
 *
 * Why callbacks run without the lock held: a device callback may itself
 * claim or move a window (a PCI BAR write arriving through the ECAM window
 * moves a BAR on the same MMIO bus); with the read lock held that would
 * deadlock on the write lock. So dispatch takes a reference on the window
 * under the read lock, drops the lock, and calls the device. Unregistering
 * takes the window out of the array under the write lock (no new dispatch
 * can find it), marks it dead, and then waits for the references to drain
 * before freeing it: after bus_unregister() returns, no vCPU is still inside
 * the device and the caller may free it. A callback unregistering its own
 * window cannot wait for itself; the window is then freed by the dispatch
 * that drops the last reference. The reference count and the two flags
 * share one atomic word so that "drop my reference" and "was it dead, and
 * who frees it" are one atomic step: after that step a dispatcher touches
 * the window only if it is the one that frees it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/vm/bus.h"
#include "vmm/util/log.h"

#define BUS_DEAD   (1u << 31) /* taken out of the array */
#define BUS_ORPHAN (1u << 30) /* freed by the last reference, not by unregister */
#define BUS_REFS   (BUS_ORPHAN - 1)

/* The window whose callback this thread is running (for self-unregister). */
static __thread struct bus_range *bus_current;

int bus_init(struct bus *b, const char *name)
{
	int ret;

	memset(b, 0, sizeof(*b));
	b->name = name;
	ret = pthread_rwlock_init(&b->lock, NULL);
	if (ret)
		return -ret;
	pthread_mutex_init(&b->wait_lock, NULL);
	pthread_cond_init(&b->idle, NULL);
	return 0;
}

void bus_release(struct bus *b)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		free(b->ranges[i]);
	free(b->ranges);
	pthread_rwlock_destroy(&b->lock);
	pthread_mutex_destroy(&b->wait_lock);
	pthread_cond_destroy(&b->idle);
	memset(b, 0, sizeof(*b));
}

/* Index of the first window whose end is above addr (lock held). */
static unsigned int bus_lower_bound(const struct bus *b, uint64_t addr)
{
	unsigned int lo = 0, hi = b->n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct bus_range *r = b->ranges[mid];

		if (r->base + r->len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int bus_register(struct bus *b, uint64_t base, uint64_t len, const struct io_ops *ops, void *dev)
{
	struct bus_range *r, **grown;
	uint64_t end;
	unsigned int i;
	int ret = 0;

	if (!len || __builtin_add_overflow(base, len, &end) || !ops)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = (struct bus_range){.base = base, .len = len, .ops = ops, .dev = dev};

	pthread_rwlock_wrlock(&b->lock);
	i = bus_lower_bound(b, base);
	if (i < b->n && b->ranges[i]->base < end) {
		ret = -EEXIST;
		goto out_unlock;
	}
	if (b->n == b->cap) {
		unsigned int cap = b->cap ? b->cap * 2 : 16;

		grown = realloc(b->ranges, cap * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		b->ranges = grown;
		b->cap = cap;
	}
	memmove(&b->ranges[i + 1], &b->ranges[i], (b->n - i) * sizeof(*b->ranges));
	b->ranges[i] = r;
	b->n++;
	r = NULL;
out_unlock:
	pthread_rwlock_unlock(&b->lock);
	free(r);
	return ret;
}

int bus_unregister(struct bus *b, uint64_t base)
{
	struct bus_range *r = NULL;
	unsigned int i, self;

	pthread_rwlock_wrlock(&b->lock);
	i = bus_lower_bound(b, base);
	if (i < b->n && b->ranges[i]->base == base) {
		r = b->ranges[i];
		memmove(&b->ranges[i], &b->ranges[i + 1], (b->n - i - 1) * sizeof(*b->ranges));
		b->n--;
	}
	pthread_rwlock_unlock(&b->lock);
	if (!r)
		return -ENOENT;

	self = bus_current == r;
	if (self) {
		/* we hold a reference: the last dispatch to drop one frees it */
		__atomic_fetch_or(&r->refs, BUS_DEAD | BUS_ORPHAN, __ATOMIC_SEQ_CST);
		return 0;
	}
	__atomic_fetch_or(&r->refs, BUS_DEAD, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&b->wait_lock);
	while (__atomic_load_n(&r->refs, __ATOMIC_SEQ_CST) & BUS_REFS)
		pthread_cond_wait(&b->idle, &b->wait_lock);
	pthread_mutex_unlock(&b->wait_lock);
	free(r);
	return 0;
}

static struct bus_range *bus_get(struct bus *b, uint64_t addr, uint32_t len)
{
	struct bus_range *r = NULL;
	unsigned int i;

	pthread_rwlock_rdlock(&b->lock);
	i = bus_lower_bound(b, addr);
	if (i < b->n && b->ranges[i]->base <= addr &&
	    addr - b->ranges[i]->base + len <= b->ranges[i]->len) {
		r = b->ranges[i];
		__atomic_add_fetch(&r->refs, 1, __ATOMIC_SEQ_CST);
	}
	pthread_rwlock_unlock(&b->lock);
	return r;
}

static void bus_put(struct bus *b, struct bus_range *r)
{
	unsigned int old = __atomic_fetch_sub(&r->refs, 1, __ATOMIC_SEQ_CST);

	if ((old & BUS_REFS) != 1 || !(old & BUS_DEAD))
		return;
	if (old & BUS_ORPHAN) {
		free(r);
		return;
	}
	/* r may be freed by now: only the bus is touched */
	pthread_mutex_lock(&b->wait_lock);
	pthread_cond_broadcast(&b->idle);
	pthread_mutex_unlock(&b->wait_lock);
}

static int bus_check_len(uint32_t len)
{
	return len == 1 || len == 2 || len == 4 || len == 8;
}

int bus_read(struct bus *b, uint64_t addr, void *data, uint32_t len)
{
	struct bus_range *r, *prev;

	if (!bus_check_len(len))
		return -EINVAL;
	r = bus_get(b, addr, len);
	if (!r) {
		memset(data, 0xff, len);
		if (!__atomic_exchange_n(&b->warned_read, 1, __ATOMIC_RELAXED))
			log_warn("%s: read of %u bytes at 0x%llx is unclaimed (reads as all ones; "
				 "further ones not logged)",
				 b->name, len, (unsigned long long)addr);
		return -ENOENT;
	}
	prev = bus_current;
	bus_current = r;
	if (r->ops->read)
		r->ops->read(r->dev, addr - r->base, data, len);
	else
		memset(data, 0xff, len);
	bus_current = prev;
	bus_put(b, r);
	return 0;
}

int bus_write(struct bus *b, uint64_t addr, const void *data, uint32_t len)
{
	struct bus_range *r, *prev;

	if (!bus_check_len(len))
		return -EINVAL;
	r = bus_get(b, addr, len);
	if (!r) {
		if (!__atomic_exchange_n(&b->warned_write, 1, __ATOMIC_RELAXED))
			log_warn("%s: write of %u bytes at 0x%llx is unclaimed (ignored; further "
				 "ones not logged)",
				 b->name, len, (unsigned long long)addr);
		return -ENOENT;
	}
	prev = bus_current;
	bus_current = r;
	if (r->ops->write)
		r->ops->write(r->dev, addr - r->base, data, len);
	bus_current = prev;
	bus_put(b, r);
	return 0;
}
