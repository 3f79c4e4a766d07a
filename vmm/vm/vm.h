/* SPDX-License-Identifier: MIT */
/*
 * vm.h - one virtual machine on /dev/kvm: guest memory, buses, in-kernel
 * irqchip, vCPUs, devices and the main event loop.
 *
 * Lifecycle (all on the main thread):
 *   vm_create()   open /dev/kvm, create the VM, memory slots, irqchip + PIT,
 *                 devices (table order) and the vCPUs (not yet running)
 *   vm_boot()     load the kernel / PVH ELF, ACPI tables, boot registers
 *                 (vmm/boot/boot.c)
 *   vm_run()      start one thread per vCPU, run the event loop until the
 *                 VM ends; returns why (enum vm_exit_reason)
 *   vm_destroy()  join threads, destroy devices, close fds, free memory
 */
#ifndef VMLET_VM_H
#define VMLET_VM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "vmm/vm/bus.h"
#include "vmm/vm/device.h"
#include "vmm/util/event.h"
#include "vmm/vm/guest_mem.h"

#define VM_MAX_STAMPS 16

struct vm_config;
struct vcpu;
struct irq_state;
struct vm_smm;

#define VM_MAX_COUNTERS 64

struct vm_options {
	enum arch_cpu_vendor vendor;
	bool vendor_set; /* false: the host's vendor */
	struct vm_console console;
	/* A built-in payload instead of cfg->kernel_path (the probe). */
	const uint8_t *payload;
	size_t payload_len;
	/* --firmware: an external PVH firmware ELF for EFI boot (NULL: the
	 * built-in one) */
	const char *firmware;
	/* A built-in PVH module instead of cfg->initrd_path (the probe
	 * handed to the EFI firmware) */
	const uint8_t *module;
	size_t module_len;
	/* A BIOS VM boots the payload (a PVH ELF) through SeaBIOS and QEMU's
	 * PVH option ROM instead of directly (vmlet probe, bios_boot.h) */
	bool bios_payload;
	/* the EFI variable store file when cfg->efi_persistent */
	const char *efi_vars;
	/* otherwise, when efi_vars_volatile: the store in the open file
	 * efi_vars_fd, which outlives this VM but not vmlet (efi_vars.h) */
	bool efi_vars_volatile;
	int efi_vars_fd;
	/* OVMF (ovmf_boot.h): the firmware's code image, mapped read-only
	 * below 4 GiB on a q35-like platform (NULL: not an OVMF VM), the
	 * per-VM variable store file mapped below it, the image it is
	 * created from, and whether it is created afresh at each start */
	const char *flash_code;
	const char *flash_vars;
	const char *flash_vars_template;
	bool flash_vars_fresh;
	/* devices.tpm.persistent: the TPM's state directory; else, when
	 * tpm_state_kept, its state in the open file tpm_state_fd, which
	 * outlives this VM (device.h) */
	const char *tpm_state;
	bool tpm_state_kept;
	int tpm_state_fd;
	/* --user (device.h: device_firmware.run_as_*) */
	bool run_as_set;
	uid_t run_as_uid;
	gid_t run_as_gid;
	/* SMM (vmm/vm/smm.h, features.smm on an OVMF VM): the SMM address
	 * space, SMRAM on the q35 MCH, SMIs through the APM port, and the
	 * variable flash writable only from SMM */
	bool smm;
	/* the virtio-serial channels' host sockets: PREFIX + NAME (NULL: no
	 * sockets; device_env.channel_prefix) */
	const char *channel_prefix;
	/* --dirty-ring: entries of KVM's dirty ring per vCPU, DIRTY_RING_AUTO
	 * or DIRTY_RING_OFF (vmm/vm/dirty_ring.h) */
	uint32_t dirty_ring;
};

struct vm {
	const struct vm_config *cfg;
	struct vm_options opt;
	int kvm_fd, vm_fd;
	size_t run_size; /* KVM_GET_VCPU_MMAP_SIZE */
	bool kvm_pvm;	 /* the host's KVM is kvm-pvm (kvm_diag_host_pvm()) */
	struct guest_mem mem;
	struct bus pio, mmio;
	struct event_loop loop;
	struct irq_state *irq;

	struct arch_topology topo;
	enum arch_cpu_vendor vendor;
	struct kvm_cpuid2 *host_cpuid; /* KVM_GET_SUPPORTED_CPUID + extras */
	bool tsc_deadline;	       /* KVM_CAP_TSC_DEADLINE_TIMER: CPUID.1:ECX[24] */
	struct arch_hv hv;	       /* Hyper-V enlightenments (vmm/vm/hyperv.h) */
	struct kvm_cpuid2 *hv_sup;     /* KVM_GET_SUPPORTED_HV_CPUID, with hv on */
	char cpu_brand[49];	       /* the guest's 0x8000_0002..4 ("" none) */
	uint32_t n_vcpus;
	uint32_t *apic_ids; /* by vCPU index */
	struct vcpu *vcpus;
	struct vm_smm *smm; /* vmm/vm/smm.c; NULL: no SMM */

