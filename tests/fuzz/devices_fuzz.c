/* SPDX-License-Identifier: MIT */
/*
 * devices_fuzz.c - libFuzzer target for the guest-facing registers of
 * every device but fw_cfg (and the queues of the virtio devices no other
 * target drives), as a hostile guest reaches them: port and MMIO accesses
 * dispatched by address through the real buses (vmm/vm/bus.h), exactly as a
 * vCPU exit does, to the devices of vmm/vm/device.c's table created by their
 * device_type, plus guest RAM for the ports that read descriptors from
 * it:
 *
 *   legacy ports (POST, DMA, debugcon, port A, debug exit, COM2-4), the
 *   CMOS RTC, the i8042, the 16550 UART on COM1 (with console input from
 *   the host), the ACPI PM1 block (and the power button), the report port,
 *   the EFI port (boot order, variable store in a memfd kept through
 *   reboots, PCI slots, console), the PCI host (0xcf8/0xcfc, ECAM, BAR
 *   decoding in both MMIO32 windows, MSI-X table and PBA), the q35 MCH,
 *   LPC bridge, second ECAM and PM timer, the virtio-pci transport of the
 *   virtio-rng, virtio-blk, virtio-console and virtio-balloon functions
 *   (common config, ISR, notify, device config, MSI-X, the PCI_CFG
 *   capability window), the AHCI controller (ahci.h: HBA and port
 *   registers, MSI-X, and the commands of its read-only SATA disks from
 *   guest RAM when the input lets a port's I/O thread run), the queues of
 *   virtio-balloon (inflate, deflate, statistics, free page reports
 *   released with madvise), virtio-rng, virtio-console (the control queues
 *   of MULTIPORT: DEVICE_READY, PORT_READY, PORT_OPEN with any port id;
 *   its data queues, whose port has no host socket here) and the read-only
 *   virtio-blk disks when the input lets their I/O thread run, and OVMF's
 *   CFI variable flash (pflash.h) at the place vmm/dev/flash.c maps it.
 *
 * Left out: fw_cfg (fw_cfg_fuzz), flash.c's code ROM (it needs a KVM
 * memory slot; its bus window only drops writes) and virtio-net functions
 * (they need a network backend; virtio_net_fuzz drives them). The disks
 * are two read-only raw hostDisks on one 64 KiB file in /dev/shm (the
 * second with a bootOrder, for the EFI port's boot order);
 * virtio_blk_fuzz drives writable ones.
 *
 * The VM is struct vm without KVM, its interrupt controller and I/O
 * threads the fakes of devices_fuzz_vm.h: a device that misuses an MSI
 * route aborts, and the input does the I/O threads' work, so a run is
 * deterministic.
 *
 * Guest RAM is two regions in exact-size page-aligned allocations,
 * [0, 0x2000) and [0x2000, 0x3000), so ASan sees a transfer that runs off
 * a region or straddles them; OVMF's variable flash is an exact-size
 * array too.
 *
 * Input: 2 bytes of setup, little-endian (bit 0: an OVMF VM, q35 chipset
 * and the variable flash; 1: ACPI; 2: virtio-rng; 3: an EFI VM with a
 * variable store; 4: the console is not captured: no report port; 5: no
 * COM1; 6: two virtio-blk disks; 7: four vCPUs and a queue per vCPU; 8:
 * virtio-balloon; 9: with free page reporting; 10: virtio-console with
 * the guest-agent port and a second one; 11: the disks are on bus sata
 * instead; 12: with 11, the first is a CD-ROM drive; 13: with 12, an empty
 * one), 2 bytes
 * (little-endian) n, n bytes of RAM from gpa 0, then operations until the
 * input ends. Each starts with a byte op: width 1 << (op >> 3 & 3), count
 * (op >> 5) + 1, and op & 7:
 *   0 port read, 1 port write: window byte w, offset byte o (the port is
 *     fz_pio[w] + (int8_t)o for w inside that table, else (w - its size)
 *     << 8 | o), then for a write the value (width bytes), `count` times;
 *   2 MMIO read, 3 MMIO write: window byte w, 3-byte offset (the address
 *     is fz_mmio[w] + offset inside that table, where FZ_BAR(s) means
 *     where the function in slot s has its BAR 0 now, read through ECAM
 *     as a guest would, FZ_BAR5(s) its BAR 5 (the AHCI ABAR); else
 *     (w - its size) << 24 | offset), value for writes;
 *   4 the guest writes RAM (fuzz_input.h: off16, len8, bytes);
 *   5 the host types on the console: len8, bytes;
 *   6 op >> 3 & 3: 0 the power button, 1 the VM reboots (devices
 *     destroyed and created again, RAM and the variable store kept), 2 an
 *     I/O thread serves a queue, 3 an I/O thread's timer fires: a byte b
 *     follows, the thread is the (b % threads)-th started (virtio ones
 *     first, then the SATA ports', which run their next command), the
 *     queue (b >> 4) % its queues;
 *   7 a descriptor address (le16) written to the EFI port, or to the
 *     report port when op >> 3 is odd.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86_64/layout.h"
#include "firmware/abi.h"
#include "tests/fuzz/devices_fuzz_vm.h"
#include "tests/fuzz/fuzz_input.h"
#include "vmm/vm/bus.h"
#include "vmm/dev/devices.h"
#include "vmm/dev/pci_devices.h"
#include "vmm/dev/pflash.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

#define RAM0	   0x2000u
#define RAM1	   0x1000u
#define FZ_VARS	   (64u << 10) /* the variable flash: 16 blocks */
#define FZ_CODE	   (1u << 20)  /* the code image below 4 GiB (not mapped here) */
#define FZ_VARS_G  (ARCH_FLASH_END - FZ_CODE - FZ_VARS)
#define FZ_BAR(s)  ((uint64_t)(s))     /* in fz_mmio: slot s's BAR 0 (s < 4) */
#define FZ_BAR5(s) ((uint64_t)(s) + 4) /* slot s's BAR 5 (s < 4) */
#define FZ_DISK	   (64u << 10)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* The device table of vmm/vm/device.c without fw_cfg and flash (above). */
static const struct device_type *const fz_types[] = {
    &legacy_ports_device, &rtc_device,	       &i8042_device,	 &serial8250_device,
    &acpi_pm_device,	  &report_port_device, &efi_port_device, &pci_devices_device,
};
#define FZ_TYPES (sizeof(fz_types) / sizeof(fz_types[0]))

