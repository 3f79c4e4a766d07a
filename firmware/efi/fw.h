/* SPDX-License-Identifier: MIT */
/*
 * fw.h - the firmware's internal interfaces: global tables, the internal
 * allocator, logging, and the modules that make up the UEFI core (events,
 * console, images, runtime services, disks). Guest-only (port I/O, the
 * serial console); the pure parts (mem, proto, gpt, fat, pe) have their
 * own headers and host tests.
 */
#ifndef FW_EFI_FW_H
#define FW_EFI_FW_H

#include "firmware/efi/blk.h"
#include "firmware/efi/mem.h"
#include "firmware/efi/proto.h"
#include "firmware/efi/protocols.h"
#include "firmware/lib/acpi.h"

#define EFI_FW_VENDOR	u"vmlet"
#define EFI_FW_REVISION 0x00010000u

extern struct efi_mem efi_mem;
extern struct efi_system_table efi_st;
extern struct efi_boot_services efi_bs;
extern struct efi_runtime_services efi_rt;
extern bool efi_exited_boot_services;
extern struct fw_acpi_power efi_power; /* for ResetSystem, found at boot */
extern struct acpi_gas efi_reset_reg;  /* FADT RESET_REG (address 0: none) */
extern uint8_t efi_reset_value;

/* Zeroed BootServicesData pool memory, NULL when out of memory. */
void *efi_alloc(size_t n);
void efi_free(void *p);
/* Whole BootServicesData pages for bytes (rounded up), not zeroed: DMA
 * buffers and queues for the disk drivers. NULL when out of memory. */
void *efi_alloc_pages(size_t bytes);

/* Firmware messages on the serial console ("efi: ..."). At CPL3 they are
 * kept and go out in one piece at efi_log_flush() (or when the buffer
 * fills): through the VMM's console op when it has one (one exit), else
 * COM1. */
void efi_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void efi_log_flush(void);

/* Run fn(arg) at CPL0 and return its result: from the CPL3 side of the
 * firmware (main.c's user_main and what it calls) through the CPL0 loop
 * in fw_main; at CPL0 a plain call. Pending log lines go out first. */
uint64_t efi_cpl0(uint64_t (*fn)(void *), void *arg);
void efi_console_write(const char *s, size_t n);

/* UCS-2 helpers */
size_t efi_strlen16(const char16 *s);
void efi_ascii_to16(char16 *out, const char *in, size_t cap);

/* boot services table (bs.c) */
void efi_bs_init(void);
void efi_table_crc(struct efi_table_header *h);

/* events and timers (event.c) */
efi_status efi_event_create(uint32_t type, efi_tpl tpl, efi_event_notify fn, const void *ctx,
			    const efi_guid *group, efi_event *ev);
/* An internal wait source: ready() polled by CheckEvent/WaitForEvent. */
efi_status efi_event_create_polled(bool (*ready)(void), efi_event *ev);
efi_status efi_event_signal(efi_event ev);
efi_status efi_event_close(efi_event ev);
efi_status efi_event_check(efi_event ev);
efi_status efi_event_wait(uint64_t n, efi_event *evs, uint64_t *index);
efi_status efi_event_set_timer(efi_event ev, uint32_t type, uint64_t trigger);
void efi_event_signal_type(uint32_t type); /* ExitBootServices, SetVirtualAddressMap */
void efi_event_poll(void);

/* time (time.c): nanoseconds since an arbitrary start; Stall. */
void efi_time_init(void);
void efi_time_stop(void); /* ExitBootServices: stop kvmclock updates */
uint64_t efi_now_ns(void);
void efi_stall_us(uint64_t us);

/* console (console.c) */
void efi_console_init(uint16_t port);

/* images (image.c) */
void efi_image_init(void);
efi_status EFIAPI efi_load_image(bool boot_policy, efi_handle parent, struct efi_device_path *dp,
				 void *src, uint64_t size, efi_handle *out);
