/* SPDX-License-Identifier: MIT */
/*
 * device.h - what a device model sees of the VM, and the device table.
 *
 * Every device type is one `static const struct device_type` listed in the
 * device_types[] table of vmm/vm/device.c; vm_create() instantiates them in
 * table order (count() instances each) and destroys them in reverse order
 * after every vCPU thread has stopped. Devices are allocated instances,
 * never globals. A device reaches the VM only through struct device_env
 * and the functions below: buses, guest memory, interrupts (irq.h), the
 * main event loop (event.h). scripts/check-layering.sh holds it: vmm/dev/
 * and vmm/virtio/ include of the VM core only this header, bus.h,
 * guest_mem.h and irq.h (not vm.h, vcpu.h, irq_internal.h, lifecycle.h),
 * and nothing of vmm/ctl/.
 */
#ifndef VMLET_DEVICE_H
#define VMLET_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct vm;
struct vm_config;
struct bus;
struct guest_mem;
struct event_loop;
struct snap_buf;
struct snap_cur;

/* Why the VM ended, in precedence order of nothing: the first one wins. */
enum vm_exit_reason {
	VM_EXIT_NONE = 0,  /* still running */
	VM_EXIT_POWEROFF,  /* ACPI S5 or the debug-exit port */
	VM_EXIT_REBOOT,	   /* the guest asked for a reset (i8042, ACPI) */
	VM_EXIT_CRASH,	   /* triple fault, KVM internal error, failed entry */
	VM_EXIT_HARD_STOP, /* vmlet stopped it: signal and grace expired */
};

enum vm_console_kind {
	VM_CONSOLE_STDIO = 0, /* output to stdout, input from stdin */
	VM_CONSOLE_FILE,      /* output appended to a file, no input */
	VM_CONSOLE_NONE,      /* output dropped */
	VM_CONSOLE_CAPTURE,   /* output kept in memory (vm_console_captured) */
};

struct vm_console {
	enum vm_console_kind kind;
	const char *path; /* VM_CONSOLE_FILE */
	/* VM_CONSOLE_FILE: past this size the file is copied to PATH.1 and
	 * emptied (dev/console_out.h); 0 = VM_CONSOLE_MAX_DEFAULT */
	uint64_t max_bytes;
};
#define VM_CONSOLE_MAX_DEFAULT (64ull << 20)
#define VM_CONSOLE_NO_CAP      UINT64_MAX

/*
 * The run options the firmware devices read (vm.h's vm_options holds
 * them; vm_create() hands a copy to create()): the EFI variable store of
 * vmlet's UEFI (efi_port.c) and OVMF's flash images (flash.h; a non-NULL
 * flash_code makes an OVMF VM: Q35 chipset, fw_cfg). The strings outlive
 * the VM.
 */
struct device_firmware {
	const char *efi_vars;	/* the store file when cfg->efi_persistent */
	bool efi_vars_volatile; /* otherwise: the store in efi_vars_fd */
	int efi_vars_fd;
	const char *flash_code; /* OVMF: code image (NULL: not an OVMF VM) */
	const char *flash_vars, *flash_vars_template;
	bool flash_vars_fresh; /* create flash_vars from the template anew */
	/* cfg->tpm_persistent: the directory swtpm keeps the TPM's state in
	 * (NULL: an unnamed file of this run, as without persistent); without
	 * it and tpm_state_kept: the state in tpm_state_fd (a file the caller
	 * keeps through the guest's reboots), else a new unnamed file */
	const char *tpm_state;
	bool tpm_state_kept;
	int tpm_state_fd;
	/* the user vmlet switches to once set up (--user, sandbox.h), when
	 * set: a helper process a device starts (swtpm) runs as it too */
	bool run_as_set;
	uid_t run_as_uid;
	gid_t run_as_gid;
	bool smm; /* OVMF with SMM: q35_enable_smm, a secure flash */
};

/*
 * What create() gets (valid during create() only: a device copies what it
 * keeps). vm is an opaque handle for irq_*() and the device_*() functions
 * below; a device never looks inside it. The PCI functions (virtio, AHCI)
 * get it and mem from the struct pci_host they are added to (vmm/dev/pci.h,
 * made from this env): no device's create function takes a VM. NULL fw:
 * no firmware files (unit tests).
 */
struct device_env {
	struct vm *vm;
	const struct vm_config *cfg;
	struct bus *pio, *mmio;
	struct guest_mem *mem;
	struct event_loop *loop; /* main thread's loop */
	const struct vm_console *console;
	const struct device_firmware *fw;
	/* where cfg->channels' host sockets go: PREFIX + NAME (NULL: none;
	 * vmm/virtio/virtio_console.h) */
	const char *channel_prefix;
};

