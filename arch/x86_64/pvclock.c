/* SPDX-License-Identifier: MIT */
/*
 * pvclock.c - the time a guest reads from its kvmclock record (arch.h).
 *
 * KVM writes each vCPU a pvclock record (struct pvclock_vcpu_time_info,
 * at the guest-physical address of MSR_KVM_SYSTEM_TIME_NEW): the kvmclock
 * in ns at a TSC value, and the scale from TSC ticks to ns. The guest's
 * kvm-clock is system_time + scale(tsc - tsc_timestamp). Little-endian
 * layout: u32 version, u32 pad, u64 tsc_timestamp, u64 system_time,
 * u32 tsc_to_system_mul, s8 tsc_shift, u8 flags, u8 pad[2].
 */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"

static uint64_t le_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int arch_pvclock_ns(const uint8_t rec[ARCH_PVCLOCK_SIZE], uint64_t tsc, uint64_t *ns)
{
	uint32_t version = (uint32_t)le_u64(rec) & 0xffffffffu;
	uint64_t stamp = le_u64(rec + 8), system_time = le_u64(rec + 16);
	uint32_t mul = (uint32_t)le_u64(rec + 24) & 0xffffffffu;
	int8_t shift;
	uint64_t delta;

	memcpy(&shift, rec + 28, 1);
	if (version & 1)
		return -EAGAIN; /* KVM was writing it */
	if (!mul || shift > 31 || shift < -31 || tsc < stamp)
		return -EINVAL; /* never written, or not this TSC's */
	delta = tsc - stamp;
	if (shift < 0)
		delta >>= -shift;
	else
		delta <<= shift;
	/* (delta * mul) >> 32 without a 128-bit type: both halves */
	*ns = system_time + (delta >> 32) * mul + (((delta & 0xffffffffu) * mul) >> 32);
	return 0;
}
