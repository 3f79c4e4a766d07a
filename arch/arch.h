/* SPDX-License-Identifier: MIT */
/*
 * arch.h - the x86_64 builders vmm/ uses. Every function here is pure: it
 * computes data (CPUID entries, MSR values, page tables, e820 maps, boot
 * structures, ACPI and SMBIOS tables) from plain inputs and makes no ioctl and no
 * syscall, so each is unit-testable without /dev/kvm. vmm/ fetches host
 * data (KVM_GET_SUPPORTED_CPUID) and applies the results.
 *
 * The structs from <linux/kvm.h> are used as plain data containers.
 * Functions return 0 or -errno (EINVAL for bad input, ENOSPC when an
 * output buffer is too small).
 */
#ifndef VMLET_ARCH_H
#define VMLET_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/kvm.h>

#include "arch/x86_64/layout.h"

typedef uint64_t gpa_t; /* guest-physical address; never dereferenced */

/* ---- CPU topology ------------------------------------------------------ */

struct arch_topology {
	uint32_t sockets, cores, threads; /* all >= 1 */
};

enum arch_cpu_vendor { ARCH_VENDOR_INTEL = 0, ARCH_VENDOR_AMD = 1 };

/* Bit widths of the APIC ID fields: ceil(log2(n)) per level. */
struct arch_apic_widths {
	uint32_t smt_bits;  /* thread field width */
	uint32_t core_bits; /* core field width */
	uint32_t pkg_shift; /* smt_bits + core_bits */
};

void arch_topo_widths(const struct arch_topology *t, struct arch_apic_widths *w);
/* vCPU index (0 .. arch_topo_vcpus()-1, thread fastest) -> APIC ID */
uint32_t arch_topo_apic_id(const struct arch_topology *t, uint32_t index);
/* APIC ID -> (package, core, thread) as Linux derives them */
void arch_topo_decompose(const struct arch_topology *t, uint32_t apic_id, uint32_t *pkg,
			 uint32_t *core, uint32_t *thread);
/* The number of vCPUs of *t: the one place sockets * cores * threads is
 * computed (vm_config_vcpus() too comes here); 64-bit, so no product of
 * three 32-bit counts wraps. */
static inline uint64_t arch_topo_vcpus(const struct arch_topology *t)
{
	return (uint64_t)t->sockets * t->cores * t->threads;
}

/* ---- CPUID ------------------------------------------------------------- */

/*
 * Build the CPUID table of one vCPU from the host's supported entries: all
 * topology leaves consistent with *t for the given vendor enumeration
 * (Intel 0x1, 0x4, 0xB, 0x1F; AMD 0x1, 0xB, 0x80000001, 0x80000008,
 * 0x8000001D, 0x8000001E), vendor string, hypervisor bit and KVM paravirt
 * leaves (passed through). Feature bits are never added (vendor-foreign
 * ones are removed). apic_id must be arch_topo_apic_id() of a vCPU of *t
 * (-EINVAL otherwise). out[] receives at most cap entries, sorted by
 * (function, index); *n gets the count. Details: arch/x86_64/cpuid.c.
 */
int arch_cpuid_build(const struct arch_topology *t, enum arch_cpu_vendor vendor, uint32_t apic_id,
		     const struct kvm_cpuid_entry2 *host, size_t n_host,
		     struct kvm_cpuid_entry2 *out, size_t cap, size_t *n);

/*
 * The vendor a CPUID leaf 0 vendor string names, given as leaf 0 returns
 * it (EBX, EDX, ECX: "Genu" "ineI" "ntel"): ARCH_VENDOR_INTEL for
 * "GenuineIntel", ARCH_VENDOR_AMD for "AuthenticAMD" and "HygonGenuine",
 * -1 for any other. The one table of vendor strings: the host check below
 * and the probe report's reader (what the guest saw) both use it.
 */
int arch_cpu_vendor_of(uint32_t ebx, uint32_t edx, uint32_t ecx);

/*
 * The host's vendor enumeration, from leaf 0 of its CPUID entries (host[],
 * n_host; NULL with 0 is allowed): AMD where arch_cpu_vendor_of() says
 * so, Intel for anything else or without leaf 0. The one
 * place vmlet decides it: vmm/ picks the guest's default vendor with it
 * and arch_cpuid_build() compares against it.
 */
