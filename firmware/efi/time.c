// SPDX-License-Identifier: MIT
/*
 * time.c - a nanosecond clock for Stall and timers: the TSC scaled by the
 * frequency KVM publishes (kvmclock, CPUID 0x40000001 bit 3: MSR
 * 0x4b564d01), else CPUID 0x15 (crystal ratio), else CPUID 0x16 (base MHz),
 * else an assumed 2 GHz. All read at CPL0, where CPUID is exact.
 */
#include "firmware/efi/fw.h"
#include "firmware/lib/io.h"

#define MSR_KVM_SYSTEM_TIME_NEW	 0x4b564d01u
#define KVM_FEATURE_CLOCKSOURCE2 (1u << 3)

struct pvclock {
	uint32_t version, pad0;
	uint64_t tsc_timestamp, system_time;
	uint32_t tsc_to_system_mul;
	int8_t tsc_shift;
	uint8_t flags, pad[2];
};

static struct pvclock pvclock FW_ALIGNED(64);
static bool use_pvclock;
static uint64_t tsc_khz = 2000000;

static bool kvm_clock_available(void)
{
	struct fw_cpuid r;

	fw_cpuid(0x40000000, 0, &r);
	if (r.b != 0x4b4d564b || r.c != 0x564b4d56 || r.d != 0x4d) /* "KVMKVMKVM\0\0\0" */
		return false;
	fw_cpuid(0x40000001, 0, &r);
	return r.a & KVM_FEATURE_CLOCKSOURCE2;
}

void efi_time_init(void)
{
	struct fw_cpuid r;

	if (kvm_clock_available()) {
		wrmsr(MSR_KVM_SYSTEM_TIME_NEW, (uintptr_t)&pvclock | 1);
		use_pvclock = true;
		return;
	}
	fw_cpuid(0, 0, &r);
	uint32_t max = r.a;

	if (max >= 0x15) {
		fw_cpuid(0x15, 0, &r);
		if (r.a && r.b && r.c) {
			tsc_khz = (uint64_t)r.c * r.b / r.a / 1000;
			return;
		}
	}
	if (max >= 0x16) {
		fw_cpuid(0x16, 0, &r);
		if (r.a & 0xffff)
			tsc_khz = (uint64_t)(r.a & 0xffff) * 1000;
	}
}

void efi_time_stop(void)
{
	if (use_pvclock)
		wrmsr(MSR_KVM_SYSTEM_TIME_NEW, 0);
	use_pvclock = false;
}

uint64_t efi_now_ns(void)
{
	if (!use_pvclock) {
		uint64_t t = rdtsc();

		return t / tsc_khz * 1000000u + t % tsc_khz * 1000000u / tsc_khz;
	}
	for (;;) {
		uint32_t v = __atomic_load_n(&pvclock.version, __ATOMIC_ACQUIRE);
		uint64_t delta = rdtsc() - pvclock.tsc_timestamp;
		int8_t shift = pvclock.tsc_shift;

		delta = shift >= 0 ? delta << shift : delta >> -shift;
		uint64_t ns =
		    pvclock.system_time +
		    (uint64_t)(((unsigned __int128)delta * pvclock.tsc_to_system_mul) >> 32);

		if (!(v & 1) && __atomic_load_n(&pvclock.version, __ATOMIC_ACQUIRE) == v)
			return ns;
	}
}

void efi_stall_us(uint64_t us)
{
	uint64_t end = efi_now_ns() + us * 1000;

	while (efi_now_ns() < end)
		fw_pause();
}