	struct device_instance *devs;
	unsigned int n_devs;

	int exit_reason; /* enum vm_exit_reason, atomic */
	void (*power_button)(void *opaque);
	void *power_button_opaque;

	/* written by the BSP after its first KVM_RUN: the main loop then
	 * turns the PIT's lost-tick re-injection off (vm.c) */
	int pit_efd;

	/* Phase stamps, CLOCK_MONOTONIC ns, logged at debug level by
	 * vm_destroy() (scripts/bench-boot's phase split): the main thread's
	 * (vm_stamp), the BSP's first KVM_RUN and the first
	 * vm_request_exit(). */
	struct vm_stamp {
		const char *name;
		uint64_t ns;
	} stamps[VM_MAX_STAMPS];
	unsigned int n_stamps;
	uint64_t t_first_run, t_end;

	pthread_mutex_t capture_lock; /* VM_CONSOLE_CAPTURE buffer */
	char *capture;
	size_t capture_len, capture_cap;

	/* The pause (vmm/vm/vm_pause.c). */
	pthread_mutex_t pause_lock;
	pthread_cond_t pause_cond;
	int paused;	     /* atomic */
	unsigned int parked; /* vCPUs held by the pause, under pause_lock */
	/* Why the VM is paused (device_pause_vm(); "" = by the user), a pause a
	 * device thread asked for, and the count of pause ends (resume or the
	 * VM's end) its threads wait on: all under pause_lock. */
	char pause_reason[32];
	char pause_message[256];
	bool pause_wanted;
	unsigned int resume_gen;
	/* What the control socket drives (vmm/ctl/vm_side.c). */
	int console_client; /* attached console connection + 1, 0 = none; atomic */
	void (*console_input)(void *opaque, const void *buf, size_t len);
	void *console_input_opaque;
	void (*console_output)(void *opaque, const void *buf, size_t len);
	void *console_output_opaque;
	uint32_t pci_slots; /* device_set_pci_slots() */
	/* KVM's coalesced I/O ring (vm_coalesced.c): its page in a vCPU's run
	 * mapping (0: nothing registered; atomic), replayed under the lock */
	uint32_t coalesced_pg;
	pthread_mutex_t coalesced_lock;
	struct fw_cfg *fw_cfg; /* device_set_fw_cfg(): BIOS VMs only */
	/* dedicatedCpuPlacement (vmm/vm/vm_pin.c): host CPU of vCPU i, then the
	 * emulator threads' one; NULL = not pinned */
	int *pin_cpus;
	struct device_counters_src counters[VM_MAX_COUNTERS];
	unsigned int n_counters;
	/* The config as spec_config_json() printed it, recorded in a
	 * snapshot (vmm/snapshot/); NULL: this VM cannot be snapshotted.
	 * Owned by the caller of vm_create(). */
	const char *snapshot_config;
	/* The manifests that config came from, as the bytes of a snapshot's
	 * input section (vmm/snapshot/snap_input.h); NULL: none recorded.
	 * Owned by the caller of vm_create(). */
	const void *snapshot_inputs;
	size_t snapshot_inputs_len;
	/* The guest arrives paused (a live migration or a snapshot of a
	 * guest the user had paused, vmm/snapshot/): vm_run() holds the vCPUs as for
	 * startStrategy Paused until `vmlet ctl resume`. */
	bool start_paused;
	/* KVM's dirty ring (vmm/vm/dirty_ring.h): entries per vCPU, 0 when
	 * the VM has none (migration reads KVM's bitmap); vCPUs that found
	 * their ring full wait on ring_cond until ring_gen moves (a harvest) */
	uint32_t ring_entries;
	pthread_mutex_t ring_lock;
	pthread_cond_t ring_cond; /* CLOCK_MONOTONIC */
	unsigned int ring_gen;	  /* under ring_lock */
	int ring_waiting;	  /* vCPUs waiting; atomic */
	uint64_t ring_full_waits; /* KVM_EXIT_DIRTY_RING_FULL exits; atomic */
};

int vm_create(struct vm **out, const struct vm_config *cfg, const struct vm_options *opt);
/* A CPUID table KVM gives through ioctl req on fd (KVM_GET_SUPPORTED_CPUID,
 * KVM_GET_SUPPORTED_HV_CPUID), which do not say how many entries they need:
 * tried with nent entries, doubled on E2BIG up to max. 0 and *out (the
 * caller frees it), or -errno logged with name. */
int vm_kvm_cpuid2(int fd, unsigned long req, const char *name, unsigned int nent, unsigned int max,
		  struct kvm_cpuid2 **out);
/* (part of vm_create, vm_cpuid.c) vm->host_cpuid from KVM, with what vmlet
 * adds (vm->tsc_deadline, vm->cpu_brand), and vm->vendor: opt's, else the
 * host's. 0, or -errno logged (-EINVAL: a CPU model other than the host's
 * was asked for, naming the field). */
