/* SPDX-License-Identifier: MIT */
/*
 * smm.h - the SMM address space of a VM (smm.c; devices reach it through
 * device.h's device_smm_*()).
 *
 * vm_smm_setup(): (vm_create, in place of low RAM's one slot) requires
 * KVM_CAP_X86_SMM and two address spaces (KVM_CAP_MULTI_ADDRESS_SPACE),
 * else an error naming features.smm and the host; registers low RAM in
 * pieces in both spaces and mirrors RAM regions 1.. into space 1, with
 * SMRAM closed (A/B segment unassigned outside SMM, no TSEG yet).
 * vm_smm_mirror(): the same slot in space 1 (ROMs; no-op without SMM).
 * vm_smm_release(): frees the state (vm_destroy).
 */
#ifndef VMLET_VM_SMM_H
#define VMLET_VM_SMM_H

#include <stdint.h>

struct vm;

int vm_smm_setup(struct vm *vm);
int vm_smm_mirror(struct vm *vm, unsigned int slot, uint32_t flags, uint64_t gpa, uint64_t size,
		  void *host);
void vm_smm_release(struct vm *vm);

#endif /* VMLET_VM_SMM_H */