enum arch_cpu_vendor arch_cpuid_host_vendor(const struct kvm_cpuid_entry2 *host, size_t n_host);

/*
 * What KVM supports but KVM_GET_SUPPORTED_CPUID does not show, added to
 * the host's table before arch_cpuid_build() (which keeps both):
 * tsc_deadline (KVM_CAP_TSC_DEADLINE_TIMER: the in-kernel LAPIC emulates
 * the TSC-deadline timer mode) sets CPUID.1:ECX[24]; brand (the host's 48
 * bytes of CPUID 0x8000_0002..4, NUL-padded; NULL or empty: none) fills
 * those leaves where KVM left them zero, as KubeVirt's default host-model
 * CPU shows the host's brand string.
 */
void arch_cpuid_host_extras(struct kvm_cpuid_entry2 *host, size_t n_host, bool tsc_deadline,
			    const char *brand);

/*
 * cpu.model (NULL = unset, KubeVirt's default host-model): shape the host's
 * KVM-supported entries before arch_cpuid_build(). host-model and
 * host-passthrough present the host CPU without the bits libvirt and QEMU
 * leave out of a migratable CPU (the invariant TSC); any other (named)
 * model is -EINVAL: vmlet cannot present it. Details: cpu_model.c.
 */
int arch_cpu_model_apply(const char *model, struct kvm_cpuid_entry2 *host, size_t n);

/* ---- Hyper-V enlightenments (hyperv.c) --------------------------------- */

/* One bit per enlightenment, KubeVirt's features.hyperv names (QEMU's
 * hv-* flag in the comment); ARCH_HV_TIME is clock.timer.hyperv. */
#define ARCH_HV_RELAXED		(1u << 0)  /* hv-relaxed */
#define ARCH_HV_VAPIC		(1u << 1)  /* hv-vapic */
#define ARCH_HV_SPINLOCKS	(1u << 2)  /* hv-spinlocks=retries */
#define ARCH_HV_VPINDEX		(1u << 3)  /* hv-vpindex */
#define ARCH_HV_RUNTIME		(1u << 4)  /* hv-runtime */
#define ARCH_HV_SYNIC		(1u << 5)  /* hv-synic */
#define ARCH_HV_STIMER		(1u << 6)  /* hv-stimer (synictimer) */
#define ARCH_HV_STIMER_DIRECT	(1u << 7)  /* hv-stimer-direct */
#define ARCH_HV_RESET		(1u << 8)  /* hv-reset */
#define ARCH_HV_FREQUENCIES	(1u << 9)  /* hv-frequencies */
#define ARCH_HV_REENLIGHTENMENT (1u << 10) /* hv-reenlightenment */
#define ARCH_HV_TLBFLUSH	(1u << 11) /* hv-tlbflush */
#define ARCH_HV_TLBFLUSH_DIRECT (1u << 12) /* hv-tlbflush-direct */
#define ARCH_HV_TLBFLUSH_EXT	(1u << 13) /* hv-tlbflush-ext */
#define ARCH_HV_IPI		(1u << 14) /* hv-ipi */
#define ARCH_HV_EVMCS		(1u << 15) /* hv-evmcs (Intel) */
#define ARCH_HV_VENDOR_ID	(1u << 16) /* hv-vendor-id=vendor_id */
#define ARCH_HV_TIME		(1u << 17) /* hv-time (clock.timer.hyperv) */
/* only through hypervPassthrough (hv-passthrough), as QEMU has them */
#define ARCH_HV_CRASH	   (1u << 18) /* hv-crash */
#define ARCH_HV_AVIC	   (1u << 19) /* hv-avic */
#define ARCH_HV_XMM_INPUT  (1u << 20) /* hv-xmm-input */
#define ARCH_HV_MSR_BITMAP (1u << 21) /* hv-emsr-bitmap */

struct arch_hv {
	uint32_t features;	   /* ARCH_HV_* */
	uint32_t spinlock_retries; /* with ARCH_HV_SPINLOCKS (else never notify) */
	char vendor_id[12];	   /* with ARCH_HV_VENDOR_ID: zero-padded, no NUL */
	uint16_t evmcs_version;	   /* with ARCH_HV_EVMCS: the range KVM enabled */
	bool kvm_hidden;	   /* features.kvm.hidden: no KVM signature */
	/* hypervPassthrough: the version (0x4000_0002) and limits
	 * (0x4000_0005) KVM reports, in place of QEMU's defaults */
	bool host_ids;
	uint32_t version[4], limits[4];
};

