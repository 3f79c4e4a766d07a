// SPDX-License-Identifier: MIT
/*
 * smm.c - the SMM address space of a VM with vm_options.smm (vm.h,
 * device.h's device_smm_*): KVM memory slots in address space 1 (what a
 * vCPU in SMM sees), and the cuts of low RAM whose slots come and go as
 * the chipset opens and closes SMRAM.
 *
 * Low RAM [0, top) is registered in pieces, in both address spaces:
 *   [0, 0xa0000) [0xa0000, 0xc0000) [0xc0000, top - 16M)
 *   [top - 16M, top - 8M) [top - 8M, top - 2M) [top - 2M, top - 1M) [top - 1M, top)
 * The A/B segment piece is present where device_smram says it is RAM; the
 * four TSEG pieces are always present in SMM and, outside it, those
 * inside the TSEG size in force are absent. The other RAM regions and the
 * ROM slots (device_map_rom) are the same in both spaces. A toggle is
 * one KVM_SET_USER_MEMORY_REGION (delete: size 0, or add); no slot
 * changes size, so RAM outside the cuts never leaves the guest's view.
 * What is hidden outside SMM is hidden from the devices' DMA too
 * (guest_mem_set_smram(): guest_mem_ptr() refuses it), as q35 does.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>

#include "vmm/util/log.h"
#include "vmm/util/thread.h"
#include "vmm/vm/smm.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"

#define SMM_AS1	       (1u << 16)
#define SMM_SLOT_BASE  40 /* the pieces' slot ids (RAM 0..3, ROMs 4..7) */
#define SMM_PIECE_ASEG 1
#define SMM_PIECE_TSEG 3 /* the first of four, largest size first */
#define SMM_PIECES     7
#define SMM_LOW_MIN    (0xc0000ull + DEVICE_SMM_TSEG_MAX + (16ull << 20))

struct vm_smm {
	pthread_mutex_t lock;
	uint64_t gpa[SMM_PIECES + 1]; /* piece i is [gpa[i], gpa[i + 1]) */
	uint8_t *host;		      /* low RAM's host address */
	bool present[2][SMM_PIECES];
};

static int smm_slot(struct vm *vm, unsigned int as, unsigned int i, bool on)
{
	struct vm_smm *s = vm->smm;
	struct kvm_userspace_memory_region r = {
	    .slot = (as ? SMM_AS1 : 0) | (i ? SMM_SLOT_BASE + i : 0),
	    .guest_phys_addr = s->gpa[i],
	    .memory_size = on ? s->gpa[i + 1] - s->gpa[i] : 0,
	    .userspace_addr = (uintptr_t)(s->host + s->gpa[i]),
	};

	if (s->present[as][i] == on)
		return 0;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
		return error_errno(-errno,
				   "smm: KVM_SET_USER_MEMORY_REGION 0x%llx+0x%llx (space %u)",
				   (unsigned long long)r.guest_phys_addr,
				   (unsigned long long)(s->gpa[i + 1] - s->gpa[i]), as);
	s->present[as][i] = on;
	return 0;
}

/* Lock held. */
static int smm_apply(struct vm *vm, const struct device_smram *v)
{
	static const uint64_t tseg[4] = {DEVICE_SMM_TSEG_MAX, DEVICE_SMM_TSEG_8M,
					 DEVICE_SMM_TSEG_2M, DEVICE_SMM_TSEG_1M};
	int r = smm_slot(vm, 0, SMM_PIECE_ASEG, v->aseg_normal);

	if (!r)
		r = smm_slot(vm, 1, SMM_PIECE_ASEG, v->aseg_smm);
	/* piece TSEG + k lies in the last tseg[k] bytes: hidden when the size
	 * in force reaches it */
	for (unsigned int k = 0; !r && k < 4; k++)
		r = smm_slot(vm, 0, SMM_PIECE_TSEG + k, v->tseg < tseg[k]);
	/* and from the devices' DMA, as the vCPUs outside SMM */
	guest_mem_set_smram(&vm->mem, vm->smm->gpa[SMM_PIECES] - v->tseg, vm->smm->gpa[SMM_PIECES],
			    !v->aseg_normal);
	return r;
}

