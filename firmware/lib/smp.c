/* SPDX-License-Identifier: MIT */
/* smp.c - local APIC access and INIT-SIPI-SIPI (CPL0). */
#include "firmware/lib/io.h"
#include "firmware/lib/smp.h"

#define LAPIC_ID     0x20
#define LAPIC_ICR_LO 0x300
#define LAPIC_ICR_HI 0x310
#define ICR_BUSY     (1u << 12)
#define ICR_INIT     0x00004500u /* INIT, level assert */
#define ICR_SIPI     0x00004600u /* start-up, level assert */

_Static_assert(FW_SMP_STACK == 1024, "ap.S shifts by 10");

extern const uint8_t fw_ap_tramp_start[], fw_ap_tramp_end[];
void (*fw_ap_main)(uint32_t index);
uint32_t fw_ap_count;

void fw_lapic_detect(struct fw_lapic *l)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);

	l->base = (uintptr_t)(base & 0xfffff000ull);
	l->x2apic = base & MSR_APIC_BASE_EXTD;
}

void fw_lapic_enable_x2apic(struct fw_lapic *l)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);

	if (!(base & MSR_APIC_BASE_EXTD))
		wrmsr(MSR_APIC_BASE, base | MSR_APIC_BASE_EN | MSR_APIC_BASE_EXTD);
	l->x2apic = true;
}

uint32_t fw_lapic_id(const struct fw_lapic *l)
{
	if (l->x2apic)
		return (uint32_t)rdmsr(MSR_X2APIC_ID);
	return mmio_read32(l->base + LAPIC_ID) >> 24;
}

void fw_smp_prepare(uint32_t tramp, void (*ap_main)(uint32_t index))
{
	fw_ap_main = ap_main;
	memcpy((void *)(uintptr_t)tramp, fw_ap_tramp_start,
	       (size_t)((uintptr_t)fw_ap_tramp_end - (uintptr_t)fw_ap_tramp_start));
}

static void send_ipi(const struct fw_lapic *l, uint32_t apic_id, uint32_t icr)
{
	if (l->x2apic) {
		wrmsr(MSR_X2APIC_ICR, (uint64_t)apic_id << 32 | icr);
		return;
	}
	mmio_write32(l->base + LAPIC_ICR_HI, apic_id << 24);
	mmio_write32(l->base + LAPIC_ICR_LO, icr);
	/* delivery status: bounded, KVM never shows it busy */
	for (unsigned i = 0; i < 1000 && (mmio_read32(l->base + LAPIC_ICR_LO) & ICR_BUSY); i++)
		fw_pause();
}

int fw_smp_wake(const struct fw_lapic *l, uint32_t apic_id, uint32_t tramp)
{
	if (tramp & 0xfff || tramp >= 0x100000 || (!l->x2apic && apic_id > 254))
		return -1;
	send_ipi(l, apic_id, ICR_INIT);
	send_ipi(l, apic_id, ICR_SIPI | tramp >> 12);
	send_ipi(l, apic_id, ICR_SIPI | tramp >> 12);
	return 0;
}

uint32_t fw_smp_arrived(void)
{
	return __atomic_load_n(&fw_ap_count, __ATOMIC_ACQUIRE);
}
