/* SPDX-License-Identifier: MIT */
/*
 * pvh.h - the PVH boot ABI (Xen's hvm_start_info, version 1): the 32-bit
 * entry gets ebx = the physical address of struct hvm_start_info, paging
 * off, flat 32-bit segments. An ELF announces the entry with a note of
 * type XEN_ELFNOTE_PHYS32_ENTRY, name "Xen".
 */
#ifndef FW_LIB_PVH_H
#define FW_LIB_PVH_H

#include "firmware/lib/fw.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define HVM_START_MAGIC		 0x336ec578u
#define HVM_MEMMAP_RAM		 1
#define HVM_MEMMAP_MAX		 128 /* more entries are not trusted */

#ifndef __ASSEMBLER__
struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;	 /* version >= 1 */
	uint32_t memmap_entries; /* version >= 1 */
	uint32_t reserved;
} FW_PACKED;

struct hvm_memmap_entry {
	uint64_t addr, size;
	uint32_t type, reserved;
} FW_PACKED;

#endif /* __ASSEMBLER__ */
#endif /* FW_LIB_PVH_H */