struct device_type {
	const char *name;
	/* Instances for this config (NULL: exactly one). */
	unsigned int (*count)(const struct vm_config *cfg);
	/* Create instance index; *state = NULL means "not in this VM". */
	int (*create)(const struct device_env *env, unsigned int index, void **state);
	void (*reset)(void *state); /* optional */
	/* Optional, at teardown before any device is destroyed (vCPUs
	 * stopped): stop I/O and make what the guest wrote durable (disks
	 * flushed), so that nothing a later release does can lose it. */
	void (*quiesce)(void *state);
	void (*destroy)(void *state); /* optional; state may be NULL-checked */
	/* Optional: the snapshot (vmm/snapshot/, docs/snapshot.md). save()
	 * appends the guest-visible state as items (snap_buf.h) while every
	 * vCPU is held; load() sets it from the items save() wrote, in a VM
	 * created from the same config whose vCPUs have not run, and must
	 * check every value as guest input (-EBADMSG, or -EINVAL with the
	 * reason logged). A device without save() makes a snapshot refuse,
	 * naming it; save() may refuse too (-ENOTSUP, reason logged) for a
	 * state it cannot capture. */
	int (*save)(void *state, struct snap_buf *out);
	int (*load)(void *state, struct snap_cur *in);
	/* Optional, around save() (vCPUs held): freeze holds the device's
	 * own threads with their work completed and written data durable
	 * (0, or -ENOTSUP naming what cannot be held); thaw lets them go on
	 * (a snapshot with --resume, or a refused one). */
	int (*freeze)(void *state);
	void (*thaw)(void *state);
};

/* End the VM (thread-safe; the first reason wins). */
void device_request_exit(struct vm *vm, enum vm_exit_reason reason);

/* The ACPI device registers what pressing the power button does. */
void device_set_power_button(struct vm *vm, void (*fn)(void *opaque), void *opaque);

/* VM_CONSOLE_CAPTURE: append guest console output (thread-safe). */
void device_console_capture(struct vm *vm, const void *buf, size_t len);

/*
 * The console's output also goes to a control-socket client attached with
 * `vmlet ctl PATH console` (any thread; a no-op when none is attached), and
 * the console device registers how that client's input reaches the guest
 * (called on the main thread).
 */
void device_console_tee(struct vm *vm, const void *buf, size_t len);
/* A control client is attached to the console now (any thread). */
bool device_console_attached(struct vm *vm);
void device_set_console_input(struct vm *vm, void (*fn)(void *opaque, const void *buf, size_t len),
			      void *opaque);
/* The console device also registers how output written in one piece
 * (firmware's EFI port console op) reaches the console as if the guest
 * had written it byte by byte; device_console_write() sends it there
 * (any thread): 0, or -ENODEV without a console device. */
void device_set_console_output(struct vm *vm, void (*fn)(void *opaque, const void *buf, size_t len),
			       void *opaque);
int device_console_write(struct vm *vm, const void *buf, size_t len);

/* The PCI device records which device numbers of bus 0 it populated (bit
 * n: device n) for the EFI port's FW_ABI_EFI_PCI_SLOTS (firmware/abi.h);
 * 0 until then (or without a VM: unit tests). */
void device_set_pci_slots(struct vm *vm, uint32_t mask);
uint32_t device_pci_slots(const struct vm *vm);

/* Writes to ports [port, port + len) need no exit of their own: KVM queues
 * them and every vCPU replays the queue through the port bus before it
 * handles its next exit (vm_coalesced.c), so a device sees them in order
 * and before any access that exits. For write-only registers whose effect
 * only an exiting access observes (the PCI address latch). 0, or -errno
 * (no VM, KVM without KVM_CAP_COALESCED_PIO): the writes then exit. Call
 * at create time. */
int device_coalesce_pio(struct vm *vm, uint16_t port, uint32_t len);

/* The fw_cfg device (BIOS VMs) hands its interface to the boot code,
 * which fills it before the guest runs (vmm/boot/bios_boot.c). */
struct fw_cfg;
void device_set_fw_cfg(struct vm *vm, struct fw_cfg *fc);

/* Map size bytes at host (page aligned, live until the VM is destroyed)
 * read-only at gpa, outside guest RAM: KVM memory slot
 * GUEST_MEM_MAX_REGIONS + slot (slot < 4). The guest's writes there exit
 * as MMIO writes (the device claims the window to drop them); a host
 * without KVM_CAP_READONLY_MEM gets a writable slot (host must then be a
 * private copy). Setup only (main thread). 0 or -errno (logged). */
int device_map_rom(struct vm *vm, unsigned int slot, uint64_t gpa, uint64_t size, void *host);

