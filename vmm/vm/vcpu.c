/* SPDX-License-Identifier: MIT */
/*
 * vcpu.c - vCPU setup (CPUID, MSRs, LAPIC, mp_state) and the per-vCPU
 * thread: KVM_RUN, exit dispatch to the PIO/MMIO buses, and the ways a
 * guest ends (shutdown, internal error, system event).
 *
 * Stopping: vcpu_kick() sets kvm_run.immediate_exit and sends
 * THREAD_KICK_SIGNAL to the thread. If the thread is inside KVM_RUN the
 * signal makes it return EINTR; if it is about to enter, immediate_exit
 * makes KVM_RUN return EINTR at once, so there is no window in which a kick
 * is lost.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/arch.h"
#include "vmm/util/log.h"
#include "vmm/util/thread.h"
#include "vmm/util/timings.h"
#include "vmm/vm/dirty_ring.h"
#include "vmm/vm/hyperv.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"

#define VCPU_MAX_MSRS  64
#define APIC_LVT0      0x350
#define APIC_LVT1      0x360
#define APIC_DM_NMI    0x400
#define APIC_DM_EXTINT 0x700

static void vcpu_kick_handler(int sig)
{
	(void)sig; /* only here to interrupt KVM_RUN */
}

int vcpu_signals_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vcpu_kick_handler; /* no SA_RESTART: KVM_RUN must return */
	sigemptyset(&sa.sa_mask);
	return sigaction(THREAD_KICK_SIGNAL, &sa, NULL) ? -errno : 0;
}

static int vcpu_set_cpuid(struct vcpu *v)
{
	struct vm *vm = v->vm;
	size_t cap = vm->host_cpuid->nent + 64, n = 0;
	struct kvm_cpuid2 *c;
	int ret;

	c = calloc(1, sizeof(*c) + cap * sizeof(c->entries[0]));
	if (!c)
		return -ENOMEM;
	ret = arch_cpuid_build(&vm->topo, vm->vendor, v->apic_id, vm->host_cpuid->entries,
			       vm->host_cpuid->nent, c->entries, cap, &n);
	if (ret) {
		error_errno(ret, "vcpu%u: cannot build CPUID", v->index);
		goto out;
	}
	ret = hv_cpuid(vm, c->entries, &n, cap);
	if (ret) {
		error_errno(ret, "vcpu%u: cannot build the Hyper-V CPUID leaves", v->index);
		goto out;
	}
	c->nent = n;
	if (ioctl(v->fd, KVM_SET_CPUID2, c) < 0)
		ret = error_errno(-errno, "vcpu%u: KVM_SET_CPUID2", v->index);
out:
	free(c);
	return ret;
}

static int vcpu_set_msrs(struct vcpu *v)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[VCPU_MAX_MSRS];
	} m;
	int n, set;

	memset(&m, 0, sizeof(m));
	n = arch_msrs_initial(v->index, m.e, VCPU_MAX_MSRS);
	if (n < 0)
		return error_errno(n, "vcpu%u: cannot build MSRs", v->index);
	m.hdr.nmsrs = n;
	set = ioctl(v->fd, KVM_SET_MSRS, &m);
	if (set < 0)
		return error_errno(-errno, "vcpu%u: KVM_SET_MSRS", v->index);
	if (set < n)
		return error_errno(-EINVAL, "vcpu%u: KVM_SET_MSRS refused MSR 0x%x", v->index,
				   m.e[set].index);
	return 0;
}

/*
 * KVM builds its APIC-ID -> vCPU map for IPI delivery when a LAPIC is reset
 * or written, and a vCPU is not yet "online" while KVM_CREATE_VCPU resets
 * its LAPIC: after the last KVM_CREATE_VCPU the map lacks the last vCPU,
 * and INIT/SIPI from the BSP would never reach it (seen with 2 vCPUs). One
 * KVM_SET_LAPIC after every vCPU exists rebuilds the map with all of them;
 * the BSP's is the one we need anyway: its LINT0 delivers the PIC (ExtINT)
 * and LINT1 NMIs, as firmware leaves them (Intel SDM Vol. 3A §10.5.1; MP
 * spec virtual-wire mode). A write per vCPU would rebuild the map once per
 * vCPU: quadratic in the vCPU count.
 */
