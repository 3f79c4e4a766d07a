/* SPDX-License-Identifier: MIT */
/*
 * msr.c - initial MSR values of a vCPU, as after RESET/INIT (Intel SDM Vol
 * 3A §10.1.1 Table 10-1 "IA-32 and Intel 64 Processor States Following
 * Power-up, Reset, or INIT"; Vol 4 for the MSR numbers), with the few
 * values a direct-boot guest expects firmware to have set: fast strings on
 * in IA32_MISC_ENABLE and MTRRs enabled with write-back as default type
 * (Vol 3A §12.11.2.1), which Linux otherwise treats as "MTRRs disabled".
 */
#include <errno.h>

#include "arch/arch.h"

#define MSR_IA32_TSC	      0x00000010
#define MSR_IA32_APICBASE     0x0000001b
#define MSR_IA32_SYSENTER_CS  0x00000174
#define MSR_IA32_SYSENTER_ESP 0x00000175
#define MSR_IA32_SYSENTER_EIP 0x00000176
#define MSR_IA32_MISC_ENABLE  0x000001a0
#define MSR_IA32_CR_PAT	      0x00000277
#define MSR_MTRR_DEF_TYPE     0x000002ff
#define MSR_STAR	      0xc0000081
#define MSR_LSTAR	      0xc0000082
#define MSR_CSTAR	      0xc0000083
#define MSR_SYSCALL_MASK      0xc0000084
#define MSR_KERNEL_GS_BASE    0xc0000102

#define APICBASE_BSP		(1ull << 8)
#define APICBASE_ENABLE		(1ull << 11)
#define MISC_ENABLE_FAST_STRING (1ull << 0)
#define MTRR_DEF_TYPE_E		(1ull << 11)
#define MTRR_TYPE_WB		6ull
#define PAT_POWER_ON		0x0007040600070406ull /* WB WT UC- UC, twice */

int arch_msrs_initial(uint32_t vcpu_index, struct kvm_msr_entry *out, size_t cap)
{
	const struct kvm_msr_entry msrs[] = {
	    {.index = MSR_IA32_TSC, .data = 0},
	    {.index = MSR_IA32_APICBASE,
	     .data = ARCH_LAPIC_GPA | APICBASE_ENABLE | (vcpu_index ? 0 : APICBASE_BSP)},
	    {.index = MSR_IA32_SYSENTER_CS, .data = 0},
	    {.index = MSR_IA32_SYSENTER_ESP, .data = 0},
	    {.index = MSR_IA32_SYSENTER_EIP, .data = 0},
	    {.index = MSR_IA32_MISC_ENABLE, .data = MISC_ENABLE_FAST_STRING},
	    {.index = MSR_IA32_CR_PAT, .data = PAT_POWER_ON},
	    {.index = MSR_MTRR_DEF_TYPE, .data = MTRR_DEF_TYPE_E | MTRR_TYPE_WB},
	    {.index = MSR_STAR, .data = 0},
	    {.index = MSR_LSTAR, .data = 0},
	    {.index = MSR_CSTAR, .data = 0},
	    {.index = MSR_SYSCALL_MASK, .data = 0},
	    {.index = MSR_KERNEL_GS_BASE, .data = 0},
	};
	size_t n = sizeof(msrs) / sizeof(msrs[0]);

	if (!out || cap < n)
		return -ENOSPC;
	for (size_t i = 0; i < n; i++)
		out[i] = msrs[i];
	return (int)n;
}
