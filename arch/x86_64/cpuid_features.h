/* SPDX-License-Identifier: MIT */
/*
 * cpuid_features.h - the CPUID leaves and bits vmlet's CPUID builder
 * touches. Intel SDM Vol 2A "CPUID" (Table 3-8 and the leaf descriptions);
 * AMD APM Vol 3 Appendix E "Obtaining Processor Information Via the CPUID
 * Instruction" (E.3 function descriptions, E.5 multiple-processor
 * topology); Linux Documentation/virt/kvm/x86/cpuid.rst for 0x4000_00xx.
 */
#ifndef VMLET_ARCH_X86_64_CPUID_FEATURES_H
#define VMLET_ARCH_X86_64_CPUID_FEATURES_H

#define CPUID_LEAF_VENDOR      0x00000000u
#define CPUID_LEAF_FEATURES    0x00000001u
#define CPUID_LEAF_CACHE_DESC  0x00000002u /* Intel legacy descriptors */
#define CPUID_LEAF_CACHE_PARAM 0x00000004u /* Intel deterministic cache params */
#define CPUID_LEAF_EXT_TOPO    0x0000000bu /* extended topology (both vendors) */
#define CPUID_LEAF_EXT_TOPO_V2 0x0000001fu /* V2 extended topology (Intel) */
#define CPUID_LEAF_KVM_BASE    0x40000000u
#define CPUID_LEAF_KVM_LAST    0x400000ffu
#define CPUID_LEAF_KVM_FEAT    0x40000001u /* KVM_CPUID_FEATURES */
#define CPUID_LEAF_EXT_MAX     0x80000000u
#define CPUID_LEAF_EXT_FEAT    0x80000001u
#define CPUID_LEAF_BRAND0      0x80000002u /* brand string, 16 bytes per leaf */
#define CPUID_LEAF_BRAND2      0x80000004u
#define CPUID_LEAF_L1_AMD      0x80000005u
#define CPUID_LEAF_L2L3	       0x80000006u
#define CPUID_LEAF_APM	       0x80000007u
#define CPUID_LEAF_SIZES       0x80000008u
#define CPUID_LEAF_AMD_CACHE   0x8000001du /* AMD cache topology */
#define CPUID_LEAF_AMD_TOPO    0x8000001eu /* AMD processor topology */
#define CPUID_LEAF_AMD_EXTTOPO 0x80000026u /* AMD extended CPU topology */

/* leaf 1 */
#define CPUID_1_EBX_CLFLUSH_SHIFT 8  /* [15:8] CLFLUSH line size / 8 */
#define CPUID_1_EBX_NLP_SHIFT	  16 /* [23:16] logical processor IDs */
#define CPUID_1_EBX_APIC_SHIFT	  24 /* [31:24] initial APIC ID */
#define CPUID_1_ECX_TSC_DEADLINE  (1u << 24)
#define CPUID_1_ECX_HYPERVISOR	  (1u << 31)
#define CPUID_1_EDX_HTT		  (1u << 28)

/* leaf 4 / 0x8000_001D EAX */
#define CPUID_CACHE_TYPE_MASK	0x1fu  /* [4:0]: 0 none, 1 data, 2 instr, 3 unified */
#define CPUID_CACHE_LEVEL_SHIFT 5      /* [7:5] */
#define CPUID_CACHE_KEEP_EAX	0x3ffu /* type, level, self-init, fully assoc */
#define CPUID_CACHE_SHARE_SHIFT 14     /* [25:14] sharing IDs - 1 */
#define CPUID_CACHE_SHARE_MAX	0xfffu
#define CPUID_4_CORES_SHIFT	26 /* [31:26] core IDs in package - 1 */
#define CPUID_4_CORES_MAX	0x3fu

/* leaf 0xB / 0x1F */
#define CPUID_TOPO_TYPE_INVALID 0
#define CPUID_TOPO_TYPE_SMT	1
#define CPUID_TOPO_TYPE_CORE	2

/* 0x8000_0001 */
/* KVM_CPUID_FEATURES EAX bits whose guest side is a hypercall (VMCALL on
 * Intel, VMMCALL on AMD): PV_UNHALT (KVM_HC_KICK_CPU), PV_SEND_IPI,
 * PV_SCHED_YIELD (Documentation/virt/kvm/x86/cpuid.rst, hypercalls.rst). */
#define CPUID_KVM_FEAT_HYPERCALLS ((1u << 7) | (1u << 11) | (1u << 13))

#define CPUID_80000001_ECX_CMP_LEGACY (1u << 1)
#define CPUID_80000001_ECX_TOPOEXT    (1u << 22)
/* Bits Intel defines in 0x8000_0001 (SDM Vol 2A Table 3-8). */
#define CPUID_80000001_ECX_INTEL 0x00000121u /* LAHF, LZCNT, PREFETCHW */
#define CPUID_80000001_EDX_INTEL 0x2c100800u /* SYSCALL, NX, 1GB pages, RDTSCP, LM */
#define CPUID_80000007_EDX_INTEL 0x00000100u /* invariant TSC */
#define CPUID_80000008_EBX_INTEL 0x00000200u /* WBNOINVD */

/* 0x8000_0008 ECX (AMD) */
#define CPUID_80000008_ECX_NC_MASK	0xffu /* [7:0] threads in package - 1 */
#define CPUID_80000008_ECX_APICSZ_SHIFT 12    /* [15:12] ApicIdCoreIdSize */

#define CPUID_INTEL_EBX 0x756e6547u /* "Genu" */
#define CPUID_INTEL_EDX 0x49656e69u /* "ineI" */
#define CPUID_INTEL_ECX 0x6c65746eu /* "ntel" */
#define CPUID_AMD_EBX	0x68747541u /* "Auth" */
#define CPUID_HYGON_EBX 0x6f677948u /* "Hygo" */
#define CPUID_HYGON_EDX 0x6e65476eu /* "nGen" */
#define CPUID_HYGON_ECX 0x656e6975u /* "uine" */
#define CPUID_AMD_EDX	0x69746e65u /* "enti" */
#define CPUID_AMD_ECX	0x444d4163u /* "cAMD" */

#endif /* VMLET_ARCH_X86_64_CPUID_FEATURES_H */
