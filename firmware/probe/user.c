/* SPDX-License-Identifier: MIT */
/*
 * user.c - the probe's CPL3 half (runs natively on our hosts): memory map,
 * ACPI tables, topology ids of every CPU, the report (firmware/abi.h).
 */
#include "firmware/lib/cpu.h"
#include "firmware/lib/io.h"
#include "firmware/lib/pvh.h"
#include "firmware/lib/virtio.h"
#include "firmware/probe/virtio_net.h"
#include "firmware/probe/probe.h"

#define REPORT_MAX FW_ABI_REPORT_MAX

struct probe_state {
	struct fw_buf out;
	struct fw_acpi_table tables[FW_ABI_MAX_ACPI_TABLES];
	int n_tables;
	uint32_t madt_ids[PROBE_MAX_CPUS];
	int n_madt;
	struct topo_ids ids[PROBE_MAX_CPUS];
	const struct probe_cpu *cpu[PROBE_MAX_CPUS]; /* report order */
	uint32_t n_cpus;
	bool trampoline_ram; /* the AP trampoline page is RAM in the memmap */
};

static char report[REPORT_MAX];
static struct probe_state st;

static void error_line(const char *msg)
{
	fw_buf_printf(&st.out, "error=%s\n", msg);
}

static void report_memory(uint32_t si_addr, uint64_t *rsdp_hint)
{
	const struct hvm_start_info *si = (const struct hvm_start_info *)(uintptr_t)si_addr;
	const struct hvm_memmap_entry *mm;
	uint64_t ram = 0;
	uint32_t n;

	*rsdp_hint = 0;
	if (!si_addr || si->magic != HVM_START_MAGIC) {
		error_line("no PVH start_info");
		return;
	}
	*rsdp_hint = si->rsdp_paddr;
	if (si->version < 1 || !si->memmap_paddr || !si->memmap_entries) {
		error_line("start_info has no memory map");
		return;
	}
	n = si->memmap_entries;
	if (n > HVM_MEMMAP_MAX || si->memmap_paddr >= ACPI_LIMIT - n * sizeof(*mm)) {
		error_line("start_info memory map out of bounds");
		return;
	}
	mm = (const struct hvm_memmap_entry *)(uintptr_t)si->memmap_paddr;
	for (uint32_t i = 0; i < n; i++) {
		if (mm[i].type != HVM_MEMMAP_RAM)
			continue;
		ram += mm[i].size;
		if (mm[i].addr <= PROBE_TRAMPOLINE && mm[i].size >= 0x1000 &&
		    PROBE_TRAMPOLINE - mm[i].addr <= mm[i].size - 0x1000)
			st.trampoline_ram = true;
	}
	fw_buf_printf(&st.out, "memoryBytes=%llu\nmemmapEntries=%u\n", (unsigned long long)ram, n);
}