struct fz_vm {
	struct vm vm;
	struct vm_config cfg;
	void *state[FZ_TYPES];
	struct pflash pf;
	uint8_t *vars;
	bool flash;
};

static struct vm_config fz_cfg;
static int fz_memfd = -1;
static char fz_disk_path[64];
static char fz_sata_bus[] = "sata";
/* two read-only hostDisks on one raw file, the second with bootOrder 1 */
static struct vm_disk fz_disks[2] = {
    {.name = "root", .source = VM_DISK_HOSTDISK, .path = fz_disk_path, .read_only = true},
    {.name = "data",
     .source = VM_DISK_HOSTDISK,
     .path = fz_disk_path,
     .read_only = true,
     .serial = "fuzz",
     .boot_order = 1,
     .logical_block_size = 4096},
};

static void fz_cleanup(void)
{
	unlink(fz_disk_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "devices-fuzz", NULL);
	vm_config_init(&fz_cfg);
	fz_memfd = memfd_create("devices-fuzz-efivars", MFD_CLOEXEC);
	snprintf(fz_disk_path, sizeof(fz_disk_path), "/dev/shm/vmlet-devices-fuzz.XXXXXX");
	fd = mkstemp(fz_disk_path);
	if (fd < 0) {
		snprintf(fz_disk_path, sizeof(fz_disk_path), "/tmp/vmlet-devices-fuzz.XXXXXX");
		fd = mkstemp(fz_disk_path);
	}
	if (fz_memfd < 0 || fd < 0 || ftruncate(fd, FZ_DISK))
		abort();
	close(fd);
	atexit(fz_cleanup);
	return 0;
}

