/* SPDX-License-Identifier: MIT */
/*
 * snap_vcpu.c - KVM's state of a vCPU, of the in-kernel irqchip and PIT,
 * and of the KVM clock, as snapshot items (snapshot.h). The kernel's own
 * structs are stored as they are (their layout is KVM's stable ABI); a
 * load requires each at exactly its size, in order.
 *
 * Load order follows what KVM needs: general and FPU/XSAVE registers,
 * XCRs, sregs (CR4 before the MSRs that depend on it), the LAPIC (its
 * mode before the TSC-deadline MSR), the MSRs, pending events, the MP
 * state, debug registers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "arch/arch.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"

enum {
	VS_REGS = 1,
	VS_XSAVE,
	VS_XCRS,
	VS_SREGS,
	VS_LAPIC,
	VS_MSRS,
	VS_EVENTS,
	VS_MP_STATE,
	VS_DEBUGREGS,
};
enum { CS_CLOCK = 1, CS_PIC_MASTER, CS_PIC_SLAVE, CS_IOAPIC, CS_PIT, CS_RUN };

#define SNAP_MAX_MSRS		1024
#define MSR_IA32_TSC		0x10
#define MSR_IA32_TSC_DEADLINE	0x6e0
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01

/* KVM's list of MSRs to save and restore (KVM_GET_MSR_INDEX_LIST). */
static struct kvm_msr_list *msr_list(struct vm *vm)
{
	struct kvm_msr_list probe = {.nmsrs = 0}, *l;

	if (ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG)
		return NULL;
	if (!probe.nmsrs || probe.nmsrs > SNAP_MAX_MSRS)
		return NULL;
	l = calloc(1, sizeof(*l) + probe.nmsrs * sizeof(l->indices[0]));
	if (!l)
		return NULL;
	l->nmsrs = probe.nmsrs;
	if (ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, l) < 0) {
		free(l);
		return NULL;
	}
	return l;
}

/* One MSR of the vCPU into *val: 0, or -EIO when KVM has none. */
static int get_msr(struct vcpu *v, uint32_t index, uint64_t *val)
{
	struct {
		struct kvm_msrs h;
		struct kvm_msr_entry e;
	} one = {.h.nmsrs = 1, .e.index = index};

	if (ioctl(v->fd, KVM_GET_MSRS, &one) != 1)
		return -EIO;
	*val = one.e.data;
	return 0;
}

/* Every listed MSR the vCPU has (an index KVM refuses is left out). */
static int save_msrs(struct vm *vm, struct vcpu *v, struct snap_buf *b)
{
	struct kvm_msr_list *l = msr_list(vm);
	struct kvm_msrs *m;
	uint32_t i, n = 0;

	if (!l)
		return error_errno(-EIO, "snapshot: KVM_GET_MSR_INDEX_LIST failed");
	m = calloc(1, sizeof(*m) + l->nmsrs * sizeof(m->entries[0]));
	if (!m) {
		free(l);
		return -ENOMEM;
	}
	for (i = 0; i < l->nmsrs; i++) {
		uint64_t val;

		if (get_msr(v, l->indices[i], &val))
			continue;
		if (l->indices[i] == MSR_IA32_TSC && (v->clock_tsc_have & 1))
			val = v->clock_tsc[0]; /* the TSC at the clock's reading */
		m->entries[n++] = (struct kvm_msr_entry){.index = l->indices[i], .data = val};
	}
	m->nmsrs = n;
	snap_buf_item(b, VS_MSRS, m->entries, n * sizeof(m->entries[0]));
	free(m);
	free(l);
	return 0;
}