static void report_acpi(uint64_t rsdp_hint)
{
	const struct acpi_rsdp *rsdp = fw_acpi_find_rsdp(rsdp_hint);
	const struct acpi_header *madt, *fadt, *dsdt;
	uint64_t lapic_addr;
	int errors = 0, bad = 0;

	if (!rsdp) {
		error_line("no ACPI RSDP");
		return;
	}
	st.n_tables = fw_acpi_walk(rsdp, st.tables, FW_ABI_MAX_ACPI_TABLES, &errors);
	fw_buf_printf(&st.out, "acpiTables=");
	for (int i = 0, k = 0; i < st.n_tables; i++)
		if (st.tables[i].checksum_ok)
			fw_buf_printf(&st.out, "%s%s", k++ ? " " : "", st.tables[i].sig);
		else
			bad++;
	fw_buf_printf(&st.out, "\n");
	if (bad) {
		fw_buf_printf(&st.out, "acpiBadChecksum=");
		for (int i = 0, k = 0; i < st.n_tables; i++)
			if (!st.tables[i].checksum_ok)
				fw_buf_printf(&st.out, "%s%s", k++ ? " " : "", st.tables[i].sig);
		fw_buf_printf(&st.out, "\n");
	}
	if (errors)
		error_line("unreadable ACPI table pointer");
	madt = fw_acpi_find(st.tables, st.n_tables, "APIC");
	fadt = fw_acpi_find(st.tables, st.n_tables, "FACP");
	dsdt = fw_acpi_find(st.tables, st.n_tables, "DSDT");
	if (madt)
		st.n_madt = fw_madt_apic_ids(madt, st.madt_ids, PROBE_MAX_CPUS, &lapic_addr);
	else
		error_line("no MADT");
	fw_buf_printf(&st.out, "madtApicIds=");
	for (int i = 0; i < st.n_madt; i++)
		fw_buf_printf(&st.out, "%s%u", i ? " " : "", st.madt_ids[i]);
	fw_buf_printf(&st.out, "\n");
	fw_acpi_power_info(fadt, dsdt, &probe_power);
	fw_buf_printf(&st.out, "s5SlpTyp=%d\n", probe_power.slp_typ);
	if (probe_power.pm1a_cnt)
		fw_buf_printf(&st.out, "acpiPowerOff=pm1a-io 0x%x\n", probe_power.pm1a_cnt);
	else if (probe_power.sleep_ctl.address)
		fw_buf_printf(&st.out, "acpiPowerOff=sleep-control-%s 0x%llx\n",
			      probe_power.sleep_ctl.space_id == 1 ? "io" : "mem",
			      (unsigned long long)probe_power.sleep_ctl.address);
	else
		fw_buf_printf(&st.out, "acpiPowerOff=none\n");
}

static void start_aps(void)
{
	bool x2 = false;
	uint64_t r, t0;

	for (int i = 0; i < st.n_madt; i++)
		x2 |= st.madt_ids[i] > 254;
	if (st.n_madt <= 1)
		return;
	if (!st.trampoline_ram) {
		error_line("AP trampoline page 0x8000 is not RAM: APs not started");
		return;
	}
	t0 = rdtsc();
	r = fw_kcall(PROBE_KC_START_APS, (uintptr_t)st.madt_ids, (uint64_t)st.n_madt, x2);
	fw_buf_printf(&st.out, "tscAps=%llu\n", (unsigned long long)(rdtsc() - t0));
	if (r == (uint64_t)-1)
		error_line("APIC IDs above 254 but no x2APIC");
}

/* BSP first, then the APs in MADT order. */
static void order_cpus(void)
{
	const struct probe_cpu *bsp = &probe_cpus[0];

	st.cpu[st.n_cpus++] = bsp;
	for (int i = 0; i < st.n_madt; i++) {
		uint32_t id = st.madt_ids[i];
		const struct probe_cpu *found = NULL;

		if (id == bsp->lapic_id)
			continue;
		for (uint32_t k = 1; k < PROBE_MAX_CPUS && !found; k++)
			if (__atomic_load_n(&probe_cpus[k].done, __ATOMIC_ACQUIRE) &&
			    probe_cpus[k].lapic_id == id)
				found = &probe_cpus[k];
		if (found && st.n_cpus < PROBE_MAX_CPUS)
			st.cpu[st.n_cpus++] = found;
		else if (!found)
			fw_buf_printf(&st.out, "vcpuMissing=%u\n", id);
	}
}

/* sockets = distinct packages, coresPerSocket = most distinct cores in a
 * package, threadsPerCore = most CPUs in a core. O(n^2), n <= 1024. */
