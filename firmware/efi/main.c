// SPDX-License-Identifier: MIT
/*
 * main.c - vmlet's UEFI firmware: the lib's PVH entry lands here at CPL0
 * in long mode. Build the memory map from the PVH memmap, the system
 * table, console, runtime services, ACPI configuration tables; expose the
 * PVH module (an ESP disk image) as a RAM disk; then boot (bootmgr.c). Everything runs at CPL0,
 * which is emulated (slow) on our development hosts: keep work small.
 */
#include "firmware/abi.h"
#include "firmware/efi/fw.h"
#include "firmware/lib/cpu.h"
#include "firmware/lib/pci.h"
#include "firmware/lib/pvh.h"

#define LIMIT_4G      0x100000000ull
#define FADT_FLAGS    112
#define FADT_RESET_OK (1u << 10)

struct efi_mem efi_mem;
struct efi_system_table efi_st;

extern char __fw_start[], __fw_text_end[], __fw_end[];

static struct efi_loaded_image fw_image;
static efi_handle fw_handle;
static uint8_t kstack[8192] FW_ALIGNED(16);

struct hvm_modlist_entry {
	uint64_t paddr, size, cmdline_paddr, reserved;
};

static uint64_t kcall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	(void)nr, (void)a0, (void)a1, (void)a2;
	return 0; /* int3 in an application: ignored */
}

static void fatal(const struct fw_regs *r)
{
	efi_log("fatal: exception %llu error %llx at rip %llx cs %llx rsp %llx",
		(unsigned long long)r->vector, (unsigned long long)r->error,
		(unsigned long long)r->rip, (unsigned long long)r->cs, (unsigned long long)r->rsp);
	fw_poweroff(&efi_power);
}

static uint32_t e820_to_efi(uint32_t type)
{
	switch (type) {
	case 1:
		return EfiConventionalMemory;
	case 3:
		return EfiACPIReclaimMemory;
	case 4:
		return EfiACPIMemoryNVS;
	case 5:
		return EfiUnusableMemory;
	default:
		return EfiReservedMemoryType;
	}
}

static int memmap_init(const struct hvm_start_info *si)
{
	const struct hvm_memmap_entry *e = (const void *)(uintptr_t)si->memmap_paddr;
	uint32_t n = si->memmap_entries;

	mem_init(&efi_mem, LIMIT_4G);
	if (si->version < 1 || !n || !si->memmap_paddr)
		return -1;
	if (n > HVM_MEMMAP_MAX)
		n = HVM_MEMMAP_MAX;
	/* RAM first, then the rest on top: reserved ranges win overlaps */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < n; i++)
			if ((e[i].type == HVM_MEMMAP_RAM) == (pass == 0) && e[i].size)
				mem_set(&efi_mem, e[i].addr, e[i].size, e820_to_efi(e[i].type));
	mem_set(&efi_mem, 0, EFI_PAGE_SIZE, EfiBootServicesData); /* never hand out NULL */
	mem_set(&efi_mem, (uintptr_t)si & ~0xfffull, EFI_PAGE_SIZE, EfiBootServicesData);
	mem_set(&efi_mem, si->memmap_paddr, n * sizeof(*e), EfiBootServicesData);
	if (si->cmdline_paddr)
		mem_set(&efi_mem, si->cmdline_paddr, 4096, EfiBootServicesData);
	if (si->nr_modules && si->modlist_paddr) {
		const struct hvm_modlist_entry *m = (const void *)(uintptr_t)si->modlist_paddr;

		mem_set(&efi_mem, si->modlist_paddr, si->nr_modules * sizeof(*m),
			EfiBootServicesData);
		for (uint32_t i = 0; i < si->nr_modules && i < 8; i++) {
			mem_set(&efi_mem, m[i].paddr, m[i].size, EfiBootServicesData);
			if (m[i].paddr + m[i].size <= LIMIT_4G)
				efi_payload_claim((const void *)(uintptr_t)m[i].paddr, m[i].size);
		}
	}
	/* the firmware itself survives ExitBootServices (runtime services) */
	mem_set(&efi_mem, (uintptr_t)__fw_start, (uintptr_t)(__fw_text_end - __fw_start),
		EfiRuntimeServicesCode);
	mem_set(&efi_mem, (uintptr_t)__fw_text_end, (uintptr_t)(__fw_end - __fw_text_end),
		EfiRuntimeServicesData);
	return 0;
}