/* Whether *hv presents Hyper-V at all: any enlightenment but the vendor
 * id alone (QEMU's hyperv_enabled()). */
bool arch_hv_enabled(const struct arch_hv *hv);

/*
 * hypervPassthrough (QEMU's hv-passthrough): every enlightenment whose
 * bits KVM offers in sup[] (KVM_GET_SUPPORTED_HV_CPUID), and KVM's vendor,
 * version, limits and spinlock retries, into *hv (features added to what
 * it has). 0, or -EINVAL without KVM's leaf 0x4000_0000.
 */
int arch_hv_passthrough(struct arch_hv *hv, const struct kvm_cpuid_entry2 *sup, size_t n_sup);

/*
 * The first enlightenment of *hv whose CPUID bits the host's KVM does not
 * offer in sup[] (KVM_GET_SUPPORTED_HV_CPUID: n_sup entries, NULL with 0
 * allowed), as a phrase for an error ("synthetic timers (synictimer)");
 * NULL when KVM offers them all. The bits checked are the bits
 * arch_hv_cpuid() sets for the feature, as QEMU checks them.
 */
const char *arch_hv_unsupported(const struct arch_hv *hv, const struct kvm_cpuid_entry2 *sup,
				size_t n_sup);

/*
 * Rewrite a vCPU's finished CPUID table e[0..*n) (from arch_cpuid_build;
 * room for cap entries) for *hv: with an enlightenment, the Hyper-V leaves
 * 0x4000_0000..0x4000_0005 (..0x4000_000A with a nested feature) built
 * from hv->features, and KVM's leaves moved from 0x4000_00xx to
 * 0x4000_01xx (QEMU's layout: Windows and Linux find Hyper-V at the base,
 * Linux and KVM find KVM's signature at the next 0x100 step); with
 * kvm_hidden, KVM's leaves removed. Sorted again by (function, index).
 * 0, -EINVAL, or -ENOSPC. Details: arch/x86_64/hyperv.c.
 */
int arch_hv_cpuid(const struct arch_hv *hv, struct kvm_cpuid_entry2 *e, size_t *n, size_t cap);

/* ---- MSRs -------------------------------------------------------------- */

/* Initial MSR values for a vCPU (PAT, MISC_ENABLE, SYSENTER/STAR zeroed,
 * TSC 0, APIC base with BSP flag for index 0). Returns count, or -ENOSPC. */
int arch_msrs_initial(uint32_t vcpu_index, struct kvm_msr_entry *out, size_t cap);

/* ---- memory map -------------------------------------------------------- */

struct arch_e820_entry {
	uint64_t addr, size;
	uint32_t type; /* 1 RAM, 2 reserved, 3 ACPI */
} __attribute__((packed));
#define ARCH_E820_RAM	   1
#define ARCH_E820_RESERVED 2
#define ARCH_E820_ACPI	   3
#define ARCH_E820_MAX	   16 /* more than arch_e820_build ever emits */

/* RAM regions for mem_bytes of guest memory around the MMIO hole.
 * mem_bytes is rounded down to 4 KiB; less than 2 MiB is -EINVAL. */
struct arch_ram_region {
	gpa_t gpa;
	uint64_t size;
};
int arch_ram_regions(uint64_t mem_bytes, struct arch_ram_region out[2], size_t *n);
/* The same with low RAM ending at low_max (<= ARCH_MMIO_HOLE_START, 4 KiB
 * aligned) instead of the hole: the q35 layout OVMF expects. */
int arch_ram_regions_below(uint64_t mem_bytes, uint64_t low_max, struct arch_ram_region out[2],
			   size_t *n);
/* low_max for a q35-like (OVMF) VM of mem_bytes: below ARCH_Q35_ECAM_GPA. */
uint64_t arch_q35_low_max(uint64_t mem_bytes);
/* The CMOS bytes a PC BIOS leaves for the memory size (0x15-0x18 base and
 * extended KiB, 0x30-0x31, 0x34-0x35 64 KiB blocks above 16 MiB, 0x5b-0x5d
 * 64 KiB blocks above 4 GiB), as QEMU's pc/q35 set them; OVMF sizes low RAM
 * with them. Saturates where the fields do. */
