/* SPDX-License-Identifier: MIT */
/*
 * vm.c - create, run and tear down one VM on /dev/kvm (see vm.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "vmm/vm/dirty_ring.h"
#include "vmm/vm/hyperv.h"
#include "vmm/vm/irq_internal.h"
#include "vmm/kvm_diag.h"
#include "vmm/util/log.h"
#include "vmm/util/timings.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"
#include "vmm/vm/smm.h"
#include "vmm/vm_config.h"

static const char *const exit_names[] = {
    [VM_EXIT_NONE] = "running",	 [VM_EXIT_POWEROFF] = "powered off", [VM_EXIT_REBOOT] = "rebooted",
    [VM_EXIT_CRASH] = "crashed", [VM_EXIT_HARD_STOP] = "stopped",
};

const char *vm_exit_reason_name(enum vm_exit_reason r)
{
	if ((unsigned int)r >= sizeof(exit_names) / sizeof(exit_names[0]))
		return "?";
	return exit_names[r];
}

uint64_t vm_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void vm_stamp(struct vm *vm, const char *name)
{
	if (vm->n_stamps < VM_MAX_STAMPS)
		vm->stamps[vm->n_stamps++] = (struct vm_stamp){name, vm_now_ns()};
}

/* Guest RAM pages the host has backed (touched by the guest or by us). */
static uint64_t vm_guest_resident(const struct guest_mem *m)
{
	uint64_t bytes = 0, pages, j;
	unsigned char *vec;
	unsigned int i;

	for (i = 0; i < m->n; i++) {
		pages = m->r[i].size / 4096;
		vec = malloc(pages);
		if (vec && !mincore(m->r[i].host, m->r[i].size, vec))
			for (j = 0; j < pages; j++)
				bytes += (vec[j] & 1) * 4096ull;
		free(vec);
	}
	return bytes;
}

/* One debug line: every stamp in microseconds of CLOCK_MONOTONIC, and the
 * guest RAM the host backed (bench-boot: vmlet's own RSS is the rest). */
static void vm_log_stamps(struct vm *vm, uint64_t resident)
{
	char buf[640];
	size_t off = 0;
	unsigned int i;

	if (!log_enabled(LOG_DEBUG))
		return;
	for (i = 0; i < vm->n_stamps && off < sizeof(buf); i++)
		off +=
		    (size_t)snprintf(buf + off, sizeof(buf) - off, " %s=%llu", vm->stamps[i].name,
				     (unsigned long long)vm->stamps[i].ns / 1000);
	log_debug("vm: phases (CLOCK_MONOTONIC us):%s first_run=%llu end=%llu", buf,
		  (unsigned long long)vm->t_first_run / 1000, (unsigned long long)vm->t_end / 1000);
	log_debug("vm: guest RAM resident: %llu KiB", (unsigned long long)resident >> 10);
}

static int kvm_check_cap(struct vm *vm, long cap)
{
	int r = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? 0 : r;
}

/* The KVM device: /dev/kvm, or VMLET_KVM_DEVICE (tests: a path that does
 * not exist makes vmlet take the no-KVM path on a host that has one). */
static const char *vm_kvm_device(void)
{
	const char *dev = getenv("VMLET_KVM_DEVICE");

	return dev && dev[0] == '/' ? dev : "/dev/kvm";
}

/* open() of DEV failed with ERR: name the cause and what to do (kvm_diag.h);
 * the first line starts "kvm: no usable KVM" (scripts/run-example reads it) */
static int vm_kvm_unusable(const char *dev, int err)
{
	struct kvm_diag d;

	kvm_diag_explain("/", dev, err, &d);
	error("kvm: no usable KVM: cannot open %s (%s): %s", dev, strerror(err), d.what);
	error("kvm: what to do: %s", d.todo);
	return -err;
}