static void fz_devices_down(struct fz_vm *f)
{
	for (unsigned int i = FZ_TYPES; i-- > 0;)
		if (f->state[i] && fz_types[i]->quiesce)
			fz_types[i]->quiesce(f->state[i]);
	for (unsigned int i = FZ_TYPES; i-- > 0;) {
		if (f->state[i] && fz_types[i]->destroy)
			fz_types[i]->destroy(f->state[i]);
		f->state[i] = NULL;
	}
	if (f->flash) {
		if (bus_unregister(&f->vm.mmio, FZ_VARS_G))
			abort();
		pflash_release(&f->pf);
		f->flash = false;
	}
	for (unsigned int i = 0; i < FZ_ROUTES; i++)
		if (fz_route[i].used)
			abort(); /* a route outlived its device */
	fz_n_workers = 0;	 /* all joined */
	fz_n_sata = 0;
	f->vm.n_counters = 0; /* a new VM after a reboot has its own */
}

/* Create the devices in table order as vm_create() does. */
static void fz_devices_up(struct fz_vm *f)
{
	const struct device_firmware fw = {.efi_vars_volatile = f->vm.opt.efi_vars_volatile,
					   .efi_vars_fd = f->vm.opt.efi_vars_fd,
					   .flash_code = f->vm.opt.flash_code};
	struct device_env env = {&f->vm,     &f->cfg,	  &f->vm.pio,	      &f->vm.mmio,
				 &f->vm.mem, &f->vm.loop, &f->vm.opt.console, &fw,
				 NULL /* no channel sockets: no host I/O here */};

	for (unsigned int i = 0; i < FZ_TYPES; i++)
		if (fz_types[i]->create(&env, 0, &f->state[i]))
			abort();
	if (f->vm.opt.flash_code) {
		if (pflash_init(&f->pf, f->vars, FZ_VARS, 4096) ||
		    bus_register(&f->vm.mmio, FZ_VARS_G, FZ_VARS, &pflash_ops, &f->pf))
			abort();
		f->flash = true;
	}
}

static void fz_setup(struct fz_vm *f, unsigned int setup, uint8_t *ram0, uint8_t *ram1)
{
	memset(f, 0, sizeof(*f));
	f->cfg = fz_cfg;
	f->cfg.acpi = setup >> 1 & 1;
	f->cfg.rng = setup >> 2 & 1;
	f->cfg.boot = setup >> 3 & 1 ? VM_BOOT_EFI : fz_cfg.boot;
	f->cfg.efi_persistent = false;
	f->cfg.autoattach_serial_console = !(setup >> 5 & 1);
	f->cfg.disks = fz_disks;
	f->cfg.n_disks = setup >> 6 & 1 ? 2 : 0;
	fz_disks[0].bus = fz_disks[1].bus = setup >> 11 & 1 ? fz_sata_bus : NULL;
	/* the first SATA disk a CD-ROM drive, with the image or empty */
	fz_disks[0].device = setup >> 11 & setup >> 12 & 1 ? VM_DEV_CDROM : VM_DEV_DISK;
	fz_disks[0].source = fz_disks[0].device == VM_DEV_CDROM && (setup >> 13 & 1)
				 ? VM_DISK_NONE
				 : VM_DISK_HOSTDISK;
	f->cfg.block_multi_queue = setup >> 7 & 1;
	f->cfg.cores = setup >> 7 & 1 ? 4 : 1;
	f->cfg.mem_balloon = setup >> 8 & 1;
	f->cfg.free_page_reporting = setup >> 9 & 1;
	f->cfg.n_channels = setup >> 10 & 1 ? 2 : 0;
	strcpy(f->cfg.channels[0], VM_CHANNEL_GUEST_AGENT);
	strcpy(f->cfg.channels[1], "fuzz.port");
	f->vm.cfg = &f->cfg;
	f->vm.kvm_fd = f->vm.vm_fd = -1;
	f->vm.opt.console.kind = setup >> 4 & 1 ? VM_CONSOLE_NONE : VM_CONSOLE_CAPTURE;
	f->vm.opt.efi_vars_volatile = true;
	f->vm.opt.efi_vars_fd = fz_memfd;
	if (setup & 1) {
		f->vm.opt.flash_code = "OVMF_CODE.fd"; /* q35 and the flash; never opened */
		f->vars = malloc(FZ_VARS);
		if (!f->vars)
			abort();
		memset(f->vars, 0xff, FZ_VARS);
	}
	pthread_mutex_init(&f->vm.capture_lock, NULL);
	f->vm.mem = (struct guest_mem){.n = 2, .total = RAM0 + RAM1, .page_size = 4096};
	f->vm.mem.r[0] = (struct guest_mem_region){0, RAM0, ram0};
	f->vm.mem.r[1] = (struct guest_mem_region){RAM0, RAM1, ram1};
	if (bus_init(&f->vm.pio, "pio") || bus_init(&f->vm.mmio, "mmio") ||
	    event_loop_init(&f->vm.loop) || ftruncate(fz_memfd, 0))
		abort();
	fz_devices_up(f);
}