int vcpu_lapic_init(struct vcpu *v)
{
	struct kvm_lapic_state l;
	uint32_t lvt;

	if (ioctl(v->fd, KVM_GET_LAPIC, &l) < 0)
		return error_errno(-errno, "vcpu%u: KVM_GET_LAPIC", v->index);
	memcpy(&lvt, &l.regs[APIC_LVT0], 4);
	lvt = (lvt & ~0x700u & ~(1u << 16)) | APIC_DM_EXTINT;
	memcpy(&l.regs[APIC_LVT0], &lvt, 4);
	memcpy(&lvt, &l.regs[APIC_LVT1], 4);
	lvt = (lvt & ~0x700u & ~(1u << 16)) | APIC_DM_NMI;
	memcpy(&l.regs[APIC_LVT1], &lvt, 4);
	if (ioctl(v->fd, KVM_SET_LAPIC, &l) < 0)
		return error_errno(-errno, "vcpu%u: KVM_SET_LAPIC", v->index);
	return 0;
}

int vcpu_create(struct vm *vm, uint32_t index, struct vcpu *v)
{
	struct kvm_mp_state mp = {.mp_state = KVM_MP_STATE_UNINITIALIZED};
	int ret;

	memset(v, 0, sizeof(*v));
	v->vm = vm;
	v->index = index;
	v->apic_id = vm->apic_ids[index];
	v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)v->apic_id);
	if (v->fd < 0) {
		ret =
		    error_errno(-errno, "vcpu%u: KVM_CREATE_VCPU (APIC ID %u)", index, v->apic_id);
		v->fd = -1;
		return ret;
	}
	v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		ret = error_errno(-errno, "vcpu%u: mmap kvm_run", index);
		v->run = NULL;
		goto out_destroy;
	}
	ret = vm_dirty_ring_map(v);
	if (!ret)
		ret = hv_vcpu_init(v); /* before CPUID: KVM's eVMCS version goes in it */
	if (!ret)
		ret = vcpu_set_cpuid(v);
	if (!ret)
		ret = vcpu_set_msrs(v);
	if (ret)
		goto out_destroy;
	if (index != 0 && ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0) {
		ret = error_errno(-errno, "vcpu%u: KVM_SET_MP_STATE", index);
		goto out_destroy;
	}
	return 0;
out_destroy:
	vcpu_destroy(v);
	return ret;
}

static void vcpu_pio(struct vcpu *v)
{
	struct kvm_run *r = v->run;
	uint8_t *data = (uint8_t *)r + r->io.data_offset;
	uint32_t i;

	/* rep ins/outs arrive as one exit with count elements */
	for (i = 0; i < r->io.count; i++, data += r->io.size) {
		if (r->io.direction == KVM_EXIT_IO_OUT)
			bus_write(&v->vm->pio, r->io.port, data, r->io.size);
		else
			bus_read(&v->vm->pio, r->io.port, data, r->io.size);
	}
}

static void vcpu_mmio(struct vcpu *v)
{
	struct kvm_run *r = v->run;

	if (r->mmio.is_write)
		bus_write(&v->vm->mmio, r->mmio.phys_addr, r->mmio.data, r->mmio.len);
	else if (bus_read(&v->vm->mmio, r->mmio.phys_addr, r->mmio.data, r->mmio.len))
		memset(r->mmio.data, 0xff, sizeof(r->mmio.data));
}

void vcpu_log_regs(struct vcpu *v)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0 || ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		return;
	if (v->run->exit_reason == KVM_EXIT_SHUTDOWN && arch_regs_is_reset(&regs, &sregs)) {
		log_warn(
		    "vcpu%u: no registers: KVM reset the vCPU at the triple fault (as on "
		    "AMD), the state it faulted in is lost; see the guest's last console lines",
		    v->index);
		return;
	}
	log_warn("vcpu%u: rip=0x%llx rsp=0x%llx rflags=0x%llx cs=0x%x cr0=0x%llx cr3=0x%llx "
		 "cr4=0x%llx efer=0x%llx%s",
		 v->index, (unsigned long long)regs.rip, (unsigned long long)regs.rsp,
		 (unsigned long long)regs.rflags, sregs.cs.selector, (unsigned long long)sregs.cr0,
		 (unsigned long long)sregs.cr3, (unsigned long long)sregs.cr4,
		 (unsigned long long)sregs.efer,
		 (v->run->flags & KVM_RUN_X86_SMM) ? " (in SMM)" : "");
}

/* The instruction KVM could not emulate, when it says which (the
 * emulation_failure overlay: flags, then size and bytes): "f0 48 0f c7 ...". */