efi_status EFIAPI efi_start_image(efi_handle h, uint64_t *exit_size, char16 **exit_data);
efi_status EFIAPI efi_exit(efi_handle h, efi_status st, uint64_t size, char16 *data);
efi_status EFIAPI efi_unload_image(efi_handle h);

/* runtime services (rt.c) */
void efi_rt_init(void);
/* Non-volatile variables from the VMM's store, when it keeps one. */
void efi_vars_load(void);
/* One request on the EFI platform port (firmware/abi.h): its status,
 * FW_ABI_EFI_UNSUPPORTED without the port; *len in and out. */
uint32_t efi_port_call(uint32_t op, void *buf, uint32_t cap, uint32_t *len);

/* a PVH ELF module instead of a disk (payload.c): claim reserves its
 * segments (true: mod is an ELF, not a disk); start enters it (returns
 * only when there is none or it cannot be started). */
bool efi_payload_claim(const void *mod, uint64_t size);
void efi_payload_start(uint32_t start_info);

/* an initrd module (initrd.c): recognised by its content, served through
 * LoadFile2 on Linux's initrd media device path */
bool efi_initrd_is(const void *mod, uint64_t size);
void efi_initrd_install(const void *mod, uint64_t size);

/* boot manager (bootmgr.c): Boot#### in BootOrder, then
 * \EFI\BOOT\BOOTX64.EFI on the disks in the VMM's boot order, then on
 * every other file system; cmdline (may be NULL) becomes the load options
 * of the fallback boot. Returns when nothing booted or all returned. */
void efi_boot_run(efi_handle parent, const char *cmdline);

/* disks (disk.c): a BlockIo device over dev (which must stay), its GPT
 * partitions and, on FAT partitions, SimpleFileSystem. */
efi_status efi_disk_add(const struct blkdev *dev, const struct efi_device_path *dp,
			efi_handle *out);
/* SimpleFileSystem on a FAT volume over dev (fs.c). */
efi_status efi_fs_install(efi_handle h, const struct blkdev *dev);
/* Read a whole file from the SimpleFileSystem on h (pool memory). */
efi_status efi_fs_read_file(efi_handle h, const char16 *path, void **buf, uint64_t *size);

/* the disks on PCI bus 0 (vblk.c), in PCI order: virtio-blk functions
 * and the SATA disks of AHCI functions (efi_sata_add) */
void efi_virtio_init(uint64_t ecam);
/* PCI device << 3 | function of the n-th virtio-blk function, -1: none */
int efi_vblk_devfn(unsigned int n);
/* SATA (sata.c): each ATA disk on the AHCI function f a BlockIo device
 * with path PciRoot(0)/Pci(dev,fn)/Sata(port,0xFFFF,0); BARs assigned
 * from *mmio_next when unprogrammed. efi_sata_stop stops every started
 * port (ExitBootServices). */
struct fw_pci_fn;
void efi_sata_add(const struct fw_pci_fn *f, uint64_t *mmio_next);
void efi_sata_stop(void);

/* RNG (rng.c): probe at CPL0 (CPUID), init installs the protocol */
void efi_rng_probe(void);
void efi_rng_init(void);

/* device path helpers (dp.c) */
struct efi_device_path *efi_dp_append(const struct efi_device_path *a,
				      const struct efi_device_path *node);
struct efi_device_path *efi_dp_file(const char16 *path);
struct efi_device_path *efi_dp_dup(const struct efi_device_path *a);

/* setjmp/longjmp for Exit() (entry.S) */
struct efi_jmp {
	uint64_t rbx, rbp, r12, r13, r14, r15, rsp, rip;
};
int efi_setjmp(struct efi_jmp *j) __attribute__((returns_twice));
FW_NORETURN void efi_longjmp(struct efi_jmp *j, int v);

#endif /* FW_EFI_FW_H */
