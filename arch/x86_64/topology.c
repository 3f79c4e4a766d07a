/* SPDX-License-Identifier: MIT */
/*
 * topology.c - APIC ID composition from (package, core, thread).
 *
 * The APIC ID is a bit field: thread in the low ceil(log2(threads)) bits,
 * then core in ceil(log2(cores)) bits, then the package above
 * (Intel SDM Vol 3A §10.12.8.1 "Hierarchical Mapping of Shared Resources";
 * AMD APM Vol 2 §16.4.1 uses the same layout for ApicIdCoreIdSize). For
 * counts that are not powers of two the IDs are sparse, exactly as on real
 * hardware, so CPUID leaves 0x1/0x4/0xB/0x1F/0x8000_0008 can describe the
 * field widths consistently.
 */
#include "arch/arch.h"

/* Smallest w with (1 << w) >= n, for n >= 1 (0 for n <= 1). */
static uint32_t ceil_log2(uint32_t n)
{
	uint32_t w = 0;

	while (w < 32 && (1ull << w) < n)
		w++;
	return w;
}

void arch_topo_widths(const struct arch_topology *t, struct arch_apic_widths *w)
{
	w->smt_bits = ceil_log2(t->threads);
	w->core_bits = ceil_log2(t->cores);
	w->pkg_shift = w->smt_bits + w->core_bits;
}

uint32_t arch_topo_apic_id(const struct arch_topology *t, uint32_t index)
{
	struct arch_apic_widths w;
	uint32_t thread, core, pkg;

	arch_topo_widths(t, &w);
	thread = index % t->threads;
	core = (index / t->threads) % t->cores;
	pkg = index / (t->threads * t->cores);
	return pkg << w.pkg_shift | core << w.smt_bits | thread;
}

/*
 * Linux (arch/x86/kernel/cpu/topology_common.c since 6.9) takes the package
 * id as apic_id >> pkg_shift and the core id as the bits between the SMT
 * shift and the package shift; the thread is the SMT field.
 */
void arch_topo_decompose(const struct arch_topology *t, uint32_t apic_id, uint32_t *pkg,
			 uint32_t *core, uint32_t *thread)
{
	struct arch_apic_widths w;

	arch_topo_widths(t, &w);
	*thread = apic_id & ((1u << w.smt_bits) - 1);
	*core = (apic_id >> w.smt_bits) & ((1u << w.core_bits) - 1);
	*pkg = w.pkg_shift >= 32 ? 0 : apic_id >> w.pkg_shift;
}