static size_t vcpu_failed_insn(const struct kvm_run *r, char *buf, size_t cap)
{
	size_t off = 0, n = r->emulation_failure.insn_size;

	if (r->internal.suberror != KVM_INTERNAL_ERROR_EMULATION || r->internal.ndata < 3 ||
	    !(r->emulation_failure.flags & KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES))
		return 0;
	if (n > sizeof(r->emulation_failure.insn_bytes))
		n = sizeof(r->emulation_failure.insn_bytes);
	off += (size_t)snprintf(buf, cap, ", instruction bytes");
	for (size_t i = 0; i < n && off + 4 < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, " %02x",
					r->emulation_failure.insn_bytes[i]);
	return off;
}

static void vcpu_internal_error(struct vcpu *v)
{
	struct kvm_run *r = v->run;
	char buf[256] = "";
	size_t off = 0;
	uint32_t i;

	if (!vcpu_failed_insn(r, buf, sizeof(buf))) {
		for (i = 0; i < r->internal.ndata && i < 16 && off < sizeof(buf) - 20; i++)
			off +=
			    snprintf(buf + off, sizeof(buf) - off, "%s0x%llx", i ? " " : ", data ",
				     (unsigned long long)r->internal.data[i]);
	}
	log_warn("vcpu%u: KVM internal error, suberror %u%s%s", v->index, r->internal.suberror,
		 r->internal.suberror == KVM_INTERNAL_ERROR_EMULATION
		     ? " (instruction emulation failed)"
		     : "",
		 buf);
	if (v->vm->kvm_pvm)
		log_warn("vcpu%u: this host's KVM is kvm-pvm: it emulates guest kernel code and "
			 "cannot run all of a stock kernel or firmware (SSE, x87 and more at CPL0; "
			 "docs/hosts.md): use a host with hardware KVM, or tests/nested's "
			 "emulated host",
			 v->index);
	vcpu_log_regs(v);
}

static enum vm_exit_reason vcpu_system_event(struct vcpu *v)
{
	switch (v->run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		log_info("vcpu%u: guest requested power-off", v->index);
		return VM_EXIT_POWEROFF;
	case KVM_SYSTEM_EVENT_RESET:
		log_info("vcpu%u: guest requested reset", v->index);
		return VM_EXIT_REBOOT;
	default:
		log_warn("vcpu%u: guest system event %u (crash)", v->index,
			 v->run->system_event.type);
		return VM_EXIT_CRASH;
	}
}

/* Handle one exit; returns VM_EXIT_NONE to keep running. */
static enum vm_exit_reason vcpu_handle_exit(struct vcpu *v)
{
	struct kvm_run *r = v->run;

	switch (r->exit_reason) {
	case KVM_EXIT_IO:
		vcpu_pio(v);
		return VM_EXIT_NONE;
	case KVM_EXIT_MMIO:
		vcpu_mmio(v);
		return VM_EXIT_NONE;
	case KVM_EXIT_INTR:
	case KVM_EXIT_HLT:
	case KVM_EXIT_IRQ_WINDOW_OPEN:
		return VM_EXIT_NONE;
	case KVM_EXIT_SHUTDOWN:
		log_warn("vcpu%u: guest triple fault (shutdown)", v->index);
		vcpu_log_regs(v);
		return VM_EXIT_CRASH;
	case KVM_EXIT_INTERNAL_ERROR:
		vcpu_internal_error(v);
		return VM_EXIT_CRASH;
	case KVM_EXIT_FAIL_ENTRY:
		log_warn("vcpu%u: KVM entry failed, hardware reason 0x%llx", v->index,
			 (unsigned long long)r->fail_entry.hardware_entry_failure_reason);
		vcpu_log_regs(v);
		return VM_EXIT_CRASH;
	case KVM_EXIT_SYSTEM_EVENT:
		return vcpu_system_event(v);
	case KVM_EXIT_HYPERV:
		hv_vcpu_exit(v);
		return VM_EXIT_NONE;
	case KVM_EXIT_DIRTY_RING_FULL: /* a migration harvests it */
		vm_dirty_ring_full(v);
		return VM_EXIT_NONE;
	default:
		log_warn("vcpu%u: unhandled KVM exit %u", v->index, r->exit_reason);
		vcpu_log_regs(v);
		return VM_EXIT_CRASH;
	}
}

/*
 * Before a pause holds the vCPU: one KVM_RUN with immediate_exit set, in
 * which KVM completes the port or MMIO access the last exit handed us
 * (the value of an IN lands in the register) and returns EINTR without
 * entering the guest (KVM's API: "complete pending operations"). Its
 * registers are then whole for a snapshot. True when that produced
 * another exit (a string I/O that goes on), which was handled.
 */
