/* SPDX-License-Identifier: MIT */
/*
 * snapshot.h - save a running VM into a snapshot and start a VM from one
 * (docs/snapshot.md has the format and what is and is not captured).
 *
 * Save (main thread, from the control socket's `snapshot` verb): the VM
 * is paused (every vCPU completes the port or MMIO access it was in and is
 * held), then each vCPU's registers, the in-kernel irqchip, PIT and KVM
 * clock, every device's state (device.h save(): a device without it makes
 * the snapshot refuse, naming it) and the resolved config go to state_fd,
 * guest RAM to mem_fd as a sparse image (zero pages are holes). Both fds
 * come from the client, which created the files. Then the VM resumes, or
 * with resume false ends (exit status 0, no restart).
 *
 * Restore (setup, before the sandbox): in place of vm_boot(), for a VM
 * created from the same config: the files are checked completely first
 * (snap_file.h), then guest RAM is mapped from DIR/memory copy-on-write
 * (MAP_PRIVATE: VMs restored from one snapshot share its unwritten pages)
 * and the state is loaded. Any mismatch (config, vCPUs, memory layout,
 * CPU vendor, XSAVE features the host lacks) is refused with the reason.
 */
#ifndef VMLET_SNAPSHOT_H
#define VMLET_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;
struct snap_buf;
struct snap_cur;

int snapshot_save(struct vm *vm, int state_fd, int mem_fd, bool resume);
/* dir: the snapshot directory; config_json: the VM's config as
 * spec_config_json() prints it (must equal the snapshot's). */
int snapshot_restore(struct vm *vm, const char *dir, const char *config_json);

/*
 * The pieces live migration (migrate.h) shares with the snapshot:
 * snapshot_state() writes the whole state file into out for a paused VM
 * whose devices are frozen (the clock read first), guest RAM into mem_fd
 * (mem_fd < 0: only the memory section's region table); user_paused: the
 * user had paused the guest (restored, it waits for a resume). snapshot_load()
 * checks data[0, len) as a restore does (snap_file_parse, the header
 * against this VM and config_json) and loads it; dfd: the snapshot
 * directory whose memory file is mapped, or -1 when guest RAM already
 * holds the pages (the regions must still match). freeze/thaw hold and
 * release every device's threads (device.h; freeze: all or none).
 */
struct kvm_clock_data;
int snapshot_state(struct vm *vm, const struct kvm_clock_data *clock, bool user_paused, int mem_fd,
		   struct snap_buf *out);
int snapshot_load(struct vm *vm, const void *data, size_t len, int dfd, const char *config_json);
int snapshot_freeze_devices(struct vm *vm);
/* DIR/state of the directory dfd, whole (at most SNAP_MAX_STATE bytes),
 * into *out (malloc'd), not yet checked. 0 or -errno. */
int snap_read_state_at(int dfd, uint8_t **out, size_t *len);
void snapshot_thaw_devices(struct vm *vm);

/* snap_vcpu.c: one vCPU's state (vCPU held or not yet run) and the VM's
 * in-kernel chips and clock. 0 or -errno (logged). */
struct vcpu;
int snap_vcpu_save(struct vm *vm, struct vcpu *v, struct snap_buf *b);
int snap_vcpu_load(struct vm *vm, struct vcpu *v, struct snap_cur *c);
/*
 * The vCPU's SMM state in its saved events (KVM_VCPUEVENT_VALID_SMM: in
 * SMM, an SMI pending, SMM entered from an NMI handler, an INIT latched)
 * is something the guest could have made (pure): each a 0/1 flag;
 * smm_inside_nmi only in SMM; a VM without SMM (smm false) never in SMM
 * nor with an SMI pending; a VM with SMM has the SMM part (KVM always
 * reports it). 0, or -EINVAL naming the value in why.
 */
struct kvm_vcpu_events;
int snap_vcpu_events_check(const struct kvm_vcpu_events *ev, bool smm, const char **why);
/* The KVM clock, read first (right after the pause: the guest's time
 * stops there, not after the seconds that saving its state may take),
 * and each vCPU's TSC beside it (saved in place of the later reading). */
struct kvm_clock_data;
int snap_clock_save(struct vm *vm, struct kvm_clock_data *clock);
/* run_flags: SNAP_RUN_PAUSED when the user had paused the guest (ctl
 * pause); the load sets vm->start_paused from it (its vCPUs then wait for
 * a resume). */
#define SNAP_RUN_PAUSED 1u
int snap_chips_save(struct vm *vm, const struct kvm_clock_data *clock, uint32_t run_flags,
		    struct snap_buf *b);
int snap_chips_load(struct vm *vm, struct snap_cur *c);
/* The clock last: each vCPU's TSC and TSC deadline (held back by
 * snap_vcpu_load()), then at once the clock. */
int snap_clock_load(struct vm *vm, struct snap_cur *c);

#endif /* VMLET_SNAPSHOT_H */