static uint64_t pci_ecam;

static void acpi_init(const struct hvm_start_info *si)
{
	static struct fw_acpi_table tables[32];
	const struct acpi_rsdp *rsdp = fw_acpi_find_rsdp(si->rsdp_paddr);
	int errors, n;

	if (!rsdp) {
		efi_log("no ACPI tables");
		return;
	}
	if (rsdp->revision >= 2)
		efi_bs.install_configuration_table(&efi_acpi20_guid, (void *)rsdp);
	efi_bs.install_configuration_table(&efi_acpi10_guid, (void *)rsdp);
	n = fw_acpi_walk(rsdp, tables, (int)FW_ARRAY_SIZE(tables), &errors);
	const struct acpi_header *fadt = fw_acpi_find(tables, n, "FACP");
	const struct acpi_header *dsdt = fw_acpi_find(tables, n, "DSDT");

	fw_acpi_power_info(fadt, dsdt, &efi_power);
	/* ResetSystem writes a HW-reduced sleep register at runtime (Linux
	 * powers such platforms off through it): the OS maps only runtime
	 * regions of the memory map for runtime calls */
	if (efi_power.sleep_ctl.address && efi_power.sleep_ctl.space_id == 0)
		mem_set(&efi_mem, efi_power.sleep_ctl.address, 1, EfiMemoryMappedIO);
	pci_ecam = fw_pci_ecam_from_mcfg(fw_acpi_find(tables, n, "MCFG"));
	if (fadt && fadt->length >= 129 &&
	    (le32((const uint8_t *)fadt + FADT_FLAGS) & FADT_RESET_OK)) {
		memcpy(&efi_reset_reg, (const uint8_t *)fadt + 116, sizeof(efi_reset_reg));
		efi_reset_value = ((const uint8_t *)fadt)[128];
	}
}

/* SMBIOS entry points a VMM left in the BIOS area (0xf0000-0xfffff, 16-byte
 * aligned, checksummed): installed as the SMBIOS 3 / SMBIOS tables; a 3.0
 * entry point ends the scan (one per table; a 2.x one found earlier stays). */
static bool sum_ok(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s == 0;
}

static void smbios_init(void)
{
	for (uintptr_t a = 0xf0000; a < 0x100000; a += 16) {
		const uint8_t *p = (const uint8_t *)a;

		if (*(const volatile uint32_t *)p != 0x334d535f && /* "_SM3" */
		    *(const volatile uint32_t *)p != 0x5f4d535f)   /* "_SM_" */
			continue;
		if (!memcmp(p, "_SM3_", 5) && p[6] >= 0x18 && p[6] <= 0x20 && sum_ok(p, p[6])) {
			efi_bs.install_configuration_table(&efi_smbios3_guid, (void *)p);
			return; /* vmlet's is at 0xf0000: the scan ends at once */
		} else if (!memcmp(p, "_SM_", 4) && p[5] >= 0x1f && p[5] <= 0x20 && sum_ok(p, p[5]))
			efi_bs.install_configuration_table(&efi_smbios_guid, (void *)p);
	}
}

static void ramdisks_init(const struct hvm_start_info *si)
{
	const struct hvm_modlist_entry *m = (const void *)(uintptr_t)si->modlist_paddr;

	for (uint32_t i = 0; si->modlist_paddr && i < si->nr_modules && i < 8; i++) {
		const void *mod = (const void *)(uintptr_t)m[i].paddr;
		struct blkdev *dev;
		struct dp_memmap node;
		struct efi_device_path *dp;

		if (m[i].paddr + m[i].size > LIMIT_4G || m[i].size < 512 ||
		    !memcmp(mod, "\177ELF", 4)) /* payload.c */
			continue;
		if (efi_initrd_is(mod, m[i].size)) {
			efi_initrd_install(mod, m[i].size);
			continue;
		}
		dev = efi_alloc(sizeof(*dev));
		if (!dev)
			continue;
		blk_init_mem(dev, (void *)(uintptr_t)m[i].paddr, m[i].size, 512);
		dp_set(&node.h, DP_HW, DP_HW_MEMMAP, sizeof(node));
		node.mem_type = EfiBootServicesData;
		node.start = m[i].paddr;
		node.end = m[i].paddr + m[i].size - 1;
		dp = efi_dp_append(NULL, &node.h);
		efi_log("ram disk %u: %llu KiB at %llx", i, (unsigned long long)(m[i].size >> 10),
			(unsigned long long)m[i].paddr);
		if (dp)
			efi_disk_add(dev, dp, NULL);
		efi_free(dp);
	}
}

