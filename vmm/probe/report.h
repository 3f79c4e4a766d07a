/* SPDX-License-Identifier: MIT */
/*
 * report.h - what the probe guest saw (parsed from its serial
 * output) and what it should have seen (computed from the configuration),
 * compared, printed as JSON or text. The report format is documented in
 * firmware/abi.h.
 *
 * Typical use (cmd_probe):
 *     struct probe_report *exp = calloc(1, sizeof(*exp));
 *     struct probe_report *got = calloc(1, sizeof(*got));
 *     probe_report_expected(cfg, vendor, ram_bytes, exp);
 *     if (probe_report_parse(serial_text, serial_len, got) < 0) -> error
 *     match = probe_report_compare(exp, got, stderr);
 *     probe_report_print_json(stdout, exp, got, match);
 *
 * struct probe_report is large (~40 KiB): allocate it, do not put two on a
 * thread stack. It owns no pointers, so it needs no release.
 */
#ifndef VMLET_PROBE_REPORT_H
#define VMLET_PROBE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "firmware/abi.h"
#include "vmm/util/json_out.h"
#include "vmm/vm_config.h"

#define PROBE_MAX_VCPUS	 FW_ABI_MAX_VCPUS
#define PROBE_MAX_TABLES FW_ABI_MAX_ACPI_TABLES
#define PROBE_MAX_ERRORS 8

struct probe_vcpu {
	uint32_t apic_id; /* initial APIC ID from CPUID */
	uint32_t package, core, thread;
	uint32_t lapic_id; /* local APIC ID register (guest only; = apic_id
			    * in the expected report) */
};

#define PROBE_MAX_PCI 32
#define PROBE_MAX_RNG 4

/* pci= / disk= / rng= lines (firmware/abi.h); see vmm/probe/report_pci.c */
struct probe_pci_fn {
	char bdf[8]; /* "00:01.0" */
	uint16_t vendor, device;
	uint32_t class_code;
};

struct probe_disk {
	char bdf[8];
	char name[64];	   /* expected side: the disk's name (config order) */
	uint64_t capacity; /* bytes; expected: 0 when unknown */
	bool read_only;
	char sha256[65]; /* first MiB, "" when unknown / "-" */
	char serial[21];
};

struct probe_rng {
	char bdf[8];
	uint32_t bytes;
	bool ok;
};

#define PROBE_MAX_NICS 8

/* nic= lines (firmware/abi.h); see vmm/probe/report_net.c */
struct probe_nic {
	char bdf[8];
	char name[64]; /* expected side: the interface's name (config order) */
	char mac[18];  /* "52:54:00:12:34:56" */
	bool link_up;
	uint32_t mtu;	 /* 0: the device offers none */
	char dhcp[24];	 /* "10.0.2.2/24"; "" none (expected: not known) */
	char router[16]; /* "" none */
	bool arp_ok, ping_ok;
	uint64_t rx_ok, tx_ok, echoed;
	/* nic6= (guest side): link-local address, echo to ff02::1 answered
	 * and by whom ("" none) */
	char ll6[40], peer6[40];
	bool ping6_ok;
	/* expected side: the binding promises the guest an address by DHCP */
	bool want_dhcp;
	char binding[12]; /* tap, bridge, masquerade, passt */
};

/* efiVendor/efiRevision/efiSpec/efiTables: the UEFI firmware the probe ran
 * under (EFI VMs), present = false without those lines. */
#define PROBE_MAX_EFI_TABLES 16
struct probe_efi {
	bool present;
	char vendor[65];
	uint32_t revision;
	char spec[12];
	uint32_t n_tables;
	char tables[PROBE_MAX_EFI_TABLES][40]; /* names (ACPI20...) or GUIDs */
};

struct probe_report {
	int abi_version; /* FW_ABI_VERSION of the report */
	int vendor;	 /* ARCH_VENDOR_INTEL / ARCH_VENDOR_AMD, -1 other */
	char vendor_id[13];
	char topo_source[24];
	uint32_t smt_shift, pkg_shift;
	uint32_t tsc_deadline; /* CPUID.1:ECX[24] of the BSP */
	char brand[49];	       /* its brand string as the probe prints it */