static void fz_release(struct fz_vm *f)
{
	fz_devices_down(f);
	event_loop_release(&f->vm.loop);
	bus_release(&f->vm.pio);
	bus_release(&f->vm.mmio);
	pthread_mutex_destroy(&f->vm.capture_lock);
	free(f->vm.capture);
	free(f->vars);
}

/* ---- the operations ------------------------------------------------------ */

static const uint16_t fz_pio[] = {
    0x00,		/* DMA controller 1 (legacy.c) */
    0x60,		/* i8042 data */
    0x64,		/* i8042 command/status */
    0x70,		/* RTC index (0x71 data) */
    0x80,		/* POST code */
    0x92,		/* port A */
    0xc0,		/* DMA controller 2 */
    0xe9,		/* debugcon */
    0xf4,		/* debug exit */
    0x2f8,		/* COM2 (absent) */
    0x3e8,		/* COM3 (absent) */
    0x3f8,		/* COM1 */
    0x402,		/* SeaBIOS/OVMF debug port */
    0x600,		/* PM1 status/enable */
    0x604,		/* PM1 control */
    0x608,		/* q35 PM timer */
    0xcf8,		/* PCI address */
    0xcf9,		/* q35 reset control (PCI ports) */
    0xcfc,		/* PCI data */
    0x510,		/* fw_cfg (absent here) */
    FW_ABI_REPORT_PORT, /* report port */
    FW_ABI_EFI_PORT,	/* EFI port */
};
#define FZ_NPIO (sizeof(fz_pio) / sizeof(fz_pio[0]))

static const uint64_t fz_mmio[] = {
    ARCH_PCI_ECAM_GPA,	      /* ECAM */
    ARCH_Q35_ECAM_GPA,	      /* q35's second ECAM */
    FZ_BAR(1),		      /* where slot 1's BAR 0 is now */
    FZ_BAR(2),		      /* slot 2's */
    FZ_BAR(3),		      /* slot 3's */
    ARCH_PCI_MMIO32_START,    /* MMIO32 window */
    ARCH_PCI_MMIO32_HI_START, /* MMIO32 window above ECAM */
    FZ_VARS_G,		      /* OVMF's variable flash */
    ARCH_FLASH_END - FZ_CODE, /* its code (unclaimed here) */
    FZ_BAR5(1),		      /* slot 1's BAR 5 (the AHCI ABAR) */
    FZ_BAR5(2),		      /* slot 2's */
};
#define FZ_NMMIO (sizeof(fz_mmio) / sizeof(fz_mmio[0]))

/* Where the function in slot s has its BAR 0 (s >= 4: slot s - 4's BAR
 * 5), read as a guest would. */
static uint64_t fz_bar(struct fz_vm *f, uint64_t s)
{
	uint32_t bar = 0;
	uint64_t reg = s < 4 ? 0x10 : 0x24;

	bus_read(&f->vm.mmio, ARCH_PCI_ECAM_GPA + ((s & 3) << 15) + reg, &bar, 4);
	return bar & ~0xfu;
}

