/* SPDX-License-Identifier: MIT */
/*
 * dirty_ring.c - KVM's dirty ring: enable, map, harvest, reset, and the
 * vCPU's wait on a full ring (see dirty_ring.h).
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/log.h"
#include "vmm/vm/dirty_ring.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"

#define RING_WAIT_NS 50000000L /* a waiting vCPU looks at pause and end this often */

int dirty_ring_parse(const char *arg, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!strcmp(arg, "auto")) {
		*out = DIRTY_RING_AUTO;
		return 0;
	}
	if (!strcmp(arg, "off")) {
		*out = DIRTY_RING_OFF;
		return 0;
	}
	if (arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || v < DIRTY_RING_MIN || v > DIRTY_RING_MAX || (v & (v - 1)))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

uint32_t dirty_ring_harvest(struct kvm_dirty_gfn *ring, uint32_t n, uint32_t *fetch,
			    const struct dirty_ring_slot *slots, unsigned int nslots, uint64_t *bad)
{
	uint32_t got;

	for (got = 0; got < n; got++) {
		struct kvm_dirty_gfn *e = &ring[*fetch & (n - 1)];
		uint32_t flags = __atomic_load_n(&e->flags, __ATOMIC_ACQUIRE);
		uint32_t slot, id;
		uint64_t off;

		if ((flags & KVM_DIRTY_GFN_F_MASK) != KVM_DIRTY_GFN_F_DIRTY)
			break;
		slot = e->slot;
		off = e->offset;
		id = slot & 0xffff;
		if (!slots)
			; /* discarded */
		else if ((slot >> 16) || id >= nslots || off >= slots[id].pages)
			(*bad)++;
		else
			__atomic_fetch_or(&slots[id].bitmap[off >> 6], 1ull << (off & 63),
					  __ATOMIC_RELAXED);
		__atomic_store_n(&e->flags, KVM_DIRTY_GFN_F_RESET, __ATOMIC_RELEASE);
		(*fetch)++;
	}
	return got;
}

/* The capability to enable and the most bytes KVM allows per ring (0:
 * the host has no ring). ACQ_REL first: the same ring, with the ordering
 * this code keeps anyway. */
static uint64_t ring_cap(struct vm *vm, uint32_t *cap)
{
	int r = ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_DIRTY_LOG_RING_ACQ_REL);

	*cap = KVM_CAP_DIRTY_LOG_RING_ACQ_REL;
	if (r <= 0) {
		r = ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_DIRTY_LOG_RING);
		*cap = KVM_CAP_DIRTY_LOG_RING;
	}
	return r > 0 ? (uint64_t)r : 0;
}

int vm_dirty_ring_enable(struct vm *vm)
{
	uint32_t want = vm->opt.dirty_ring, cap;
	uint64_t most = ring_cap(vm, &cap) / sizeof(struct kvm_dirty_gfn);
	struct kvm_enable_cap ec = {.cap = cap};

	vm->ring_entries = 0;
	if (want == DIRTY_RING_OFF)
		return 0;
	if (want == DIRTY_RING_AUTO) {
		want = most < DIRTY_RING_DEFAULT ? (uint32_t)most : DIRTY_RING_DEFAULT;
		/* a power of two no larger than KVM's limit */
		while (want & (want - 1))
			want &= want - 1;
		if (want < DIRTY_RING_MIN) {
			log_debug("kvm: no dirty ring on this host: migration reads the bitmap");
			return 0;
		}
	} else if (want > most) {
		return error_errno(-ENOTSUP,
				   "--dirty-ring %u: this host's KVM gives at most %llu entries "
				   "(use auto, or off for the dirty bitmap)",
				   want, (unsigned long long)most);
	}
	ec.args[0] = (uint64_t)want * sizeof(struct kvm_dirty_gfn);
	if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &ec) < 0) {
		if (vm->opt.dirty_ring != DIRTY_RING_AUTO)
			return error_errno(-errno, "kvm: dirty ring of %u entries", want);
		log_warn("kvm: enabling the dirty ring: %s (migration reads the bitmap)",
			 strerror(errno));
		return 0;
	}
	vm->ring_entries = want;
	log_debug("kvm: dirty ring of %u entries per vCPU", want);
	return 0;
}

int vm_dirty_ring_map(struct vcpu *v)
{
	size_t bytes = (size_t)v->vm->ring_entries * sizeof(struct kvm_dirty_gfn);
	void *p;

	v->ring = NULL;
	v->ring_fetch = 0;
	if (!bytes)
		return 0;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd,
		 KVM_DIRTY_LOG_PAGE_OFFSET * sysconf(_SC_PAGESIZE));
	if (p == MAP_FAILED)
		return error_errno(-errno, "vcpu%u: mmap of the dirty ring", v->index);
	v->ring = p;
	return 0;
}

void vm_dirty_ring_unmap(struct vcpu *v)
{
	if (v->ring)
		munmap(v->ring, (size_t)v->vm->ring_entries * sizeof(struct kvm_dirty_gfn));
	v->ring = NULL;
}

int vm_dirty_ring_collect(struct vm *vm, const struct dirty_ring_slot *slots, unsigned int nslots,
			  uint64_t *bad)
{
	uint64_t got = 0;

	if (!vm->ring_entries)
		return -ENOTSUP;
	for (uint32_t i = 0; i < vm->n_vcpus; i++)
		if (vm->vcpus[i].ring)
			got += dirty_ring_harvest(vm->vcpus[i].ring, vm->ring_entries,
						  &vm->vcpus[i].ring_fetch, slots, nslots, bad);
	if (got && ioctl(vm->vm_fd, KVM_RESET_DIRTY_RINGS, 0) < 0)
		return error_errno(-errno, "migrate: KVM_RESET_DIRTY_RINGS");
	pthread_mutex_lock(&vm->ring_lock);
	vm->ring_gen++;
	pthread_cond_broadcast(&vm->ring_cond);
	pthread_mutex_unlock(&vm->ring_lock);
	return 0;
}

bool vm_dirty_ring_wanted(struct vm *vm)
{
	return __atomic_load_n(&vm->ring_waiting, __ATOMIC_ACQUIRE) > 0;
}

void vm_dirty_ring_full(struct vcpu *v)
{
	struct vm *vm = v->vm;
	unsigned int gen;

	__atomic_add_fetch(&vm->ring_full_waits, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&vm->ring_lock);
	gen = vm->ring_gen;
	__atomic_add_fetch(&vm->ring_waiting, 1, __ATOMIC_ACQ_REL);
	while (gen == vm->ring_gen && !vm_is_paused(vm) && vm_exit_reason(vm) == VM_EXIT_NONE) {
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += RING_WAIT_NS;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&vm->ring_cond, &vm->ring_lock, &t);
	}
	__atomic_sub_fetch(&vm->ring_waiting, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&vm->ring_lock);
}
