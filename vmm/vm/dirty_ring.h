/* SPDX-License-Identifier: MIT */
/*
 * dirty_ring.h - KVM's dirty ring (KVM_CAP_DIRTY_LOG_RING_ACQ_REL, else
 * KVM_CAP_DIRTY_LOG_RING): per vCPU an array of struct kvm_dirty_gfn that
 * KVM fills with the pages the vCPU dirtied in slots that log dirty pages
 * (KVM_MEM_LOG_DIRTY_PAGES), mapped from the vCPU fd at
 * KVM_DIRTY_LOG_PAGE_OFFSET. Live migration (vmm/snapshot/mig_send.c)
 * harvests it instead of KVM_GET_DIRTY_LOG where the host has it
 * (docs/migration.md).
 *
 * The ring must be enabled on the VM before its first vCPU exists
 * (vm_dirty_ring_enable() in vm_create()); once it is, KVM_GET_DIRTY_LOG
 * is refused for that VM, so a VM uses the ring or the bitmap for its
 * whole life (vm->ring_entries says which).
 *
 * Harvest order (KVM's api.rst): an entry is ours once its flags have
 * KVM_DIRTY_GFN_F_DIRTY (read with acquire); after reading slot and
 * offset we set KVM_DIRTY_GFN_F_RESET (release), advance our fetch index,
 * and stop at the first entry that is not dirty (never skip one). Then
 * KVM_RESET_DIRTY_RINGS re-arms write tracking for the pages harvested.
 * A vCPU whose ring is nearly full leaves KVM_RUN with
 * KVM_EXIT_DIRTY_RING_FULL and waits (vm_dirty_ring_full()) until the
 * harvester reset the rings, the VM pauses or ends.
 *
 * Entries are KVM's, but are checked as untrusted all the same: the slot
 * (address space << 16 | slot id) must name a RAM slot of address space 0
 * and the offset a page inside it, else the entry is consumed and counted
 * as bad, never used as an index.
 */
#ifndef VMLET_DIRTY_RING_H
#define VMLET_DIRTY_RING_H

#include <stdbool.h>
#include <stdint.h>

struct kvm_dirty_gfn;
struct vm;
struct vcpu;

/* vm_options.dirty_ring: 0 is auto (DIRTY_RING_DEFAULT entries where the
 * host has the ring, else the bitmap); DIRTY_RING_OFF the bitmap; any
 * other value a power of two in [DIRTY_RING_MIN, DIRTY_RING_MAX]. */
#define DIRTY_RING_AUTO	   0u
#define DIRTY_RING_OFF	   UINT32_MAX
#define DIRTY_RING_DEFAULT 4096u  /* entries: 64 KiB per vCPU */
#define DIRTY_RING_MIN	   1024u  /* above KVM's reserve (64 + Intel PML's 512) */
#define DIRTY_RING_MAX	   65536u /* KVM_DIRTY_RING_MAX_ENTRIES */

/* Parse --dirty-ring's value: auto, off, or a number of entries (a power
 * of two in [DIRTY_RING_MIN, DIRTY_RING_MAX]). 0 or -EINVAL. */
int dirty_ring_parse(const char *arg, uint32_t *out);

/* One RAM slot as the harvest sees it: its page count and the bitmap
 * (one bit per page) that collects the pages found dirty. */
struct dirty_ring_slot {
	uint64_t pages;
	uint64_t *bitmap;
};

/*
 * Harvest ring (n entries, a power of two) from *fetch, in order, until
 * the first entry that is not dirty or n entries: each valid one sets its
 * page's bit in slots[slot].bitmap (atomically; slots NULL: discard),
 * each is marked for reset and *fetch advances. An entry whose address
 * space is not 0, slot >= nslots or offset >= that slot's pages is
 * consumed and counted in *bad. Returns the number harvested (bad ones
 * included). Pure: no ioctl (tests/unit/dirty_ring_test.c).
 */
uint32_t dirty_ring_harvest(struct kvm_dirty_gfn *ring, uint32_t n, uint32_t *fetch,
			    const struct dirty_ring_slot *slots, unsigned int nslots,
			    uint64_t *bad);

/* vm_create(), before any vCPU: enable the ring as vm->opt.dirty_ring
 * asks (sets vm->ring_entries; 0 means the bitmap). 0 or -errno (an
 * explicit size the host cannot give is an error; auto falls back). */
int vm_dirty_ring_enable(struct vm *vm);
/* vcpu_create(): map v's ring when the VM has one. 0 or -errno. */
int vm_dirty_ring_map(struct vcpu *v);
void vm_dirty_ring_unmap(struct vcpu *v);

/*
 * Main thread (the migration): harvest every vCPU's ring into slots (see
 * dirty_ring_harvest; NULL discards), then KVM_RESET_DIRTY_RINGS, and let
 * vCPUs waiting for a full ring go on. *bad counts entries refused.
 * 0 or -errno.
 */
int vm_dirty_ring_collect(struct vm *vm, const struct dirty_ring_slot *slots, unsigned int nslots,
			  uint64_t *bad);
/* A vCPU waits for a harvest (cheap check for the harvester). */
bool vm_dirty_ring_wanted(struct vm *vm);
/* vCPU thread, on KVM_EXIT_DIRTY_RING_FULL: wait until the rings were
 * reset, the VM is paused or ends. */
void vm_dirty_ring_full(struct vcpu *v);

#endif /* VMLET_DIRTY_RING_H */
