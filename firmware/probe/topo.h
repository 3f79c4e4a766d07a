/* SPDX-License-Identifier: MIT */
/*
 * topo.h - (package, core, thread) ids from raw CPUID data, derived the way
 * Linux (>= 6.9, arch/x86/kernel/cpu/topology_*.c) does for the vendor:
 *   Intel: leaf 0x1F, else 0x8000_0026, else 0xB, else leaf 1 EBX[23:16]
 *          + leaf 4 EAX[31:26].
 *   AMD:   the same extended leaves (the stable fix makes this
 *          unconditional), else the core shift of 0x8000_0008 ECX; with
 *          TopoExt the initial APIC ID from 0x8000_001E EAX and, without an
 *          extended leaf on family >= 0x17, the SMT width from its
 *          EBX[15:8].
 * Pure C with no firmware dependency, so host unit tests can compile it.
 */
#ifndef FW_PROBE_TOPO_H
#define FW_PROBE_TOPO_H

#include <stdbool.h>
#include <stdint.h>

struct topo_leaf {
	uint32_t a, b, c, d;
};

#define TOPO_LEAF_B_SUBS  4
#define TOPO_LEAF_1F_SUBS 6
#define TOPO_LEAF_26_SUBS 4 /* AMD 0x8000_0026 */

/* The CPUID leaves one CPU read at CPL0 (zero where not present). */
struct topo_cpuid {
	struct topo_leaf l0, l1, l4;
	struct topo_leaf lb[TOPO_LEAF_B_SUBS];
	struct topo_leaf l1f[TOPO_LEAF_1F_SUBS];
	struct topo_leaf e0, e1, e8, e1e;
	struct topo_leaf e26[TOPO_LEAF_26_SUBS];
};

enum topo_vendor { TOPO_VENDOR_INTEL, TOPO_VENDOR_AMD, TOPO_VENDOR_OTHER };

struct topo_ids {
	uint32_t apic_id; /* Linux's initial APIC ID */
	uint32_t package, core, thread;
	uint32_t smt_shift, pkg_shift;
	const char *source; /* see firmware/abi.h topoSource */
};

/* "GenuineIntel" etc. into vendor[13]; returns the vendor class. */
enum topo_vendor topo_vendor(const struct topo_cpuid *c, char vendor[13]);
void topo_derive(const struct topo_cpuid *c, struct topo_ids *out);

#endif /* FW_PROBE_TOPO_H */
