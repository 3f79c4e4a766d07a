/* SPDX-License-Identifier: MIT */
/*
 * bus.h - one bus API for port I/O and MMIO.
 *
 * A device claims a window [base, base+len) on a bus with its io_ops and an
 * opaque pointer; its callbacks see offsets relative to the window start.
 * Accesses nobody claimed read as all ones and are logged once. Dispatch is
 * safe against concurrent vCPUs (read-mostly lock); devices do their own
 * locking for their state.
 */
#ifndef VMLET_BUS_H
#define VMLET_BUS_H

#include <pthread.h>
#include <stdint.h>

struct io_ops {
	/* len is 1, 2, 4 or 8; data is little-endian guest bytes */
	void (*read)(void *dev, uint64_t off, void *data, uint32_t len);
	void (*write)(void *dev, uint64_t off, const void *data, uint32_t len);
};

struct bus_range {
	uint64_t base, len;
	const struct io_ops *ops;
	void *dev;
	/* private to bus.c: dispatches in flight | BUS_DEAD | BUS_ORPHAN */
	unsigned int refs;
};

struct bus {
	const char *name;	   /* "pio" / "mmio" for messages */
	struct bus_range **ranges; /* sorted by base, non-overlapping */
	unsigned int n, cap;
	pthread_rwlock_t lock;
	pthread_mutex_t wait_lock; /* with idle: bus_unregister waits */
	pthread_cond_t idle;
	int warned_read, warned_write;
};

int bus_init(struct bus *b, const char *name);
void bus_release(struct bus *b);
/* -EEXIST when the window overlaps one already claimed. */
int bus_register(struct bus *b, uint64_t base, uint64_t len, const struct io_ops *ops, void *dev);
/*
 * Remove the window starting at base (-ENOENT if none). When it returns,
 * no vCPU is inside the window's callbacks any more, so the caller may free
 * dev; a callback may unregister its own window (it then returns at once).
 * Callbacks may register and unregister windows on any bus.
 */
int bus_unregister(struct bus *b, uint64_t base);
/* Returns 0 if a device handled it, -ENOENT if unclaimed (reads get ~0). */
int bus_read(struct bus *b, uint64_t addr, void *data, uint32_t len);
int bus_write(struct bus *b, uint64_t addr, const void *data, uint32_t len);

#endif /* VMLET_BUS_H */