/* One PIO (pio) or MMIO access op at d[*i]; *i moves past it. */
static void fz_access(struct fz_vm *f, uint8_t op, bool pio, const uint8_t *d, size_t n, size_t *i)
{
	unsigned int w = 1u << (op >> 3 & 3), count = (op >> 5) + 1u;
	bool write = op & 1;
	size_t need = (pio ? 2 : 4) + (write ? w : 0);
	uint8_t v[8] = {0};
	uint64_t a;

	if (*i + need > n) {
		*i = n;
		return;
	}
	if (pio) {
		a = d[*i] < FZ_NPIO ? (uint16_t)(fz_pio[d[*i]] + (int8_t)d[*i + 1])
				    : (uint64_t)(d[*i] - FZ_NPIO) << 8 | d[*i + 1];
	} else {
		uint64_t off = d[*i + 1] | (uint64_t)d[*i + 2] << 8 | (uint64_t)d[*i + 3] << 16;

		if (d[*i] >= FZ_NMMIO)
			a = (uint64_t)(d[*i] - FZ_NMMIO) << 24 | off;
		else
			a = (fz_mmio[d[*i]] < 8 ? fz_bar(f, fz_mmio[d[*i]]) : fz_mmio[d[*i]]) + off;
	}
	if (write)
		memcpy(v, d + *i + need - w, w);
	*i += need;
	for (unsigned int k = 0; k < count; k++) {
		struct bus *b = pio ? &f->vm.pio : &f->vm.mmio;

		if (write)
			bus_write(b, a, v, w);
		else
			bus_read(b, a, v, w);
	}
}

static void fz_ops(struct fz_vm *f, uint8_t *ram, const uint8_t *d, size_t n)
{
	size_t i = 0, l;

	while (i < n) {
		uint8_t op = d[i++];
		uint32_t gpa;

		switch (op & 7) {
		case 0:
		case 1:
			fz_access(f, op, true, d, n, &i);
			break;
		case 2:
		case 3:
			fz_access(f, op, false, d, n, &i);
			break;
		case 4:
			fuzz_ram_write(ram, RAM0, d, n, &i);
			break;
		case 5:
			l = i < n ? d[i++] : 0;
			l = l < n - i ? l : n - i;
			if (f->vm.console_input)
				f->vm.console_input(f->vm.console_input_opaque, d + i, l);
			i += l;
			break;
		case 6:
			if ((op >> 3 & 3) >= 2) {
				fz_worker_run(i < n ? d[i] : 0, op >> 3 & 1);
				i++;
			} else if (op >> 3 & 1) {
				fz_devices_down(f);
				fz_devices_up(f);
			} else if (f->vm.power_button) { /* what vm_power_button() does */
				f->vm.power_button(f->vm.power_button_opaque);
			}
			break;
		default:
			if (i + 2 > n) {
				i = n;
				break;
			}
			gpa = d[i] | (uint32_t)d[i + 1] << 8;
			i += 2;
			bus_write(&f->vm.pio, op >> 3 & 1 ? FW_ABI_REPORT_PORT : FW_ABI_EFI_PORT,
				  &gpa, 4);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *ram0, *ram1;
	struct fz_vm *f;
	size_t n;

	if (size < 4)
		return 0;
	/* page-aligned as guest RAM is (the balloon releases whole pages) */
	ram0 = aligned_alloc(4096, RAM0);
	ram1 = aligned_alloc(4096, RAM1);
	f = malloc(sizeof(*f));
	if (!ram0 || !ram1 || !f)
		abort();
	memset(ram0, 0, RAM0);
	memset(ram1, 0, RAM1);
	n = data[2] | (size_t)data[3] << 8;
	n = n < size - 4 ? n : size - 4;
	memcpy(ram0, data + 4, n < RAM0 ? n : RAM0);
	fz_setup(f, data[0] | (unsigned int)data[1] << 8, ram0, ram1);
	fz_ops(f, ram0, data + 4 + n, size - 4 - n);
	fz_release(f);
	free(f);
	free(ram0);
	free(ram1);
	return 0;
}