void arch_cmos_memory(uint64_t low_bytes, uint64_t high_bytes, uint8_t cmos[128]);

/* e820 map for mem_bytes of RAM: low RAM, EBDA/BIOS reserved, ACPI area,
 * RAM below the hole, reserved ECAM/IOAPIC/LAPIC, RAM above 4 GiB. Sorted,
 * non-overlapping. */
int arch_e820_build(uint64_t mem_bytes, struct arch_e820_entry *out, size_t cap, size_t *n);
/* The map a BIOS firmware starts from (fw_cfg etc/e820): RAM below the
 * hole and above 4 GiB, and reserved the ECAM window and KVM's private
 * pages (ARCH_IDENTITY_MAP_GPA, ARCH_TSS_GPA). The firmware reserves its own areas (EBDA,
 * BIOS, ACPI) in the map it hands to the OS. Same errors. */
int arch_e820_firmware(uint64_t mem_bytes, struct arch_e820_entry *out, size_t cap, size_t *n);

/* ---- page tables and registers ----------------------------------------- */

/* Identity-map 0..4 GiB with 2 MiB pages into low_mem at ARCH_PML4_GPA..;
 * low_mem is the host view of guest RAM starting at gpa 0. */
int arch_pgtable_build(uint8_t *low_mem, uint64_t low_size);

/* Write the boot GDT at ARCH_GDT_GPA (null, code32, code64, data, tss).
 * The selectors follow Linux Documentation/arch/x86/boot.rst (64-bit boot
 * protocol: __BOOT_CS 0x10, __BOOT_DS 0x18). */
#define ARCH_GDT_SEL_CODE32 0x08
#define ARCH_GDT_SEL_CODE64 0x10
#define ARCH_GDT_SEL_DATA   0x18
#define ARCH_GDT_SEL_TSS    0x20 /* 16-byte system descriptor */
#define ARCH_GDT_SIZE	    48
int arch_gdt_build(uint8_t *low_mem, uint64_t low_size);

/* Register state for a 64-bit Linux boot-protocol entry (paging on, rsi =
 * zero page) or for a 32-bit PVH entry (protected mode, paging off, ebx =
 * start_info). *regs is overwritten; in *sregs the segment registers, GDT,
 * IDT, CR0/CR3/CR4 and EFER are overwritten and the rest (apic_base, cr8,
 * interrupt_bitmap) is kept, so start from KVM_GET_SREGS. */
void arch_regs_linux64(uint64_t entry, struct kvm_regs *regs, struct kvm_sregs *sregs);
void arch_regs_pvh32(uint32_t entry, struct kvm_regs *regs, struct kvm_sregs *sregs);
/* The reset state in real mode, executing at F000:FFF0 of the BIOS copy
 * below 1 MiB (CS base 0xF0000, not the 0xFFFF0000 alias at the top of
 * 4 GiB: vmlet maps its BIOS image in low RAM only). Same contract. */
void arch_regs_bios(struct kvm_regs *regs, struct kvm_sregs *sregs);
/* The architectural reset state (Intel SDM Vol. 3A §9.1.4): real mode,
 * CS selector 0xf000 with base 0xffff0000, IP 0xfff0, so the first fetch
 * is at 0xfffffff0, the top of a flash image below 4 GiB. */
void arch_regs_reset(struct kvm_regs *regs, struct kvm_sregs *sregs);
/* True when the registers are the reset state (F000:FFF0 in real mode,
 * rsp, CR3 and EFER zero): what KVM on AMD shows after a triple fault,
 * since it reinitialises the vCPU at the SVM shutdown intercept; the
 * state the guest faulted in is then lost. */
bool arch_regs_is_reset(const struct kvm_regs *regs, const struct kvm_sregs *sregs);

/* ---- boot payloads ----------------------------------------------------- */

struct arch_boot_info {
	uint64_t mem_bytes;
	const char *cmdline; /* may be NULL */
	gpa_t initrd_gpa;    /* 0 = none */
	uint64_t initrd_size;
	gpa_t rsdp_gpa; /* 0 = no ACPI */
};