static int vm_open_kvm(struct vm *vm)
{
	static const struct {
		long cap;
		const char *name;
	} needed[] = {
	    {KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP"},
	    {KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY"},
	    {KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT"},
	    {KVM_CAP_PIT2, "KVM_CAP_PIT2"},
	    {KVM_CAP_IRQ_ROUTING, "KVM_CAP_IRQ_ROUTING"},
	    {KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID"},
	    {KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR"},
	};
	const char *dev = vm_kvm_device();
	size_t i;
	int v;

	vm->kvm_fd = open(dev, O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return vm_kvm_unusable(dev, errno);
	v = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (v != KVM_API_VERSION)
		return error_errno(-ENOTSUP, "kvm: API version %d, need %d", v, KVM_API_VERSION);
	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!kvm_check_cap(vm, needed[i].cap))
			return error_errno(-ENOTSUP, "kvm: %s is not available", needed[i].name);
	v = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (v <= 0)
		return error_errno(v < 0 ? -errno : -EINVAL, "kvm: KVM_GET_VCPU_MMAP_SIZE");
	vm->run_size = (size_t)v;
	vm->kvm_pvm = kvm_diag_host_pvm("/");
	if (vm->kvm_pvm)
		log_debug("kvm: %s is kvm-pvm (docs/hosts.md)", dev);
	return 0;
}

static int vm_topology(struct vm *vm)
{
	const struct vm_config *cfg = vm->cfg;
	uint64_t n = vm_config_vcpus(cfg);
	int max_vcpus, max_id;
	uint32_t i, top = 0;

	if (!cfg->sockets || !cfg->cores || !cfg->threads)
		return error_errno(-EINVAL, "vm: CPU topology %u/%u/%u has a zero", cfg->sockets,
				   cfg->cores, cfg->threads);
	max_vcpus = kvm_check_cap(vm, KVM_CAP_MAX_VCPUS);
	if (max_vcpus <= 0)
		max_vcpus = kvm_check_cap(vm, KVM_CAP_NR_VCPUS);
	if (n > (uint64_t)max_vcpus)
		return error_errno(-E2BIG, "vm: %llu vCPUs requested, KVM allows %d",
				   (unsigned long long)n, max_vcpus);
	vm->topo = (struct arch_topology){cfg->sockets, cfg->cores, cfg->threads};
	vm->n_vcpus = (uint32_t)n;
	vm->apic_ids = calloc(n, sizeof(*vm->apic_ids));
	if (!vm->apic_ids)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		vm->apic_ids[i] = arch_topo_apic_id(&vm->topo, i);
		if (vm->apic_ids[i] > top)
			top = vm->apic_ids[i];
	}
	max_id = kvm_check_cap(vm, KVM_CAP_MAX_VCPU_ID);
	if (max_id > 0 && top >= (uint32_t)max_id)
		return error_errno(-E2BIG, "vm: APIC ID %u exceeds KVM's limit %d", top,
				   max_id - 1);
	return 0;
}

/*
 * KVM lets a halted vCPU poll for its wake-up (halt_poll_ns, 200 us by
 * default) before it sleeps: quicker wake-ups while a vCPU has a host CPU
 * to itself. With more vCPUs than host CPUs the polling takes the CPU from
 * vCPUs that have work to do (the probe's APs halt as each finishes while
 * the others still run): such a VM does not poll. KVM_CAP_HALT_POLL is
 * Linux 5.14; without it KVM's default stays.
 */
static void vm_tune_halt_poll(struct vm *vm)
{
	struct kvm_enable_cap cap = {.cap = KVM_CAP_HALT_POLL, .args = {0}};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus <= 0 || vm->n_vcpus <= (uint32_t)cpus || !kvm_check_cap(vm, KVM_CAP_HALT_POLL))
		return;
	if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0)
		log_warn("kvm: KVM_CAP_HALT_POLL: %s (halted vCPUs keep polling)", strerror(errno));
	else
		log_debug("kvm: %u vCPUs on %ld host CPUs: halt polling off", vm->n_vcpus, cpus);
}

/* APIC IDs above 254 need 32-bit x2APIC IDs in the in-kernel LAPIC. */
static int vm_enable_x2apic_api(struct vm *vm)
{
	struct kvm_enable_cap cap = {.cap = KVM_CAP_X2APIC_API};
	uint32_t i;

	for (i = 0; i < vm->n_vcpus; i++)
		if (vm->apic_ids[i] >= 255)
			break;
	if (i == vm->n_vcpus)
		return 0;
	cap.args[0] = KVM_X2APIC_API_USE_32BIT_IDS | KVM_X2APIC_API_DISABLE_BROADCAST_QUIRK;
	if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0)
		return error_errno(-errno,
				   "kvm: KVM_CAP_X2APIC_API (needed for APIC IDs above 254)");
	return 0;
}

static int vm_set_memory(struct vm *vm)
{
	uint64_t hp = vm->cfg->hugepage_size;
	unsigned int i;
	int ret;

	/* OVMF's q35 layout keeps low RAM below its ECAM window */
	ret = guest_mem_init_below(&vm->mem, vm->cfg->memory_bytes, hp,
				   vm->opt.flash_code ? arch_q35_low_max(vm->cfg->memory_bytes)
						      : ARCH_MMIO_HOLE_START);
	if (ret)
		return ret;
	for (i = vm->opt.smm ? 1 : 0; i < vm->mem.n; i++) {
		struct kvm_userspace_memory_region r = {
		    .slot = i,
		    .guest_phys_addr = vm->mem.r[i].gpa,
		    .memory_size = vm->mem.r[i].size,
		    .userspace_addr = (uintptr_t)vm->mem.r[i].host,
		};

		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
			return error_errno(-errno, "kvm: KVM_SET_USER_MEMORY_REGION slot %u", i);
	}
	return vm->opt.smm ? vm_smm_setup(vm) : 0; /* low RAM in pieces */
}

/*
 * KVM creates the PIT re-injecting lost ticks (QEMU's lost_tick_policy=
 * delay). We turn that off: ticks the guest missed with interrupts masked
 * are dropped, as on real hardware (QEMU: lost_tick_policy=discard); no
 * guest of ours counts PIT ticks for time. The reason is the cost of the
 * switch: KVM then unregisters an IRQ-ack notifier and waits for an
 * irq_srcu grace period (kvm_pit_set_reinject -> synchronize_srcu). KVM
 * does exactly that when it destroys the VM (kvm_free_pit) if re-injection
 * is still on, and on our hosts that grace period takes 4-20 ms while the
 * VM is younger than a few tens of ms: every short VM's exit waited for it.
 *
 * So the main loop makes the switch while the guest boots, as soon as the
 * BSP's first KVM_RUN has returned (vm_bsp_ran). Not earlier: issued
 * before it, the switch delays the BSP's first entry by the whole grace
 * period. The main loop is busy for that grace period once per VM.
 */
static void vm_pit_reinject_off(void *opaque, uint32_t events)
{
	struct vm *vm = opaque;
	struct kvm_reinject_control rc = {.pit_reinject = 0};
	uint64_t n;

	(void)events;
	if (read(vm->pit_efd, &n, sizeof(n)) != sizeof(n))
		return;
	event_del(&vm->loop, vm->pit_efd);
	if (ioctl(vm->vm_fd, KVM_REINJECT_CONTROL, &rc) < 0)
		log_warn("kvm: KVM_REINJECT_CONTROL: %s (the VM's teardown waits instead)",
			 strerror(errno));
	vm_stamp(vm, "pit_reinject_off");
}

void vm_bsp_ran(struct vm *vm)
{
	uint64_t one = 1;

	if (vm->pit_efd >= 0 && write(vm->pit_efd, &one, sizeof(one)) != sizeof(one))
		log_warn_once("kvm: cannot wake the main loop for the PIT switch");
}

static int vm_pit_watch(struct vm *vm)
{
	int ret;

	vm->pit_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->pit_efd < 0)
		return error_errno(-errno, "vm: eventfd");
	ret = event_add(&vm->loop, vm->pit_efd, EPOLLIN, vm_pit_reinject_off, vm);
	return ret ? error_errno(ret, "vm: event loop setup") : 0;
}