static bool vcpu_complete(struct vcpu *v)
{
	enum vm_exit_reason why;
	int r;

	__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	r = ioctl(v->fd, KVM_RUN, 0);
	vm_coalesced_drain(v->vm, v->run);
	if (r < 0)
		return false;
	why = vcpu_handle_exit(v);
	if (why != VM_EXIT_NONE)
		vm_request_exit(v->vm, why);
	return true;
}

/*
 * An SMI posted for this vCPU (smm.c, device_smm_raise): KVM_SMI from this thread
 * (a vCPU ioctl from another would wait for this one's KVM_RUN to end),
 * then the kick's immediate_exit is cleared, unless a pause or the VM's
 * end came meanwhile (the loop's top then sees it). True: go to the top.
 */
static bool vcpu_take_smi(struct vcpu *v)
{
	if (!__atomic_exchange_n(&v->smi_pending, 0, __ATOMIC_SEQ_CST))
		return false;
	if (ioctl(v->fd, KVM_SMI) < 0)
		log_warn("vcpu%u: KVM_SMI: %s", v->index, strerror(errno));
	__atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
	if (vm_is_paused(v->vm) || vm_exit_reason(v->vm) != VM_EXIT_NONE) {
		__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
		return true;
	}
	return false;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct vm *vm = v->vm;
	enum vm_exit_reason why;
	bool ran = false;
	int r;

	device_set_vcpu(v);
	while (vm_exit_reason(vm) == VM_EXIT_NONE) {
		if (vm_is_paused(vm)) { /* vmlet ctl pause: hold here */
			if (ran && vcpu_complete(v))
				continue; /* an exit to handle first */
			vm_pause_point(v);
			continue;
		}
		if (vcpu_take_smi(v))
			continue;
		if (!ran && v->index == 0 && !vm->t_first_run) {
			vm->t_first_run = vm_now_ns();
			timings_mark(TIMINGS_FIRST_RUN);
		}
		r = ioctl(v->fd, KVM_RUN, 0);
		/* the guest's coalesced writes, before this exit or a pause */
		vm_coalesced_drain(vm, v->run);
		if (r < 0) {
			/* EINTR: kicked (the loop condition decides);
			 * EAGAIN: an AP after INIT, waiting for its SIPI */
			if (errno == EINTR || errno == EAGAIN)
				continue;
			error_errno(-errno, "vcpu%u: KVM_RUN", v->index);
			vm_request_exit(vm, VM_EXIT_CRASH);
			break;
		}
		if (!ran && v->index == 0)
			vm_bsp_ran(vm);
		ran = true;
		__atomic_add_fetch(
		    &v->exits[v->run->exit_reason < VCPU_EXIT_STATS ? v->run->exit_reason
								    : VCPU_EXIT_STATS - 1],
		    1, __ATOMIC_RELAXED);
		why = vcpu_handle_exit(v);
		if (why != VM_EXIT_NONE)
			vm_request_exit(vm, why);
	}
	return NULL;
}

int vcpu_start_all(struct vcpu *vcpus, uint32_t n)
{
	struct thread_spec *specs = calloc(n ? n : 1, sizeof(*specs));
	uint32_t i;
	int ret;

	if (!specs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct vcpu *v = &vcpus[n - 1 - i];

		snprintf(specs[i].name, sizeof(specs[i].name), "vcpu%u", v->index);
		specs[i].fn = vcpu_thread;
		specs[i].arg = v;
	}
	ret = thread_start_all(THREAD_VCPU, specs, n);
	for (i = 0; i < n; i++) {
		struct vcpu *v = &vcpus[n - 1 - i];

		if (specs[i].err)
			continue;
		v->thread = specs[i].thread;
		v->started = true;
	}
	free(specs);
	if (ret)
		error_errno(ret, "vcpu: cannot start the vCPU threads");
	return ret;
}

void vcpu_kick(struct vcpu *v)
{
	if (!v->run)
		return;
	__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	if (v->started)
		pthread_kill(v->thread, THREAD_KICK_SIGNAL);
}

void vcpu_destroy(struct vcpu *v)
{
	if (v->started) {
		vcpu_kick(v);
		pthread_join(v->thread, NULL);
		v->started = false;
	}
	if (v->run)
		munmap(v->run, v->vm->run_size);
	vm_dirty_ring_unmap(v);
	if (v->fd >= 0)
		close(v->fd);
	v->run = NULL;
	v->fd = -1;
}