	uint32_t n_vcpus;
	struct probe_vcpu vcpus[PROBE_MAX_VCPUS];
	uint32_t n_missing; /* MADT CPUs that did not answer */
	uint32_t missing[PROBE_MAX_VCPUS];

	uint32_t sockets, cores_per_socket, threads_per_core;
	uint64_t memory_bytes;
	/* expected report only: the guest may see up to this much less RAM
	 * (0 = exactly memory_bytes; a BIOS keeps some for its tables) */
	uint64_t memory_slack;

	uint32_t n_tables;
	char tables[PROBE_MAX_TABLES][5]; /* NUL-terminated signatures */
	uint32_t n_bad_tables;
	char bad_tables[PROBE_MAX_TABLES][5];

	uint32_t n_madt;
	uint32_t madt_apic_ids[PROBE_MAX_VCPUS];

	/* guest-measured TSC ticks (not compared): AP start, whole probe
	 * before its serial output; 0 when not reported */
	uint64_t tsc_aps, tsc_probe;

	uint32_t n_errors; /* error= lines the guest printed */
	char errors[PROBE_MAX_ERRORS][128];

	uint32_t n_pci, n_disks, n_rng;
	struct probe_pci_fn pci[PROBE_MAX_PCI];
	struct probe_disk disks[PROBE_MAX_PCI];
	struct probe_rng rng[PROBE_MAX_RNG];

	uint32_t n_nics;
	struct probe_nic nics[PROBE_MAX_NICS];

	struct probe_efi efi;
	/* biosVendor=: SMBIOS type 0's vendor ("" not reported; expected:
	 * "SeaBIOS" through SeaBIOS, else "vmlet") */
	char bios_vendor[49];
	/* systemUuid=: SMBIOS type 1's UUID, lower case ("" not reported;
	 * expected: firmware.uuid, "" (not compared) when the VM has none) */
	char system_uuid[37];
	/* tpm=: "crb|tis <startupRc> <getRandomRc> <bytes>" or "error <step>" (""
	 * not reported; expected: "tis 0x0 0x0 8" with devices.tpm and ACPI,
	 * "crb 0x0 0x0 8" with tpm.persistent, where a
	 * firmware that started the TPM first (OVMF) makes Startup's 0x100,
	 * TPM_RC_INITIALIZE, as good) */
	char tpm[48];
	/* expected report only: how the probe booted when that differs from
	 * what a real guest of the VM would go through ("" none) */
	char note[192];
};

/* report_net.c: a nic= or nic6= line (0 when handled or not one, -EBADMSG
 * when malformed); the expected NICs of cfg (names, MACs from the manifest
 * or derived as vmlet derives them, MTU; its virtio NICs only: the probe
 * guest has no e1000e driver); the expected side of expected NIC index
 * i as the VM really attached it (MAC, MTU, binding, the address vmlet's
 * DHCP responder hands out or 0, whether an address is promised); the
 * comparison (each difference one line on diff); the "nics" JSON member. */
int probe_report_net_line(struct probe_report *r, const char *key, const char *v, size_t n);
void probe_report_net_expected(const struct vm_config *cfg, struct probe_report *r);
void probe_report_net_attached(struct probe_report *r, unsigned int i, const uint8_t mac[6],
			       unsigned int mtu, const char *binding, uint32_t lease_ip,
			       unsigned int lease_prefix, bool want_dhcp);
bool probe_report_net_compare(const struct probe_report *exp, const struct probe_report *got,
			      FILE *diff);
int probe_report_net_json(struct json_object *o, const struct probe_report *r,
			  const struct probe_report *names, bool guest);

/* report_pci.c: a pci=/disk=/rng= line (0 when handled or not one
 * of them, -EBADMSG when malformed); the expected disks from cfg; the
 * "pci", "disks" and "rng" JSON members (names: the expected report whose
 * disk names label r's disks by position, or NULL). */