static int vm_create_chips(struct vm *vm)
{
	struct kvm_pit_config pit = {.flags = KVM_PIT_SPEAKER_DUMMY};
	/* an OVMF VM has its flash where the pages usually are: QEMU's place */
	uint64_t idmap = vm->opt.flash_code ? ARCH_Q35_IDENTITY_MAP_GPA : ARCH_IDENTITY_MAP_GPA;
	unsigned long tss = vm->opt.flash_code ? ARCH_Q35_TSS_GPA : ARCH_TSS_GPA;

	if (ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap) < 0)
		return error_errno(-errno, "kvm: KVM_SET_IDENTITY_MAP_ADDR");
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, tss) < 0)
		return error_errno(-errno, "kvm: KVM_SET_TSS_ADDR");
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return error_errno(-errno, "kvm: KVM_CREATE_IRQCHIP");
	if (irq_init(vm))
		return -EIO;
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return error_errno(-errno, "kvm: KVM_CREATE_PIT2");
	return vm_pit_watch(vm);
}

static int vm_create_devices(struct vm *vm)
{
	const struct device_firmware fw = {
	    .efi_vars = vm->opt.efi_vars,
	    .efi_vars_volatile = vm->opt.efi_vars_volatile,
	    .efi_vars_fd = vm->opt.efi_vars_fd,
	    .flash_code = vm->opt.flash_code,
	    .flash_vars = vm->opt.flash_vars,
	    .flash_vars_template = vm->opt.flash_vars_template,
	    .flash_vars_fresh = vm->opt.flash_vars_fresh,
	    .tpm_state = vm->opt.tpm_state,
	    .tpm_state_kept = vm->opt.tpm_state_kept,
	    .tpm_state_fd = vm->opt.tpm_state_fd,
	    .run_as_set = vm->opt.run_as_set,
	    .run_as_uid = vm->opt.run_as_uid,
	    .run_as_gid = vm->opt.run_as_gid,
	    .smm = vm->opt.smm,
	};
	struct device_env env = {
	    .vm = vm,
	    .cfg = vm->cfg,
	    .pio = &vm->pio,
	    .mmio = &vm->mmio,
	    .mem = &vm->mem,
	    .loop = &vm->loop,
	    .console = &vm->opt.console,
	    .fw = &fw,
	    .channel_prefix = vm->opt.channel_prefix,
	};

	return device_create_all(&env, &vm->devs, &vm->n_devs);
}