/*
 * bzImage: validate the setup header (boot protocol >= 2.06, 64-bit entry,
 * relocatable or loadable at ARCH_HIGH_LOAD_GPA), copy the protected-mode
 * kernel to ARCH_HIGH_LOAD_GPA, build the zero page (e820, cmdline, initrd,
 * acpi_rsdp_addr) at ARCH_ZERO_PAGE_GPA. *entry = 64-bit entry point.
 * Errors: -ENOEXEC not a usable bzImage (no XLF_KERNEL_64, i.e. protocol
 * < 2.12), -E2BIG cmdline longer than cmdline_size, -ENOMEM low RAM below
 * the kernel's pref_address + init_size, -ERANGE initrd overlapping the
 * kernel or beyond RAM / initrd_addr_max (use arch_linux_initrd_gpa()).
 */
int arch_linux_load(uint8_t *low_mem, uint64_t low_size, const uint8_t *image, size_t image_len,
		    const struct arch_boot_info *bi, uint64_t *entry);

/* Highest gpa at which an initrd of size bytes may start for this kernel
 * (initrd_addr_max and RAM below the hole), or 0 if it cannot fit. */
gpa_t arch_linux_initrd_gpa(const uint8_t *image, size_t image_len, uint64_t mem_bytes,
			    uint64_t size);

/*
 * The same two for a loader that reads the protected-mode kernel from the
 * file straight into guest RAM: hdr is the file's first hdr_len bytes
 * (ARCH_LINUX_HDR_LEN, or the whole file if shorter; the setup header lies
 * within them), image_len the file's size. arch_linux_load_hdr() does
 * everything arch_linux_load() does (same checks and errors) except the
 * copy, which it leaves to the caller: bytes [pl->offset, pl->offset +
 * pl->len) of the file to pl->gpa, a range it checked lies in low_mem.
 */
#define ARCH_LINUX_HDR_LEN 1024
struct arch_linux_payload {
	uint64_t offset, len;
	gpa_t gpa;
};
int arch_linux_load_hdr(uint8_t *low_mem, uint64_t low_size, const uint8_t *hdr, size_t hdr_len,
			uint64_t image_len, const struct arch_boot_info *bi, uint64_t *entry,
			struct arch_linux_payload *pl);
gpa_t arch_linux_initrd_gpa_hdr(const uint8_t *hdr, size_t hdr_len, uint64_t image_len,
				uint64_t mem_bytes, uint64_t size);

/* ELF with a PVH note (XEN_ELFNOTE_PHYS32_ENTRY): copy PT_LOAD segments to
 * their physical addresses (must lie in low RAM below the hole) and return
 * the 32-bit entry. A segment's bss is zeroed without writing the pages of
 * low_mem that read as zero already (fresh guest RAM stays unbacked). */
int arch_pvh_load(uint8_t *low_mem, uint64_t low_size, const uint8_t *elf, size_t elf_len,
		  uint32_t *entry);
/* hvm_start_info (version 1) + memmap + cmdline at ARCH_START_INFO_GPA. */
int arch_pvh_start_info_build(uint8_t *low_mem, uint64_t low_size, const struct arch_boot_info *bi);

/* ---- ACPI -------------------------------------------------------------- */

struct arch_acpi_config {
	struct arch_topology topo;
	const uint32_t *apic_ids; /* n_vcpus entries */
	uint32_t n_vcpus;
	int pci; /* nonzero: MCFG + PCI0 host bridge in DSDT */
	/* optional: 32 entries, the GSI that INTA..INTD of bus-0 slot s use
	 * (0 = default swizzle, GSI 16 + ((s + pin) & 7)); goes into _PRT */
	const uint8_t *pci_irq_pins;
	int serial; /* nonzero: COM1 in the DSDT */
	/* nonzero: a TPM 2.0 CRB at ARCH_TPM_CRB_GPA: the TPM2 table (start
	 * method CRB, its control area) and the MSFT0101 device in the DSDT */
	int tpm;
	/* with tpm: the FIFO (TIS) interface instead, as QEMU's tpm-tis: TPM2
	 * start method 6 (no control area), MSFT0101 over ARCH_TPM_TIS_SIZE */
	int tpm_tis;
};