static void tables_init(void)
{
	efi_st = (struct efi_system_table){
	    .hdr = {EFI_SYSTEM_TABLE_SIGNATURE, EFI_2_100_REVISION, sizeof(efi_st), 0, 0},
	    .firmware_vendor = (char16 *)EFI_FW_VENDOR,
	    .firmware_revision = EFI_FW_REVISION,
	    .runtime = &efi_rt,
	    .boot = &efi_bs,
	};
	efi_bs_init();
	efi_rt_init();
	efi_table_crc(&efi_st.hdr);
}

/* A CPL0 request from the CPL3 side (efi_cpl0). */
struct cpl0_req {
	uint64_t (*fn)(void *);
	void *arg;
};

uint64_t efi_cpl0(uint64_t (*fn)(void *), void *arg)
{
	struct cpl0_req q = {fn, arg};

	if (fw_cpl() == 0)
		return fn(arg);
	efi_log_flush();
	return fw_cpl3_yield((uintptr_t)&q);
}

/* CPL3 (native on our hosts): everything up to the images, which the boot
 * manager starts at CPL0 through efi_cpl0(). Returns when nothing (more)
 * boots, non-zero when the firmware cannot continue. */
static uint64_t user_main(void *arg)
{
	const struct hvm_start_info *si = arg;
	const char *cmdline = NULL;

	fw_cpl_fill_idt();
	fw_cpl3_allow_io(FW_ABI_COM1_PORT, 8);
	fw_cpl3_allow_io(FW_ABI_EFI_PORT, 4);
	tables_init();
	efi_console_init(FW_ABI_COM1_PORT);
	if (si->magic != HVM_START_MAGIC || memmap_init(si)) {
		efi_log("no PVH start info with a memory map: cannot continue");
		return 1;
	}
	if (si->cmdline_paddr)
		cmdline = (const char *)(uintptr_t)si->cmdline_paddr;
	acpi_init(si);
	smbios_init();
	fw_image = (struct efi_loaded_image){
	    .revision = EFI_LOADED_IMAGE_REVISION,
	    .system_table = &efi_st,
	    .image_base = __fw_start,
	    .image_size = (uint64_t)(__fw_end - __fw_start),
	    .image_code_type = EfiRuntimeServicesCode,
	    .image_data_type = EfiRuntimeServicesData,
	};
	proto_install(&fw_handle, &efi_loaded_image_guid, &fw_image);
	efi_rng_init();
	ramdisks_init(si);
	efi_virtio_init(pci_ecam);
	efi_table_crc(&efi_st.hdr);
	efi_vars_load();
	efi_log("vmlet UEFI firmware ready: %u memory descriptors", efi_mem.n);
	efi_payload_start((uint32_t)(uintptr_t)si);
	efi_boot_run(fw_handle, cmdline);
	efi_log("nothing (more) to boot: powering off");
	efi_log_flush();
	return 0;
}

/* CPL0: only what must run there (the CPU's tables, CPUID, MSRs), then the
 * rest at CPL3, carrying out its requests for CPL0 (starting images). */
void fw_main(uint32_t start_info)
{
	static uint8_t ustack[65536] FW_ALIGNED(16);
	uint64_t v;
	bool yielded;

	fw_cpl_init_min(kstack + sizeof(kstack), kcall, fatal);
	efi_time_init();
	efi_rng_probe();
	yielded =
	    fw_cpl3_run(user_main, (void *)(uintptr_t)start_info, ustack + sizeof(ustack), &v);
	while (yielded) {
		const struct cpl0_req *q = (const void *)(uintptr_t)v;

		yielded = fw_cpl3_resume(q->fn(q->arg), &v);
	}
	fw_poweroff(&efi_power);
}