#define GET(req, tag, obj)                                                                         \
	do {                                                                                       \
		if (ioctl(v->fd, req, &(obj)) < 0)                                                 \
			return error_errno(-errno, "snapshot: vcpu%u: " #req, v->index);           \
		snap_buf_item(b, tag, &(obj), sizeof(obj));                                        \
	} while (0)

int snap_vcpu_save(struct vm *vm, struct vcpu *v, struct snap_buf *b)
{
	struct kvm_regs regs;
	struct kvm_xsave *xs;
	struct kvm_xcrs xcrs;
	struct kvm_sregs sregs;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events ev;
	struct kvm_mp_state mp;
	struct kvm_debugregs dr;
	int ret;

	GET(KVM_GET_REGS, VS_REGS, regs);
	xs = calloc(1, sizeof(*xs));
	if (!xs)
		return -ENOMEM;
	if (ioctl(v->fd, KVM_GET_XSAVE, xs) < 0) {
		free(xs);
		return error_errno(-errno, "snapshot: vcpu%u: KVM_GET_XSAVE", v->index);
	}
	snap_buf_item(b, VS_XSAVE, xs, sizeof(*xs));
	free(xs);
	GET(KVM_GET_XCRS, VS_XCRS, xcrs);
	GET(KVM_GET_SREGS, VS_SREGS, sregs);
	GET(KVM_GET_LAPIC, VS_LAPIC, lapic);
	ret = save_msrs(vm, v, b);
	if (ret)
		return ret;
	GET(KVM_GET_VCPU_EVENTS, VS_EVENTS, ev);
	if (vm->smm && !(ev.flags & KVM_VCPUEVENT_VALID_SMM))
		return error_errno(-ENOTSUP, "snapshot: vcpu%u: KVM does not report its SMM state",
				   v->index);
	GET(KVM_GET_MP_STATE, VS_MP_STATE, mp);
	GET(KVM_GET_DEBUGREGS, VS_DEBUGREGS, dr);
	return b->err;
}

#define PUT(req, tag, obj)                                                                         \
	do {                                                                                       \
		if (snap_cur_want(c, tag, &(obj), sizeof(obj)))                                    \
			return error_errno(-EBADMSG, "snapshot: vcpu%u: bad " #tag " item",        \
					   v->index);                                              \
		if (ioctl(v->fd, req, &(obj)) < 0)                                                 \
			return error_errno(-errno, "snapshot: vcpu%u: " #req, v->index);           \
	} while (0)

/* One MSR into the vCPU: one KVM refuses on this host is named. */
static int set_msr(struct vcpu *v, const struct kvm_msr_entry *e)
{
	struct {
		struct kvm_msrs h;
		struct kvm_msr_entry e;
	} one = {.h.nmsrs = 1, .e = *e};

	one.e.reserved = 0;
	if (ioctl(v->fd, KVM_SET_MSRS, &one) != 1)
		return error_errno(-EINVAL, "snapshot: vcpu%u: KVM refuses MSR 0x%x = 0x%llx",
				   v->index, one.e.index, (unsigned long long)one.e.data);
	return 0;
}

/*
 * The saved MSRs, one at a time, but the TSC and the TSC deadline (which
 * KVM arms against the TSC): those wait in v->clock_tsc for
 * snap_clock_load(). Written here, the TSC would run from this moment and
 * the kvmclock only from KVM_SET_CLOCK's, after the devices' loads: a
 * restored Linux then saw its TSC ahead of kvm-clock by that time (21 ms
 * in the nested L1 with a TPM) and its clocksource watchdog marked the
 * TSC unstable.
 */
static int load_msrs(struct vcpu *v, struct snap_cur *c)
{
	struct snap_cur body;
	struct kvm_msr_entry e;
	size_t n;
	int ret;

	if (snap_cur_want_any(c, VS_MSRS, &body) || body.left % sizeof(struct kvm_msr_entry) ||
	    body.left / sizeof(struct kvm_msr_entry) > SNAP_MAX_MSRS)
		return error_errno(-EBADMSG, "snapshot: vcpu%u: bad MSR list", v->index);
	n = body.left / sizeof(struct kvm_msr_entry);
	v->clock_tsc_have = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(&e, body.p + i * sizeof(e), sizeof(e));
		if (e.index == MSR_IA32_TSC || e.index == MSR_IA32_TSC_DEADLINE) {
			int k = e.index == MSR_IA32_TSC_DEADLINE;

			v->clock_tsc[k] = e.data;
			v->clock_tsc_have |= 1u << k;
			continue;
		}
		ret = set_msr(v, &e);
		if (ret)
			return ret;
	}
	return 0;
}

int snap_vcpu_events_check(const struct kvm_vcpu_events *ev, bool smm, const char **why)
{
	*why = NULL;
	if (!(ev->flags & KVM_VCPUEVENT_VALID_SMM))
		*why = smm ? "no SMM state for a VM with SMM" : NULL;
	else if ((ev->smi.smm | ev->smi.pending | ev->smi.smm_inside_nmi | ev->smi.latched_init) >
		 1)
		*why = "an SMM flag is neither 0 nor 1";
	else if (ev->smi.smm_inside_nmi && !ev->smi.smm)
		*why = "SMM entered from an NMI but not in SMM";
	else if (!smm && (ev->smi.smm || ev->smi.pending))
		*why = "in SMM or an SMI pending in a VM without SMM";
	return *why ? -EINVAL : 0;
}

int snap_vcpu_load(struct vm *vm, struct vcpu *v, struct snap_cur *c)
{
	struct kvm_regs regs;
	struct kvm_xsave *xs;
	struct kvm_xcrs xcrs;
	struct kvm_sregs sregs;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events ev;
	struct kvm_mp_state mp;
	struct kvm_debugregs dr;
	const char *why;
	int ret;

	PUT(KVM_SET_REGS, VS_REGS, regs);
	xs = calloc(1, sizeof(*xs));
	if (!xs)
		return -ENOMEM;
	ret = snap_cur_want(c, VS_XSAVE, xs, sizeof(*xs)) ? -EBADMSG : 0;
	if (!ret && ioctl(v->fd, KVM_SET_XSAVE, xs) < 0)
		ret = error_errno(-errno, "snapshot: vcpu%u: KVM_SET_XSAVE", v->index);
	free(xs);
	if (ret)
		return ret;
	PUT(KVM_SET_XCRS, VS_XCRS, xcrs);
	PUT(KVM_SET_SREGS, VS_SREGS, sregs);
	PUT(KVM_SET_LAPIC, VS_LAPIC, lapic);
	ret = load_msrs(v, c);
	if (ret)
		return ret;
	if (snap_cur_want(c, VS_EVENTS, &ev, sizeof(ev)))
		return error_errno(-EBADMSG, "snapshot: vcpu%u: bad VS_EVENTS item", v->index);
	if (snap_vcpu_events_check(&ev, vm->smm != NULL, &why))
		return error_errno(-EINVAL, "snapshot: vcpu%u: saved SMM state refused: %s",
				   v->index, why);
	if (ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
		return error_errno(-errno, "snapshot: vcpu%u: KVM_SET_VCPU_EVENTS", v->index);
	PUT(KVM_SET_MP_STATE, VS_MP_STATE, mp);
	PUT(KVM_SET_DEBUGREGS, VS_DEBUGREGS, dr);
	return 0;
}

/* CLOCK_MONOTONIC in ns (not vm_now_ns(): that would link all of vm.o
 * into the unit tests that use this file's checks, e.g. q35_smm_test) */
static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * The kvm-clock vCPU 0's guest last read, at the TSC read beside the clock
 * (vcpu->clock_tsc[0]): from its pvclock record (MSR_KVM_SYSTEM_TIME_NEW's
 * address), into *ns; -errno when it has none (no kvm-clock, a firmware)
 * or the record does not fit. KVM's clock (KVM_GET_CLOCK) and the guest's
 * extrapolation from its record drift apart between KVM's record updates:
 * 0.03 to 0.23 ms in the nested L1 (its clock marked TSC-stable even so),
 * a good part of the ~0.5 ms skew at which a restored Linux's clocksource
 * watchdog marks its TSC unstable. The record is guest memory: an answer
 * far from KVM's clock is not taken (the caller's check).
 */
static int guest_kvmclock(struct vm *vm, uint64_t *ns)
{
	struct vcpu *v = &vm->vcpus[0];
	uint64_t msr;
	const uint8_t *rec;

	if (!(v->clock_tsc_have & 1) || get_msr(v, MSR_KVM_SYSTEM_TIME_NEW, &msr) || !(msr & 1))
		return -ENOENT;
	rec = guest_mem_ptr(&vm->mem, msr & ~1ull, ARCH_PVCLOCK_SIZE);
	if (!rec)
		return -EFAULT;
	return arch_pvclock_ns(rec, v->clock_tsc[0], ns);
}

int snap_clock_save(struct vm *vm, struct kvm_clock_data *clock)
{
	uint64_t guest_ns;

	memset(clock, 0, sizeof(*clock));
	if (ioctl(vm->vm_fd, KVM_GET_CLOCK, clock) < 0)
		return error_errno(-errno, "snapshot: KVM_GET_CLOCK");
	/* each TSC at the same moment (save_msrs() saves these): read
	 * later, after the devices' freeze or migration's last pages, it
	 * would be ahead of the clock by that time on restore, and a
	 * restored Linux's clocksource watchdog marked its TSC unstable */
	for (uint32_t i = 0; i < vm->n_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		v->clock_tsc_have = get_msr(v, MSR_IA32_TSC, &v->clock_tsc[0]) == 0;
	}
	/* the clock as the guest sees it, where it differs (no master clock),
	 * within a second of KVM's */
	if (!guest_kvmclock(vm, &guest_ns) && guest_ns + 1000000000ull > clock->clock &&
	    guest_ns < clock->clock + 1000000000ull) {
		log_info("snapshot: kvm-clock %llu ns, the guest's %llu ns (%+lld)",
			 (unsigned long long)clock->clock, (unsigned long long)guest_ns,
			 (long long)(guest_ns - clock->clock));
		clock->clock = guest_ns;
	}
	return 0;
}

int snap_chips_save(struct vm *vm, const struct kvm_clock_data *clock, uint32_t run_flags,
		    struct snap_buf *b)
{
	struct kvm_irqchip chip[3];
	struct kvm_pit_state2 pit;

	snap_buf_item(b, CS_CLOCK, clock, sizeof(*clock));
	for (uint32_t i = 0; i < 3; i++) {
		memset(&chip[i], 0, sizeof(chip[i]));
		chip[i].chip_id = i; /* KVM_IRQCHIP_PIC_MASTER, _SLAVE, _IOAPIC */
		if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &chip[i]) < 0)
			return error_errno(-errno, "snapshot: KVM_GET_IRQCHIP %u", i);
		snap_buf_item(b, CS_PIC_MASTER + i, &chip[i], sizeof(chip[i]));
	}
	if (ioctl(vm->vm_fd, KVM_GET_PIT2, &pit) < 0)
		return error_errno(-errno, "snapshot: KVM_GET_PIT2");
	snap_buf_item(b, CS_PIT, &pit, sizeof(pit));
	snap_buf_item(b, CS_RUN, &run_flags, sizeof(run_flags));
	return b->err;
}