static int vm_create_vcpus(struct vm *vm)
{
	uint32_t i;
	int ret;

	vm->vcpus = calloc(vm->n_vcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return -ENOMEM;
	for (i = 0; i < vm->n_vcpus; i++)
		vm->vcpus[i].fd = -1;
	for (i = 0; i < vm->n_vcpus; i++) {
		ret = vcpu_create(vm, i, &vm->vcpus[i]);
		if (ret)
			return ret;
	}
	return vm->n_vcpus ? vcpu_lapic_init(&vm->vcpus[0]) : 0;
}

/* The host side, before KVM_CREATE_VM: the buses, the event loop,
 * /dev/kvm, the topology and the vCPUs' pinning plan. */
static int vm_create_host(struct vm *vm)
{
	int ret = bus_init(&vm->pio, "pio");

	if (!ret)
		ret = bus_init(&vm->mmio, "mmio");
	if (!ret)
		ret = event_loop_init(&vm->loop);
	if (!ret)
		ret = vm_open_kvm(vm);
	if (!ret)
		ret = vm_topology(vm);
	if (!ret)
		ret = vm_pin_plan(vm); /* before any thread starts */
	return ret;
}

/* KVM_CREATE_VM, and the CPU the VM presents: its CPUID (vm_cpuid.c)
 * and Hyper-V. */
static int vm_create_kvm_vm(struct vm *vm)
{
	int ret;

	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return error_errno(-errno, "kvm: KVM_CREATE_VM");
	vm_stamp(vm, "kvm");
	ret = vm_cpuid_setup(vm);
	return ret ? ret : hv_vm_init(vm);
}

/* Guest memory, the in-kernel chips, the devices and the vCPUs. */
static int vm_create_machine(struct vm *vm)
{
	int ret;

	vm_tune_halt_poll(vm);
	ret = vm_dirty_ring_enable(vm); /* before any vCPU exists */
	if (!ret)
		ret = vm_set_memory(vm);
	if (!ret)
		ret = vm_enable_x2apic_api(vm);
	if (!ret) {
		vm_stamp(vm, "memory");
		timings_mark(TIMINGS_MAPPED);
		ret = vm_create_chips(vm);
	}
	if (!ret) {
		vm_stamp(vm, "chips");
		ret = vm_create_devices(vm);
	}
	if (!ret) {
		vm_stamp(vm, "devices");
		ret = vm_create_vcpus(vm);
	}
	if (!ret)
		vm_stamp(vm, "vcpus");
	return ret;
}

int vm_create(struct vm **out, const struct vm_config *cfg, const struct vm_options *opt)
{
	struct vm *vm;
	int ret;

	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return -ENOMEM;
	vm_stamp(vm, "create");
	vm->cfg = cfg;
	vm->opt = *opt;
	vm->kvm_fd = vm->vm_fd = vm->pit_efd = -1;
	vm->loop.epfd = -1;
	pthread_mutex_init(&vm->capture_lock, NULL);
	vm_pause_init(vm);
	ret = vm_create_host(vm);
	if (!ret)
		ret = vm_create_kvm_vm(vm);
	if (!ret)
		ret = vm_create_machine(vm);
	if (ret)
		goto out_destroy;
	*out = vm;
	return 0;
out_destroy:
	vm_destroy(vm);
	return ret;
}

void vm_request_exit(struct vm *vm, enum vm_exit_reason reason)
{
	int none = VM_EXIT_NONE;
	uint32_t i;

	if (!__atomic_compare_exchange_n(&vm->exit_reason, &none, (int)reason, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	vm->t_end = vm_now_ns();
	if (vm->t_first_run) /* the guest ran: its end (not a failed start's) */
		timings_mark(TIMINGS_POWEROFF);
	for (i = 0; i < vm->n_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
	vm_pause_wake(vm); /* paused vCPUs finish too */
	event_loop_wake(&vm->loop);
}

void vm_power_button(struct vm *vm)
{
	if (vm->power_button)
		vm->power_button(vm->power_button_opaque);
}

const char *vm_console_captured(struct vm *vm, size_t *len)
{
	*len = vm->capture_len;
	return vm->capture ? vm->capture : "";
}

void vm_destroy(struct vm *vm)
{
	uint64_t resident = 0;
	uint32_t i;

	if (!vm)
		return;
	if (vm->vcpus) {
		vm_request_exit(vm, VM_EXIT_HARD_STOP);
		for (i = 0; i < vm->n_vcpus; i++)
			vcpu_destroy(&vm->vcpus[i]);
	}
	if (vm->t_end)
		vm_stamp(vm, "vcpus_closed");
	/* Disks first: flushed before anything else is released. Then the
	 * devices; their interrupt routes go with the VM fd (irq_teardown:
	 * no KVM_SET_GSI_ROUTING from the main thread's filter). */
	device_quiesce_all(vm->devs, vm->n_devs);
	irq_teardown(vm);
	device_destroy_all(vm->devs, vm->n_devs);
	irq_release(vm);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->t_end)
		vm_stamp(vm, "vm_closed");
	if (vm->t_end && log_enabled(LOG_DEBUG))
		resident = vm_guest_resident(&vm->mem);
	vm_smm_release(vm);
	guest_mem_release(&vm->mem);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->pit_efd >= 0)
		close(vm->pit_efd);
	if (vm->loop.epfd >= 0)
		event_loop_release(&vm->loop);
	bus_release(&vm->mmio);
	bus_release(&vm->pio);
	if (vm->t_end) {
		vm_stamp(vm, "destroyed");
		vm_log_stamps(vm, resident);
	}
	pthread_mutex_destroy(&vm->capture_lock);

	free(vm->capture);
	free(vm->pin_cpus);
	free(vm->host_cpuid);
	hv_vm_release(vm);
	free(vm->apic_ids);
	free(vm->vcpus);
	free(vm);
}
