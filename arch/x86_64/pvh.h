/* SPDX-License-Identifier: MIT */
/*
 * pvh.h - the Xen PVH boot ABI as byte offsets (Xen
 * include/public/arch-x86/hvm/start_info.h, version 1) and the ELF note
 * that marks a PVH entry (include/public/elfnote.h).
 */
#ifndef VMLET_ARCH_X86_64_PVH_H
#define VMLET_ARCH_X86_64_PVH_H

#include <stdint.h>

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define HVM_START_MAGIC_VALUE	 0x336ec578u

/* struct hvm_start_info */
#define HVM_SI_MAGIC	      0	 /* u32 */
#define HVM_SI_VERSION	      4	 /* u32: 1 = has memmap fields */
#define HVM_SI_FLAGS	      8	 /* u32 */
#define HVM_SI_NR_MODULES     12 /* u32 */
#define HVM_SI_MODLIST_PADDR  16 /* u64 */
#define HVM_SI_CMDLINE_PADDR  24 /* u64 */
#define HVM_SI_RSDP_PADDR     32 /* u64 */
#define HVM_SI_MEMMAP_PADDR   40 /* u64 */
#define HVM_SI_MEMMAP_ENTRIES 48 /* u32, then u32 reserved */
#define HVM_START_INFO_SIZE   56

/* struct hvm_modlist_entry: paddr, size, cmdline_paddr, reserved (u64) */
#define HVM_MODLIST_ENTRY_SIZE 32
/* struct hvm_memmap_table_entry: addr, size (u64), type, reserved (u32) */
#define HVM_MEMMAP_ENTRY_SIZE 24

/* Write cmdline (NULL = empty) NUL-terminated at ARCH_CMDLINE_GPA. */
int arch_cmdline_write(uint8_t *low_mem, uint64_t low_size, const char *cmdline);

#endif /* VMLET_ARCH_X86_64_PVH_H */