int probe_report_pci_line(struct probe_report *r, const char *key, const char *v, size_t n);
void probe_report_pci_expected(const struct vm_config *cfg, struct probe_report *r);
int probe_report_pci_json(struct json_object *o, const struct probe_report *r,
			  const struct probe_report *names);

/* report_efi.c: an efi*, biosVendor, systemUuid or tpm line (1 when not one, 0 handled, -EBADMSG
 * malformed); what an EFI VM's firmware must show (vendor "vmlet", the
 * ACPI 2.0 and SMBIOS 3 tables); the comparison (false and a line on diff
 * per difference); the "efi" JSON member (nothing when absent). */
int probe_report_efi_line(struct probe_report *r, const char *key, const char *v, size_t n);
void probe_report_efi_expected(const struct vm_config *cfg, struct probe_report *r);
bool probe_report_efi_compare(const struct probe_report *exp, const struct probe_report *got,
			      FILE *diff);
int probe_report_efi_json(struct json_object *o, const struct probe_report *r);

/*
 * Parse the report out of text[0..len) (the whole serial output: anything
 * before the BEGIN line and after the END line is ignored). text need not
 * be NUL-terminated. Untrusted input: every field is bounded.
 * Returns 0, -ENOENT (no BEGIN line), -EPROTO (other ABI version),
 * -EBADMSG (malformed line or value, over a limit, or no END line).
 * *r is zeroed first and holds what was parsed even on error.
 */
int probe_report_parse(const char *text, size_t len, struct probe_report *r);

/*
 * The report a correct VM with configuration *cfg presents: vCPUs in index
 * order with APIC IDs and (package, core, thread) from arch/
 * (arch_topo_apic_id / arch_topo_decompose), the same IDs in madtApicIds,
 * cfg's sockets/cores/threads, vendor (ARCH_VENDOR_*), and
 * memoryBytes = ram_visible_bytes: the sum of the RAM (type 1) entries of
 * the e820 map the VMM gives the guest (not cfg->memory_bytes: the
 * legacy/BIOS area below 1 MiB is reserved). acpiTables holds the tables
 * every vmlet VM must have (RSDP XSDT FACP DSDT APIC): the comparison
 * requires them, extra tables are allowed. The probe finds the APs through
 * the MADT, so a VM without ACPI (cfg->acpi false) cannot match: its guest
 * reports only the BSP and "error=no ACPI RSDP".
 * Returns 0 or -EINVAL (topology out of range).
 */
int probe_report_expected(const struct vm_config *cfg, int vendor, uint64_t ram_visible_bytes,
			  struct probe_report *r);
/* The CPU facts the VM's CPUID shows (struct vm: tsc_deadline, cpu_brand,
 * 48 bytes NUL-padded), as the probe reports them (firmware/abi.h). */
void probe_report_expect_cpu(struct probe_report *r, bool tsc_deadline, const char *brand);

/*
 * true when *got agrees with *exp: same vendor, same set of vCPUs (matched
 * by APIC ID) with the same (package, core, thread), none missing, same
 * sockets/coresPerSocket/threadsPerCore and memoryBytes, every expected
 * ACPI table present with no bad checksum, same madtApicIds in the same
 * order, and no guest error lines. Each difference is written to diff (if
 * not NULL) as one readable line.
 */
bool probe_report_compare(const struct probe_report *exp, const struct probe_report *got,
			  FILE *diff);

/* report_json.c: {"expected":{...},"guest":{...},"match":bool} and a newline,
 * written with vmm/util/json_out.h: 0, -ENOMEM or -EIO. */
int probe_report_print_json(FILE *f, const struct probe_report *exp, const struct probe_report *got,
			    bool match);

/* A readable table of both sides, then "match: yes|no". */
void probe_report_print_text(FILE *f, const struct probe_report *exp,
			     const struct probe_report *got, bool match);

#endif /* VMLET_PROBE_REPORT_H */