/*
 * Build RSDP, XSDT, FADT, FACS, DSDT (with our own AML emitter: \_S5,
 * power button, COM1, PCI0), MADT (LAPIC or x2APIC entries per vCPU,
 * IOAPIC, interrupt source overrides), MCFG and (cfg->tpm) TPM2 into buf, which the guest
 * sees at gpa base. The RSDP comes first. *used = bytes written.
 * base must be 16-byte aligned and the tables below 4 GiB. The FADT has no
 * SMI command port, so the PM1a control block must read with SCI_EN (bit 0)
 * set; the power button is the PM1 fixed feature (PWRBTN_STS bit 8); the
 * reset register is port 0x64, value 0xFE. See arch/x86_64/acpi.c.
 */
int arch_acpi_build(uint8_t *buf, size_t cap, gpa_t base, const struct arch_acpi_config *cfg,
		    size_t *used);

/* ---- SMBIOS ------------------------------------------------------------ */

/* What identifies the VM in SMBIOS type 1 (firmware.serial, firmware.uuid
 * of the VMI); NULL = not set. */
struct arch_smbios_ids {
	const char *serial;
	const char *uuid; /* "01234567-89ab-cdef-0123-456789abcdef" */
	int no_type0;	  /* leave type 0 to the firmware (SeaBIOS adds its own) */
};
#define ARCH_SMBIOS_ENTRY_SIZE 24   /* the SMBIOS 3.0 "_SM3_" entry point */
#define ARCH_SMBIOS_TABLES_OFF 0x20 /* where arch_smbios_build puts the tables */

/*
 * SMBIOS 3.0 structures for the guest, the same for every VM and boot path:
 * type 0 (vendor "vmlet", version "1.0"; not with ids->no_type0), type 1 (manufacturer and family
 * "KubeVirt", product "None", serial and UUID from *ids), type 127. *used =
 * bytes written. -ENOSPC when cap is too small, -EINVAL for a malformed
 * uuid. See arch/x86_64/smbios.c.
 */
int arch_smbios_tables(uint8_t *buf, size_t cap, const struct arch_smbios_ids *ids, size_t *used);
/* The entry point for tables_len bytes of structures at tables_gpa. */
void arch_smbios_entry(uint8_t ep[ARCH_SMBIOS_ENTRY_SIZE], gpa_t tables_gpa, uint32_t tables_len);
/* Both in one buffer the guest sees at gpa (16-byte aligned, else
 * -ENOSPC): the entry point at buf[0], the structures from
 * buf[ARCH_SMBIOS_TABLES_OFF]. *used = bytes written. */
int arch_smbios_build(uint8_t *buf, size_t cap, gpa_t gpa, const struct arch_smbios_ids *ids,
		      size_t *used);

/*
 * The same tables for a BIOS firmware that loads them itself through
 * fw_cfg (arch/x86_64/acpi_loader.c documents the script format). tables
 * is what arch_acpi_build() wrote for gpa base (used bytes, RSDP first).
 * Rewrites the pointers in it into offsets within the tables file and
 * writes the script (ALLOCATE, ADD_POINTER and ADD_CHECKSUM commands) to
 * script. The files: ARCH_ACPI_FILE_RSDP = tables[0, ARCH_ACPI_RSDP_SIZE),
 * ARCH_ACPI_FILE_TABLES = tables[*tables_off, used), ARCH_ACPI_FILE_LOADER
 * = script[0, *script_len). -EINVAL (not such a blob), -ENOSPC (script).
 */
#define ARCH_ACPI_FILE_RSDP   "etc/acpi/rsdp"
#define ARCH_ACPI_FILE_TABLES "etc/acpi/tables"
#define ARCH_ACPI_FILE_LOADER "etc/table-loader"
#define ARCH_ACPI_RSDP_SIZE   36
#define ARCH_ACPI_LOADER_MAX  (32 * 128)
int arch_acpi_loader_build(uint8_t *tables, size_t used, gpa_t base, uint8_t *script, size_t cap,
			   size_t *script_len, size_t *tables_off);

/*
 * The guest's kvm-clock at a TSC value, from its pvclock record (the
 * ARCH_PVCLOCK_SIZE bytes at MSR_KVM_SYSTEM_TIME_NEW's address, untrusted:
 * guest memory), into *ns: 0; -EAGAIN while the record's version is odd
 * (being written); -EINVAL for a record never written or a TSC before its
 * stamp (pvclock.c).
 */
#define ARCH_PVCLOCK_SIZE 32
int arch_pvclock_ns(const uint8_t rec[ARCH_PVCLOCK_SIZE], uint64_t tsc, uint64_t *ns);

#endif /* VMLET_ARCH_H */
