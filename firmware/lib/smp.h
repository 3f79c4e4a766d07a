/* SPDX-License-Identifier: MIT */
/*
 * smp.h - waking application processors (CPL0). fw_smp_prepare() copies a
 * real-mode trampoline to a page below 1 MiB; fw_smp_wake() sends
 * INIT-SIPI-SIPI to one APIC ID (xAPIC MMIO, or the x2APIC ICR MSR). Each
 * AP goes 16 -> 32 -> 64-bit on the shared GDT and identity map, takes the
 * next index with lock xadd, gets its own small stack and calls
 * ap_main(index) at CPL0; when that returns it halts with interrupts off.
 */
#ifndef FW_LIB_SMP_H
#define FW_LIB_SMP_H

#include "firmware/lib/fw.h"

#define FW_SMP_MAX_APS 1023
#define FW_SMP_STACK   1024 /* bytes per AP: ap_main must stay small */

#ifndef __ASSEMBLER__
struct fw_lapic {
	uintptr_t base; /* xAPIC MMIO base (identity mapped) */
	bool x2apic;	/* use the x2APIC MSRs */
};

/* This CPU's APIC: base from IA32_APIC_BASE, x2apic if already enabled. */
void fw_lapic_detect(struct fw_lapic *l);
/* Switch this CPU to x2APIC mode (CPUID.1:ECX[21] must be set). */
void fw_lapic_enable_x2apic(struct fw_lapic *l);
/* This CPU's local APIC ID register. */
uint32_t fw_lapic_id(const struct fw_lapic *l);

/* Copy the trampoline to tramp (4 KiB aligned, below 1 MiB, RAM). */
void fw_smp_prepare(uint32_t tramp, void (*ap_main)(uint32_t index));
/* INIT, SIPI, SIPI to apic_id. x2APIC mode is required for IDs > 254. */
int fw_smp_wake(const struct fw_lapic *l, uint32_t apic_id, uint32_t tramp);
/* APs that have reached ap_main so far. */
uint32_t fw_smp_arrived(void);

#endif /* __ASSEMBLER__ */
#endif /* FW_LIB_SMP_H */