/* The chips (the clock item is skipped here: snap_clock_load()). */
int snap_chips_load(struct vm *vm, struct snap_cur *c)
{
	struct kvm_clock_data clock;
	struct kvm_irqchip chip;
	struct kvm_pit_state2 pit;
	uint32_t run = 0;

	if (snap_cur_want(c, CS_CLOCK, &clock, sizeof(clock)))
		return error_errno(-EBADMSG, "snapshot: bad clock item");
	for (uint32_t i = 0; i < 3; i++) {
		if (snap_cur_want(c, CS_PIC_MASTER + i, &chip, sizeof(chip)) || chip.chip_id != i)
			return error_errno(-EBADMSG, "snapshot: bad irqchip item %u", i);
		if (ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &chip) < 0)
			return error_errno(-errno, "snapshot: KVM_SET_IRQCHIP %u", i);
	}
	if (snap_cur_want(c, CS_PIT, &pit, sizeof(pit)))
		return error_errno(-EBADMSG, "snapshot: bad PIT item");
	if (ioctl(vm->vm_fd, KVM_SET_PIT2, &pit) < 0)
		return error_errno(-errno, "snapshot: KVM_SET_PIT2");
	/* the run state (absent in the snapshots of older builds: running) */
	if (c->left &&
	    (snap_cur_want(c, CS_RUN, &run, sizeof(run)) || (run & ~SNAP_RUN_PAUSED) || c->left))
		return error_errno(-EBADMSG, "snapshot: bad run state item");
	vm->start_paused = run & SNAP_RUN_PAUSED;
	return 0;
}