static void report_counts(void)
{
	static uint32_t pkg_id[PROBE_MAX_CPUS], pkg_cores[PROBE_MAX_CPUS];
	uint32_t npkg = 0, cores = 0, threads = 0;

	for (uint32_t i = 0; i < st.n_cpus; i++) {
		const struct topo_ids *t = &st.ids[i];
		uint32_t in_core = 0, p;
		bool first_of_core = true;

		for (uint32_t k = 0; k < st.n_cpus; k++) {
			if (st.ids[k].package != t->package || st.ids[k].core != t->core)
				continue;
			in_core++;
			first_of_core &= k >= i;
		}
		threads = in_core > threads ? in_core : threads;
		for (p = 0; p < npkg && pkg_id[p] != t->package; p++)
			;
		if (p == npkg) {
			pkg_id[npkg] = t->package;
			pkg_cores[npkg++] = 0;
		}
		pkg_cores[p] += first_of_core;
		cores = pkg_cores[p] > cores ? pkg_cores[p] : cores;
	}
	fw_buf_printf(&st.out, "sockets=%u\ncoresPerSocket=%u\nthreadsPerCore=%u\n", npkg, cores,
		      threads);
}

/* tscDeadline= and brand= (firmware/abi.h) of the BSP. */
static void report_cpu(void)
{
	char brand[49];

	fw_abi_brand(brand, probe_brand);
	fw_buf_printf(&st.out, "tscDeadline=%u\nbrand=%s\n", probe_cpus[0].id.l1.c >> 24 & 1,
		      brand);
}

static void report_topology(void)
{
	char vendor[13];

	topo_vendor(&st.cpu[0]->id, vendor);
	for (uint32_t i = 0; i < st.n_cpus; i++)
		topo_derive(&st.cpu[i]->id, &st.ids[i]);
	fw_buf_printf(&st.out, "vendor=%s\ntopoSource=%s\nsmtShift=%u\npkgShift=%u\nvcpus=%u\n",
		      vendor, st.ids[0].source, st.ids[0].smt_shift, st.ids[0].pkg_shift,
		      st.n_cpus);
	for (uint32_t i = 0; i < st.n_cpus; i++) {
		const struct topo_ids *t = &st.ids[i];

		fw_buf_printf(&st.out, "vcpu=%u %u %u %u %u\n", t->apic_id, t->package, t->core,
			      t->thread, st.cpu[i]->lapic_id);
	}
	report_counts();
}

/* The PVH command line ("" when there is none). */
static const char *cmdline(uint32_t si_addr)
{
	const struct hvm_start_info *si = (const struct hvm_start_info *)(uintptr_t)si_addr;

	if (!si_addr || si->magic != HVM_START_MAGIC || !si->cmdline_paddr ||
	    si->cmdline_paddr >= 0x100000000ull)
		return "";
	return (const char *)(uintptr_t)si->cmdline_paddr;
}

/* Where word (a whole word, or "key=" followed by its value) starts in
 * the command line, NULL if absent. */
static const char *cmdline_find(uint32_t si_addr, const char *word)
{
	const char *c = cmdline(si_addr);
	size_t n = strlen(word);
	bool prefix = n && word[n - 1] == '=';

	for (size_t i = 0; i < 4096 && c[i]; i++)
		if ((!i || c[i - 1] == ' ') && !strncmp(c + i, word, n) &&
		    (prefix || c[i + n] == ' ' || !c[i + n]))
			return c + i;
	return NULL;
}

static bool cmdline_has(uint32_t si_addr, const char *word)
{
	return cmdline_find(si_addr, word) != NULL;
}

/* The value of key= (up to the next space) in val; false if absent. */
static bool cmdline_value(uint32_t si_addr, const char *key, char *val, size_t cap)
{
	const char *c = cmdline_find(si_addr, key);
	size_t k = 0;

	if (!c)
		return false;
	for (c += strlen(key); k + 1 < cap && c[k] && c[k] != ' '; k++)
		val[k] = c[k];
	val[k] = 0;
	return true;
}

/* Decimal digits at s up to a non-digit (bounded); *s moves past them. */
static uint32_t parse_dec(const char **s)
{
	uint32_t v = 0;

	for (; **s >= '0' && **s <= '9' && v < 100000000; (*s)++)
		v = v * 10 + (uint32_t)(**s - '0');
	return v;
}

