/* SPDX-License-Identifier: MIT */
/*
 * probe.h - the probe guest's two halves. main.c runs at CPL0 (entry, CPU
 * and APIC reads on every CPU, AP start, serial output, power-off: as few
 * instructions as possible, each costs ~1 us on our hosts); user.c runs
 * at CPL3 (memory map, ACPI, topology derivation, the report) and calls
 * CPL0 through fw_kcall().
 */
#ifndef FW_PROBE_PROBE_H
#define FW_PROBE_PROBE_H

#include "firmware/abi.h"
#include "firmware/lib/acpi.h"
#include "firmware/probe/topo.h"

#define PROBE_MAX_CPUS	 FW_ABI_MAX_VCPUS
#define PROBE_TRAMPOLINE 0x8000u /* arch/x86_64/layout.h: firmware-owned */

/* What one CPU read about itself at CPL0. Slot 0 is the BSP, APs take the
 * next slot in arrival order. */
struct probe_cpu {
	uint32_t done; /* set last (release) */
	uint32_t lapic_id;
	struct topo_cpuid id;
};

extern struct probe_cpu probe_cpus[PROBE_MAX_CPUS];
/* Power-off data found by the CPL3 part (used by the fatal handler too). */
extern struct fw_acpi_power probe_power;
/* TSC at fw_main() entry. */
extern uint64_t probe_tsc0;
/* The BSP's CPUID 0x8000_0002..4 brand string (zeros when absent). */
extern char probe_brand[49];

/* kcall numbers */
enum {
	PROBE_KC_WRITE = 1, /* (buf, len): serial output */
	PROBE_KC_START_APS, /* (apic_ids, n, need_x2apic): returns CPUs done */
	PROBE_KC_POWEROFF,  /* (): does not return */
	PROBE_KC_ALLOW_IO,  /* (port, n): grant ports to CPL3 */
	PROBE_KC_END,	    /* (enum probe_end_mode): does not return */
};

/* How the probe ends (end.c; vmlet.end=<name> on its command line):
 * poweroff (ACPI S5), reboot (i8042 reset line), crash (triple fault),
 * hold (cli; hlt forever), button (wait for the ACPI power button's
 * status bit, then power off). */
enum probe_end_mode {
	PROBE_END_POWEROFF,
	PROBE_END_REBOOT,
	PROBE_END_CRASH,
	PROBE_END_HOLD,
	PROBE_END_BUTTON,
};
/* The mode named name (poweroff for an unknown name). */
int probe_end_mode(const char *name);
/* CPL3: end as mode says. Does not return. */
FW_NORETURN void probe_end(int mode);
/* vmlet.msix: route and unmask every MSI-X vector of every PCI function
 * (table entries to APIC 0, MSI-X enabled), as a Linux guest leaves them
 * for the VMM's teardown; appends msixRouted=<functions> <vectors>. */
void probe_msix_route(struct fw_buf *out, uint64_t ecam);
/* Append pci=/disk=/rng=/nic= lines (firmware/abi.h) for bus 0 at ecam
 * (virtio_report.c). With hostile, first attack each virtio-blk with
 * malformed rings (a buffer outside RAM, an absurd length, a descriptor
 * loop, an avail index far ahead) and check it still serves good requests
 * after each: one hostile=<bb:dd.f> ok|<failed step> line per disk; each
 * virtio-net likewise (virtio_net_hostile.c). */
void probe_virtio_report(struct fw_buf *out, uint64_t ecam, bool hostile);

/* Timed I/O on the first virtio-blk (blkbench.c, for scripts/bench-blk):
 * mode idle (set up only), qd1 / qd32 (4 KiB random reads at queue depth
 * 1 / 32), seqread / seqwrite (1 MiB sequential, queue depth 1; the writes
 * are flushed after the clock stops), write / wflush (one 1 MiB write of
 * byte k = k * 7 + k / 4096 at sector 0, without / with a flush), verify
 * (4096 random 4 KiB reads, 32 in flight, each block must start with
 * "VMLETBLK" and its block number as %08u: errors counts those that do
 * not). Appends
 * blkBench=<bb:dd.f> <mode> <requests> <bytes> <TSC ticks> <errors>. */
void probe_blk_bench(struct fw_buf *out, uint64_t ecam, const char *mode);
/* The same on the first ATA disk of the first AHCI function (ahcibench.c):
 * modes idle, qd1, qd32 (READ FPDMA QUEUED, 32 slots), seqread, seqwrite
 * (then FLUSH CACHE EXT, untimed); the same blkBench= line. */
void probe_sata_bench(struct fw_buf *out, uint64_t ecam, const char *mode);

/* Write test of the virtio-blk at PCI address where ("00:03.0"), or of
 * the nth one in bus order ("#2") (blktest.c; vmlet.iotest=<where>, which
 * `vmlet probe --io-test DISK` sets): on a writable disk it overwrites the first 64 KiB
 * (patterns written, flushed and read back, a write in two segments, write
 * zeroes and discard when offered, an out-of-range read refused); on a
 * read-only one a write must fail with IOERR. Appends
 * ioTest=<bb:dd.f> ok|<failed step> (address "-" when there is no such disk). */
void probe_blk_test(struct fw_buf *out, uint64_t ecam, const char *where);

/* Traffic on the first virtio-net (netbench.c, for scripts/bench-net):
 * mode tx64 / tx1500 / tx64k (TSO) sends, rx64 / rx1500 / rx64k counts
 * what the host sends. Appends netBench=<bb:dd.f> <mode> <frames>
 * <bytes> <TSC ticks> <frames missing>. */
void probe_net_bench(struct fw_buf *out, uint64_t ecam, const char *mode);

/* vmlet.dirty=T[,H] (dirty.c, for scripts/bench-migrate), after the report:
 * write each of the T MiB of pages from PROBE_DIRTY_BASE once (its first
 * word: its index), print dirtyReady=<pages> <hot pages>, then, when H > 0,
 * forever: a pass checks and rewrites the first H MiB (page i of round r
 * holds r << 32 | i), checks a rotating sixteenth of the other pages, and
 * prints dirty=<round>; a page that disagrees prints dirty=BAD page <i>
 * round <r> and holds. With H = 0 it returns (the probe ends as vmlet.end
 * says). A range that is not one RAM entry of the PVH memory map below
 * 4 GiB prints dirty=error ... and returns. */
#define PROBE_DIRTY_BASE (32ull << 20)
void probe_dirty(uint32_t si_addr, const char *arg);

/* efiVendor/efiRevision/efiSpec/efiTables lines for the EFI system table
 * at addr_text ("0x..." from vmlet.efi=) (efi.c). */
void probe_efi_report(struct fw_buf *out, const char *addr_text);

/* systemUuid=<SMBIOS type 1 UUID> and biosVendor=<SMBIOS type 0 vendor>
 * ("-" when empty) through the SMBIOS entry point in the BIOS area, no
 * line without one (smbios.c). */
void probe_smbios_report(struct fw_buf *out);

/* CPL3 part; arg = start_info physical address. Does not return. */
/* The TPM the TPM2 table names (NULL: none): a tpm= line (tpm.c). */
void probe_tpm_report(struct fw_buf *out, const struct acpi_header *tpm2);

void probe_user_main(void *arg);

#endif /* FW_PROBE_PROBE_H */