/*
 * The guest's kvmclock continues from the value it had when saved: time
 * the snapshot spent on disk is not seen as elapsed by its monotonic
 * clocks (no jump, forwards or backwards); its wall clock is behind by
 * that time until it steps it (NTP, the RTC). KVM_CLOCK_REALTIME and the
 * other flags are not passed back: they would make KVM add the elapsed
 * host time.
 */
int snap_clock_load(struct vm *vm, struct snap_cur *c)
{
	struct kvm_clock_data clock, set = {0};
	uint64_t t_tsc;

	if (snap_cur_want(c, CS_CLOCK, &clock, sizeof(clock)))
		return error_errno(-EBADMSG, "snapshot: bad clock item");
	set.clock = clock.clock;
	t_tsc = mono_ns();
	for (uint32_t i = 0; i < vm->n_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		for (int k = 0; k < 2; k++) { /* the TSC before its deadline */
			struct kvm_msr_entry e = {
			    .index = k ? MSR_IA32_TSC_DEADLINE : MSR_IA32_TSC,
			    .data = v->clock_tsc[k],
			};
			int ret = (v->clock_tsc_have >> k & 1) ? set_msr(v, &e) : 0;

			if (ret)
				return ret;
		}
		v->clock_tsc_have = 0;
	}
	/* the TSC has run since its write: so does the clock (the writes
	 * took 0.05 to 3.3 ms in a loaded nested L1) */
	set.clock += mono_ns() - t_tsc;
	if (ioctl(vm->vm_fd, KVM_SET_CLOCK, &set) < 0)
		return error_errno(-errno, "snapshot: KVM_SET_CLOCK");
	return 0;
}