int vm_cpuid_setup(struct vm *vm);
int vm_boot(struct vm *vm);
/* (part of vm_boot) The SMBIOS tables (arch_smbios_build) for cfg into
 * guest memory at ARCH_SMBIOS_GPA, or just above `after` (the end of the
 * ACPI tables) when that is higher, for every VM: firmware and a directly
 * booted kernel both scan the BIOS area. 0, or -ENOSPC / -EINVAL (a
 * malformed firmware.uuid) with the reason logged. */
int boot_place_smbios(const struct vm_config *cfg, struct guest_mem *mem, gpa_t after);
/* Returns the enum vm_exit_reason (> 0) or -errno if it could not start. */
int vm_run(struct vm *vm);
void vm_destroy(struct vm *vm);

/* Thread-safe: record why the VM ends (first call wins), stop every vCPU
 * and wake the main loop. */
void vm_request_exit(struct vm *vm, enum vm_exit_reason reason);
static inline enum vm_exit_reason vm_exit_reason(struct vm *vm)
{
	return (enum vm_exit_reason)__atomic_load_n(&vm->exit_reason, __ATOMIC_ACQUIRE);
}

/* Called by the BSP's thread after its first KVM_RUN returned. */
void vm_bsp_ran(struct vm *vm);

/* Press the ACPI power button (no-op without an ACPI device). */
void vm_power_button(struct vm *vm);

/* The captured console output (VM_CONSOLE_CAPTURE), NUL-terminated. */
const char *vm_console_captured(struct vm *vm, size_t *len);

const char *vm_exit_reason_name(enum vm_exit_reason r);

/* CLOCK_MONOTONIC in nanoseconds; vm_stamp() records a named phase end
 * (main thread only; name must be a string literal). */
uint64_t vm_now_ns(void);
void vm_stamp(struct vm *vm, const char *name);

/* dedicatedCpuPlacement (vm_pin.c): plan the CPUs and pin the calling
 * thread for isolateEmulatorThread (before any other thread starts; an
 * error naming the field when there are too few CPUs), then pin each
 * started vCPU thread. 0 or -errno; no-ops without the setting. */
int vm_pin_plan(struct vm *vm);
int vm_pin_vcpus(struct vm *vm);

/* ---- the pause (vmm/vm/vm_pause.c; devices: device_pause_vm()) ---- */

/* Set up the pause's fields above (vm_create()). */
void vm_pause_init(struct vm *vm);

/* Coalesced port I/O (vm_coalesced.c; device_coalesce_pio() registers a
 * range). vm_coalesced_drain(): replay KVM's ring of the guest's queued
 * writes through the port bus, in order; every vCPU thread calls it after
 * each KVM_RUN, before handling the exit (run: its own mapping).
 * vm_coalesced_replay(): the replay itself on a ring of `entries` slots
 * (unit-tested); returns the writes replayed. */
struct kvm_run;
struct kvm_coalesced_mmio_ring;
void vm_coalesced_drain(struct vm *vm, struct kvm_run *run);
unsigned int vm_coalesced_replay(struct kvm_coalesced_mmio_ring *ring, uint32_t entries,
				 struct bus *pio, struct bus *mmio);

/* Main thread: kick every vCPU out of KVM_RUN and hold it until
 * vm_resume(); returns once all of them are held. -EALREADY when paused,
 * -ETIMEDOUT (and still running) when a vCPU did not stop within 2 s. */
int vm_pause(struct vm *vm);
/* Main thread: let the held vCPUs run again. -EALREADY when not paused. */
int vm_resume(struct vm *vm);
static inline bool vm_is_paused(struct vm *vm)
{
	return __atomic_load_n(&vm->paused, __ATOMIC_ACQUIRE);
}
/* vCPU thread, before each KVM_RUN: hold while the VM is paused. */
void vm_pause_point(struct vcpu *v);
/* Any thread: release held vCPUs because the VM ends (vm_request_exit()). */
void vm_pause_wake(struct vm *vm);

/* Main thread, from its loop: make the pause a device asked for
 * (device_pause_vm(), device.h). */
void vm_pause_pending(struct vm *vm);
/* Why the VM is paused: reason ("PausedByUser" for a ctl pause) and
 * message ("" when none), copied; false when it is not paused. */
bool vm_paused_because(struct vm *vm, char *reason, size_t rlen, char *msg, size_t mlen);

/* ---- control socket operations (vmm/ctl/vm_side.c) ---- */

/* Log each device's counters (at the end of a run). */
void vm_log_counters(struct vm *vm);

/* Console attach: copy guest console output to fd too (non-blocking, what
 * does not fit is dropped) until detached. -EBUSY when one is attached. */
int vm_console_attach(struct vm *vm, int fd);
void vm_console_detach(struct vm *vm, int fd);
/* Bytes for the guest's console input (main thread). */
void vm_console_input(struct vm *vm, const void *buf, size_t len);

#endif /* VMLET_VM_H */
