/* SPDX-License-Identifier: MIT */
/*
 * io.h - x86 port I/O, MSR, CPUID, TSC and MMIO helpers. Port I/O at CPL3
 * needs the port granted in the TSS I/O bitmap (cpl.h); MSRs and CPUID
 * must be used at CPL0 (CPUID at CPL3 is not exact on our hosts: see
 * docs/hosts.md).
 */
#ifndef FW_LIB_IO_H
#define FW_LIB_IO_H

#include "firmware/lib/fw.h"

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}
static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}
static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}
static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

struct fw_cpuid {
	uint32_t a, b, c, d;
};

static inline void fw_cpuid(uint32_t leaf, uint32_t sub, struct fw_cpuid *r)
{
	__asm__ volatile("cpuid"
			 : "=a"(r->a), "=b"(r->b), "=c"(r->c), "=d"(r->d)
			 : "a"(leaf), "c"(sub));
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}
static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr"
			 :
			 : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
			 : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static inline void fw_pause(void)
{
	__asm__ volatile("pause" ::: "memory");
}
static inline void fw_barrier(void)
{
	__asm__ volatile("" ::: "memory");
}

static inline uint32_t mmio_read32(uintptr_t addr)
{
	return *(volatile uint32_t *)addr;
}
static inline void mmio_write32(uintptr_t addr, uint32_t v)
{
	*(volatile uint32_t *)addr = v;
}
static inline uint8_t mmio_read8(uintptr_t addr)
{
	return *(volatile uint8_t *)addr;
}
static inline void mmio_write8(uintptr_t addr, uint8_t v)
{
	*(volatile uint8_t *)addr = v;
}

/* CPL0 only: stop this CPU for good. */
static inline FW_NORETURN void fw_halt_forever(void)
{
	for (;;)
		__asm__ volatile("cli; hlt");
}

#define MSR_APIC_BASE	   0x1b
#define MSR_APIC_BASE_BSP  (1ull << 8)
#define MSR_APIC_BASE_EXTD (1ull << 10) /* x2APIC mode */
#define MSR_APIC_BASE_EN   (1ull << 11)
#define MSR_X2APIC_ID	   0x802
#define MSR_X2APIC_ICR	   0x830

#endif /* FW_LIB_IO_H */