/*
 * SMM (vmm/vm/smm.c; the q35 chipset drives it, vmm/dev/q35_smm.h). Only a
 * VM created with vm_options.smm has the SMM address space.
 *
 * device_smm_map(): what code outside SMM and in SMM sees of the legacy
 * A/B segment (0xa0000-0xbffff) and of TSEG, the last `tseg` bytes of
 * low RAM (0 or DEVICE_SMM_TSEG_*: the slots are cut at these sizes):
 * RAM, or nothing (unassigned: an MMIO exit nothing claims, reads 0xff).
 * Any thread; 0 or -errno (logged). -ENODEV without SMM.
 * device_smm_raise(): an SMI on the calling vCPU (all = false; it must
 * be a vCPU thread) or on every vCPU (all = true: each takes it before its
 * next entry, the others kicked out of KVM_RUN). 0 or -errno.
 * device_in_smm(): whether the exit the calling thread handles was taken
 * in SMM (kvm_run.flags & KVM_RUN_X86_SMM; false off a vCPU thread).
 * device_set_vcpu(): the vCPU thread names itself for these (unit tests
 * hand a fake one with a run page); device_vcpu(): the calling thread's
 * vCPU (NULL: not one).
 */
#define DEVICE_SMM_TSEG_1M  (1ull << 20)
#define DEVICE_SMM_TSEG_2M  (2ull << 20)
#define DEVICE_SMM_TSEG_8M  (8ull << 20)
#define DEVICE_SMM_TSEG_MAX (16ull << 20)
struct device_smram {
	bool aseg_normal, aseg_smm;
	uint64_t tseg;
};
struct vcpu;
int device_smm_map(struct vm *vm, const struct device_smram *v);
int device_smm_raise(struct vm *vm, bool all);
bool device_in_smm(void);
void device_set_vcpu(struct vcpu *v);
struct vcpu *device_vcpu(void);

/* What a device counts for the control socket's metrics. */
struct device_counters {
	/* block: requests completed, of them failed; data bytes moved */
	uint64_t requests, errors, read_bytes, write_bytes;
	uint64_t io_pauses; /* block: VM pauses for a host error (errorPolicy) */
	/* network: frames and bytes to the guest (rx) and from it (tx) */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes, rx_dropped, tx_dropped;
	/* balloon: page reports in requests, bytes released in write_bytes;
	 * the guest's statistics (virtio_balloon.h tags; bit t of valid: tag
	 * t was sent) and how many times it sent them */
	uint64_t balloon_stats_updates, balloon_stats_valid;
	uint64_t balloon_stat[16];
	/* channel (a virtio-serial port): bytes host -> guest in rx_bytes,
	 * guest -> host in tx_bytes; 1 while the guest has the port open (its
	 * agent runs) and while a host client is connected */
	uint64_t channel_guest_open, channel_host_connected;
};

struct device_counters_src {
	const char *kind; /* "blk", "net", "balloon", "console" or "channel" */
	const char *name; /* disk or interface name, owned by the device */
	void (*read)(void *opaque, struct device_counters *c);
	void *opaque;
};

/*
 * Register a device's counters (setup, main thread): read() fills *c with
 * atomic loads from any thread while the VM runs. kind and name must live
 * as long as the device. 0 or -ENOSPC.
 */
int device_add_counters(struct vm *vm, const char *kind, const char *name,
			void (*read)(void *opaque, struct device_counters *c), void *opaque);

/*
 * A device thread pauses the VM for an error the guest is not to see (a
 * disk's errorPolicy stop; vmm/vm/vm_pause.c): device_pause_vm() records why
 * (reason: KubeVirt's condition reason, e.g. "PausedIOError"; message:
 * what failed) and wakes the main thread, which pauses the VM from its
 * loop; the thread then waits in device_wait_resume() with the generation
 * device_pause_vm() returned: 0 once the VM was resumed (or the pause could
 * not be made: retry), -ESRCH when the VM ends, -ETIMEDOUT after
 * timeout_ms (to let the caller check its own state; wait again with the
 * same generation).
 */
unsigned int device_pause_vm(struct vm *vm, const char *reason, const char *message);
int device_wait_resume(struct vm *vm, unsigned int gen, unsigned int timeout_ms);

/* The state of the VM's first instance of type (NULL: none, or not in
 * this VM), for a device's own lookups after setup (main thread). */
void *device_state(struct vm *vm, const struct device_type *type);

/* Instantiate / destroy the table (vm.c). */
struct device_instance {
	const struct device_type *type;
	void *state;
};
int device_create_all(const struct device_env *env, struct device_instance **out, unsigned int *n);
void device_quiesce_all(struct device_instance *devs, unsigned int n);
void device_destroy_all(struct device_instance *devs, unsigned int n);

#endif /* VMLET_DEVICE_H */