int vm_smm_setup(struct vm *vm)
{
	const struct guest_mem_region *low = &vm->mem.r[0];
	const struct device_smram reset = {false, false, 0};
	struct vm_smm *s;
	int r;

	if (ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_X86_SMM) <= 0 ||
	    ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MULTI_ADDRESS_SPACE) < 2)
		return error_errno(
		    -ENOTSUP,
		    "features.smm: this host's KVM%s has no SMM (KVM_CAP_X86_SMM, "
		    "KVM_CAP_MULTI_ADDRESS_SPACE): a VM with SMM (secure boot as "
		    "KubeVirt runs it) cannot run here (docs/hosts.md); VMLET_OVMF_SMM=0 "
		    "runs OVMF without SMM, its variable store open to the guest's kernel",
		    vm->kvm_pvm ? " (kvm-pvm)" : "");
	if (vm->mem.n < 1 || low->gpa || low->size < SMM_LOW_MIN)
		return error_errno(-EINVAL, "smm: low RAM must start at 0 and hold %llu MiB",
				   (unsigned long long)(SMM_LOW_MIN >> 20));
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->host = low->host;
	s->gpa[1] = 0xa0000, s->gpa[2] = 0xc0000;
	s->gpa[3] = low->size - DEVICE_SMM_TSEG_MAX, s->gpa[4] = low->size - DEVICE_SMM_TSEG_8M;
	s->gpa[5] = low->size - DEVICE_SMM_TSEG_2M, s->gpa[6] = low->size - DEVICE_SMM_TSEG_1M;
	s->gpa[7] = low->size;
	vm->smm = s;
	r = 0;
	for (unsigned int as = 0; !r && as < 2; as++)
		for (unsigned int i = 0; !r && i < SMM_PIECES; i++)
			if (i != SMM_PIECE_ASEG)
				r = smm_slot(vm, as, i, true);
	if (!r)
		r = smm_apply(vm, &reset);
	for (unsigned int i = 1; !r && i < vm->mem.n; i++)
		r = vm_smm_mirror(vm, i, 0, vm->mem.r[i].gpa, vm->mem.r[i].size, vm->mem.r[i].host);
	return r;
}

int vm_smm_mirror(struct vm *vm, unsigned int slot, uint32_t flags, uint64_t gpa, uint64_t size,
		  void *host)
{
	struct kvm_userspace_memory_region r = {
	    .slot = SMM_AS1 | slot,
	    .flags = flags,
	    .guest_phys_addr = gpa,
	    .memory_size = size,
	    .userspace_addr = (uintptr_t)host,
	};

	if (!vm->smm)
		return 0;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
		return error_errno(-errno, "smm: KVM_SET_USER_MEMORY_REGION slot %u in SMM", slot);
	return 0;
}

void vm_smm_release(struct vm *vm)
{
	if (!vm->smm)
		return;
	pthread_mutex_destroy(&vm->smm->lock);
	free(vm->smm);
	vm->smm = NULL;
}

int device_smm_map(struct vm *vm, const struct device_smram *v)
{
	int r;

	if (!vm || !vm->smm)
		return -ENODEV;
	pthread_mutex_lock(&vm->smm->lock);
	r = smm_apply(vm, v);
	pthread_mutex_unlock(&vm->smm->lock);
	return r;
}

/* immediate_exit before the pending flag: the vCPU that takes the SMI
 * (vcpu.c) clears an immediate_exit this post set, never leaves one set */
static void smm_post(struct vcpu *v, bool self)
{
	if (!self && v->run)
		__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&v->smi_pending, 1, __ATOMIC_SEQ_CST);
	if (!self && v->started)
		pthread_kill(v->thread, THREAD_KICK_SIGNAL);
}

int device_smm_raise(struct vm *vm, bool all)
{
	const struct vcpu *self = device_vcpu();

	if (!vm || !vm->smm)
		return -ENODEV;
	if (!all) {
		if (!self)
			return -EINVAL;
		if (ioctl(self->fd, KVM_SMI) < 0)
			return error_errno(-errno, "vcpu%u: KVM_SMI", self->index);
		return 0;
	}
	for (uint32_t i = 0; i < vm->n_vcpus; i++)
		smm_post(&vm->vcpus[i], &vm->vcpus[i] == self);
	return 0;
}