/* vmlet.netecho=N, vmlet.netping=A.B.C.D: the NIC driver's options
 * (firmware/probe/virtio_net.h). */
static void net_options(uint32_t si_addr)
{
	struct fw_net_opts o = {0};
	const char *p;
	char v[20];

	o.quick = cmdline_has(si_addr, "vmlet.netbench=") || cmdline_has(si_addr, "vmlet.netquick");
	if (cmdline_value(si_addr, "vmlet.netecho=", v, sizeof(v))) {
		p = v;
		o.echo = parse_dec(&p);
	}
	if (cmdline_value(si_addr, "vmlet.netping=", v, sizeof(v))) {
		p = v;
		for (int i = 0; i < 4; i++) {
			o.ping = o.ping << 8 | (parse_dec(&p) & 255);
			if (*p == '.')
				p++;
		}
	}
	fw_virtio_net_configure(&o);
}

void probe_user_main(void *arg)
{
	uint64_t rsdp_hint, ecam;
	char mode[16], efi[24];

	fw_buf_init(&st.out, report, sizeof(report));
	fw_buf_printf(&st.out, "\n" FW_ABI_PROBE_BEGIN "%d\n", FW_ABI_VERSION);
	report_memory((uint32_t)(uintptr_t)arg, &rsdp_hint);
	report_acpi(rsdp_hint);
	/* before the APs' trampoline and stacks can touch firmware memory */
	if (cmdline_value((uint32_t)(uintptr_t)arg, "vmlet.efi=", efi, sizeof(efi)))
		probe_efi_report(&st.out, efi);
	probe_smbios_report(&st.out);
	probe_tpm_report(&st.out, fw_acpi_find(st.tables, st.n_tables, "TPM2"));
	start_aps();
	order_cpus();
	report_topology();
	report_cpu();
	/* PCI functions, virtio disks and entropy (firmware/lib/virtio.c) */
	net_options((uint32_t)(uintptr_t)arg);
	ecam = fw_pci_ecam_from_mcfg(fw_acpi_find(st.tables, st.n_tables, "MCFG"));
	probe_virtio_report(&st.out, ecam, cmdline_has((uint32_t)(uintptr_t)arg, "vmlet.hostile"));
	if (cmdline_value((uint32_t)(uintptr_t)arg, "vmlet.iotest=", mode, sizeof(mode)))
		probe_blk_test(&st.out, ecam, mode);
	if (cmdline_value((uint32_t)(uintptr_t)arg, "vmlet.blkbench=", mode, sizeof(mode)))
		probe_blk_bench(&st.out, ecam, mode);
	if (cmdline_value((uint32_t)(uintptr_t)arg, "vmlet.satabench=", mode, sizeof(mode)))
		probe_sata_bench(&st.out, ecam, mode);
	if (cmdline_value((uint32_t)(uintptr_t)arg, "vmlet.netbench=", mode, sizeof(mode)))
		probe_net_bench(&st.out, ecam, mode);
	if (st.out.overflow) {
		st.out.len = sizeof(report) - 64;
		st.out.overflow = false;
		fw_buf_printf(&st.out, "\nerror=report too long\n");
	}
	if (cmdline_has((uint32_t)(uintptr_t)arg, "vmlet.msix"))
		probe_msix_route(&st.out, ecam);
	fw_buf_printf(&st.out, "tscProbe=%llu\n" FW_ABI_PROBE_END "\n",
		      (unsigned long long)(rdtsc() - probe_tsc0));
	fw_kcall(PROBE_KC_WRITE, (uintptr_t)report, st.out.len, 0);
	if (cmdline_value((uint32_t)(uintptr_t)arg, "vmlet.dirty=", mode, sizeof(mode)))
		probe_dirty((uint32_t)(uintptr_t)arg, mode);
	if (!cmdline_value((uint32_t)(uintptr_t)arg, "vmlet.end=", mode, sizeof(mode)))
		mode[0] = 0;
	probe_end(probe_end_mode(mode));
}
